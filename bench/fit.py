"""Benchmark and calibration of the hierarchical Bayesian fit (bias_validity.psychometrics.bayes).

Parts (run all by default; select with --part):

- ``samplers``: the same demo-size model (2 models x 6 dimensions x 5 methods x 8 items x 3 templates x 4 orders)
  fitted with each NUTS backend; wall time (compile + sampling), CPU time, min bulk ESS over the reported
  quantities and which quantity it is of, ESS per second, leapfrog steps per draw, gate verdict.
- ``scale``: the paper-scale workload (6 models x 6 dimensions x 5 methods x 12 items x 3 templates x 2 orders x 20
  repetitions; each model's own deviations unless ``--shared-only``) fitted on aggregated cells with the default
  settings until it passes the gate (retried as a fit is),
  with min-ESS per second of wall time (compile included), the figures above, the least ESS of fit seeds 1 to
  ``--fit-seeds`` (4) and min-ESS per second at their mean, the model's free values and the time
  of one gradient (so wall = compile + chains x iterations x steps x gradient / cores can be read off; on PyTensor's
  graph too, ``gradient_ms_graph``, the fused cell kernels' baseline); the same
  at 10x repetitions; and a naive per-trial model
  (one Bernoulli / categorical term per answer, same parameters, same sampler, shorter chains; ``--naive-draws 0``
  skips it).
- ``demo``: the demo store (``--store``, written by ``bias-validity demo``) fitted with the toolkit's defaults on
  seeds 0-4: per seed wall time, draws per chain, each retry's line (what failed, what the retry changed), min
  bulk/tail ESS of the identified quantities, the gate and which quantities were labelled not identified.
- ``large``: a simulated large imported study (4 models x 8 dimensions x 100 items x 15 templates x 2 binary methods,
  one answer in a random quarter of the cells: about 24,000 answers) fitted to the gate with the defaults, with
  the time in sampling (compile and NUTS, every attempt) apart from the rest and the process's peak memory.
- ``real``: a study (one per ``--real-seeds``, 0 by default; peak memory is the process's so far) shaped like
  published ones (:func:`bias_validity.simulate.real_shaped.simulate_real_shaped`: 4 base and tuned models x 3
  dimensions x 280 items x 15 wordings x 2 methods, 25,000 answers, most cells holding
  one, models reacting to wordings and items in their own ways) fitted with ``fit_study`` with each model's own
  deviations (``unit_effects``; ``--shared-only`` without, the baseline: run each in its own process for its peak
  memory), otherwise the defaults: wall
  time, draws, target acceptance, each retry's line, gate, peak memory, the saved fit's size, the predictive
  check's share of groups outside per method,
  how many of the 12 posterior new-item gaps' HDIs cover the truth and how many agree with the classical
  item-cluster gap within 2 combined standard errors; and the time of one gradient of its model with the fused cell
  kernels and on PyTensor's graph (``build_model(fused=False)``, the baseline), in the same process.
- ``real-coverage``: ``--replications`` (20) smaller real-shaped studies (40 items per dimension, 10 wordings, 6,000
  answers), each fitted with the defaults (with or without ``--shared-only``): coverage of the truth by the 95%
  new-item gap HDIs, the share of gaps agreeing with the classical ones, the predictive check's shares outside.
- ``coverage``: N simulated studies with known parameters (one compiled model, new data each time; 4 chains x 500
  draws after 500 warm-up): share of 90% HDIs of SC and of the explicit-implicit gap that contain the truth.

Every part samples, summarises and gates through the library's own step
(:func:`bias_validity.psychometrics.bayes.fit_to_gate`, which runs ``summarise_fit`` and the retry loop of every
fit), so what is measured here is what ``bias-validity fit`` does; only the sampler call is wrapped (timed, or a
compiled model reused with new data).

The last line printed is one JSON object with every figure, as ratios where a baseline exists.
Usage: python bench/fit.py [--part samplers scale demo large real real-coverage coverage] [--studies 100]
       [--replications 20] [--real-seeds 0 1] [--shared-only] [--store demo/study.sqlite] [--fit-seeds 4]
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import io
import json
import os
import resource
import sys
import time

import numpy as np
import pandas as pd

from bias_validity.psychometrics.bayes import (
    FitConfig,
    build_model,
    fit_to_gate,
    index_design,
    prior_derived_draws,
    simulate_study,
)
from bias_validity.psychometrics.bayes.hierarchical import quantity_label
from bias_validity.psychometrics.bayes.sampling import SampleRun, sample, single_threaded_blas

COLS = {"unit": "model", "trait": "dimension"}
METHODS = {
    "binary_methods": ("implicit", "ablated"),
    "ordinal_methods": ("explicit", "reflection"),
    "score_methods": ("logprob",),
}


def _cpu() -> float:
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def _study(**kw) -> dict[str, pd.DataFrame]:
    return {k: v.rename(columns=COLS) for k, v in simulate_study(**METHODS, **kw).items()}


def _timed_sampler(cpu: list[float]):
    """The library's sampler, recording the CPU time of each attempt (its wall time is the run's ``seconds``)."""

    def run(model, config: FitConfig) -> SampleRun:
        start = _cpu()
        out = sample(model, config)
        cpu.append(_cpu() - start)
        return out

    return run


def _steps_per_draw(idata) -> float:
    """Mean leapfrog steps per kept draw over all chains (nutpie and PyMC record ``n_steps``, numpyro ``num_steps``):
    with the time of one gradient (:func:`_gradient_ms`), what a draw costs."""
    stats = idata["sample_stats"]
    for name in ("n_steps", "num_steps"):
        if name in stats:
            return round(float(np.mean(stats[name])), 2)
    return float("nan")


def _least_ess(table: pd.DataFrame) -> str:
    """The gated quantity with the least bulk ESS (``sc[m, race, implicit]``): the quantity the bench's ESS per
    second is the ESS of."""
    gated = table[table["estimable"] & table.get("identified", True)]
    return quantity_label(gated.loc[gated["ess_bulk"].idxmin()])


def _gradient_ms(model, evaluations: int = 1000) -> float:
    """Milliseconds per evaluation of the log-density and its gradient at the initial point, compiled by PyTensor's
    numba backend as nutpie's is (called from Python here, so a few microseconds above nutpie's own calls): the
    cost of one leapfrog step on one core. Best of 3 runs of ``evaluations``."""
    import pytensor

    fn = pytensor.function(model.value_vars, [model.logp(), model.dlogp()], mode="NUMBA")
    point = model.initial_point()
    values = [point[v.name] for v in model.value_vars]
    fn(*values)
    runs = []
    for _ in range(3):
        start = time.perf_counter()
        for _ in range(evaluations):
            fn(*values)
        runs.append((time.perf_counter() - start) / evaluations)
    return round(1000 * min(runs), 3)


def _figures(gated, cpu: list[float]) -> dict[str, object]:
    """The figures of a fit's last attempt: sampling wall and CPU time, min bulk ESS and the quantity it is of, ESS
    per second, leapfrog steps per draw, the gate."""
    wall, gate = gated.attempts[-1]["seconds"], gated.gate
    ess = float(gate["min_ess_bulk"])
    return {
        "wall_s": round(wall, 1),
        "cpu_s": round(cpu[-1], 1),
        "min_ess_bulk": round(ess, 1),
        "min_ess_quantity": _least_ess(gated.table),
        "ess_per_s": round(ess / wall, 2),
        "steps_per_draw": _steps_per_draw(gated.run.idata),
        "passed": gate["passed"],
        "max_rhat": round(gate["max_rhat"], 4),
        "divergences": gate["divergences"],
        "target_accept": gated.config.target_accept,
    }


def _fit(design, *, sampler="nutpie", draws=1000, tune=1000, chains=4, model=None) -> dict[str, object]:
    """One attempt (no retry), summarised and gated by the library's own post-sampling step
    (:func:`bias_validity.psychometrics.bayes.summarise_fit`, through :func:`fit_to_gate`)."""
    config = FitConfig(sampler=sampler, draws=draws, tune=tune, chains=chains, seed=1, max_draws=None)
    cpu: list[float] = []
    model = build_model(design, fused=config.fused) if model is None else model
    gated = fit_to_gate(model, design, config, run_sampler=_timed_sampler(cpu))
    return _figures(gated, cpu)


def _fit_to_gate(design, *, most: int = 8000, model=None, seed: int = 1) -> dict[str, object]:
    """Fit with the default settings, retried as a fit is (the library's :func:`fit_to_gate`, which retries as
    :meth:`FitConfig.retry` says: smaller steps after divergences, else twice the draws, at most ``most``) until
    the gate passes: the time to a posterior that passes, counting the failed attempts. A ``model`` this process has
    sampled before is not compiled again, so its time is the sampling's alone."""
    cpu: list[float] = []
    gated = fit_to_gate(
        build_model(design) if model is None else model,
        design,
        FitConfig(seed=seed, max_draws=most),
        run_sampler=_timed_sampler(cpu),
        rebuild=lambda non_centred: build_model(design, non_centred=non_centred),
    )
    total = sum(round(a["seconds"], 1) for a in gated.attempts)
    return {
        **_figures(gated, cpu),
        "draws": gated.config.draws,
        "attempts": len(gated.attempts),
        "wall_to_gate_s": round(total, 1),
    }


