"""The six reviewer questions (the README's "What it is for", Q1-Q6), one module each, each a ``QuestionResult``."""

from bias_validity.analyses.questions.convergent import convergent, item_scores, mtmm_tables
from bias_validity.analyses.questions.framing import framing
from bias_validity.analyses.questions.gap import gap
from bias_validity.analyses.questions.reflection import reflection
from bias_validity.analyses.questions.reliability import reliability
from bias_validity.analyses.questions.scaling import scaling

__all__ = [
    "reliability",
    "convergent",
    "framing",
    "gap",
    "reflection",
    "scaling",
    "item_scores",
    "mtmm_tables",
]
