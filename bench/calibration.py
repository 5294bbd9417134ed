"""Simulation-based calibration of the hierarchical model on two designs (Talts et al. 2018; Modrak et al. 2023).

- ``sparse``: shaped like the demo store: 2 models x 6 dimensions x 2 items, 2 templates x 2 orders, 2 answers per
  cell, methods implicit and ablated (binary), explicit and reflection (Likert), logprob (score).
- ``paper``: a paper-like design, data-rich per cell: 3 models x 3 dimensions x 8 items, 3 templates x 2 orders,
  20 answers per cell, the same methods.

The model gives each model its own deviations from the shared item, wording and order effects and its own cutpoint
spacing (``FitConfig.unit_effects``, the fit's default), drawn from their priors like the rest; ``--shared-only``
fits the model without them.

Each replication draws parameters from the model's prior, simulates the answers of the design, fits it with nutpie
(the model built from its own answers, compiled once per centring of its deviations) and ranks every reported
quantity's truth among 99 thinned posterior draws (a fit that diverged is retried at a higher target acceptance, as
a fit is). Per design and quantity family the last line reports the chi-square p-value of rank uniformity (10 bins),
the coverage of the central 50% and 90% intervals, the share of fits that passed the diagnostics gate and, of those
that failed, how many missed each of its thresholds and in which quantity families their worst R-hat and ESS lay; a
PNG shows the rank histograms.

A study too long for one sitting runs in parts under different seeds, each saving its ranks (``--ranks``);
``--pool a.npz b.npz`` then reports the families and gates of all their replications together (the
replications of different seeds are independent draws from the prior).

Usage: python bench/calibration.py [--sparse 200] [--paper 100] [--draws 500] [--seed 1] [--png calibration.png]
                                   [--ranks r.npz] [--shared-only]
       python bench/calibration.py --pool r1.npz r2.npz [--png calibration.png]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from bias_validity.psychometrics.bayes import FitConfig, index_design, simulate_study
from bias_validity.psychometrics.bayes.diagnostics import GATE, missed_thresholds
from bias_validity.psychometrics.bayes.sbc import SBCResult, family_summary, simulation_based_calibration

METHODS = {
    "binary_methods": ("implicit", "ablated"),
    "ordinal_methods": ("explicit", "reflection"),
    "score_methods": ("logprob",),
}
DESIGNS = {
    "sparse": dict(units=2, traits=6, items=2, templates=2, orders=2, reps=2),
    "paper": dict(units=3, traits=3, items=8, templates=3, orders=2, reps=20),
}
BINS = 10
RANKS_OF = 99  #: posterior draws each truth is ranked among
GATE_FIGURES = [*GATE, "failing"]  #: the numbers saved of each replication's gate, beside its worst families
WORST_FAMILIES = ["rhat_family", "ess_family"]


def _design(name: str, unit_effects: bool):
    sim = simulate_study(**METHODS, **DESIGNS[name], seed=0)
    sim = {k: v.rename(columns={"unit": "model", "trait": "dimension"}) for k, v in sim.items()}
    return index_design(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"], unit_effects=unit_effects)


def _progress(name: str, every: int, saved: dict[str, np.ndarray], path: str | None):
    """Reports every ``every`` replications on stderr and, with a ``path``, saves the ranks of every replication done
    (``saved`` holds the designs already finished), so a run stopped early keeps them for ``--pool``."""

    def report(r: int, result: SBCResult) -> None:
        if path is not None:
            saved.update(
                {
                    f"{name}_ranks": result.ranks[: r + 1],
                    f"{name}_passed": result.passed[: r + 1],
                    f"{name}_labels": result.labels.to_numpy(dtype=str),
                    f"{name}_label_columns": np.array(result.labels.columns, dtype=str),
                    f"{name}_gates": pd.DataFrame(result.gates)[GATE_FIGURES].to_numpy(dtype=float),
                    f"{name}_gate_families": pd.DataFrame(result.gates)[WORST_FAMILIES].to_numpy(dtype=str),
                }
            )
            partial = f"{path}.partial.npz"  # written whole, then renamed: a kill mid-write keeps the last file
            np.savez_compressed(partial, **saved)
            os.replace(partial, path)
        if (r + 1) % every == 0:
            print(
                f"{name}: {r + 1} replications, {result.seconds:.0f} s, gate passed "
                f"{result.passed[: r + 1].mean():.2f}",
                file=sys.stderr,
                flush=True,
            )

    return report


def _families(labels: pd.DataFrame, ranks: np.ndarray) -> dict[str, object]:
    """Each quantity family's rank uniformity and interval coverage (:func:`family_summary`), rounded."""
    return {
        k: {m: round(v, 3) if isinstance(v, float) else v for m, v in f.items()}
        for k, f in family_summary(labels, ranks, RANKS_OF, bins=BINS).items()
    }


