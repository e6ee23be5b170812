"""HTML report at scale: file size and time to write, against the JSON report of the same run,
and time until the page is ready in headless Chromium.

Run:  .venv/bin/python benchmarks/html_report.py [--cases N]

It writes N cases (default 10,000) as four `.eval` suites of `each` rows over the weather
example's three recorded cassettes (about a quarter of the rows fail), runs them once, then
writes, from that one `Report`, the `--json` report and the HTML report with tool
timelines (which reads each recording again), timing each write (best of three) and
measuring each file, raw and gzip-compressed. Where /usr/bin/chromium exists, it opens
the page (Playwright, offline) and reports the time from navigation until the page says it
is ready, and how many list rows are in the DOM.
"""

from __future__ import annotations

import argparse
import gzip
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from evaldsl.reports import to_json_text  # noqa: E402
from evaldsl.reports.html import to_html_text  # noqa: E402
from evaldsl.runner import run_suites  # noqa: E402
from evaldsl.suites import load_suite  # noqa: E402

CASSETTES = ROOT / "examples" / "weather" / "cassettes"
FILES = ["xiamen.jsonl", "tokyo-stream.jsonl", "paris-anthropic.jsonl"]
WORDS = ["C", "C", "C", "sunny", "rain"]  # "sunny"/"rain" miss in some answers: failures
SUITES = 4


def write_suites(folder: Path, cases: int) -> list[Path]:
    for name in FILES:
        shutil.copy(CASSETTES / name, folder / name)
    paths = []
    per = cases // SUITES
    for k in range(SUITES):
        rows = ", ".join(
            f'{{file: "{FILES[i % 3]}", word: "{WORDS[i % 5]}", n: "{k}-{i}"}}' for i in range(per)
        )
        path = folder / f"scale{k}.eval"
        path.write_text(
            f'suite "scale {k}"\ntools get_weather\n\ncase "city"\n'
            f'  cassette "{{{{file}}}}"\n  each [{rows}]\n'
            '  tool get_weather called\n  answer contains "{{word}}"\n  steps <= 5\n',
            encoding="utf-8",
        )
        paths.append(path)
    return paths


def best_of(n: int, work: Callable[[], str]) -> tuple[float, str]:
    times, text = [], ""
    for _ in range(n):
        started = time.perf_counter()
        text = work()
        times.append(time.perf_counter() - started)
    return min(times), text


def open_in_chromium(path: Path) -> tuple[float, int] | None:
    if not Path("/usr/bin/chromium").exists():
        return None
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path="/usr/bin/chromium", args=["--no-sandbox", "--disable-gpu"]
        )
        page = browser.new_context(offline=True, viewport={"width": 1360, "height": 900}).new_page()
        started = time.perf_counter()
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready=true]", timeout=60_000)
        ready = time.perf_counter() - started
        rows = page.locator("#rows .row").count()
        browser.close()
    return ready, rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=10_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        suites = [load_suite(p) for p in write_suites(folder, args.cases)]
        started = time.perf_counter()
        report = run_suites(suites)
        ran = time.perf_counter() - started
        json_s, json_text = best_of(3, lambda: to_json_text(report))
        html_s, html_text = best_of(3, lambda: to_html_text(report, suites))
        bare_s, _ = best_of(3, lambda: to_html_text(report))
        page = folder / "report.html"
        page.write_text(html_text, encoding="utf-8")
        opened = open_in_chromium(page)
    n = len(report.cases)
    failed = sum(1 for c in report.cases if not c.passed)
    json_b, html_b = len(json_text.encode()), len(html_text.encode())
    json_z, html_z = len(gzip.compress(json_text.encode())), len(gzip.compress(html_text.encode()))
    mib = 1024 * 1024
    print(f"{n:,} cases ({failed:,} failing) in {SUITES} suites; run: {ran:.2f} s")
    print(f"{'report':<34} {'write (best of 3)':>18} {'size':>10} {'gzip':>10}")
    print(f"{'--json':<34} {json_s:>16.2f} s {json_b / mib:>6.1f} MiB {json_z / mib:>6.2f} MiB")
    print(
        f"{'--html (with timelines)':<34} {html_s:>16.2f} s {html_b / mib:>6.1f} MiB"
        f" {html_z / mib:>6.2f} MiB"
    )
    print(f"{'--html without timelines':<34} {bare_s:>16.2f} s")
    print(f"html / json size: {html_b / json_b:.2f}x ({html_b / n:,.0f} bytes a case)")
    if opened is None:
        print("chromium: not installed, page not opened")
    else:
        ready, rows = opened
        print(f"chromium: ready {ready:.2f} s after navigation; {rows} list rows in the DOM")


if __name__ == "__main__":
    main()
