"""The judge through the command, as a CI job would run it: live with a key against a real
server on 127.0.0.1, frozen from a committed cache after the server is gone, skipped
without a key, off on request; planning in `check` and `--dry-run`; the key never in a
report."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.clitools import run_evaldsl
from tests.judge_server import JudgeServer, judged

ROOT = Path(__file__).resolve().parents[1]
CASSETTE = ROOT / "tests" / "fixtures" / "traceplay" / "demo" / "cassette.example.jsonl"
KEY = "sk-test-secret-1234567890"


def suite(tmp: Path) -> Path:
    path = tmp / "judge.eval"
    path.write_text(
        f'case "weather answer"\n  cassette "{CASSETTE}"\n'
        '  answer judged "mentions the weather" >= 0.7\n'
        '  answer contains "sunny"\n',
        encoding="utf-8",
    )
    return path


def run(
    tmp: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return run_evaldsl(*args, cwd=tmp, env=env)


def statuses(report: Path) -> list[str]:
    case = json.loads(report.read_text(encoding="utf-8"))["suites"][0]["cases"][0]
    return [a["status"] for a in case["assertions"]]


def test_live_then_frozen_from_the_cache_then_skipped_without_a_key(tmp_path: Path) -> None:
    eval_file = suite(tmp_path)
    cache = tmp_path / "judge-cache"
    with JudgeServer(judged(True, 0.9, "mentions sun and temperature")) as server:
        env = {"EVALDSL_JUDGE_API_KEY": KEY, "EVALDSL_JUDGE_BASE_URL": server.url}
        plan = run(tmp_path, "check", str(eval_file), "--judge-cache", str(cache), env=env)
        assert "judge: 1 call planned, 0 cached" in plan.stdout
        live = run(
            tmp_path,
            "run",
            str(eval_file),
            "--judge-cache",
            str(cache),
            "--json",
            "live.json",
            "--junit",
            "live.xml",
            env=env,
        )
        assert live.returncode == 0, live.stdout + live.stderr
        assert server.count == 1
        assert server.requests[0].path == "/v1/chat/completions"
    assert statuses(tmp_path / "live.json") == ["pass", "pass"]
    assert len(list(cache.glob("*.json"))) == 1
    for written in (tmp_path / "live.json", tmp_path / "live.xml", *cache.glob("*.json")):
        assert KEY not in written.read_text(encoding="utf-8")
    assert KEY not in live.stdout + live.stderr

    # the server is gone and there is no key: the committed cache answers, deterministically
    frozen = run(
        tmp_path,
        "run",
        str(eval_file),
        "--judge",
        "frozen",
        "--judge-cache",
        str(cache),
        "--json",
        "frozen.json",
        env={"EVALDSL_JUDGE_BASE_URL": server.url},
    )
    assert frozen.returncode == 0, frozen.stdout
    assert statuses(tmp_path / "frozen.json") == ["pass", "pass"]
    dry = run(
        tmp_path,
        "run",
        str(eval_file),
        "--dry-run",
        "--judge-cache",
        str(cache),
        env={"EVALDSL_JUDGE_BASE_URL": server.url},
    )
    assert "judge: 1 call planned, 1 cached" in dry.stdout

    # no key and no cache: a clear skip, and the case still passes
    skipped = run(
        tmp_path,
        "run",
        str(eval_file),
        "--json",
        "skip.json",
        "--judge-cache",
        str(tmp_path / "empty"),
    )
    assert skipped.returncode == 0
    assert statuses(tmp_path / "skip.json") == ["skip", "pass"]
    case = json.loads((tmp_path / "skip.json").read_text())["suites"][0]["cases"][0]
    assert "EVALDSL_JUDGE_API_KEY" in case["assertions"][0]["message"]


def test_frozen_miss_is_an_error_and_off_skips(tmp_path: Path) -> None:
    eval_file = suite(tmp_path)
    frozen = run(
        tmp_path,
        "run",
        str(eval_file),
        "--judge",
        "frozen",
        "--judge-cache",
        str(tmp_path / "empty"),
        "--json",
        "f.json",
        env={"EVALDSL_JUDGE_API_KEY": KEY},
    )
    assert frozen.returncode == 1
    assert statuses(tmp_path / "f.json") == ["error", "pass"]
    off = run(
        tmp_path,
        "run",
        str(eval_file),
        "--judge",
        "off",
        "--json",
        "o.json",
        env={"EVALDSL_JUDGE_API_KEY": KEY},
    )
    assert off.returncode == 0
    assert statuses(tmp_path / "o.json") == ["skip", "pass"]


def test_a_traceplay_cache_is_reused(tmp_path: Path) -> None:
    from evaldsl.judge.cache import cache_key

    eval_file = tmp_path / "t.eval"
    eval_file.write_text(
        f'case "c"\n  cassette "{CASSETTE}"\n  answer judged "mentions weather"\n', encoding="utf-8"
    )
    cache = tmp_path / ".traceplay" / "judge-cache"
    cache.mkdir(parents=True)
    key = cache_key("Xiamen is sunny, 31C.", "mentions weather")
    assert key == "23bfe9152918833134ecb9268a2dabee3678ea8380dd2f818006852e89c52e42"
    (cache / f"{key}.json").write_text('{"passed":true,"reason":"says sunny"}', encoding="utf-8")
    r = run(
        tmp_path,
        "run",
        str(eval_file),
        "--judge",
        "frozen",
        "--judge-cache",
        str(cache),
        "--json",
        "r.json",
    )
    assert r.returncode == 0, r.stdout
    assert statuses(tmp_path / "r.json") == ["pass"]


def test_a_judge_cache_that_is_a_file_stops_the_command_before_it_runs(tmp_path: Path) -> None:
    eval_file = suite(tmp_path)
    afile = tmp_path / "afile"
    afile.write_text("notes\n")
    program = tmp_path / "judged.eval"
    program.write_text('answer judged "mentions the weather" >= 0.7\n')
    with JudgeServer(judged(True, 0.9)) as server:
        env = {"EVALDSL_JUDGE_API_KEY": KEY, "EVALDSL_JUDGE_BASE_URL": server.url}
        for cache, said in ((afile, "that is a file"), (afile / "sub", f"{afile} is a file")):
            for command in (
                ["run", str(eval_file)],
                ["score", str(program), str(CASSETTE)],
            ):
                done = run(tmp_path, *command, "--judge-cache", str(cache), env=env)
                assert done.returncode == 2, done.stderr
                assert f"--judge-cache {cache}: {said}; name a folder" in done.stderr
                assert "Traceback" not in done.stderr and "Errno" not in done.stderr
        assert server.count == 0  # nothing ran, nothing was paid for


def test_a_judge_error_shows_no_null_found_or_expected(tmp_path: Path) -> None:
    eval_file = suite(tmp_path)
    env = {"EVALDSL_JUDGE_API_KEY": KEY}
    done = run(tmp_path, "run", str(eval_file), "--judge", "frozen", "--judge-cache", "x", env=env)
    assert done.returncode == 1 and "no cached verdict" in done.stdout, done.stdout
    assert "null" not in done.stdout
    with JudgeServer(judged(False, 0.2, "no weather")) as server:
        env["EVALDSL_JUDGE_BASE_URL"] = server.url
        failed = run(tmp_path, "run", str(eval_file), "--judge-cache", "c", env=env)
    assert failed.returncode == 1 and "= found: 0.2" in failed.stdout, failed.stdout
    assert "= expected: 0.7" in failed.stdout


def test_a_key_an_http_header_cannot_carry_stops_the_command_before_it_runs(
    tmp_path: Path,
) -> None:
    # as a bad base URL does; it was found by each judge assertion, as it ran
    eval_file = suite(tmp_path)
    with JudgeServer(judged(True, 0.9)) as server:
        for key in ("sk-test 1234567890", "sk-tést-1234567890", "sk-test\t1234567890"):
            env = {"EVALDSL_JUDGE_API_KEY": key, "EVALDSL_JUDGE_BASE_URL": server.url}
            for extra in (["--json", "r.json"], ["--dry-run"]):  # (a dry run writes no report)
                done = run(tmp_path, "run", str(eval_file), *extra, env=env)
                assert done.returncode == 2, done.stdout + done.stderr
                assert done.stderr.startswith(
                    "evaldsl: error: EVALDSL_JUDGE_API_KEY cannot be used: it holds a space"
                )
                assert key not in done.stderr + done.stdout and "Traceback" not in done.stderr
        assert server.count == 0 and not (tmp_path / "r.json").exists()