def _gate_reasons(gates: pd.DataFrame) -> dict[str, object]:
    """Why the fits that failed the gate failed: of those with their gate's figures (``gates``, one row per
    replication, runs saved before the figures were kept have none), how many missed each threshold of
    :data:`GATE`, and the quantity families of their highest R-hat and lowest ESS where those missed."""
    missed = pd.DataFrame(
        [{key: key in missed_thresholds(row) for key in GATE} for row in gates.to_dict("records")],
        columns=list(GATE),
        dtype=bool,
    )
    failed = missed.any(axis=1)
    return {
        "with_figures": len(gates),
        "failed": int(failed.sum()),
        "missed": {key: int(n) for key, n in missed.sum().items()},
        "rhat_family": gates.loc[missed["max_rhat"], "rhat_family"].value_counts().to_dict(),
        "ess_family": gates.loc[missed["min_ess_bulk"] | missed["min_ess_tail"], "ess_family"].value_counts().to_dict(),
    }


def _saved_gates(saved, name: str) -> pd.DataFrame:
    """The gate figures and worst families of a saved design's replications (none in runs saved before they were)."""
    if f"{name}_gates" not in saved:
        return pd.DataFrame(columns=GATE_FIGURES + WORST_FAMILIES)
    figures = pd.DataFrame(saved[f"{name}_gates"], columns=GATE_FIGURES)
    return figures.join(pd.DataFrame(saved[f"{name}_gate_families"], columns=WORST_FAMILIES))


def _pooled(paths: list[str]) -> dict[str, tuple[pd.DataFrame, np.ndarray, np.ndarray, pd.DataFrame]]:
    """Labels, ranks, gate verdicts and gate figures per design of the runs saved with ``--ranks``, replications
    stacked."""
    parts: dict[str, list] = {}
    for path in paths:
        with np.load(path) as saved:
            for name in DESIGNS:
                if f"{name}_ranks" not in saved:
                    continue
                labels = pd.DataFrame(saved[f"{name}_labels"], columns=saved[f"{name}_label_columns"])
                if name in parts and not parts[name][0][0].equals(labels):
                    sys.exit(f"{path}: the {name} design's quantities differ from the first file's")
                parts.setdefault(name, []).append(
                    (labels, saved[f"{name}_ranks"], saved[f"{name}_passed"], _saved_gates(saved, name))
                )
    return {
        name: (
            runs[0][0],
            np.concatenate([run[1] for run in runs]),
            np.concatenate([run[2] for run in runs]),
            pd.concat([run[3] for run in runs], ignore_index=True),
        )
        for name, runs in parts.items()
    }


