"""The six reviewer questions (ARCHITECTURE.md, Q1-Q6), one module each, each returning a ``QuestionResult``."""

from analyses.questions.gap import gap
from analyses.questions.reflection import reflection
from analyses.questions.reliability import reliability
from analyses.questions.simulate import simulate_responses

__all__ = ["reliability", "gap", "reflection", "simulate_responses"]
