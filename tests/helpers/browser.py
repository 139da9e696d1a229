"""Headless Chromium for rendering tests: a screenshot and the page's scroll width.

Uses Debian's ``chromium`` (``.ci/run`` installs it through ``scripts/setup`` when
missing; tests skip, saying why, where none can be found). Every launch gets a fresh
profile directory and no network-facing features.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

from tests.helpers.common import REPO

ARTEFACTS = REPO / "test-artefacts"
FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--hide-scrollbars")
_PROBE = ("<script>addEventListener('load',()=>{const d=document.documentElement;"
          "document.body.setAttribute('data-probe-scroll-width',d.scrollWidth);"
          "document.body.setAttribute('data-probe-client-width',d.clientWidth)})</script>")


def chromium() -> str | None:
    """Path of a Chromium executable, or None."""
    for name in ("chromium", "chromium-browser", "google-chrome", "chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def _run(exe: str, profile: Path, *args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    return subprocess.run([exe, *FLAGS, f"--user-data-dir={profile}", *args],
                          capture_output=True, text=True, timeout=timeout)


def screenshot(exe: str, page: Path, out: Path, profile: Path, width: int = 1400,
               height: int = 2400) -> Path:
    """A PNG of ``page`` in a ``width`` x ``height`` window."""
    out.parent.mkdir(parents=True, exist_ok=True)
    res = _run(exe, profile, f"--window-size={width},{height}", f"--screenshot={out}",
               page.resolve().as_uri())
    if not out.exists():
        raise RuntimeError(f"chromium wrote no screenshot: {res.stderr[-2000:]}")
    return out


def scroll_width(exe: str, page: Path, profile: Path, width: int = 1400) -> tuple[int, int]:
    """(document scrollWidth, clientWidth) of ``page`` in a ``width`` px window, read from
    the DOM of a copy that records them on load."""
    probe = page.with_name(f".probe-{page.name}")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", _PROBE + "</body>"),
                     encoding="utf-8")
    res = _run(exe, profile, f"--window-size={width},900", "--virtual-time-budget=5000",
               "--dump-dom", probe.resolve().as_uri())
    probe.unlink()
    sw = re.search(r'data-probe-scroll-width="(\d+)"', res.stdout)
    cw = re.search(r'data-probe-client-width="(\d+)"', res.stdout)
    if not (sw and cw):
        raise RuntimeError(f"no scroll width in the dumped DOM: {res.stderr[-2000:]}")
    return int(sw.group(1)), int(cw.group(1))


def webdriver_skip_reason() -> str | None:
    """Why a driven browser test cannot run here, or None when it can: it needs
    Chromium, Debian's ``chromium-driver`` (``chromedriver``) and ``selenium`` (dev extra)."""
    import importlib.util

    if chromium() is None:
        return "no Chromium found (apt-get install chromium; scripts/test tries)"
    if shutil.which("chromedriver") is None:
        return "no chromedriver found (apt-get install chromium-driver; scripts/test tries)"
    if importlib.util.find_spec("selenium") is None:
        return "selenium is not installed (pip install -e '.[dev]')"
    return None


def driven_chromium(profile: Path):  # type: ignore[no-untyped-def]
    """A selenium-driven headless Chromium with a fresh profile (the caller quits it).

    The driver and browser paths are given, so Selenium Manager never looks anything up
    on the network."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in FLAGS:
        options.add_argument(flag)
    options.add_argument(f"--user-data-dir={profile}")
    options.add_argument("--window-size=1200,900")
    options.binary_location = str(chromium())
    return webdriver.Chrome(options=options, service=Service(str(shutil.which("chromedriver"))))


def render_at(page: Path, width: int, shot: Path, profile: Path,
              max_height: int = 12_000) -> tuple[int, int]:
    """Open ``page`` in a driven headless Chromium emulating a ``width`` px wide
    viewport (a phone at 390: headless windows cannot be narrower than 500 px, device
    metrics can), save a full-page PNG (at most ``max_height`` px tall) to ``shot``
    and return (``document.documentElement.scrollWidth``, ``innerWidth``)."""
    import base64

    driver = driven_chromium(profile)
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
        driver.get(page.resolve().as_uri())
        scroll, inner = driver.execute_script(
            "return [document.documentElement.scrollWidth, window.innerWidth]")
        height = min(int(driver.execute_script(
            "return document.documentElement.scrollHeight")), max_height)
        data = driver.execute_cdp_cmd("Page.captureScreenshot", {
            "format": "png", "captureBeyondViewport": True,
            "clip": {"x": 0, "y": 0, "width": width, "height": height, "scale": 1}})
        shot.parent.mkdir(parents=True, exist_ok=True)
        shot.write_bytes(base64.b64decode(data["data"]))
    finally:
        driver.quit()
    return int(scroll), int(inner)


def shown_label_px(page: Path, width: int, profile: Path) -> list[float]:
    """Each report chart's smallest label as rendered in a ``width`` px viewport: its
    ``data-label-px`` (at natural size) times the width the browser gave the image over
    its natural width (:mod:`rulegauge.analysis.report_html`)."""
    driver = driven_chromium(profile)
    try:
        driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
            "width": width, "height": 900, "deviceScaleFactor": 1, "mobile": width < 600})
        driver.get(page.resolve().as_uri())
        sizes = driver.execute_script(
            "return [...document.querySelectorAll('img[data-label-px]')].map(i => "
            "parseFloat(i.dataset.labelPx) * i.getBoundingClientRect().width / i.naturalWidth)")
    finally:
        driver.quit()
    return [float(s) for s in sizes]