def _histograms(results: dict[str, tuple[pd.DataFrame, np.ndarray]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    families = {name: list(dict.fromkeys(labels["quantity"])) for name, (labels, _) in results.items()}
    cols = max(len(f) for f in families.values())
    fig, axes = plt.subplots(len(results), cols, figsize=(2.6 * cols, 2.4 * len(results)), squeeze=False)
    for row, (name, (labels, all_ranks)) in enumerate(results.items()):
        for col in range(cols):
            ax = axes[row, col]
            if col >= len(families[name]):
                ax.axis("off")
                continue
            family = families[name][col]
            ranks = all_ranks[:, (labels["quantity"] == family).to_numpy()].ravel()
            ax.hist(ranks, bins=np.linspace(0, RANKS_OF + 1, BINS + 1), color="#4c72b0")
            expected = ranks.size / BINS
            band = 1.96 * np.sqrt(expected * (1 - 1 / BINS))  # binomial 95% band of one bin's count
            ax.axhspan(expected - band, expected + band, color="0.85", zorder=0)
            ax.set_title(f"{name}: {family}", fontsize=8)
            ax.tick_params(labelsize=7)
    fig.suptitle("SBC rank histograms (grey: 95% band of a uniform histogram)", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sparse", type=int, default=200, help="replications of the sparse design (default 200)")
    parser.add_argument("--paper", type=int, default=100, help="replications of the paper-like design (default 100)")
    parser.add_argument("--draws", type=int, default=500, help="draws (and warm-up) per chain (default 500)")
    parser.add_argument("--chains", type=int, default=4)
    parser.add_argument("--seed", type=int, default=1, help="seed of the prior draws and the fits (default 1)")
    parser.add_argument(
        "--shared-only", action="store_true", help="without each model's own deviations (FitConfig.unit_effects)"
    )
    parser.add_argument("--png", default="calibration.png", help="rank-histogram figure (default calibration.png)")
    parser.add_argument(
        "--ranks",
        help="also save every rank with its quantity's labels (.npz, after each replication), for tests per quantity "
        "or per replication and for --pool",
    )
    parser.add_argument(
        "--pool", nargs="+", metavar="NPZ", help="report the runs saved with --ranks together, fit none"
    )
    args = parser.parse_args()
    if args.pool:
        pooled = _pooled(args.pool)
        out = {
            name: {
                "replications": len(ranks),
                "gate_passed_share": round(float(passed.mean()), 3),
                "gate_failures": _gate_reasons(gates),
                "families": _families(labels, ranks),
            }
            for name, (labels, ranks, passed, gates) in pooled.items()
        }
        _histograms({name: (labels, ranks) for name, (labels, ranks, *_) in pooled.items()}, Path(args.png))
        print(json.dumps({"pooled": args.pool, **out, "png": str(args.png)}))
        return
    out: dict[str, object] = {
        "cpus": os.cpu_count(),
        "load_1min": round(os.getloadavg()[0], 1),
        "draws": args.draws,
        "chains": args.chains,
        "bins": BINS,
        "seed": args.seed,
        "unit_effects": not args.shared_only,
    }
    results, saved = {}, {}
    for name, count in (("sparse", args.sparse), ("paper", args.paper)):
        if count <= 0:
            continue
        start = time.perf_counter()
        res = simulation_based_calibration(
            _design(name, not args.shared_only),
            replications=count,
            draws=args.draws,
            tune=args.draws,
            chains=args.chains,
            ranks_of=RANKS_OF,
            seed=args.seed,
            progress=_progress(name, max(1, count // 10), saved, args.ranks),
        )
        results[name] = res
        out[name] = {
            "replications": count,
            "gate_passed_share": round(float(res.passed.mean()), 3),
            "gate_failures": _gate_reasons(pd.DataFrame(res.gates)),
            "retried_after_divergences_share": round(float((res.target_accept > FitConfig().target_accept).mean()), 3),
            "identified_share": round(float(res.identified.mean()), 3),
            "seconds_per_replication": round((time.perf_counter() - start) / count, 2),
            "families": _families(res.labels, res.ranks),
        }
        # each design's figures as soon as it is done (on stderr: the last stdout line stays the one JSON object)
        print(json.dumps({name: out[name]}), file=sys.stderr, flush=True)
    if results:
        _histograms({name: (res.labels, res.ranks) for name, res in results.items()}, Path(args.png))
        out["png"] = str(args.png)
    if results and args.ranks:
        out["ranks"] = str(args.ranks)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
