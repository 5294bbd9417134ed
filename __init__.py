"""bias-validity: whether an LLM bias measurement is reliable and valid, with intervals instead of bare scores.

One import name; its parts load on first use, so ``import bias_validity as bv`` is instant::

    bv.probes         what is asked and what came back: stimuli, templates, backends, collection, the store
    bv.psychometrics  statistics that know nothing of LLMs: intervals, reliability, validity, Bayesian models
    bv.analyses       the six reviewer questions over a responses table
    bv.reports        rendering only: the HTML and Markdown validity reports
    bv.cli            the ``bias-validity`` command and the demo

Examples
--------
>>> import bias_validity as bv
>>> bv.psychometrics.wilson_interval(7, 10)["estimate"].item()
0.7
"""

from __future__ import annotations

from importlib import metadata

import lazy_loader

__getattr__, _, _SUBPACKAGES = lazy_loader.attach(
    __name__, submodules=["probes", "psychometrics", "analyses", "reports", "cli"]
)
__all__ = ["__version__", "PROVENANCE_PACKAGES", "package_versions", *_SUBPACKAGES]

#: Distributions whose versions change what a study collects or computes; recorded with every run and report.
PROVENANCE_PACKAGES: tuple[str, ...] = (
    "bias-validity",
    "numpy",
    "pandas",
    "scipy",
    "statsmodels",
    "pingouin",
    "pymc",
    "arviz",
    "nutpie",
    "torch",
    "transformers",
    "gguf",
    "httpx",
)

try:
    __version__ = metadata.version("bias-validity")
except metadata.PackageNotFoundError:  # pragma: no cover - run from a source tree that was never installed
    __version__ = "0+unknown"


def package_versions() -> dict[str, str | None]:
    """Installed version of each of :data:`PROVENANCE_PACKAGES` (None where one is not installed)."""
    versions: dict[str, str | None] = {}
    for name in PROVENANCE_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def __dir__() -> list[str]:
    return sorted(__all__)
