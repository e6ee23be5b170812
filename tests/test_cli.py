"""The `evaldsl` command, run as a subprocess: exit codes, reports, selection, parallel
runs, bad input of every kind."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from evaldsl.language.diagnostics import MAX_SHOWN
from tests.clitools import run_evaldsl

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures" / "traceplay"


evaldsl = run_evaldsl


def test_version() -> None:
    from evaldsl import __version__

    r = evaldsl("--version")
    assert r.returncode == 0
    assert r.stdout.strip() == f"evaldsl {__version__}"


def test_no_command_is_usage_error() -> None:
    r = evaldsl()
    assert r.returncode == 2


def test_run_examples_passes_and_writes_every_report(tmp_path: Path) -> None:
    out = tmp_path / "r"
    r = evaldsl(
        "run",
        "examples",
        "--json",
        str(out / "r.json"),
        "--junit",
        str(out / "r.xml"),
        "--markdown",
        str(out / "r.md"),
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 failed" in r.stdout
    report = json.loads((out / "r.json").read_text(encoding="utf-8"))
    assert report["version"] == 1
    summary = report["summary"]
    assert summary["cases"] == summary["passed"] > 20
    assert summary["failed"] == 0 and summary["pass_rate"] == 1.0
    assert set(summary["assertions"]) == {"pass", "fail", "skip", "error"}
    suite = report["suites"][0]
    assert {"name", "path", "cases", "summary"} <= set(suite)
    case = suite["cases"][0]
    keys = {"name", "passed", "outcome", "score", "duration_ms", "error", "metrics"}
    assert set(case) == keys | {"assertions"}
    first = case["assertions"][0]
    assert set(first) == {"text", "location", "status", "message", "actual", "expected"}
    assert set(first["location"]) == {"path", "line", "column"}
    tree = ET.parse(out / "r.xml").getroot()
    assert tree.tag == "testsuites"
    assert sum(int(s.get("tests", "0")) for s in tree) == summary["cases"]
    assert "✅" in (out / "r.md").read_text(encoding="utf-8")


def test_assertions_in_source_order_one_entry_per_statement(tmp_path: Path) -> None:
    suite = tmp_path / "s.eval"
    cassette = FIXTURES / "demo" / "cassette.example.jsonl"
    suite.write_text(
        f'case "c"\n  cassette "{cassette}"\n  tool get_weather called; answer contains "sunny"\n'
        "  steps <= 3\n",
        encoding="utf-8",
    )
    r = evaldsl("run", str(suite), "--json", str(tmp_path / "r.json"))
    assert r.returncode == 0, r.stdout + r.stderr
    case = json.loads((tmp_path / "r.json").read_text())["suites"][0]["cases"][0]
    got = [(a["text"], a["location"]["line"], a["location"]["column"]) for a in case["assertions"]]
    assert got == [
        ("tool get_weather called", 3, 3),
        ('answer contains "sunny"', 3, 28),
        ("steps <= 3", 4, 3),
    ]


def test_failures_exit_1_and_show_source_caret_found_expected() -> None:
    r = evaldsl("run", "examples-failing/failures.eval")
    assert r.returncode == 1
    out = r.stdout
    assert 'tool "get_weather" called 1 time, expected exactly 2' in out
    assert "  tool get_weather called 2 times" in out  # the source line
    assert "^^^^" in out
    assert "found: 461" in out and "expected: 100" in out
    # what a predicate expects in words is shown as written; a value as JSON
    assert "  = expected: exactly 2\n" in out and "  = expected: /\\d+ F/\n" in out
    assert '  = expected: "Beijing"\n' in out
    # crashes name their cause, and the other cases still ran
    assert "corrupted.jsonl:4" in out and "invalid JSON on line 4" in out
    assert "raised ValueError: no forecast for 'Atlantis'" in out
    assert "timed out after 0.2s" in out


def test_bad_input_never_stops_the_other_suites(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text(
        "cases:\n  - name: x\n    cassette: [oops\n", encoding="utf-8"
    )
    (tmp_path / "good.eval").write_text(
        f'case "ok"\n  cassette "{FIXTURES / "demo" / "cassette.example.jsonl"}"\n'
        "  tool get_weather called\n",
        encoding="utf-8",
    )
    r = evaldsl("run", str(tmp_path), "--json", str(tmp_path / "r.json"))
    assert r.returncode == 1
    assert "bad.yaml:4:1" in r.stdout  # where YAML noticed, and where the list opened:
    assert "the `[` at line 3, column 15 is never closed" in r.stdout
    assert "Traceback" not in r.stdout + r.stderr
    report = json.loads((tmp_path / "r.json").read_text())
    good = next(s for s in report["suites"] if s["path"].endswith("good.eval"))
    assert good["cases"][0]["passed"] is True


def test_missing_path_is_usage_error() -> None:
    r = evaldsl("run", "no/such/suite.eval")
    assert r.returncode == 2
    assert "no such file or folder: no/such/suite.eval" in r.stderr


def test_empty_folder_is_usage_error(tmp_path: Path) -> None:
    r = evaldsl("run", str(tmp_path))
    assert r.returncode == 2
    assert "no suite files found" in r.stderr


def test_select_with_k(tmp_path: Path) -> None:
    r = evaldsl(
        "run", "examples/weather/weather.eval", "-k", "tokyo", "--json", str(tmp_path / "r.json")
    )
    assert r.returncode == 0
    names = [c["name"] for c in json.loads((tmp_path / "r.json").read_text())["suites"][0]["cases"]]
    assert names == [
        "streams the Tokyo forecast",
        "each city is in the request #2 [file=tokyo-stream.jsonl, city=Tokyo]",
    ]
    r = evaldsl(
        "run",
        "examples/weather/weather.eval",
        "-k",
        "not tokyo",
        "--json",
        str(tmp_path / "n.json"),
    )
    names = [c["name"] for c in json.loads((tmp_path / "n.json").read_text())["suites"][0]["cases"]]
    assert names and not any("Tokyo" in n for n in names)


def _stable(report: dict[str, object]) -> object:
    """A report without timings (the only thing a parallel run may change)."""
    text = json.dumps(report, sort_keys=True)
    data = json.loads(text)

    def strip(value: object) -> object:
        if isinstance(value, dict):
            timed = str(value.get("text", "")).startswith("latency")  # a measured wall time
            return {
                k: strip(v)
                for k, v in value.items()
                if k not in ("duration_ms", "latency_ms") and not (timed and k == "actual")
            }
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return strip(data)


def test_parallel_run_gives_the_same_report(tmp_path: Path) -> None:
    serial = evaldsl(
        "run", "examples", "examples-failing/failures.eval", "--json", str(tmp_path / "s.json")
    )
    parallel = evaldsl(
        "run",
        "examples",
        "examples-failing/failures.eval",
        "-j",
        "2",
        "--json",
        str(tmp_path / "p.json"),
    )
    assert serial.returncode == parallel.returncode == 1
    a = _stable(json.loads((tmp_path / "s.json").read_text()))
    b = _stable(json.loads((tmp_path / "p.json").read_text()))
    assert a == b


def test_fail_under() -> None:
    assert evaldsl("run", "examples-failing/failures.eval", "--fail-under", "0.01").returncode == 1
    r = evaldsl("run", "examples/research", "--fail-under", "0.99")
    assert r.returncode == 0
    assert evaldsl("run", "examples", "--fail-under", "1.5").returncode == 2


def test_check_examples_clean() -> None:
    r = evaldsl("check", "examples")
    assert r.returncode == 0, r.stdout
    assert ": 0 errors" in r.stdout


def test_check_reports_every_mistake_with_codes() -> None:
    r = evaldsl(
        "check",
        "examples-failing/mistakes.eval",
        "examples-failing/mistakes.yaml",
        "--format",
        "json",
    )
    assert r.returncode == 1
    diags = json.loads(r.stdout)
    assert all(
        set(d)
        == {
            "path",
            "line",
            "column",
            "end_line",
            "end_column",
            "severity",
            "code",
            "message",
            "hint",
            "fix",
        }
        for d in diags
    )
    # the misspelt tool's did-you-mean is an edit: `get_wether` replaced where written
    (unknown,) = [d for d in diags if d["code"] == "E301" and d["line"] == 8]
    fix = unknown["fix"]
    line = Path("examples-failing/mistakes.eval").read_text(encoding="utf-8").splitlines()[7]
    assert line[fix["column"] - 1 : fix["end_column"] - 1] == "get_wether"
    assert (fix["line"], fix["end_line"], fix["text"]) == (8, 8, "get_weather")
    codes = {(Path(d["path"]).name, d["line"], d["code"]) for d in diags}
    assert ("mistakes.eval", 7, "E101") in codes  # caled
    assert ("mistakes.eval", 8, "E301") in codes  # get_wether
    assert ("mistakes.eval", 9, "E303") in codes  # status in a cassette case
    assert ("mistakes.eval", 10, "E202") in codes  # latency < 2
    assert ("mistakes.eval", 11, "E204") in codes  # bare text
    assert ("mistakes.eval", 12, "E402") in codes  # backreference
    assert ("mistakes.yaml", 7, "E508") in codes  # path: → jsonPath:
    assert ("mistakes.yaml", 8, "E505") in codes  # tool.caled
    assert ("mistakes.yaml", 12, "E101") in codes  # DSL error inside a YAML block, own line
    assert ("mistakes.yaml", 17, "E501") in codes  # missing cassette
    path_hint = next(d for d in diags if d["code"] == "E508")
    assert "jsonPath" in path_hint["hint"]
    yaml_dsl = next(d for d in diags if d["code"] == "E101" and d["path"].endswith(".yaml"))
    assert yaml_dsl["column"] == 14  # `contans` inside the `|` block


def test_check_full_format_renders_caret() -> None:
    r = evaldsl("check", "examples-failing/mistakes.eval")
    assert r.returncode == 1
    assert "mistakes.eval:7:20: error[E101]" in r.stdout
    assert "did you mean `called`?" in r.stdout
    assert "|   tool get_weather caled once" in r.stdout


def _many_errors(tmp_path: Path, n: int) -> Path:
    """A suite with `n` E205 errors, one a line."""
    cassette = FIXTURES / "multi-tool" / "cassette.multi-tool.jsonl"
    lines = "".join(f'tokens == "{i}"\n' for i in range(n))
    suite = tmp_path / "many.eval"
    suite.write_text(f'case "c"\ncassette "{cassette}"\n{lines}', encoding="utf-8")
    return suite


def test_check_prints_at_most_100_diagnostics_and_says_how_many_more(tmp_path: Path) -> None:
    suite = _many_errors(tmp_path, 150)
    more = "… 50 more diagnostics not shown (50 errors, 0 warnings)"
    lift = "; --max-diagnostics 0 shows them all"
    for style in ("full", "concise"):
        r = evaldsl("check", str(suite), "--format", style)
        assert r.returncode == 1
        assert r.stdout.count("error[E205]") == 100, style
        assert 'found the text "99"' in r.stdout and 'found the text "100"' not in r.stdout
        assert r.stdout.splitlines()[-2:] == [more + lift, "1 file checked: 150 errors, 0 warnings"]
    every = evaldsl("check", str(suite), "--max-diagnostics", "0")
    assert every.stdout.count("error[E205]") == 150 and "not shown" not in every.stdout
    two = evaldsl("check", str(suite), "--format", "concise", "--max-diagnostics", "2")
    assert two.stdout.count("error[E205]") == 2 and "… 148 more diagnostics" in two.stdout
    whole = evaldsl("check", str(suite), "--format", "json")  # machine-readable: all of them
    assert len(json.loads(whole.stdout)) == 150
    helped = " ".join(evaldsl("check", "-h").stdout.split())
    assert f"(default {MAX_SHOWN}; 0: all)" in helped and MAX_SHOWN == 100
    bad = evaldsl("check", str(suite), "--max-diagnostics", "-1")
    assert bad.returncode == 2 and "takes a whole number ≥ 0" in bad.stderr
    run = evaldsl("run", str(suite), "--no-history")  # the console under a run: the same cap
    assert run.stdout.count("error[E205]") == 100
    assert f"{more}; `evaldsl check {suite} --max-diagnostics 0` shows them all" in run.stdout


def test_check_abbreviates_a_huge_value_in_a_message_but_json_keeps_it(tmp_path: Path) -> None:
    cassette = FIXTURES / "multi-tool" / "cassette.multi-tool.jsonl"
    big = "x" * 1_000_000
    suite = tmp_path / "big.eval"
    suite.write_text(
        f'case "c"\ncassette "{cassette}"\ntokens == "{big}"\nanswer contains {big}\n',
        encoding="utf-8",
    )
    for style in ("full", "concise"):
        r = evaldsl("check", str(suite), "--format", style)
        assert r.returncode == 1 and len(r.stdout) < 5_000, (style, len(r.stdout))
        assert '`tokens` is a number; found the text "xxx' in r.stdout
        assert "… (999,539 characters not shown) …" in r.stdout  # the message's middle
        assert "1 file checked: 2 errors" in r.stdout
    (number, quoted) = json.loads(evaldsl("check", str(suite), "--format", "json").stdout)
    assert number["message"] == f'`tokens` is a number; found the text "{big}"'
    assert big in quoted["hint"]


def test_convert_yaml_to_eval_runs_the_same(tmp_path: Path) -> None:
    for yaml_suite in sorted(FIXTURES.glob("*/suite.*.yaml")):
        r = evaldsl("convert", str(yaml_suite))
        assert r.returncode == 0, r.stderr
        converted = yaml_suite.parent / f"_converted_{yaml_suite.stem}.eval"
        try:
            converted.write_text(r.stdout, encoding="utf-8")
            a = evaldsl("run", str(yaml_suite), "--json", str(tmp_path / "a.json"))
            b = evaldsl("run", str(converted), "--json", str(tmp_path / "b.json"))
            assert a.returncode == b.returncode == 0, b.stdout
            ja = json.loads((tmp_path / "a.json").read_text())["suites"][0]
            jb = json.loads((tmp_path / "b.json").read_text())["suites"][0]
            assert [c["name"] for c in ja["cases"]] == [c["name"] for c in jb["cases"]]
            assert [[a["status"] for a in c["assertions"]] for c in ja["cases"]] == [
                [a["status"] for a in c["assertions"]] for c in jb["cases"]
            ]
        finally:
            converted.unlink(missing_ok=True)


@pytest.mark.parametrize(
    ("suite", "said"),
    [
        ("", "unknown mode `Regex`"),
        ("judge: [1]\n", "`judge` is a model name"),
    ],
)
def test_convert_keeps_what_it_could_not_convert_from_passing(
    tmp_path: Path, suite: str, said: str
) -> None:
    """Found by a tester: an assertion convert could not convert became a comment, and
    the converted case passed where the original was an error. Now the comment is
    followed by a line that is no statement: the converted case (or, for a problem of
    the header, the suite) does not run, and stderr says so."""
    state = tmp_path / "s1.json"
    state.write_text('{"status": "completed", "memory": {"result": "hello"}}')
    (tmp_path / "p.yaml").write_text(
        suite + "cases:\n"
        "  - name: lost\n    state: s1.json\n    assertions:\n"
        "      - { type: status_equals, expected: completed }\n"
        "      - { type: memory_matches, key: result, mode: Regex, pattern: '^goodbye' }\n"
        "  - name: whole\n    state: s1.json\n"
        "    assertions: [{ type: status_equals, expected: completed }]\n"
    )
    r = evaldsl("convert", str(tmp_path / "p.yaml"))
    assert r.returncode == 1 and said in r.stderr
    assert f"{2 if suite else 1} place" in r.stderr and "could not be converted" in r.stderr
    assert f"# not converted ({tmp_path / 'p.yaml'}:" in r.stdout and said in r.stdout
    (tmp_path / "p.eval").write_text(r.stdout, encoding="utf-8")
    ran = evaldsl("run", "--no-history", str(tmp_path / "p.eval"), "--json", "-")
    assert ran.returncode == 1
    cases = json.loads(ran.stdout)["suites"][0]["cases"]
    errored = [c["name"] for c in cases if c["outcome"] == "error"]
    assert errored == (["lost"] if not suite else ["lost", "whole"])
    assert "found `not_converted`" in (cases[0]["error"] if not suite else ran.stderr)


def test_convert_translates_each_rows_that_go_into_a_regex(tmp_path: Path) -> None:
    """Found by a tester: a row's value inside an object's regex is JavaScript (traceplay
    renders the object, then reads it), but `answer matches /{{p}}/` read it as RE2, and
    verdicts flipped (`\\p{L}` is the text `p{L}` in JavaScript, any letter in RE2). The
    value is now translated as a literal regex is; a row that cannot be is said."""
    demo = FIXTURES / "demo" / "cassette.example.jsonl"
    (tmp_path / "r.yaml").write_text(
        f"cases:\n  - name: rx\n    cassette: {demo}\n"
        "    each: [{p: '\\p{L}'}, {p: 'sunny.'}, {p: 'Xia[^]'}]\n"
        "    assertions: [{kind: answer.matches, regex: '{{p}}'}]\n"
        f"  - name: both\n    cassette: {demo}\n"
        "    each: [{p: 'sunny'}, {p: 'sunny.'}]\n"
        "    assertions: [{kind: answer.matches, regex: '{{p}}'}, "
        "{kind: answer.contains, text: '{{p}}'}]\n"
    )
    r = evaldsl("convert", str(tmp_path / "r.yaml"))
    assert r.returncode == 0, r.stderr
    assert r.stderr.count("warning[W512]") == 1
    assert 'case "both": row #2 of `each` read otherwise in the .eval text' in r.stderr
    (tmp_path / "r.eval").write_text(r.stdout, encoding="utf-8")
    outcomes = []
    for suite in ("r.yaml", "r.eval"):
        ran = evaldsl("run", "--no-history", str(tmp_path / suite), "--json", "-")
        cases = json.loads(ran.stdout)["suites"][0]["cases"]
        outcomes.append([c["outcome"] for c in cases[:3]])
    assert outcomes[0] == outcomes[1] == ["failed", "passed", "passed"]


def test_convert_keeps_a_statement_over_lines_its_timeouts_and_its_raw_characters(
    tmp_path: Path,
) -> None:
    """Found by a hunt: convert joined a statement's lines into one, so a comment ending a
    line inside its parentheses swallowed the rest (`(` never closed); a timeout under
    half a millisecond became `0ms` (no timeout at all: an error) and `1.0005` became
    `1000ms`; a raw CR from a YAML `\\r` escape inside a string was a line break the
    `.eval` file refuses. The `.eval` text now keeps the lines, the exact timeout and the
    CR as an escape, and runs to the same verdicts."""
    state = tmp_path / "s.json"
    state.write_text('{"status": "completed", "memory": {"summary": "a\\rb"}}')
    (tmp_path / "t.yaml").write_text(
        "timeout: 0.0004\ncases:\n  - name: c\n    state: s.json\n    timeout: 1.0005\n"
        "    expect:\n      - |\n        (status == completed or  # explain\n"
        "         status == failed)\n"
        '      - "memory.summary == \\"a\\\\rb\\" and memory.summary matches /a\\\\rb/"\n'
        '      - "memory.summary != \\"a\\u2028b\\""\n',
        encoding="utf-8",
    )
    r = evaldsl("convert", str(tmp_path / "t.yaml"))
    assert r.returncode == 0, r.stderr
    assert "timeout 0.0004s\n" in r.stdout and "  timeout 1.0005s\n" in r.stdout
    assert "  (status == completed or  # explain\n  status == failed)\n" in r.stdout
    assert '"a\\rb"' in r.stdout and "\r" not in r.stdout and "a\u2028b" in r.stdout
    (tmp_path / "t.eval").write_text(r.stdout, encoding="utf-8")
    verdicts = []
    for suite in ("t.yaml", "t.eval"):
        ran = evaldsl("run", "--no-history", str(tmp_path / suite), "--json", "-")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        (case,) = json.loads(ran.stdout)["suites"][0]["cases"]
        verdicts.append([a["status"] for a in case["assertions"]])
    assert verdicts[0] == verdicts[1] == ["pass"] * 3


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("rows.json", '[{"input": {"t": "x"}, "expectedOutput": 1, "metadata": {"id": "a"}}]'),
        ("rows.yaml", "- input: {t: x}\n  expectedBehavior: {guardEvaluated: true}\n"),
    ],
)
def test_a_dataset_run_or_inspected_alone_says_to_name_it_in_a_suite(
    tmp_path: Path, name: str, text: str
) -> None:
    """Found by a tester: a verydia dataset run directly was said to be a recording
    (`cassette: rows.json`), and inspected, a trace to name `as FORMAT`."""
    (tmp_path / name).write_text(text, encoding="utf-8")
    ran = evaldsl("run", "--no-history", name, cwd=tmp_path)
    assert ran.returncode == 1
    assert f"`{name}` is a verydia dataset (rows of `input`" in ran.stdout
    assert f'write `dataset "{name}"` beside `run module:function`' in ran.stdout
    seen = evaldsl("inspect", name, cwd=tmp_path)
    assert seen.returncode == 1 and f"`{name}` is a verydia dataset" in seen.stderr
    assert "not a trace or a state" in seen.stderr and "as FORMAT" not in seen.stderr


def test_convert_keeps_descriptions_tags_and_metadata_as_comments(tmp_path: Path) -> None:
    """Found by a tester: `description`, `tags` and `metadata` of cases and assertions,
    and cycgraph's `evaluator_agent_id`, were dropped without a word (the last is ignored
    when run too: now a warning)."""
    state = tmp_path / "s1.json"
    state.write_text('{"status": "completed", "visited_nodes": ["middle"]}')
    (tmp_path / "r.yaml").write_text(
        "suite: rich\ndescription: |\n  two\n  lines\ncases:\n"
        "  - name: c\n    description: checks\n    tags: [smoke]\n"
        "    metadata: {owner: alice}\n    state: s1.json\n    assertions:\n"
        "      - { type: node_visited, node_id: middle, description: mid }\n"
        "      - { type: llm_judge, criteria: ok, threshold: 0.7, evaluator_agent_id: j-1 }\n"
    )
    r = evaldsl("convert", str(tmp_path / "r.yaml"))
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith('suite "rich"\n# description: two\n# lines\n')
    assert (
        'case "c"\n  # description: checks\n  # tags: ["smoke"]\n'
        '  # metadata: {"owner":"alice"}\n  state "s1.json"\n'
        "  # description: mid\n  node middle visited\n"
        "  # evaluator_agent_id: j-1\n  memory judged"
    ) in r.stdout
    assert "warning[W506]: evaldsl ignores `evaluator_agent_id` of `llm_judge`" in r.stderr
    ran = evaldsl("check", str(tmp_path / "r.yaml"))
    assert "evaldsl ignores `evaluator_agent_id`" in ran.stdout


def converted_to_eval(folder: Path, yaml_text: str) -> str:
    """`yaml_text` written to `s.yaml` in `folder` and converted, without an error, to
    `s.eval` beside it: the converted text."""
    (folder / "s.yaml").write_text(yaml_text)
    r = evaldsl("convert", str(folder / "s.yaml"))
    assert r.returncode == 0, r.stderr
    (folder / "s.eval").write_text(r.stdout, encoding="utf-8")
    return r.stdout


def test_convert_of_a_trace_without_format_detects_its_format(tmp_path: Path) -> None:
    """Found by a hunt: a YAML `trace:` without `format:` (its format detected) became
    `trace "…" as events`, which refused the OpenAI response the YAML case passed on; it
    is a `cassette` line now, which detects the format as the YAML does. With `format:` the
    `trace … as` line stays."""
    shared = ROOT / "tests" / "fixtures" / "realworld" / "openai-chat-tools"
    (tmp_path / "r.json").write_bytes((shared / "response-toolcalls.json").read_bytes())
    converted = converted_to_eval(
        tmp_path,
        "suite: t\ncases:\n"
        "  - name: detected\n    trace: r.json\n    expect: tool calls >= 1\n"
        "  - name: named\n    trace: r.json\n    format: openai\n    expect: tool calls >= 1\n",
    )
    assert '  cassette "r.json"\n' in converted and '  trace "r.json" as openai\n' in converted
    for suite in ("s.yaml", "s.eval"):
        ran = evaldsl("run", str(tmp_path / suite), "--no-history")
        assert ran.returncode == 0, ran.stdout + ran.stderr
        assert "2 passed, 0 failed" in ran.stdout


def test_convert_quotes_a_run_target_the_bare_form_cannot_hold(tmp_path: Path) -> None:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "sub.py").write_text(
        "class K:\n    @staticmethod\n    def m(x=None):\n        return 'meth'\n"
        "def f(x=None):\n    return 'meth'\n"
    )
    converted = converted_to_eval(
        tmp_path,
        "suite: t\ncases:\n"
        '  - name: method\n    run: "pkg.sub:K.m"\n    expect: output == "meth"\n'
        '  - name: function\n    run: "pkg.sub:f"\n    expect: output == "meth"\n',
    )
    assert '  run "pkg.sub:K.m"\n' in converted and "  run pkg.sub:f\n" in converted
    ran = evaldsl("run", str(tmp_path / "s.eval"))
    assert ran.returncode == 0, ran.stdout + ran.stderr


def test_a_suite_that_is_not_utf8_is_an_error_where_the_byte_is(tmp_path: Path) -> None:
    path = tmp_path / "latin.eval"
    path.write_bytes(b'suite "l"\ncase "caf\xe9"\n  steps >= 1\n')
    r = evaldsl("check", str(path))
    assert r.returncode == 1
    assert f"{path}:2:10: error[E504]: suite file is not UTF-8 text: byte 0xe9" in r.stdout


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"cases: [\n", "invalid YAML"),
        (b"\xff\xfe", "suite file is not UTF-8 text"),
        (b"- 1\n- 2\n", "a suite is a mapping with a `cases:` list"),
    ],
)
def test_convert_of_a_file_that_is_no_suite_writes_nothing(
    tmp_path: Path, content: bytes, message: str
) -> None:
    path = tmp_path / "s.yaml"
    path.write_bytes(content)
    r = evaldsl("convert", str(path))
    assert (r.returncode, r.stdout) == (1, ""), r  # not a bare `suite "s"`
    assert f"{path}:" in r.stderr and message in r.stderr


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{"cassette":"traceplay","version":1}\n{"type":"tool.call"\n', "line 2"),
        ('{"cassette":"traceplay","version":7}\n', "version"),
        ("", "empty"),
    ],
)
def test_malformed_cassettes_name_file_and_line(
    tmp_path: Path, content: str, expected: str
) -> None:
    (tmp_path / "c.jsonl").write_text(content, encoding="utf-8")
    (tmp_path / "s.eval").write_text(
        'case "x"\n  cassette "c.jsonl"\n  steps >= 1\n', encoding="utf-8"
    )
    r = evaldsl("run", str(tmp_path / "s.eval"))
    assert r.returncode == 1
    assert "c.jsonl" in r.stdout + r.stderr
    assert expected in r.stdout + r.stderr
    assert "Traceback" not in r.stdout + r.stderr


def test_run_verbose_lists_every_assertion_and_quiet_excludes_it() -> None:
    done = evaldsl("run", "examples/weather/weather.eval", "--no-history", "-v")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "  pass: examples/weather/weather.eval:11:3: tool get_weather args $.city" in done.stdout
    assert "  latency 1.72 s, steps 2, tool calls 1, input tokens 420" in done.stdout
    both = evaldsl("run", "examples/weather/weather.eval", "--no-history", "-v", "-q")
    assert both.returncode == 2 and "not allowed with argument" in both.stderr


def test_check_counts_in_thousands_with_separators(tmp_path: Path) -> None:
    (tmp_path / "many.eval").write_text("tokens < \n" * 1_200, encoding="utf-8")
    done = evaldsl("check", str(tmp_path / "many.eval"))
    assert done.stdout.rstrip().endswith("1 file checked: 1,200 errors, 0 warnings")


REAL = "tests/fixtures/realworld"
RECORDINGS = [
    f"{REAL}/traceplay-multi-tool/cassette.multi-tool.jsonl",  # JSON lines
    f"{REAL}/openai-chat-stream/stream.sse",  # server-sent events
    f"{REAL}/anthropic-stream-tooluse/tool_use_response.txt",  # events, named otherwise
    f"{REAL}/openai-chat-tools/response-final.json",  # one JSON document
    f"{REAL}/inspect-ai-eval-log/log_read_sample.json",
]


@pytest.mark.parametrize("recording", RECORDINGS, ids=lambda p: p.rsplit("/", 1)[-1])
@pytest.mark.parametrize("command", ["run", "check"])
def test_a_recording_given_for_a_suite_is_one_error_saying_so(command: str, recording: str) -> None:
    # read as `.eval` text (or a YAML suite) it was an error for every line (or key)
    extra = ["--no-color", "--no-history"] if command == "run" else []
    done = run_evaldsl(command, recording, *extra)
    assert done.returncode == 1 and "Traceback" not in done.stderr
    said = done.stdout + done.stderr
    assert said.count("error[") == 1, said
    assert "error[E504]" in said and "not an evaldsl suite" in said
    name = recording.rsplit("/", 1)[-1]
    assert f"`evaldsl inspect {name}` shows what it holds" in said
    assert (
        f"cassette: {name}" in said or f'cassette "{name}"' in said
    )  # how to name it in a suite instead


def test_a_yaml_file_of_another_tool_is_no_suite_in_one_error(tmp_path: Path) -> None:
    workflow = tmp_path / "ci.yaml"
    workflow.write_text("on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n", "utf-8")
    done = run_evaldsl("check", str(workflow))
    assert done.returncode == 1
    assert done.stdout.count("error[") == 1, done.stdout
    assert "none of its keys (`on`, `jobs`) is a suite's" in done.stdout
    assert "a suite has `cases:`" in done.stdout


@pytest.mark.parametrize(
    ("text", "said"),
    [
        ("suit: s\ncasez:\n  - name: a\n", "2:1: error[E504]"),  # `cases` first
        ('{"id": "s", "Case": []}', "1:13: error[E504]"),
        ("state: {}\nsteps: []\ntasks: []\n", "1:1: error[E504]"),  # another tool's
    ],
)
def test_a_suite_s_own_key_misspelt_is_named(tmp_path: Path, text: str, said: str) -> None:
    # a file none of whose keys is a suite's had one hint, "a suite has `cases:`", though
    # it was a suite whose `cases:` was mistyped: it is marked, and the key named
    path = tmp_path / ("s.json" if text.startswith("{") else "s.yaml")
    path.write_text(text, "utf-8")
    done = run_evaldsl("check", path.name, "--format", "json", cwd=tmp_path)
    [found] = json.loads(done.stdout)
    assert f"{found['line']}:{found['column']}: error[{found['code']}]" == said
    guess = "did you mean `cases:`?" if "ase" in text else None
    assert (found["hint"] == guess) if guess else "did you mean" not in found["hint"]
    if guess:  # (the quick fix an editor offers renames it)
        fix = found["fix"]
        assert fix["text"] == "cases" and fix["line"] == found["line"], found


@pytest.mark.parametrize(
    "text", ["", "# only a comment\n", 'suite "weather"\ntools get_weather\n'], ids=repr
)
def test_a_eval_file_of_no_assertions_is_a_warning_and_runs_no_case(
    tmp_path: Path, text: str
) -> None:
    suite = tmp_path / "empty.eval"
    suite.write_text(text, encoding="utf-8")
    checked = run_evaldsl("check", str(suite))
    # `check` says what `run` will do (it passed the file, and `run` crashed its one case)
    assert checked.returncode == 0 and "warning[W510]" in checked.stdout, checked.stdout
    assert "runs nothing" in checked.stdout
    ran = run_evaldsl("run", str(suite), "--no-history", "--no-color")
    assert ran.returncode == 1 and "no case ran" in ran.stderr, ran.stderr
    assert "crashed" not in ran.stdout and "no source to check" not in ran.stdout


ROW = "each city is in the request "


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (
            "[file=tokyo-stream.jsonl, city=Tokyo]",
            [ROW + "#2 [file=tokyo-stream.jsonl, city=Tokyo]"],
        ),
        (
            "*#[12] [file=*",  # still a glob, its [12] a class
            [
                ROW + "#1 [file=xiamen.jsonl, city=Xiamen]",
                ROW + "#2 [file=tokyo-stream.jsonl, city=Tokyo]",
            ],
        ),
        (
            "not [file=",
            [
                "answers with the Xiamen forecast",
                "streams the Tokyo forecast",
                "answers from Anthropic content blocks",
            ],
        ),
    ],
)
def test_k_takes_a_rows_pasted_id_as_written(pattern: str, expected: list[str]) -> None:
    # a row's id, pasted from a report, holds brackets: its text first, then a glob
    from evaldsl.runner.cases import selected
    from evaldsl.suites import load_suite

    suite = load_suite(ROOT / "examples" / "weather" / "weather.eval")
    assert [c.name for c in suite.cases if selected(suite, c, pattern)] == expected


@pytest.mark.parametrize(
    ("pattern", "name"),
    [
        ("case (1)", "case (1)"),
        ("forecast (", "a forecast (draft)"),
        ("smile :(", "smile :("),
        ("not case (1", "case 2"),
    ],
)
def test_k_a_name_part_may_hold_a_parenthesis(pattern: str, name: str) -> None:
    # (only a `(` that opens the pattern, or follows its `not`, opens a group)
    from evaldsl.runner.selection import selector

    assert selector(pattern)(f"s::{name}", name)


@pytest.mark.parametrize(
    ("pattern", "expected"),
    [
        (
            "xiamen forecast or tokyo forecast",
            ["answers with the Xiamen forecast", "streams the Tokyo forecast"],
        ),
        ("forecast and not stream", ["answers with the Xiamen forecast"]),
        (
            "weather agent::* and not (tokyo or city)",
            ["answers with the Xiamen forecast", "answers from Anthropic content blocks"],
        ),
        (
            "(xiamen or tokyo) and city",
            [
                ROW + "#1 [file=xiamen.jsonl, city=Xiamen]",
                ROW + "#2 [file=tokyo-stream.jsonl, city=Tokyo]",
            ],
        ),
    ],
)
def test_k_combines_patterns_as_pytest_does(pattern: str, expected: list[str]) -> None:
    from evaldsl.runner.cases import selected
    from evaldsl.suites import load_suite

    suite = load_suite(ROOT / "examples" / "weather" / "weather.eval")
    assert [c.name for c in suite.cases if selected(suite, c, pattern)] == expected


@pytest.mark.parametrize(
    ("pattern", "said"),
    [
        ("tokyo or", "the pattern ends where a name part was expected"),
        ("(tokyo or xiamen", "the pattern has a `(` that is never closed"),
        ("tokyo or and xiamen", "the pattern has `and` where a name part was expected"),
        ("(tokyo) or xiamen)", "the pattern has `)` after its end"),
        # without `and` or `or`: `not (` was the name part `(` and selected every case
        ("not (", "the pattern has a `(` that is never closed"),
        ("(", "the pattern has a `(` that is never closed"),
        ("not (tokyo", "the pattern has a `(` that is never closed"),
    ],
)
def test_a_k_pattern_that_does_not_read_is_a_usage_error(pattern: str, said: str) -> None:
    # (before `and` and `or` were read, `tokyo or xiamen` quietly matched no case)
    result = run_evaldsl("run", "--no-history", "-k", pattern, "examples/weather")
    assert result.returncode == 2
    assert f"argument -k: {said}" in result.stderr
    assert result.stdout == ""


@pytest.mark.parametrize(
    ("judge", "said"),
    [
        ("{model: m, modle: x}", "`modle` is no key of it"),
        ("{model: ''}", "the name is empty"),
        ("''", "the name is empty"),
    ],
)
def test_a_yaml_judge_with_a_stray_key_or_no_name_is_an_error(
    tmp_path: Path, judge: str, said: str
) -> None:
    """Found by a hunt: `judge: {model: m, modle: x}` dropped the misspelt key unsaid, and
    an empty model name was the default model, unsaid (the schema refuses both)."""
    (tmp_path / "s.json").write_text('{"status": "completed", "memory": {}}')
    (tmp_path / "j.yaml").write_text(
        f"judge: {judge}\ncases:\n  - {{name: c, state: s.json, expect: [status == completed]}}\n"
    )
    r = evaldsl("check", str(tmp_path / "j.yaml"), "--format", "json")
    assert r.returncode == 1
    (found,) = json.loads(r.stdout)
    assert (found["code"], found["line"]) == ("E507", 1)
    assert found["message"] == f"`judge` is a model name or {{model: …}}: {said}"
