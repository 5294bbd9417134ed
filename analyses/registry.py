"""The reviewer questions, registered once each with their number and title; the report iterates this registry.

A question is one module with one function ``(study, posterior, config) -> QuestionResult`` decorated with
:func:`register_question`. Adding one is that module plus its import in :mod:`bias_validity.analyses.questions`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

    from bias_validity.analyses.config import AnalysisConfig
    from bias_validity.analyses.result import QuestionResult
    from bias_validity.analyses.study import Study

__all__ = ["Ask", "Question", "register_question", "unregister_question", "registered_questions", "question_title"]

#: A question's one function: the study, the fit's derived quantities (or None) and the analysis settings.
Ask = Callable[["Study", "pd.DataFrame | None", "AnalysisConfig"], "QuestionResult"]
_REGISTRY: dict[str, Question] = {}
_NUMBER = re.compile(r"Q(\d+)")


@dataclass(frozen=True)
class Question:
    """One registered reviewer question."""

    number: str  #: "Q1", "Q2", ...
    title: str  #: the title every result, summary and report gives it
    ask: Ask


def register_question(number: str, title: str) -> Callable[[Ask], Ask]:
    """Register the decorated function as question ``number`` (``"Q<n>"``) titled ``title``.

    Examples
    --------
    >>> @register_question("Q99", "A toy question")
    ... def toy(study, posterior, config): ...
    >>> question_title("Q99")
    'A toy question'
    >>> unregister_question("Q99")
    """
    if not _NUMBER.fullmatch(number):
        raise ValueError(f"question number {number!r} must be 'Q' and a number, e.g. 'Q7'")
    if not title.strip():
        raise ValueError(f"question {number}: the title is empty")

    def decorate(ask: Ask) -> Ask:
        known = _REGISTRY.get(number)
        if known is not None and known.ask is not ask and known.ask.__qualname__ != ask.__qualname__:
            raise ValueError(f"question {number} is already registered ({known.title!r})")
        _REGISTRY[number] = Question(number, title, ask)
        return ask

    return decorate


def unregister_question(number: str) -> None:
    """Remove question ``number`` from the registry (a no-op when it is not registered)."""
    _REGISTRY.pop(number, None)


def registered_questions() -> list[Question]:
    """Every registered question in number order (Q1, Q2, ..., Q10), the six built-in ones included."""
    import bias_validity.analyses.questions  # noqa: F401 - importing the package registers the built-in questions

    return sorted(_REGISTRY.values(), key=lambda q: int(_NUMBER.fullmatch(q.number).group(1)))


def question_title(number: str) -> str:
    """The title of a registered question; a one-line error lists the registered ones."""
    found = {q.number: q.title for q in registered_questions()}
    if number not in found:
        raise ValueError(f"unknown question {number!r}; registered questions are {', '.join(found)}")
    return found[number]
