"""The ``fit`` and ``compare`` commands on a real SQLite store (real sampler, tiny run that must fail the gate)."""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from bias_validity.cli import main
from bias_validity.probes.store import write_responses
from bias_validity.psychometrics.bayes import simulate_study
from bias_validity.psychometrics.bayes.diagnostics import describe_gate
from bias_validity.simulate import cells_to_responses


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    sim = simulate_study(
        units=2, traits=1, items=3, templates=1, orders=1, reps=8, seed=5, ordinal_methods=(), score_methods=()
    )
    sim = {k: v.rename(columns={"unit": "model", "trait": "dimension"}) for k, v in sim.items()}
    path = tmp_path_factory.mktemp("fitcli") / "study.sqlite"
    write_responses(cells_to_responses(sim, refusals=1), path)
    return path


@pytest.fixture(scope="module")
def fitted(store):
    """``fit --json --out`` once: 30, then 60 draws x 2 chains cannot reach ESS 400, so the gate must fail; the HDI
    mass and the chance margin are given as flags."""
    out, err = io.StringIO(), io.StringIO()
    path = store.parent / "fit.nc"
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(
            [
                "fit",
                str(store),
                "--json",
                "--out",
                str(path),
                "--draws",
                "30",
                "--tune",
                "100",
                "--chains",
                "2",
                "--max-draws",
                "60",
                "--ci",
                "0.9",
                "--chance-margin",
                "0.1",
            ]
        )
    return code, out.getvalue(), err.getvalue(), path


def test_fit_flags_set_the_hdi_mass_and_chance_margin_of_the_saved_fit(fitted):
    from bias_validity.psychometrics.bayes import load_fit

    fit = load_fit(fitted[3])
    assert fit.quantities.attrs["hdi_prob"] == 0.9 and fit.config.hdi_prob == 0.9
    assert fit.quantities.attrs["chance_margin"] == 0.1 and fit.config.chance_margin == 0.1
    reasons = fit.quantities.loc[~fit.quantities["estimable"], "reason"]
    assert all("0.5 +/- 0.1" in r for r in reasons)


def test_report_refuses_a_saved_fit_at_another_ci_with_exit_status_2(store, fitted, tmp_path, capsys):
    path = fitted[3]
    out = tmp_path / "r.md"
    assert main(["report", str(store), "--fit", str(path), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and not out.exists()
    assert f"{path}: its HDIs are 90% intervals but the report's ci is 0.95; fit again with --ci 0.95" in err
    assert err.rstrip().endswith("or report with --ci 0.9")
    args = ["report", str(store), "--fit", str(path), "--out", str(out), "--ci", "0.9", "--n-resamples", "200"]
    assert main(args) == 1  # the saved fit failed its gate; the report is written at the fit's level
    assert out.stat().st_size > 0


def test_fit_json_reports_a_failed_gate_with_exit_status_1(fitted):
    code, stdout, stderr, out = fitted
    report = json.loads(stdout)
    assert code == 1
    assert f"FAILED its diagnostics gate ({describe_gate()})" in stderr
    diag = report["diagnostics"]
    assert set(diag) == {
        "max_rhat",
        "min_ess_bulk",
        "min_ess_tail",
        "divergences",
        "min_ebfmi",
        "max_depth_share",
        "passed",
        "not_identified",
        "draws",
        "target_accept",
    }
    assert diag["passed"] is False and diag["min_ess_bulk"] < 400
    # retried with twice the draws unless it diverged, and after divergences with smaller steps at the same draws
    assert diag["draws"] == (30 if diag["divergences"] else 60)
    assert diag["target_accept"] in (0.8, 0.95, 0.99)
    assert f"with {diag['draws']} draws per chain at target acceptance {diag['target_accept']}" in stderr
    # progress on stderr (off with --quiet): one line per attempt when it starts and when it ends
    assert "sampling 2 chains x (100 warm-up + 30 draws), nutpie\n" in stderr
    assert "sampled 2 chains x (100 warm-up + 30 draws), nutpie in " in stderr
    rec = report["quantities"][0]
    assert list(rec) == [
        "quantity",
        "model",
        "dimension",
        "method",
        "mean",
        "hdi_low",
        "hdi_high",
        "p_direction",
        "estimable",
        "reason",
        "contraction",
        "item_contrasts",
        "identified",
    ]
    # 3 items in one trait: 2 item contrasts per correlation, too few to identify it
    assert all(not r["identified"] for r in report["quantities"] if r["quantity"] == "latent_correlation")
    kinds = {r["quantity"] for r in report["quantities"]}
    assert kinds == {"sc", "sc_new_item", "ablation_retained_share", "model_contrast", "latent_correlation"}
    assert out.stat().st_size > 0


def test_compare_reuses_a_saved_fit_without_sampling(store, fitted, capsys, monkeypatch):
    from bias_validity.analyses.compare import compare_models
    from bias_validity.psychometrics.bayes import hierarchical, load_fit

    def no_sampling(*args, **kwargs):
        raise AssertionError("compare --fit sampled again")

    monkeypatch.setattr(hierarchical, "sample", no_sampling)
    path = fitted[3]
    assert main(["compare", "--fit", str(path), "--models", "u0", "u1", "--json"]) == 1  # the saved fit failed
    first = json.loads(capsys.readouterr().out)
    assert main(["compare", str(store), "--fit", str(path), "--models", "u0", "u1", "--json"]) == 1
    again = json.loads(capsys.readouterr().out)
    expected = compare_models(load_fit(path), "u0", "u1")
    assert first == again and len(first["comparisons"]) == len(expected) > 0
    assert [c["difference"] for c in first["comparisons"]] == pytest.approx(expected["difference"].tolist())
    assert first["diagnostics"]["passed"] is False


def test_compare_refuses_a_fit_of_other_answers(store, fitted, tmp_path, capsys):
    other = tmp_path / "other.sqlite"
    sim = simulate_study(
        units=2, traits=1, items=3, templates=1, orders=1, reps=8, seed=6, ordinal_methods=(), score_methods=()
    )
    write_responses(
        cells_to_responses({k: v.rename(columns={"unit": "model", "trait": "dimension"}) for k, v in sim.items()}),
        other,
    )
    assert main(["compare", str(other), "--fit", str(fitted[3]), "--models", "u0", "u1"]) == 2
    assert f"{fitted[3]} was fitted to other answers than {other}" in capsys.readouterr().err
    assert main(["report", str(other), "--fit", str(fitted[3]), "--out", str(tmp_path / "r.md")]) == 2


def test_compare_refuses_an_unknown_model_with_exit_status_2(store, capsys):
    assert main(["compare", str(store), "--models", "u0", "nobody"]) == 2
    assert "'nobody' is not in" in capsys.readouterr().err


def test_fit_refuses_an_unknown_sampler(store):
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(store), "--sampler", "stan"])
    assert exc.value.code == 2
