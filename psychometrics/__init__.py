"""Statistics that know nothing of LLMs: intervals, reliability, validity and Bayesian models."""
