"""The HTML and Markdown renderers: section order, verdict rows, interval sources, banners, escaping, fallbacks."""

from __future__ import annotations

import base64
import io
import json
import re

import numpy as np
import pandas as pd
import pytest
from _support.html import parse_html, table_rows
from _support.reports import (
    IMG_ANSWER,
    SCRIPT_ANSWER,
    failed_diagnostics_report,
    injection_report,
    no_posterior_report,
    realistic_report,
)
from PIL import Image

from bias_validity.analyses.result import ValidityReport
from bias_validity.psychometrics.bayes.diagnostics import describe_gate
from bias_validity.reports import figures, render_html, render_markdown, write_report
from bias_validity.reports._sections import format_cell

ORDER = ["verdicts", "sc", "gap", "reliability", "mtmm", "ablation", "status", "diagnostics", "provenance", "examples"]


@pytest.fixture(scope="module")
def real():
    report = realistic_report()
    return report, render_html(report), render_markdown(report)


@pytest.fixture(scope="module")
def nopost():
    report = no_posterior_report()
    return report, render_html(report), render_markdown(report)


def _images(root) -> dict[str, Image.Image]:
    out = {}
    for img in root.iter("img"):
        src = img.attrs["src"]
        assert src.startswith("data:image/png;base64,")
        out[img.attrs["alt"]] = Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1])))
    return out


def test_sections_follow_the_brief_order(real):
    _, page, md = real
    ids = [s.attrs["id"] for s in parse_html(page).iter("section")]
    assert [i for i in ids if i in ORDER] == ORDER
    headings = [line[3:] for line in md.splitlines() if line.startswith("## ")]
    titles = [s.all_text() for s in parse_html(page).iter("h2")]
    assert headings == titles


def test_verdict_table_lists_every_question_in_order(real):
    report, page, _ = real
    rows = table_rows(parse_html(page), "verdict-table")
    assert rows == [[f"{q.question} {q.title}", q.verdict.value, q.summary, q.evidence] for q in report.questions]
    classes = [td.attrs["class"] for td in parse_html(page).iter("td") if "verdict" in td.attrs.get("class", "")]
    assert classes[:3] == ["verdict verdict-supported", "verdict verdict-inconclusive", "verdict verdict-not-supported"]


def test_forest_plot_shows_posterior_hdi_when_present(real):
    report, page, _ = real
    root = parse_html(page)
    alts = list(_images(root))
    forest = next(a for a in alts if a.startswith("Stereotypical score"))
    assert "posterior mean with HDI (hdi_prob=0.95)" in forest
    assert f"{(report.posterior['quantity'] == 'sc').sum()} rows" in forest
    assert "highest-density intervals" in page and "Wilson" not in forest


def test_forest_plot_falls_back_to_wilson_and_says_so(nopost):
    report, page, md = nopost
    images = _images(parse_html(page))
    forest = next(a for a in images if a.startswith("Stereotypical score"))
    assert "raw share with Wilson interval (ci=0.95, method=wilson, item_interval=" in forest
    assert f"{len(report.sc_table)} rows" in forest
    assert "No posterior is available: intervals are frequentist Wilson" in md
    gap = next(a for a in images if a.startswith("Explicit minus implicit"))
    drop = next(a for a in images if a.startswith("Ablation retained share R"))
    assert "(Q4)" in gap and "2 rows" in gap and "R: estimate with interval" in drop


def test_missing_parts_say_not_available(nopost):
    _, page, md = nopost
    for text in (
        "not available: no multitrait-multimethod matrix",
        "not available: no Bayesian fit in this report",
        "not available: no posterior (no Bayesian fit in this report)",
    ):
        assert text in page and text in md
    assert 'role="alert"' not in page


def test_empty_report_renders_every_section_as_not_available(tmp_path):
    empty = ValidityReport([], sc_table=pd.DataFrame(), status_counts=pd.DataFrame())
    page = write_report(empty, tmp_path / "r.html").read_text(encoding="utf-8")
    md = write_report(empty, tmp_path / "r.md").read_text(encoding="utf-8")
    assert "<img" not in page
    # every section has its own reason; all 15 sections say not available (the per-model matrix, Q6 and the
    # posterior predictive check among them)
    assert page.count('class="unavailable"') == 15
    assert md.count("*not available: ") == 15


