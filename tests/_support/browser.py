"""Headless Chromium renders a report, screenshots it and dumps its DOM: ``check_report_in_browser``.

Reusable: point it at any rendered report (e.g. the demo's report.html).
"""

from __future__ import annotations

import base64
import io
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from _support.html import Element, parse_html, table_rows

WINDOW = (1280, 2400)
_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
)


@dataclass
class BrowserCheck:
    """What the browser showed: the dumped DOM, the screenshot and the decoded figure sizes."""

    dom: Element
    screenshot: Path
    verdict_rows: list[list[str]]
    image_sizes: list[tuple[int, int]]
    screenshot_std: float


def chromium() -> str:
    """The Chromium binary: $BIAS_VALIDITY_CHROMIUM or `chromium` on PATH (Debian's; scripts/test installs it)."""
    path = os.environ.get("BIAS_VALIDITY_CHROMIUM") or shutil.which("chromium")
    if not path:
        pytest.fail("headless Chromium not found: run scripts/test, which installs it (or set BIAS_VALIDITY_CHROMIUM)")
    return path


def _run_chromium(url: str, workdir: Path, *extra: str) -> str:
    profile = workdir / f"profile-{len(list(workdir.glob('profile-*')))}"
    args = [chromium(), *_FLAGS, f"--user-data-dir={profile}", f"--window-size={WINDOW[0]},{WINDOW[1]}", *extra, url]
    done = subprocess.run(args, capture_output=True, text=True, timeout=120, check=False)
    if done.returncode != 0:
        raise AssertionError(f"chromium exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def check_report_in_browser(
    html_path: Path, workdir: Path, *, expected_verdicts: list[tuple[str, str]] | None = None, min_images: int = 1
) -> BrowserCheck:
    """Render ``html_path`` in headless Chromium and assert that the report displays and ran no script.

    Checks: the page title after rendering equals the title in the file (an injected script that set
    ``document.title`` would change it) and no element carries ``data-pwned``; the DOM holds no ``<script>``
    element and every ``<img>`` is an embedded PNG that decodes to a sane size; the verdict table is present with
    rows (equal to ``expected_verdicts`` as (question, verdict) pairs when given); the screenshot is a PNG of the
    window's size and not blank (grey-level standard deviation above 10).
    """
    html_path = Path(html_path).resolve()
    workdir.mkdir(parents=True, exist_ok=True)
    source_title = next(parse_html(html_path.read_text(encoding="utf-8")).iter("title")).all_text()
    dom = parse_html(_run_chromium(html_path.as_uri(), workdir, "--dump-dom"))
    shot = workdir / "screenshot.png"
    _run_chromium(html_path.as_uri(), workdir, f"--screenshot={shot}")

    assert next(dom.iter("title")).all_text() == source_title, "a script changed document.title"
    assert not [e for e in dom.iter() if "data-pwned" in e.attrs], "an injected handler ran"
    assert not list(dom.iter("script")), "the rendered page holds a <script> element"

    sizes = []
    for img in dom.iter("img"):
        src = img.attrs.get("src") or ""
        assert src.startswith("data:image/png;base64,"), f"image not embedded as PNG: {src[:60]!r}"
        with Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1], validate=True))) as im:
            im.verify()
        with Image.open(io.BytesIO(base64.b64decode(src.split(",", 1)[1]))) as im:
            assert 200 <= im.width <= 4000 and 100 <= im.height <= 10000, f"figure of odd size {im.size}"
            sizes.append(im.size)
    assert len(sizes) >= min_images, f"{len(sizes)} figure(s) in the page, expected at least {min_images}"

    rows = table_rows(dom, "verdict-table")
    assert rows, "the verdict table has no rows"
    if expected_verdicts is not None:
        assert [(r[0].split()[0], r[1]) for r in rows] == expected_verdicts

    with Image.open(shot) as im:
        assert im.format == "PNG" and im.size == WINDOW, f"screenshot {im.format} {im.size}"
        grey = np.asarray(im.convert("L"), dtype=float)
    std = float(grey.std())
    assert std > 10, f"screenshot looks blank (grey-level std {std:.1f})"
    return BrowserCheck(dom=dom, screenshot=shot, verdict_rows=rows, image_sizes=sizes, screenshot_std=std)


def screenshot_section(html_path: Path, section_id: str, out: Path, workdir: Path) -> Path:
    """Screenshot one ``<section id=...>`` of a rendered report in headless Chromium, cropped to its content.

    The section is shown alone, under the report's own ``<head>`` (its stylesheet), so the picture is what the
    report shows there; the blank window below the section is cropped off.
    """
    html = Path(html_path).read_text(encoding="utf-8")
    start = html.index(f'<section id="{section_id}">')
    end = html.index("</section>", start) + len("</section>")
    workdir.mkdir(parents=True, exist_ok=True)
    page = workdir / f"{section_id}.html"
    page.write_text(f"{html[: html.index('<body')]}<body><main>{html[start:end]}</main></body></html>", "utf-8")
    shot = workdir / f"{section_id}-window.png"
    _run_chromium(page.resolve().as_uri(), workdir, f"--screenshot={shot}")
    with Image.open(shot) as im:
        rgb = im.convert("RGB")
    pixels = np.asarray(rgb).astype(int)
    used = np.nonzero((np.abs(pixels - pixels[-1, -1]).sum(axis=2) > 12).any(axis=1))[0]
    assert len(used), f"section {section_id!r} rendered blank"
    rgb.crop((0, 0, rgb.width, min(rgb.height, int(used[-1]) + 24))).save(out, format="PNG", optimize=True)
    return out
