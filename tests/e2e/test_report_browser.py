"""The HTML report and the comparison heatmap in a real browser (headless Chromium).

Checks what a reader would hit: the page parses into the machine table, the
summary table and inline SVG figures; the browser logs no console message
(the pages have no scripts, so any message is an error: a CSP violation, a
failed load); the page requests nothing over the network (Chromium's NetLog
records every URL request with its initiator; the browser's own background
requests have none and are told apart). A canary page with a console error
and an external image proves both detectors work.

Chromium is started so that nothing can leave the machine whatever happens:
every request goes to a proxy on a closed loopback port and host names do
not resolve.

Chromium is optional (Debian: apt-get install chromium): missing, the tests
skip with that hint, or fail with OSMETER_REQUIRE_BROWSER=1 (CI sets it). Set OSMETER_TEST_SCREENSHOTS=DIR to keep the
screenshots for a human to look at.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from ..conftest import import_fixture, optional_tool_missing
from ..synthetic import MACHINE, add_run, noisy

BROWSERS = ("chromium", "chromium-browser", "google-chrome")
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-default-apps",
    "--disable-domain-reliability",
    "--disable-client-side-phishing-detection",
    "--no-pings",
    "--proxy-server=http://127.0.0.1:9",  # a closed local port: no request can leave the machine
    "--host-resolver-rules=MAP * ~NOTFOUND",
)
TIMEOUT_S = 30


@pytest.fixture(scope="module")
def chromium() -> str:
    for name in BROWSERS:
        path = shutil.which(name)
        if path:
            return path
    optional_tool_missing("headless Chromium is missing (Debian: apt-get install chromium)", "browser")
    raise AssertionError("unreachable")


def browse(chromium: str, page: Path, work: Path, *extra: str) -> tuple[str, list[str], list[str]]:
    """Open `page`; returns (stdout, console lines, URLs the page requested)."""
    profile = work / f"profile-{len(list(work.glob('profile-*')))}"
    netlog = profile.with_suffix(".netlog.json")
    r = subprocess.run(
        [chromium, *FLAGS, f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0",
         f"--log-net-log={netlog}", *extra, page.resolve().as_uri()],
        capture_output=True, text=True, timeout=TIMEOUT_S,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    console = [line for line in r.stderr.splitlines() if ":CONSOLE" in line]
    return r.stdout, console, page_requests(netlog)


def page_requests(netlog: Path) -> list[str]:
    """URLs of requests a page started (not Chromium's own: those have no initiator origin)."""
    doc = json.loads(netlog.read_text())
    names = {v: k for k, v in doc["constants"]["logEventTypes"].items()}
    urls = []
    for event in doc["events"]:
        params = event.get("params") or {}
        if names.get(event["type"]) != "URL_REQUEST_START_JOB" or "url" not in params:
            continue  # the end of a job carries only its result
        if params.get("initiator") != "not an origin":
            urls.append(params["url"])
    return urls


def keep(screenshot: Path) -> None:
    target = os.environ.get("OSMETER_TEST_SCREENSHOTS")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy(screenshot, Path(target) / screenshot.name)


def looks_drawn(png: Path) -> bool:
    from PIL import Image  # matplotlib's own dependency

    with Image.open(png) as im:
        colours = im.convert("RGB").getcolors(maxcolors=1 << 16)
    return colours is None or len(colours) > 50  # a blank or error page has a handful of colours


@pytest.mark.slow
def test_detectors_catch_a_console_error_and_a_request(chromium: str, tmp_path: Path) -> None:
    canary = tmp_path / "canary.html"
    canary.write_text(
        '<!DOCTYPE html><html><body><img src="http://127.0.0.1:9/x.png">'
        '<script>console.error("osmeter-canary")</script></body></html>'
    )
    _, console, requests = browse(chromium, canary, tmp_path, "--dump-dom")
    assert any("osmeter-canary" in line for line in console)
    assert "http://127.0.0.1:9/x.png" in requests


@pytest.mark.slow
def test_report_renders_in_chromium(chromium: str, cli, store_path: Path, tmp_path: Path) -> None:
    run_id = import_fixture(store_path, "run_x86_64.jsonl", label="browser")
    report = tmp_path / "report.html"
    expect = tmp_path / "expect.yaml"
    expect.write_text("syscall.null: 50 ns\n")
    assert cli("report", str(run_id), "-o", str(report), "--expect", str(expect)).code == 0

    dom, console, requests = browse(chromium, report, tmp_path, "--dump-dom")
    assert f'<table id="machine-{run_id}" class="machine">' in dom
    assert f'<table id="summary-{run_id}" class="summary">' in dom
    assert f'<table id="predictions-{run_id}" class="predictions">' in dom
    assert dom.count("<svg") >= 3
    assert "Test CPU @ 3.0GHz" in dom and "syscall.null" in dom
    assert console == []
    assert requests == []

    shot = tmp_path / "report.png"
    _, console, requests = browse(chromium, report, tmp_path, f"--screenshot={shot}", "--window-size=1280,2000")
    assert console == [] and requests == []
    assert shot.stat().st_size > 20_000 and looks_drawn(shot)
    keep(shot)


@pytest.mark.slow
def test_heatmap_renders_in_chromium(chromium: str, cli, store_path: Path, tmp_path: Path) -> None:
    rng = np.random.default_rng(8)
    for i, factor in enumerate((1.0, 1.12, 0.85)):
        add_run(store_path, [("syscall.null", {}, "ns", noisy(rng, 100.0 * factor, 500)),
                             ("cpu.call", {"args": 0}, "ns", noisy(rng, 1.5, 500))],
                label=f"k{i}", machine=dict(MACHINE, kernel_release=f"6.{8 + i}.0"))
    page = tmp_path / "heatmap.html"
    assert cli("compare", "1", "2", "3", "-o", str(page)).code == 0
    shot = tmp_path / "heatmap.png"
    dom, console, requests = browse(chromium, page, tmp_path, "--dump-dom")
    assert '<table class="heatmap" id="heatmap">' in dom and "kernel_release" in dom
    assert console == [] and requests == []
    browse(chromium, page, tmp_path, f"--screenshot={shot}", "--window-size=1280,900")
    assert looks_drawn(shot)
    keep(shot)
