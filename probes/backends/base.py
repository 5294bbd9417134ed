"""The backend protocol: a backend only translates requests into a model's answers.

One method is required (``generate``); the scoring capabilities have defaults that raise :class:`Unsupported` with
the reason, so the runner records the method as skipped instead of approximating it. The runner
(``bias_validity.probes.collect``) owns the design, parsing, storage and resume.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Backend", "Capability", "Completion", "GenerationRequest", "Unsupported"]


class Capability:
    """Names of what a backend can do beyond plain generation."""

    CHAT = "chat"  #: follows instructions (an instruction-tuned model): implicit, ablated, explicit, reflection
    CHOICE_LOGPROBS = "choice_logprobs"  #: exact log P(option | prompt) for a closed set of answers
    SEQUENCE_LOGPROBS = "sequence_logprobs"  #: log P(text) of whole sentences (logprob method)
    EMBEDDING = "embedding"  #: word vectors (embedding / WEAT method)


class Unsupported(Exception):
    """The backend cannot do this; the message is the reason shown to the user."""


@dataclass(frozen=True)
class GenerationRequest:
    """One chat request: the messages, and the decoding settings needed to ask again."""

    messages: tuple[dict[str, str], ...]
    seed: int
    temperature: float = 0.7
    max_new_tokens: int = 24
    extra: dict[str, object] = field(default_factory=dict)


@dataclass(frozen=True)
class Completion:
    """What came back for one request: the text, or the error that stopped it (never both)."""

    text: str | None
    error: str | None = None


class Backend(ABC):
    """A model reachable by the toolkit.

    ``name`` is the value written to the ``model`` column (backend, model, revision/quantisation);
    ``capabilities`` lists the :class:`Capability` names it supports; ``provenance`` records what is needed to
    rebuild it (file hash, revision, server URL without secrets); ``identity`` is the part of it that changes
    answers (the name and the weights' hash or revision), compared when a run is resumed.
    """

    name: str
    capabilities: frozenset[str] = frozenset()

    @property
    def identity(self) -> dict[str, object]:
        """What makes this model's answers this model's: by default its name."""
        return {"name": self.name}

    @property
    def provenance(self) -> dict[str, object]:
        return {"name": self.name}

    @abstractmethod
    def generate(self, requests: Sequence[GenerationRequest]) -> list[Completion]:
        """Answer each chat request (same order as ``requests``)."""

    def choice_logprobs(
        self, prompts: Sequence[tuple[dict[str, str], ...]], options: Sequence[Sequence[str]]
    ) -> list[list[float]]:
        """log P(option | chat prompt) of each complete answer option, summed over its tokens."""
        raise Unsupported(f"{self.name} does not provide answer log-probabilities")

    def sequence_logprobs(self, texts: Sequence[str]) -> list[float]:
        """log P(text) of each plain sentence under the model, summed over its tokens."""
        raise Unsupported(f"{self.name} does not provide sequence log-probabilities")

    def embed_words(self, words: Sequence[str]) -> np.ndarray:
        """One vector per word or phrase, shape (len(words), dim)."""
        raise Unsupported(f"{self.name} does not provide word embeddings")

    def close(self) -> None:
        """Release resources (connections, memory)."""
