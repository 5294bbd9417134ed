"""The ``fit`` and ``compare`` commands on a real SQLite store (real sampler, tiny run that must fail the gate)."""

from __future__ import annotations

import json

import pytest
from test_bayes_model import cells_to_responses

from bias_validity.cli import main
from bias_validity.probes.store import write_responses
from bias_validity.psychometrics.bayes import simulate_study


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    sim = simulate_study(units=2, traits=1, items=3, templates=1, orders=1, reps=8, seed=5, ordinal_methods=(),
                         score_methods=())  # fmt: skip
    sim = {k: v.rename(columns={"unit": "model", "trait": "dimension"}) for k, v in sim.items()}
    path = tmp_path_factory.mktemp("fitcli") / "study.sqlite"
    write_responses(cells_to_responses(sim, refusals=1), path)
    return path


def test_fit_json_reports_a_failed_gate_with_exit_status_1(store, tmp_path, capsys):
    # 30, then 60 draws x 2 chains cannot reach ESS 400: the gate must fail, loudly, and the posterior is still written
    out = tmp_path / "fit.nc"
    code = main(["fit", str(store), "--json", "--out", str(out), "--draws", "30", "--tune", "100", "--chains", "2",
                 "--max-draws", "60"])  # fmt: skip
    captured = capsys.readouterr()
    report = json.loads(captured.out)
    assert code == 1
    assert "FAILED" in captured.err
    diag = report["diagnostics"]
    assert set(diag) == {"max_rhat", "min_ess_bulk", "min_ess_tail", "divergences", "passed", "draws"}
    assert diag["passed"] is False and diag["min_ess_bulk"] < 400
    assert diag["draws"] == (30 if diag["divergences"] else 60)  # retried with twice the draws unless it diverged
    assert f"with {diag['draws']} draws per chain" in captured.err
    rec = report["quantities"][0]
    assert list(rec) == ["quantity", "model", "dimension", "method", "mean", "hdi_low", "hdi_high", "p_direction"]
    kinds = {r["quantity"] for r in report["quantities"]}
    assert kinds == {"sc", "ablation_drop_ratio", "model_contrast", "latent_correlation"}
    assert out.stat().st_size > 0


def test_compare_refuses_an_unknown_model_with_exit_status_2(store, capsys):
    assert main(["compare", str(store), "--models", "u0", "nobody"]) == 2
    assert "'nobody' is not in" in capsys.readouterr().err


def test_fit_refuses_an_unknown_sampler(store):
    with pytest.raises(SystemExit) as exc:
        main(["fit", str(store), "--sampler", "stan"])
    assert exc.value.code == 2