def test_failed_diagnostics_show_a_banner_in_both_formats():
    report = failed_diagnostics_report()
    page, md = render_html(report), render_markdown(report)
    banners = [d for d in parse_html(page).iter("div") if d.attrs.get("role") == "alert"]
    assert len(banners) == 2  # top of the page and the diagnostics section
    assert banners[0].all_text().startswith("FAILED: the Bayesian fit did not pass")
    assert f"gate ({describe_gate()})" in banners[0].all_text()  # the thresholds the fit was held to
    assert "FAILED its diagnostics gate" in parse_html(page).iter("p").__next__().all_text()
    assert md.count("> **FAILED: the Bayesian fit") == 2
    diag = {r[0]: r[1] for r in _rows_after(page, "diagnostics")}
    assert diag == {
        "max_rhat": "1.080",
        "min_ess_bulk": "95.000",
        "min_ess_tail": "60.000",
        "divergences": "3",
        "passed": "False",
        "gate": describe_gate(),
    }


def test_passed_diagnostics_show_no_banner(real):
    _, page, md = real
    assert 'role="alert"' not in page and "FAILED" not in md


def _rows_after(page: str, section_id: str) -> list[list[str]]:
    section = next(s for s in parse_html(page).iter("section") if s.attrs["id"] == section_id)
    body = next(section.iter("tbody"))
    return [[td.all_text() for td in tr.iter("td")] for tr in body.iter("tr")]


def test_status_table_pivots_the_counts_without_losing_any(real):
    report, page, _ = real
    rows = _rows_after(page, "status")
    counts = report.status_counts
    assert len(rows) == counts.groupby(["model", "method"]).ngroups
    head = [
        th.all_text()
        for th in next(s for s in parse_html(page).iter("section") if s.attrs["id"] == "status").iter("th")
    ]
    assert head == ["model", "method", "ok", "refusal", "total"]
    for model, method, ok, refusal, total in rows:
        cell = counts[(counts["model"] == model) & (counts["method"] == method)].set_index("status")["n"]
        assert (int(ok), int(refusal), int(total)) == (cell.get("ok", 0), cell.get("refusal", 0), cell.sum())


def test_images_decode_with_sane_sizes(real):
    _, page, _ = real
    images = _images(parse_html(page))
    assert len(images) == 4  # forest, gap, MTMM heatmap, ablation
    for im in images.values():
        assert im.format == "PNG" and 300 <= im.width <= 3000 and 150 <= im.height <= 8000
    height = {alt.split(";")[0].split(":")[0]: im.height for alt, im in images.items()}
    # 54 SC rows against 18 gap rows: the forest plot is taller
    assert (
        height["Stereotypical score (SC) per model x dimension x method"]
        > 2 * height["Explicit minus implicit SC per model x dimension"]
    )


def test_model_text_is_escaped_in_html():
    page = render_html(injection_report())
    root = parse_html(page)
    assert not list(root.iter("script")), "an injected <script> became an element"
    assert {img.attrs["src"][:22] for img in root.iter("img")} == {"data:image/png;base64,"}
    assert not [e for e in root.iter() if "onerror" in e.attrs or e.tag in ("b", "i")]
    texts = [td.all_text() for td in root.iter("td")]
    assert SCRIPT_ANSWER in texts and IMG_ANSWER in texts and "hf:<b>bold</b>-model" in texts
    assert "<script>document.title='pwned'</script> 48 items" in texts
    assert "&lt;script&gt;document.title=&#x27;pwned&#x27;&lt;/script&gt;" in page


def test_model_text_is_escaped_in_markdown():
    md = render_markdown(injection_report())
    assert "<script" not in md and "<img" not in md and "<b>" not in md
    table = [line for line in md.split("## Example answers")[1].splitlines() if line.startswith("|")]
    for line in table:  # every row keeps its five columns: only the cell borders are unescaped pipes
        assert len(re.findall(r"(?<!\\)\|", line)) == 6, line
    assert "Mary \\| \\`CEO\\`" in md
    assert "Well...<br>I think \\| maybe" in md


