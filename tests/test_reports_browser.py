"""The HTML report in a real browser: headless Chromium renders it, screenshots it and dumps its DOM."""

from __future__ import annotations

import pytest
from _support.browser import check_report_in_browser
from _support.reports import IMG_ANSWER, SCRIPT_ANSWER, injection_report, realistic_report

from bias_validity.reports import write_report


@pytest.fixture(scope="module")
def hostile(tmp_path_factory):
    """The realistic report with hostile model text, rendered once and checked in the browser."""
    workdir = tmp_path_factory.mktemp("browser")
    report = injection_report()
    page = write_report(report, workdir / "report.html")
    expected = [(q.question, q.verdict.value) for q in report.questions]
    return check_report_in_browser(page, workdir / "chromium", expected_verdicts=expected, min_images=4)


def test_report_displays_verdicts_and_figures_in_chromium(hostile):
    assert len(hostile.verdict_rows) == 6
    assert len(hostile.image_sizes) == 4
    # the forest plot (first figure) is the tallest: 54 rows
    assert hostile.image_sizes[0][1] == max(h for _, h in hostile.image_sizes)


def test_injected_script_shows_as_text_and_does_not_run(hostile):
    cells = [td.all_text() for td in hostile.dom.iter("td")]
    assert SCRIPT_ANSWER in cells and IMG_ANSWER in cells
    assert next(hostile.dom.iter("title")).all_text() == "Bias measurement validity report"


def test_the_check_catches_a_script_that_runs(tmp_path):
    """The helper must fail on a page whose script runs; otherwise it proves nothing."""
    page = tmp_path / "bad.html"
    good = write_report(realistic_report(), tmp_path / "good.html").read_text(encoding="utf-8")
    page.write_text(good.replace("</main>", "<script>document.title='pwned'</script></main>"), encoding="utf-8")
    page.write_text(page.read_text(encoding="utf-8").replace("<meta http-equiv", "<meta data-x"), encoding="utf-8")
    with pytest.raises(AssertionError, match="a script changed document.title"):
        check_report_in_browser(page, tmp_path / "chromium")