def part_samplers(samplers: list[str]) -> dict[str, object]:
    sim = _study(units=2, traits=6, items=8, templates=3, orders=4, reps=10, seed=1)
    design = index_design(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"])
    out = {}
    for s in samplers:
        res = _fit(design, sampler=s)
        out[s] = res
        print(s, res, flush=True)
    return out


def _per_trial(design):
    """The same design with one likelihood term per answer (the naive model)."""
    b = design.binary
    rep = b.loc[b.index.repeat(b["n"])].copy()
    rep["k"] = np.concatenate([np.r_[np.ones(k), np.zeros(n - k)] for k, n in zip(b["k"], b["n"], strict=True)])
    rep["n"] = 1
    o, counts = design.ordinal, design.ordinal_counts
    per = counts.sum(axis=1)
    o_rep = o.loc[o.index.repeat(per)].reset_index(drop=True)
    levels = np.concatenate([np.repeat(np.arange(counts.shape[1]), row) for row in counts])
    onehot = np.eye(counts.shape[1], dtype=int)[levels]
    return dataclasses.replace(
        design, binary=rep.reset_index(drop=True).astype({"k": int}), ordinal=o_rep, ordinal_counts=onehot
    )


def part_scale(naive_draws: int, unit_effects: bool = True, fit_seeds: int = 4) -> dict[str, object]:
    """The paper-scale workload. Its least ESS (a latent correlation) swings by a factor of up to 1.7 between the
    trajectories of fit seeds, and any change of the compiled code (the last bit of a density) changes the trajectory:
    so beside fit seed 1's figures, fit seeds 2 to ``fit_seeds`` sample the same compiled model, and
    ``ess_per_s_at_mean_ess`` is their mean least ESS per second of seed 1's wall time to the gate (compile
    included)."""
    size = dict(units=6, traits=6, items=12, templates=3, orders=2, seed=3)
    sim = _study(reps=20, **size)
    design = index_design(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"], unit_effects=unit_effects)
    model = build_model(design)
    agg = _fit_to_gate(design, model=model)
    print("aggregated", agg, flush=True)
    seeds = {1: agg}
    for seed in range(2, fit_seeds + 1):
        seeds[seed] = _fit_to_gate(design, model=model, seed=seed)
        print(f"aggregated, fit seed {seed}", seeds[seed], flush=True)
    least_ess = [fit["min_ess_bulk"] for fit in seeds.values()]
    sim10 = _study(reps=200, **size)
    agg10 = _fit_to_gate(
        index_design(sim10["binary"], ordinal=sim10["ordinal"], scores=sim10["scores"], unit_effects=unit_effects)
    )
    print("aggregated x10 reps", agg10, flush=True)
    out = {
        "aggregated": agg,
        "aggregated_10x_reps": agg10,
        "min_ess_bulk_by_fit_seed": {seed: fit["min_ess_bulk"] for seed, fit in seeds.items()},
        "attempts_by_fit_seed": {seed: fit["attempts"] for seed, fit in seeds.items()},
        "ess_per_s_at_mean_ess": round(float(np.mean(least_ess)) / agg["wall_to_gate_s"], 2),
        "cells": len(design.binary) + len(design.ordinal) + len(design.scores),
        "free_values": int(sum(np.size(v) for v in model.initial_point().values())),
        "gradient_ms": _gradient_ms(model),
        "gradient_ms_graph": _gradient_ms(build_model(design, fused=False)),
        "trials": int(design.binary["n"].sum() + design.ordinal_counts.sum()),
        "time_ratio_10x_reps": round(agg10["wall_to_gate_s"] / agg["wall_to_gate_s"], 2),
    }
    if naive_draws > 0:
        naive_design = _per_trial(design)
        naive = _fit(naive_design, draws=naive_draws, tune=naive_draws, chains=4)
        print("naive per-trial", naive, len(naive_design.binary) + len(naive_design.ordinal), flush=True)
        out |= {"naive_per_trial": naive, "ess_per_s_ratio_vs_naive": round(agg["ess_per_s"] / naive["ess_per_s"], 1)}
    return out


class _Echo(io.StringIO):
    """Keeps what is written and passes it on to the real stderr."""

    def write(self, text: str) -> int:
        sys.__stderr__.write(text)
        return super().write(text)


def _fit_study_saying_retries(responses, config: FitConfig, *, echo: bool = True):
    """``fit_study`` with the fit's own lines on stderr (``config.progress``), returning the fit and its retry lines
    ("tail ESS 124 on sc[...]: retrying with 2000 draws"): one per attempt after the first, whatever it changed
    (draws, target, or which effects are drawn non-centred, which the fit's diagnostics do not record)."""
    from bias_validity.analyses.fit import fit_study

    said = _Echo() if echo else io.StringIO()
    with contextlib.redirect_stderr(said):
        fit = fit_study(responses, config=dataclasses.replace(config, progress=True))
    return fit, [line for line in said.getvalue().splitlines() if ": retrying " in line]


def part_demo(store: str, seeds: int) -> dict[str, object]:
    from bias_validity.analyses.study import read_study

    study = read_study(store)
    out = {}
    for seed in range(seeds):
        start = time.perf_counter()
        fit, retries = _fit_study_saying_retries(study, FitConfig(seed=seed), echo=False)
        labels = fit.quantities.loc[~fit.quantities["identified"], ["quantity", "model", "dimension", "method"]]
        diag = fit.diagnostics
        out[seed] = {
            "wall_s": round(time.perf_counter() - start, 1),
            "draws": diag["draws"],
            "target_accept": diag["target_accept"],
            "retries": retries,
            "passed": diag["passed"],
            "min_ess_bulk": round(diag["min_ess_bulk"]),
            "min_ess_tail": round(diag["min_ess_tail"]),
            "divergences": diag["divergences"],
            "min_ebfmi": round(diag["min_ebfmi"], 2),
            "not_identified": [" ".join(str(v) for v in r if v) for r in labels.itertuples(index=False)],
        }
        print("demo seed", seed, out[seed], flush=True)
    walls = [r["wall_s"] for r in out.values()]
    return {
        "seeds": out,
        "passed": sum(r["passed"] for r in out.values()),
        "max_wall_s": max(walls),
        "retries": sum(len(r["retries"]) for r in out.values()),
    }


def part_large() -> dict[str, object]:
    from bias_validity.psychometrics.bayes import fit_hierarchical

    sim = simulate_study(
        units=4,
        traits=8,
        items=100,
        templates=15,
        orders=1,
        reps=1,
        seed=7,
        binary_methods=("implicit", "ablated"),
        ordinal_methods=(),
        score_methods=(),
    )
    cells = sim["binary"].rename(columns=COLS)
    cells = cells.sample(frac=0.25, random_state=7).reset_index(drop=True)  # an imported study answers a subset
    start = time.perf_counter()
    fit = fit_hierarchical(cells, config=FitConfig(progress=True))  # a line on stderr per attempt and every 30 s
    wall = time.perf_counter() - start
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kilobytes on Linux
    diag = fit.diagnostics
    return {
        "answers": int(cells["n"].sum()),
        "cells": len(cells),
        "items": int(cells["item_id"].nunique()),
        "wall_s": round(wall, 1),
        "sampling_s": round(fit.seconds, 1),  # compile and NUTS, every attempt
        "draws": diag["draws"],
        "target_accept": diag["target_accept"],
        "passed": diag["passed"],
        "min_ess_bulk": round(diag["min_ess_bulk"]),
        "divergences": diag["divergences"],
        "peak_memory_gb": round(peak_gb, 2),
    }


def _real_figures(study, fit) -> dict[str, object]:
    """Of a fit of a real-shaped study: the predictive check's share of groups outside per method, and how many
    posterior new-item gaps' HDIs cover the truth and agree with the classical item-cluster gap within 2 combined
    standard errors."""
    from bias_validity.analyses.questions.gap import gap
    from bias_validity.psychometrics.bayes.ppc import share_outside

    key = ["model", "dimension"]
    post = fit.quantities[fit.quantities["quantity"] == "gap_explicit_implicit"].merge(study.gaps, on=key)
    classical = gap(study.responses).figures
    classical = classical[classical["interval"].str.startswith("item-cluster")].merge(post, on=key)
    z = 1.959964  # interval half-widths as standard errors (95% intervals)
    se_post = (classical["hdi_high"] - classical["hdi_low"]) / (2 * z)
    se_classical = (classical["ci_high"] - classical["ci_low"]) / (2 * z)
    agree = (classical["mean"] - classical["estimate"]).abs() <= 2 * np.hypot(se_post, se_classical)
    return {
        "ppc_share_outside": share_outside(fit.ppc).round(3).to_dict(),
        "gap_cells": len(post),
        "gap_hdi_covers_truth": int(((post["hdi_low"] <= post["gap"]) & (post["gap"] <= post["hdi_high"])).sum()),
        "gap_agrees_with_classical": int(agree.sum()),
        "gap_cells_compared": len(classical),
    }


def part_real(seed: int = 0, unit_effects: bool = True) -> dict[str, object]:
    import tempfile
    from pathlib import Path

    from bias_validity.simulate.real_shaped import simulate_real_shaped

    study = simulate_real_shaped(seed=seed)
    start = time.perf_counter()
    fit, retries = _fit_study_saying_retries(study.responses, FitConfig(unit_effects=unit_effects))
    wall = time.perf_counter() - start
    peak_gb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # kilobytes on Linux
    with tempfile.TemporaryDirectory() as tmp:
        size_mb = fit.save(Path(tmp) / "fit.nc").stat().st_size / 2**20
    diag = fit.diagnostics
    fused, graph = (_gradient_ms(build_model(fit.design, fused=f)) for f in (True, False))
    return {
        "answers": len(study.responses),
        "gradient_ms": fused,
        "gradient_ms_graph": graph,
        "gradient_ratio_graph_to_fused": round(graph / fused, 2),
        "wall_s": round(wall, 1),
        "sampling_s": round(fit.seconds, 1),
        "draws": diag["draws"],
        "target_accept": diag["target_accept"],
        "retries": retries,
        "passed": diag["passed"],
        "min_ess_bulk": round(diag["min_ess_bulk"]),
        "divergences": diag["divergences"],
        "peak_memory_gb": round(peak_gb, 2),
        "fit_file_mb": round(size_mb, 1),
        **_real_figures(study, fit),
    }


#: The replicated real-shaped study: the shape of ``part_real`` at a size 20 fits can afford on 2 cores.
REAL_REPLICATION = dict(n_items=40, n_templates=10, unseen_templates=3, n_answers=6000)


def part_real_coverage(replications: int, unit_effects: bool = True) -> dict[str, object]:
    """Replications of a smaller real-shaped study (:data:`REAL_REPLICATION`, seeds 0..N-1), each fitted by
    ``fit_study`` with the defaults: the share of the 95% new-item gap HDIs that cover the truth, of gaps that agree
    with the classical ones, the largest share of predictive-check groups outside per method, and the gate."""
    from bias_validity.simulate.real_shaped import simulate_real_shaped

    rows, start = [], time.perf_counter()
    for seed in range(replications):
        study = simulate_real_shaped(seed=seed, **REAL_REPLICATION)
        began = time.perf_counter()
        fit, retries = _fit_study_saying_retries(
            study.responses, FitConfig(seed=seed, unit_effects=unit_effects), echo=False
        )
        figures = _real_figures(study, fit)
        rows.append(
            {
                **figures,
                "seconds": time.perf_counter() - began,
                "passed": fit.diagnostics["passed"],
                "divergences": fit.diagnostics["divergences"],
                "draws": fit.diagnostics["draws"],
                "target_accept": fit.diagnostics["target_accept"],
                "retried": bool(retries),
                "redrawn_non_centred": sum("non-centred" in line for line in retries),
            }
        )
        print(seed, json.dumps(rows[-1]), *(f"  {line}" for line in retries), sep=" ", flush=True)
    cells = sum(r["gap_cells"] for r in rows)
    compared = sum(r["gap_cells_compared"] for r in rows)
    outside = pd.DataFrame([r["ppc_share_outside"] for r in rows])
    return {
        "replications": replications,
        "design": REAL_REPLICATION,
        "unit_effects": unit_effects,
        "gap_hdi_coverage": round(sum(r["gap_hdi_covers_truth"] for r in rows) / cells, 3),
        "gap_cells": cells,
        "gap_agreement_share": round(sum(r["gap_agrees_with_classical"] for r in rows) / compared, 3),
        "ppc_share_outside_max": outside.max().round(3).to_dict(),
        "ppc_share_outside_mean": outside.mean().round(3).to_dict(),
        "gate_passed_share": round(float(np.mean([r["passed"] for r in rows])), 3),
        "divergences_total": int(sum(r["divergences"] for r in rows)),
        "retried_share": round(float(np.mean([r["retried"] for r in rows])), 3),
        "redrawn_non_centred_share": round(float(np.mean([r["redrawn_non_centred"] > 0 for r in rows])), 3),
        "seconds_per_replication": round((time.perf_counter() - start) / replications, 1),
    }


def part_coverage(studies: int, prob: float = 0.9) -> dict[str, object]:
    """Each study is fitted by the library's :func:`fit_to_gate` (its post-sampling step and gate, one attempt)
    with a sampler that reuses one compiled nutpie model, given each study's answers; the designs share one
    structure, so the derived prior draws of identification are drawn once."""
    import nutpie

    size = dict(units=2, traits=2, items=6, templates=2, orders=2, reps=20)
    first = _study(seed=0, **size)
    design = index_design(first["binary"], ordinal=first["ordinal"], scores=first["scores"])
    model = build_model(design)
    compiled = nutpie.compile_pymc_model(model)
    prior = prior_derived_draws(model, design)
    hits: dict[str, list[bool]] = {"sc": [], "gap_explicit_implicit": []}
    passed, start = 0, time.perf_counter()
    for seed in range(studies):
        sim = _study(seed=seed, **size)
        d = index_design(sim["binary"], ordinal=sim["ordinal"], scores=sim["scores"])
        data = {
            "k": d.binary["k"].to_numpy(dtype="int64"),
            "likert_counts": d.ordinal_counts.astype("int64"),
            "score_z": d.scores["z"].to_numpy(dtype=float),
        }

        def run_compiled(_model, config: FitConfig, data=data) -> SampleRun:
            began = time.perf_counter()
            with single_threaded_blas():
                idata = nutpie.sample(
                    compiled.with_data(**data),
                    draws=config.draws,
                    tune=config.warm_up,
                    chains=config.chains,
                    seed=config.seed,
                    target_accept=config.target_accept,
                    progress_bar=False,
                )
            return SampleRun(idata=idata, sampler="nutpie", seconds=time.perf_counter() - began)

        config = FitConfig(draws=500, tune=500, chains=4, seed=seed, hdi_prob=prob, max_draws=None)
        gated = fit_to_gate(model, d, config, prior=prior, run_sampler=run_compiled)
        passed += gated.gate["passed"]
        truth = sim["truth"].set_index(["model", "dimension", "method"])["sc"]
        for r in gated.table.itertuples():
            if r.quantity == "sc":
                true = truth[(r.model, r.dimension, r.method)]
            elif r.quantity == "gap_explicit_implicit":
                true = truth[(r.model, r.dimension, "explicit")] - truth[(r.model, r.dimension, "implicit")]
            else:
                continue
            hits[r.quantity].append(bool(r.hdi_low <= true <= r.hdi_high))
        if seed % 5 == 4:
            print(seed + 1, {k: round(float(np.mean(v)), 3) for k, v in hits.items()}, flush=True)
    return {
        "studies": studies,
        "hdi_prob": prob,
        "gate_passed_share": passed / studies,
        "seconds_per_study": round((time.perf_counter() - start) / studies, 1),
        **{f"coverage_{k}": round(float(np.mean(v)), 3) for k, v in hits.items()},
        **{f"intervals_{k}": len(v) for k, v in hits.items()},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--part",
        nargs="+",
        default=["samplers", "scale", "demo", "large", "real", "coverage"],
        choices=["samplers", "scale", "demo", "large", "real", "real-coverage", "coverage"],
    )
    parser.add_argument("--store", default="demo/study.sqlite", help="the demo store (part demo)")
    parser.add_argument("--seeds", type=int, default=5, help="fit seeds of the demo store (part demo)")
    parser.add_argument("--samplers", nargs="+", default=["nutpie", "pymc"])
    parser.add_argument("--studies", type=int, default=100)
    parser.add_argument(
        "--shared-only",
        action="store_true",
        help="parts scale, real and real-coverage: fit without the models' own deviations (the baseline)",
    )
    parser.add_argument(
        "--real-seeds", nargs="+", type=int, default=[0], help="seeds of the real-shaped studies of part real"
    )
    parser.add_argument("--replications", type=int, default=20, help="studies of part real-coverage")
    parser.add_argument("--naive-draws", type=int, default=300, help="draws of the naive per-trial fit (0: skip it)")
    parser.add_argument(
        "--fit-seeds", type=int, default=4, help="part scale: fit seeds 1 to N, whose mean least ESS it reports"
    )
    args = parser.parse_args()
    out: dict[str, object] = {"cpus": os.cpu_count(), "load_1min": round(os.getloadavg()[0], 1)}
    if "samplers" in args.part:
        out["samplers"] = part_samplers(args.samplers)
    if "scale" in args.part:
        out["scale"] = part_scale(args.naive_draws, unit_effects=not args.shared_only, fit_seeds=args.fit_seeds)
    if "demo" in args.part:
        out["demo"] = part_demo(args.store, args.seeds)
    if "large" in args.part:
        out["large"] = part_large()
    if "real" in args.part:
        out["real"] = {seed: part_real(seed, unit_effects=not args.shared_only) for seed in args.real_seeds}
    if "real-coverage" in args.part:
        out["real_coverage"] = part_real_coverage(args.replications, unit_effects=not args.shared_only)
    if "coverage" in args.part:
        out["coverage"] = part_coverage(args.studies)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
