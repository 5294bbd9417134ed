"""The six reviewer questions (ARCHITECTURE.md, Q1-Q6), one module each, each returning a ``QuestionResult``."""

from analyses.questions.convergent import convergent, item_scores, mtmm_tables
from analyses.questions.framing import framing
from analyses.questions.gap import gap
from analyses.questions.reflection import reflection
from analyses.questions.reliability import reliability
from analyses.questions.scaling import scaling
from analyses.questions.simulate import simulate_responses

__all__ = [
    "reliability",
    "convergent",
    "framing",
    "gap",
    "reflection",
    "scaling",
    "item_scores",
    "mtmm_tables",
    "simulate_responses",
]