def test_write_report_picks_the_format_by_extension(tmp_path):
    report = no_posterior_report()
    html = write_report(report, tmp_path / "deep" / "report.HTM")
    assert html.read_text(encoding="utf-8").startswith("<!DOCTYPE html>")
    assert write_report(report, str(tmp_path / "report.md")).read_text(encoding="utf-8").startswith("# Bias")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["deep", "report.md"]
    with pytest.raises(ValueError, match=r"^report path '.*report\.txt' has extension '\.txt'; valid extensions"):
        write_report(report, tmp_path / "report.txt")


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.12345, "0.123"),
        (1234.56, "1234.6"),
        (np.float64(0.5), "0.500"),
        (pd.NA, "-"),
        (float("nan"), "-"),
        (3, "3"),
        (np.int64(12), "12"),
        (1e-5, "1e-05"),
        (True, "True"),
        ({"a": [1, 2]}, json.dumps({"a": [1, 2]})),
        ("x|y", "x|y"),
    ],
)
def test_format_cell(value, text):
    assert format_cell(value) == text


def test_interval_plot_draws_the_given_intervals_top_down():
    rows = pd.DataFrame(
        {
            "label": ["a", "b", "c"],
            "group": ["implicit", "explicit", "implicit"],
            "estimate": [0.7, 0.2, 0.55],
            "low": [0.6, 0.1, np.nan],
            "high": [0.9, 0.25, np.nan],
        }
    )
    ax = figures.interval_plot(rows, title="t", xlabel="x", reference_lines=[0.5]).axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["a", "b", "c"]
    implicit, explicit = ax.containers
    assert list(implicit.lines[0].get_xdata()) == [0.7, 0.55] and list(implicit.lines[0].get_ydata()) == [2.0, 0.0]
    (seg_a, seg_c), (seg_b,) = implicit.lines[2][0].get_segments(), explicit.lines[2][0].get_segments()
    np.testing.assert_allclose(seg_a, [[0.6, 2.0], [0.9, 2.0]])
    np.testing.assert_allclose(seg_b, [[0.1, 1.0], [0.25, 1.0]])
    np.testing.assert_allclose(seg_c, [[0.55, 0.0], [0.55, 0.0]])  # missing interval: a point, no bar
    with pytest.raises(ValueError, match="lacks column"):
        figures.interval_plot(rows.drop(columns="low"), title="t", xlabel="x")


def test_dollar_signs_in_labels_do_not_trigger_mathtext():
    rows = pd.DataFrame(
        {"label": ["hf:$\\frac{$-model"], "group": ["m$"], "estimate": [0.5], "low": [0.4], "high": [0.6]}
    )
    fig = figures.interval_plot(rows, title="$x", xlabel="$", reference_lines=())
    png = figures.figure_png(fig)
    assert Image.open(io.BytesIO(png)).size[0] > 300
    assert fig.axes[0].get_yticklabels()[0].get_text() == "hf:\\$\\frac{\\$-model"


def test_heatmap_shows_the_matrix_and_a_non_square_mtmm_stays_a_table():
    m = pd.DataFrame(
        [[1.0, 0.3, np.nan], [0.3, 1.0, -0.2], [np.nan, -0.2, 1.0]], index=list("abc"), columns=list("abc")
    )
    ax = figures.heatmap(m, title="r").axes[0]
    np.testing.assert_allclose(ax.images[0].get_array().filled(np.nan), m.to_numpy())
    assert len(ax.texts) == 7  # NaN cells carry no annotation
    report = no_posterior_report()
    report.extra_tables["mtmm"] = pd.DataFrame({"check": ["validity diagonal > 0"], "passed": [True]})
    page = render_html(report)
    assert not [i for i in parse_html(page).iter("img") if i.attrs["alt"].startswith("Multitrait")]
    assert ["validity diagonal > 0", "True"] in _rows_after(page, "mtmm")
