"""A fast start: the parser's tables are loaded, not built (from the file shipped beside
the grammar, or from a private cache of the user's), and `evaldsl check` imports only what
it needs. Timings are the benchmarks' business; these tests check the mechanisms."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evaldsl.judge.config import ENV_API_KEY, NO_KEY_MESSAGE
from evaldsl.syntax import tables
from evaldsl.syntax.build import Builder
from evaldsl.syntax.drive import drive
from evaldsl.syntax.grammar import (
    build_lark,
    cached_grammar,
    new_lark,
    parser_options,
    tables_stale,
)
from tests.fuzzing import examples

ROOT = Path(__file__).resolve().parents[1]
CORPUS = sorted(
    p
    for folder in ("examples", "examples-failing", "tests")
    for p in (ROOT / folder).rglob("*.eval")
    if "node_modules" not in p.parts
)


def test_shipped_tables_fit_the_grammar() -> None:
    # `make tables` writes them; an edited grammar without new tables fails here
    assert not tables_stale(), "the grammar changed: run `make tables`"


def test_loaded_parser_parses_the_corpus_as_a_built_one() -> None:
    loaded, built = new_lark(Builder()), build_lark(Builder())
    key = tables.table_key(cached_grammar(), parser_options(None))
    assert tables.shipped_key() == key
    for path in CORPUS:
        text = path.read_text(encoding="utf-8")
        for chunk in [text, *text.splitlines()]:
            assert drive(loaded, chunk, "file") == drive(built, chunk, "file"), chunk


def test_a_stale_shipped_file_falls_back_to_a_private_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shipped = tmp_path / "shipped.json"
    shipped.write_text('{"format":1,"key":"another grammar","data":{},"memo":{}}')
    monkeypatch.setattr(tables, "shipped_path", lambda: shipped)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    builds: list[int] = []

    def build() -> object:
        builds.append(1)
        return build_lark(None)

    options = parser_options(None)
    first = tables.load_or_build(cached_grammar(), options, build)  # type: ignore[arg-type]
    folder = tmp_path / "cache" / "evaldsl"
    written = list(folder.glob("parser-*.json"))
    assert builds == [1] and len(written) == 1
    assert folder.stat().st_mode & 0o777 == 0o700
    second = tables.load_or_build(cached_grammar(), options, build)  # type: ignore[arg-type]
    assert builds == [1], "the cached tables were not used"
    text = "tool x called once; answer matches /a/"
    assert second.parse(text, start="file") == first.parse(text, start="file")


def test_a_cache_others_may_write_is_not_trusted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables, "shipped_path", lambda: tmp_path / "none.json")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    options = parser_options(None)
    tables.load_or_build(cached_grammar(), options, lambda: build_lark(None))
    (cached,) = (tmp_path / "cache" / "evaldsl").glob("parser-*.json")
    cached.chmod(0o666)  # world-writable: someone else could have put anything there
    builds: list[int] = []

    def build() -> object:
        builds.append(1)
        return build_lark(None)

    tables.load_or_build(cached_grammar(), options, build)  # type: ignore[arg-type]
    assert builds == [1]


def test_tables_are_keyed_by_what_every_state_lexes_too() -> None:
    """The post-lexer is given again at load, but the terminals it has every parser
    state's lexer read (a NAME: keywords are whole words) shape the fast loop's lexers:
    tables made without them are not loaded."""

    class Without:
        always_accept = ("_NL",)

    options = parser_options(None)
    before = {**options, "postlex": Without()}
    grammar = cached_grammar()
    assert tables.key_text(grammar, before) != tables.key_text(grammar, options)


def test_a_damaged_cache_is_rebuilt_not_an_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tables, "shipped_path", lambda: tmp_path / "none.json")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    options = parser_options(None)
    made_for = tables.key_text(cached_grammar(), options)
    key = tables.table_key(cached_grammar(), options)
    folder = tmp_path / "cache" / "evaldsl"
    folder.mkdir(parents=True, mode=0o700)
    body = {"format": 1, "key": key, "made_for": made_for, "data": {"parser": 1}, "memo": {}}
    (folder / f"parser-{key[:32]}.json").write_text(json.dumps(body))
    lark = tables.load_or_build(cached_grammar(), options, lambda: build_lark(None))
    assert lark.parse("steps < 1", start="file") is not None


def _imported_by(*args: str, full: bool = False, unset: tuple[str, ...] = ()) -> set[str]:
    """The top-level modules a CLI command imports (`full`: every module and submodule),
    run in a fresh interpreter (without the environment variables `unset`)."""
    code = (
        "import sys\nfrom evaldsl.tools.cli import main\n"
        f"try:\n    code = main({list(args)!r})\nexcept SystemExit:\n    pass\n"
        "names = sys.modules if " + repr(full) + " else {m.split('.')[0] for m in sys.modules}\n"
        "print('MODULES', ' '.join(sorted(names)))\n"
    )
    env = {k: v for k, v in os.environ.items() if k not in unset} | {"NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=env
    )
    line = next(x for x in done.stdout.splitlines() if x.startswith("MODULES "))
    return set(line.split()[1:])


HEAVY = {
    "httpx", "jsonpath_ng", "yaml", "pygls", "lsprotocol", "sqlite3", "asyncio", "multiprocessing",
    "msgspec",
}  # fmt: skip


def test_check_imports_only_what_it_needs() -> None:
    modules = _imported_by("check", "examples/weather/weather.eval")
    assert "evaldsl" in modules and "attrs" in modules
    assert not modules & HEAVY, sorted(modules & HEAVY)
    # error-free text is parsed with the fast loop's shipped tables: Lark is not loaded
    assert "lark" not in modules


def test_check_loads_lark_for_text_with_an_error(tmp_path: Path) -> None:
    broken = tmp_path / "broken.eval"
    broken.write_text("tool a called\ntool b caled\n", encoding="utf-8")
    modules = _imported_by("check", str(broken))
    assert "lark" in modules
    env = {**os.environ, "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "evaldsl.tools.cli", "check", str(broken)],
        capture_output=True, text=True, cwd=ROOT, env=env,
    )  # fmt: skip
    assert done.returncode == 1 and "broken.eval:2:" in done.stdout + done.stderr


def test_a_run_recording_its_history_loads_no_lark(tmp_path: Path) -> None:
    # the history keys assertions by their canonical text (the formatter's), which the
    # fast loop parses; Lark (~36 ms) is for the formatter's comments and for errors only
    history = tmp_path / "history.sqlite"
    modules = _imported_by("run", "-q", "--history", str(history), "examples/weather/weather.eval")
    assert history.is_file() and "sqlite3" in modules
    assert "lark" not in modules and "difflib" not in modules


def test_the_lark_version_is_read_without_importing_lark() -> None:
    code = (
        "import sys\nfrom evaldsl.syntax.tables import lark_version\n"
        "version = lark_version()\nassert 'lark' not in sys.modules\n"
        "import lark\nprint(version == lark.__version__, version)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.split()[:1] == ["True"], done.stdout + done.stderr


def test_check_loads_no_machinery_of_running_nor_reports(tmp_path: Path) -> None:
    # the runner's part `check` needs (its judge plan reads recordings) is runner.cases;
    # worker processes, result records, report formats and thread pools are not loaded,
    # nor (no cache folder: nothing is cached) the judge's client, its hashing, tempfile
    # and shutil (which argparse loads for the terminal's width)
    suite = "examples/weather/weather.eval"
    modules = _imported_by("check", suite, "--judge-cache", str(tmp_path / "none"), full=True)
    assert "evaldsl.runner.cases" in modules and "evaldsl.judge.plan" in modules
    assert not modules & {"evaldsl.judge.client", "hashlib", "tempfile", "shutil"}, modules
    # with a cache folder, the plan counts what it holds: the client is loaded for that
    (tmp_path / "cache").mkdir()
    cached = _imported_by("check", suite, "--judge-cache", str(tmp_path / "cache"), full=True)
    assert "evaldsl.judge.client" in cached and "shutil" not in cached
    unused = {
        "evaldsl.api",
        "evaldsl.runner.core",
        "evaldsl.runner.targets",
        "evaldsl.runner.results",
        "evaldsl.reports",
        "concurrent.futures",
        "logging",  # the judge's logger is made when there is something to log
        "subprocess",
        "html",
        "importlib.resources",
        # the judge plan indexes a small recording with the reference pass: no pass is
        # generated for it (evaldsl/runs/passes.py, `GENERATE_FROM`)
        "evaldsl.runs.codegen",
        "evaldsl.runs.groupgen",
    }
    assert not modules & unused, sorted(modules & unused)
    # the cassettes it names are read by their own reader: no other format's adapter
    adapters = {
        f"evaldsl.runs.{name}"
        for name in (
            "agents", "anthropic", "inspect_ai", "langsmith", "openai", "otel", "providers",
            "sse", "state",
        )
    }  # fmt: skip
    assert not modules & adapters, sorted(modules & adapters)


def test_the_runs_package_loads_its_names_on_first_use() -> None:
    code = (
        "import sys, evaldsl.runs.index\n"
        "assert 'evaldsl.runs.detect' not in sys.modules\n"
        "from evaldsl.runs import load_run, RunError, otel_events_of\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert "cannot import name 'otel_events_of'" in done.stderr, done.stderr
    code = (
        "import evaldsl.runs as runs\nfrom evaldsl.runs import detect\n"
        "print(runs.load_run.__module__, detect.otel_events.__module__, 'FORMATS' in dir(runs))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.split() == ["evaldsl.runs.detect", "evaldsl.runs.otel", "True"], done.stderr


def test_version_loads_neither_the_language_nor_lark() -> None:
    # the help's epilog (the vocabulary at a glance) is written only when help is printed
    modules = _imported_by("--version", full=True)
    assert not {m for m in modules if m.startswith(("evaldsl.language", "evaldsl.predicates"))}
    assert not {"lark", "attrs", "attr"} & modules


def test_help_still_shows_the_vocabulary(capsys: pytest.CaptureFixture[str]) -> None:
    from evaldsl.tools.cli import main

    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    assert "subjects: answer" in shown and "predicates: called" in shown
    assert "Exit codes: 0 all passed" in shown


def test_a_serial_run_loads_only_the_reports_it_writes(tmp_path: Path) -> None:
    suite = str(ROOT / "examples" / "weather" / "weather.eval")
    modules = _imported_by("run", "-q", "--no-history", "--judge", "off", suite, full=True)
    assert "evaldsl.reports.console" in modules
    unused = {
        "evaldsl.reports.junit",
        "evaldsl.reports.html",
        "evaldsl.reports.markdown",
        "evaldsl.runner.parallel",
        "multiprocessing",
        "sqlite3",
        "xml",
        "shutil",  # (the console's width is read with os: evaldsl.terminal)
        "decimal",  # (for money as the HTML report and `diff` show it: reports.common)
        "string",  # (its `Template` compiles a regex as it loads: regexlits spells it out)
        # record classes only other front ends make (each class built is ~1.4 M instructions)
        "evaldsl.suites.places",  # (where YAML and JSON suites write things)
        "evaldsl.suites.datasets",
    }
    assert not modules & unused, sorted(modules & unused)
    junit = str(tmp_path / "junit.xml")
    written = _imported_by("run", "-q", "--no-history", "--judge", "off", "--junit", junit, suite)
    assert "xml" in written  # the lazy import is not a missing one


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_the_judge_client_loads_for_a_case_that_asks_the_judge_only(
    tmp_path: Path, jobs: str
) -> None:
    # the command's judge makes its LLMJudge (HTTP client, cache, key hashing) at the
    # first question: a run whose assertions ask none never loads it
    cassette = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
    plain = tmp_path / "plain.eval"
    plain.write_text(f'case "a"\ncassette "{cassette}"\ntool get_weather called once\n')
    run = ["run", "-q", "--no-history", "--judge", "off", "-j", jobs]
    modules = _imported_by(*run, str(plain), full=True)
    assert "evaldsl.judge.plan" in modules  # (the judge is made, for the cases that ask)
    assert not modules & {"evaldsl.judge.client", "hashlib"}, modules
    judged = tmp_path / "judged.eval"
    judged.write_text(plain.read_text() + 'answer judged "mentions the weather"\n')
    report = tmp_path / "report.json"
    # a judge that is off skips the question without its client
    off = _imported_by(*run, "--json", str(report), str(judged), full=True)
    assert not off & {"evaldsl.judge.client", "hashlib"}, off
    (case,) = json.loads(report.read_text())["suites"][0]["cases"]
    assert [a["status"] for a in case["assertions"]] == ["pass", "skip"]
    assert "--judge off" in case["assertions"][1]["message"]
    # one that answers from its cache only asks the client (a miss: the question's error)
    frozen = [*run[:-4], "--judge", "frozen", "--judge-cache", str(tmp_path / "cache"), *run[-2:]]
    asked = _imported_by(*frozen, "--json", str(report), str(judged), full=True)
    if jobs == "1":  # (with -j 2 the worker loads it, and the parent reports what it said)
        assert "evaldsl.judge.client" in asked
    (case,) = json.loads(report.read_text())["suites"][0]["cases"]
    assert [a["status"] for a in case["assertions"]] == ["pass", "error"]
    # live without a key: with no cache folder the question is skipped without the
    # client, in the client's words; with one, the client looks for a cached verdict
    live = [*run[:-4], "--judge", "live", "--judge-cache", str(tmp_path / "live"), *run[-2:]]
    messages = []
    for folder in (False, True):
        if folder:
            (tmp_path / "live").mkdir()
        no_key = _imported_by(
            *live, "--json", str(report), str(judged), full=True, unset=(ENV_API_KEY,)
        )
        if jobs == "1" or not folder:
            assert ("evaldsl.judge.client" in no_key) is folder, no_key
        (case,) = json.loads(report.read_text())["suites"][0]["cases"]
        assert [a["status"] for a in case["assertions"]] == ["pass", "skip"]
        messages.append(case["assertions"][1]["message"])
    assert messages[0] == messages[1] == NO_KEY_MESSAGE


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_run_of_recordings_loads_no_machinery_of_live_targets(jobs: str) -> None:
    # worker processes for live targets, their pipes and `subprocess` are loaded for a
    # live case only (serial, and in a -j worker at its first live case)
    suite = str(ROOT / "examples" / "weather" / "weather.eval")
    modules = _imported_by(
        "run", "-q", "--no-history", "--judge", "off", "-j", jobs, suite, full=True
    )
    live = {"evaldsl.runner.targets", "evaldsl.jsondata", "evaldsl.runs.state", "subprocess"}
    assert not modules & live, sorted(modules & live)
    assert "evaldsl.runner.live" in modules
    live_suite = str(ROOT / "examples" / "live" / "live.eval")
    ran = _imported_by(
        "run", "-q", "--no-history", "--judge", "off", "-j", jobs, live_suite, full=True
    )
    assert ("evaldsl.runner.targets" in ran) == (jobs == "1")  # -j 2: in the workers only


def test_the_package_loads_its_api_on_first_use() -> None:
    code = (
        "import sys, evaldsl\n"
        "assert 'evaldsl.api' not in sys.modules\n"
        "import evaldsl.compile.compiler  # the sub-package does not hide the function\n"
        "program = evaldsl.compile('tool search called once')\n"
        "from evaldsl import Run, expect, EvalDslError\n"
        "print(type(program).__name__, Run.__name__, expect.__name__, 'compile' in dir(evaldsl))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert done.stdout.split() == ["Program", "Run", "expect", "True"], done.stderr


def test_a_yaml_suite_still_loads_yaml() -> None:
    # the lazy import is not a missing one
    assert "yaml" in _imported_by("check", "examples/weather/weather.yaml")


def _cassette(path: Path, names: list[str]) -> Path:
    lines = ['{"cassette": "traceplay", "version": 1}']
    for i, name in enumerate(names):
        lines.append(json.dumps({"type": "tool.call", "name": name, "callId": f"c{i}"}))
        lines.append(json.dumps({"type": "llm.response", "output": "x" * 200}))
    path.write_text("\n".join(lines) + "\n")
    return path


def test_tool_names_come_from_a_bounded_head(tmp_path: Path) -> None:
    from evaldsl.runs.cassette import EventStream
    from evaldsl.runs.toolnames import PartialNames, recorded_tool_names

    path = _cassette(tmp_path / "c.jsonl", ["search"] * 50 + ["get_weather", "fetch"])
    whole = recorded_tool_names(EventStream(path))
    assert whole == {"search", "get_weather", "fetch"} and not isinstance(whole, PartialNames)
    head = recorded_tool_names(EventStream(path), limit=2000)
    assert isinstance(head, PartialNames)
    assert set(head) == {"search"}  # only the head was decoded
    # membership still sees the whole file: no warning for a tool called after the head
    assert "fetch" in head and "get_weather" in head and "get_weathr" not in head


def _in_text(line: str, *, inner: bool, outer: bool) -> str:
    """An event line held as JSON text in a response's output, each JSON text written
    with `ensure_ascii` or not."""
    text = json.dumps(json.loads(line), ensure_ascii=inner)
    return json.dumps({"type": "llm.response", "output": text}, ensure_ascii=outer)


@pytest.mark.parametrize(
    "write",
    [
        # as orjson and JavaScript write it (UTF-8)
        lambda line: json.dumps(json.loads(line), ensure_ascii=False),
        lambda line: json.dumps(json.loads(line)),  # Python's `ensure_ascii` (\\u00e9)
        lambda line: re.sub(
            r"\\u[0-9a-f]{4}", lambda m: "\\u" + m[0][2:].upper(), json.dumps(json.loads(line))
        ),
        lambda line: line.replace("/", "\\/"),  # PHP's
        lambda line: line.replace("<", "\\u003c").replace(">", "\\u003e"),  # Go's
        # the call inside JSON text held in a string (OTel GenAI's messages), each side
        # kept as UTF-8 or escaped
        lambda line: _in_text(line, inner=False, outer=False),
        lambda line: _in_text(line, inner=False, outer=True),
        lambda line: _in_text(line, inner=True, outer=True),
    ],
    ids=[
        "utf-8",
        "ensure_ascii",
        "upper-hex",
        "php-slash",
        "go-html",
        "in-text",
        "in-text-outer-escaped",
        "in-text-both-escaped",
    ],
)
def test_a_name_after_the_head_is_found_however_the_writer_escaped_it(
    tmp_path: Path, write: Callable[[str], str]
) -> None:
    """A tool called only after the head is found in the rest of the file whichever
    characters its writer escaped, so no "never occurs" warning is made up for it."""
    from evaldsl.runs.cassette import EventStream
    from evaldsl.runs.toolnames import PartialNames, recorded_tool_names

    names = ["search"] * 50 + ["météo", "fs/read", "<get>", "天气", "😀ok"]
    path = _cassette(tmp_path / "c.jsonl", names)
    text = path.read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    # (the head's 50 calls of `search` as they are: the writer's lines are after it)
    lines = rest.splitlines()
    body = "".join(f"{line}\n" for line in lines[:100])
    body += "".join(write(line) + "\n" for line in lines[100:])
    path.write_text(header + "\n" + body, encoding="utf-8")
    head = recorded_tool_names(EventStream(path), limit=2000)
    assert isinstance(head, PartialNames) and set(head) == {"search"}
    for name in names[50:]:
        assert name in head, (name, [line for line in body.splitlines() if "ok" in line][:1])
    assert "météo2" not in head and "天" + "地" not in head and "get_weathr" not in head


@settings(max_examples=examples(200), deadline=None)
@given(
    st.text(min_size=1, max_size=12),
    st.booleans(),
    st.booleans(),
    st.sampled_from(["call", "in-text", "php-slash"]),
)
def test_any_name_written_any_way_after_the_head_is_found(
    name: str, inner_ascii: bool, outer_ascii: bool, where: str
) -> None:
    """Whatever the tool's name (quotes, backslashes, controls, letters past ASCII,
    astral characters), and however its writer escaped it, a name called only in the
    rest of the file is found there: the search may miss a warning, never make one up."""
    from evaldsl.runs.toolnames import PartialNames

    event = {"type": "tool.call", "name": name, "callId": "c1"}
    line = json.dumps(event, ensure_ascii=inner_ascii)
    if where == "in-text":  # the call inside JSON text held in a string
        line = json.dumps({"type": "llm.response", "output": line}, ensure_ascii=outer_ascii)
    elif where == "php-slash":
        line = line.replace("/", "\\/")
    head = '{"type": "tool.call", "name": "search", "callId": "c0"}\n'
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "e.jsonl"
        path.write_text(head + line + "\n", encoding="utf-8")
        names = PartialNames({"search"}, str(path), len(head.encode()))
        assert name in names


def test_check_warns_about_a_near_miss_only_when_the_file_lacks_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaldsl.runs import toolnames
    from evaldsl.suites.build import check_text

    monkeypatch.setattr(toolnames, "HEAD_BYTES", 2000)
    monkeypatch.setattr(toolnames.recorded_tool_names, "__defaults__", (2000,))
    _cassette(tmp_path / "c.jsonl", ["search"] * 50 + ["searches"])
    suite = tmp_path / "s.eval"
    text = 'cassette "c.jsonl"\ntool searches called\ntool serch called\n'
    codes = [(d.line, d.code) for d in check_text(text, str(suite))]
    assert codes == [(3, "W301")]  # `searches` is in the tail: found; `serch` is a typo


def test_no_tool_lines_search_the_tail_only_for_a_warning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`no tool X` of a tool in no recording is the common safety net: the rest of a
    recording read by its head is searched only for a near miss (a warning to give), not
    for each such line."""
    from evaldsl.runs import toolnames
    from evaldsl.suites.build import check_text

    monkeypatch.setattr(toolnames, "HEAD_BYTES", 2000)
    monkeypatch.setattr(toolnames.recorded_tool_names, "__defaults__", (2000,))
    _cassette(tmp_path / "c.jsonl", ["search"] * 50 + ["searches"])
    text = 'cassette "c.jsonl"\n' + "".join(f"no tool delete_{n}\n" for n in range(10))
    opened = mock.Mock(wraps=toolnames.open_file)
    monkeypatch.setattr(toolnames, "open_file", opened)
    diagnostics = check_text(text + "no tool serch\n", str(tmp_path / "s.eval"))
    assert [(d.line, d.code) for d in diagnostics] == [(12, "W301")]
    assert opened.call_count == 2  # the head read, and the tail searched for `serch`


@settings(max_examples=examples(60), deadline=None)
@given(
    st.lists(
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(["tool.call", "mcp.call", "llm.response", "x"]),
                "name": st.sampled_from(["search", "fetch", "tool.call", "a b"]),
            },
            optional={
                "tool": st.sampled_from(["mcp_tool", "other"]),
                "output": st.sampled_from(["mentions tool.call", "mcp.call", "none"]),
            },
        ),
        max_size=30,
    )
)
def test_head_names_are_the_names_a_full_read_finds(events: list[dict[str, str]]) -> None:
    from evaldsl.runs.cassette import EventStream
    from evaldsl.runs.events import tool_call_name
    from evaldsl.runs.toolnames import recorded_tool_names

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "e.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in events))
        found = recorded_tool_names(EventStream(path, header=False))
    expected = {n for n in (tool_call_name(e) for e in events) if n is not None}
    assert found == expected


_MENTION = re.compile(rb"tool\.call|mcp\.call")


def _lines_by_regex(block: bytes) -> list[tuple[int, int]]:
    """The reference: each line holding a regex match of either marker."""
    found, pos = [], 0
    while (m := _MENTION.search(block, pos)) is not None:
        begin = block.rfind(b"\n", 0, m.start()) + 1
        end = block.find(b"\n", m.end())
        end = len(block) if end < 0 else end
        found.append((begin, end))
        pos = end
    return found


@settings(max_examples=examples(300), deadline=None)
@given(
    st.lists(
        st.sampled_from(
            [b"tool.call", b"mcp.call", b".call", b"tool", b"mcp", b"tool.", b"\n", b"x", b"."]
        ),
        max_size=40,
    ).map(b"".join)
)
def test_tool_lines_are_the_lines_a_regex_finds(block: bytes) -> None:
    from evaldsl.runs.toolnames import tool_lines

    assert list(tool_lines(block)) == _lines_by_regex(block)


def _run_importing(*args: str) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """`evaldsl run --no-history ARGS` under `-X importtime`: the process, and the name of
    every module each of its processes imported (once per process that imported it)."""
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "evaldsl.tools.cli", "run", "--no-history",
         *args],
        capture_output=True, text=True, cwd=ROOT,
    )  # fmt: skip
    names = [
        line.split("|")[-1].strip()
        for line in done.stderr.splitlines()
        if line.startswith("import time:") and "|" in line
    ]
    return done, names


def test_j_workers_import_nothing_of_their_own(tmp_path: Path) -> None:
    # what a worker would import at its first case (the pass generator, `ctypes`, and for
    # cases it checks itself `difflib`) is imported once, before forking: a module
    # imported twice in a -j 2 run (once in each worker) and not in a serial run is one
    # a worker imported by itself
    cassette = ROOT / "examples" / "weather" / "cassettes" / "xiamen.jsonl"
    suite = tmp_path / "many.eval"
    suite.write_text(
        "".join(
            f'case "c{i}"\n  cassette "{cassette}"\n  tool get_weather called once\n'
            "  no tool get_wether\n"  # did-you-mean: checking loads difflib
            for i in range(6)
        ),
        encoding="utf-8",
    )

    def twice(jobs: str) -> set[str]:
        done, names = _run_importing("-q", "-j", jobs, str(suite))
        assert "difflib" in names, done.stderr[-2000:]
        return {n for n in names if names.count(n) > 1}

    def missing(name: str) -> bool:  # a failed probe (`org.python.core` in `copy`)
        try:
            return importlib.util.find_spec(name) is None
        except ImportError:
            return True

    imported_by_workers = twice("2") - twice("1")
    assert {n for n in imported_by_workers if not missing(n)} == set()


def test_j_workers_share_the_typed_decoder_of_many_small_recordings(tmp_path: Path) -> None:
    # recordings of `TYPED_AFTER` bytes in all, each under `TYPED_FROM`: the parent loads
    # the typed decoder (msgspec) once, before forking, and the workers decode every one
    # with it; a byte fewer in all, and nobody loads it (each is decoded whole)
    from evaldsl.runs import passes

    call = json.dumps({"type": "tool.call", "name": "search", "arguments": {"q": "x"}})
    answer = json.dumps({"type": "llm.response", "output": "the answer is ok"})
    share = passes.TYPED_AFTER // 4
    assert share < passes.TYPED_FROM

    def suite(folder: Path, total: int) -> Path:
        folder.mkdir()
        cases = []
        for k in range(4):
            size = total // 4 + (1 if k < total % 4 else 0)
            tail = answer + "\n"
            calls = (size - len(tail)) // (len(call) + 1)
            pad = size - len(tail) - calls * (len(call) + 1)  # spaces end the last call
            text = (call + "\n") * (calls - 1) + call + " " * pad + "\n" + tail
            (folder / f"r{k}.jsonl").write_text(text, encoding="utf-8")
            assert (folder / f"r{k}.jsonl").stat().st_size == size
            cases.append(
                f'case "c{k}"\n  cassette "r{k}.jsonl"\n  tool search called at least 2 times\n'
                '  tool search args $.q == "x"\n  answer contains "ok"\n'
            )
        (folder / "many.eval").write_text("".join(cases), encoding="utf-8")
        return folder / "many.eval"

    def loads_of_msgspec(path: Path, jobs: str) -> tuple[int, str]:
        done, names = _run_importing("--no-color", "-j", jobs, str(path))
        assert done.returncode == 0, done.stdout + done.stderr[-2000:]
        times = re.sub(r"\d+(\.\d+)? ?m?s\b", "T", done.stdout)  # (and their padding)
        return names.count("msgspec"), re.sub(r" +", " ", times)

    enough = suite(tmp_path / "enough", passes.TYPED_AFTER)
    fewer = suite(tmp_path / "fewer", passes.TYPED_AFTER - 1)
    assert loads_of_msgspec(enough, "2") == (1, loads_of_msgspec(enough, "1")[1])
    assert loads_of_msgspec(fewer, "2")[0] == 0


REALWORLD = ROOT / "tests" / "fixtures" / "realworld"


def _repeated(fixture: str, path: Path, copies: int, late: str) -> Path:
    """`fixture`'s lines `copies` times, the last copy's `get_current_weather` calls
    renamed `late`, ids (calls, messages, chunk streams) each copy's own."""
    lines = [line for line in (REALWORLD / fixture).read_text().splitlines() if line.strip()]
    out = []
    for copy in range(copies):
        for line in lines:
            line = re.sub(r'"(call_|toolu_|msg_|chatcmpl-)(\w+)"', rf'"\g<1>\g<2>{copy}"', line)
            out.append(line.replace("get_current_weather", late) if copy == copies - 1 else line)
    path.write_text("\n".join(out) + "\n")
    return path


@pytest.fixture
def small_heads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Heads of 2,000 bytes (and 50 lines) from files of 4,000; the paths of every whole
    read listed."""
    from evaldsl.runs import detect

    monkeypatch.setattr(detect, "HEAD_FROM", 4000)
    monkeypatch.setattr(detect, "HEAD_BYTES", 2000)
    read_whole: list[str] = []
    read_bytes = detect.read_bytes  # what reads a file whole

    def spy(path: str) -> bytes:
        read_whole.append(path)
        return read_bytes(path)

    monkeypatch.setattr(detect, "read_bytes", spy)
    return read_whole


def test_check_reads_a_large_jsonl_of_responses_from_its_head(
    tmp_path: Path, small_heads: list[str]
) -> None:
    from evaldsl.runs.detect import load_run
    from evaldsl.suites.build import check_text

    # 120 lines: the head is the first 50 (the lines detection reads), the rest the run's
    path = _repeated("openai-chat-jsonl/responses.jsonl", tmp_path / "r.jsonl", 60, "fetch")
    text = (
        'cassette "r.jsonl"\ntool get_current_weather called\ntool fetch called\n'
        "tool fetchh called\ntool get_curent_weather called\n"
    )
    codes = [(d.line, d.code) for d in check_text(text, str(tmp_path / "s.eval"))]
    # `fetch` is called only in the last lines: found by the search of the rest; as for a
    # cassette, suggestions come from the head's names, so `fetchh` gets none (no warning)
    assert codes == [(5, "W301")]
    assert small_heads == []  # the file was not read whole
    run = load_run(path)  # the run reads it all
    assert small_heads == [str(path)]
    assert {e["name"] for e in run.events or [] if e["type"] == "tool.call"} == {
        "get_current_weather",
        "fetch",
    }


@pytest.mark.parametrize(
    "fixture",
    [
        "openai-chat-jsonl/responses.jsonl",
        "anthropic-stream-tooluse/events.jsonl",  # a head cuts a message: read whole
        "openai-chat-stream/chunks.jsonl",
        "openinference-phoenix-spans/spans.jsonl",  # OTel: read whole, as the run reads it
        "traceplay-multi-tool/cassette.multi-tool.jsonl",  # a cassette: its own head
    ],
)
def test_a_head_gives_the_diagnostics_the_whole_file_gives(
    tmp_path: Path, small_heads: list[str], monkeypatch: pytest.MonkeyPatch, fixture: str
) -> None:
    from evaldsl.check import sources
    from evaldsl.suites.build import check_text

    copies = 1 if "cassette" in fixture else 40
    _repeated(fixture, tmp_path / "r.jsonl", copies, "fetch")
    # (near misses of names in the head: a name called only past it suggests nothing)
    statements = ["get_current_weather", "fetch", "get_curent_weather", "get_weather", "zzz"]
    text = 'cassette "r.jsonl"\n' + "".join(f"tool {s} called\n" for s in statements)
    text += "tool get_current_weather called\ntools contains all [fetch, search]\n"
    with_heads = check_text(text, str(tmp_path / "s.eval"))
    if fixture.startswith("openai-chat-jsonl"):
        assert small_heads == []  # (read from its head: this compares something)
    monkeypatch.setattr(sources, "read_head", lambda *args: None)
    whole = check_text(text, str(tmp_path / "s.eval"))
    assert [(d.line, d.code, d.message) for d in with_heads] == [
        (d.line, d.code, d.message) for d in whole
    ]


@pytest.mark.parametrize("named", ['cassette "t.jsonl"', 'trace "t.jsonl" as otel'])
def test_check_reads_a_large_otlp_jsonl_from_its_head(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, source_loads: list[str], named: str
) -> None:
    """A JSONL of OTLP exports (here Latitude's trace, 60 copies, each line of its own ids)
    is read from its head at check time, as the other formats read whole are: the run
    reads all of it. `fetch`, called in the last copy only (a tool span's name, and inside
    the JSON text of the messages), is found by the search of the rest; as for a
    cassette, suggestions come from the head's names, so its near miss `fetchh` gets no
    warning, where the whole file's names suggest `fetch`."""
    from evaldsl.check import sources
    from evaldsl.runs import detect
    from evaldsl.suites.build import check_text

    # (a line is ~14 KB: a head of two, as 64 KiB is of five of `speed.py`'s exports)
    monkeypatch.setattr(detect, "HEAD_FROM", 4000)
    monkeypatch.setattr(detect, "HEAD_BYTES", 20_000)
    document = json.loads((REALWORLD / "otel-latitude-otlp/trace.otlp.json").read_text())
    line = json.dumps(document)
    out = []
    for copy in range(60):
        own = re.sub(r'"(ID_\d+)"', rf'"\g<1>_{copy}"', line)
        out.append(own.replace("get_weather", "fetch") if copy == 59 else own)
    (tmp_path / "t.jsonl").write_text("\n".join(out) + "\n")
    text = (
        named
        + "\n"
        + "".join(
            f"tool {name} called\n" for name in ("get_weather", "fetch", "fetchh", "get_wether")
        )
    )
    loads = source_loads
    with_head = check_text(text, str(tmp_path / "s.eval"))
    assert loads == []  # read from its head
    assert [(d.line, d.code) for d in with_head] == [(5, "W301")]  # `get_wether`
    monkeypatch.setattr(sources, "read_head", lambda *args: None)
    whole = check_text(text, str(tmp_path / "s.eval"))
    assert loads == [str(tmp_path / "t.jsonl")]
    assert [(d.line, d.code) for d in whole] == [(4, "W301"), (5, "W301")]
    assert "did you mean `fetch`?" in str(whole[0].hint)


def test_a_head_with_a_bad_line_leaves_the_error_to_the_whole_reading(
    tmp_path: Path, small_heads: list[str]
) -> None:
    from evaldsl.suites.build import check_text

    path = _repeated("openai-chat-jsonl/responses.jsonl", tmp_path / "r.jsonl", 30, "fetch")
    lines = path.read_text().splitlines()
    lines[1] = lines[1][:40]  # cut: not JSON
    path.write_text("\n".join(lines) + "\n")
    (diag,) = check_text('cassette "r.jsonl"\ntool fetch called\n', str(tmp_path / "s.eval"))
    assert diag.code == "E502" and "invalid JSON on line 2" in diag.message
    assert small_heads == [str(path)]


def test_a_head_holds_the_lines_detection_reads_of_the_whole_file(
    tmp_path: Path, small_heads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from evaldsl.check import sources
    from evaldsl.suites.build import check_text

    path = _repeated("openai-chat-jsonl/responses.jsonl", tmp_path / "r.jsonl", 60, "fetch")
    lines = path.read_text().splitlines()
    anthropic = (REALWORLD / "anthropic-message-tooluse" / "message.json").read_text()
    lines[44] = json.dumps(json.loads(anthropic))  # line 45: past 2,000 bytes, in 50 lines
    path.write_text("\n".join(lines) + "\n")
    text = 'cassette "r.jsonl"\ntool fetch called\n'
    with_heads = [(d.code, d.message) for d in check_text(text, str(tmp_path / "s.eval"))]
    monkeypatch.setattr(sources, "read_head", lambda *args: None)
    whole = [(d.code, d.message) for d in check_text(text, str(tmp_path / "s.eval"))]
    assert with_heads == whole and whole and whole[0][0] == "E502"


def test_half_a_character_in_a_tool_name_is_checked_against_a_files_tail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`tool "a\\ud800b" called` (a lone surrogate escape in the suite) against a file read
    by its head: the search of the tail wrote the name with orjson, which refused it
    (TypeError out of `evaldsl check`). Such a name is looked for by its runs of plain
    characters, as a name with a quote is: never a warning made up."""
    from evaldsl.runs import toolnames
    from evaldsl.suites.build import check_text

    monkeypatch.setattr(toolnames, "HEAD_BYTES", 2000)
    monkeypatch.setattr(toolnames.recorded_tool_names, "__defaults__", (2000,))
    _cassette(tmp_path / "c.jsonl", ["search"] * 50 + ["ab_tool"])
    assert toolnames.written_as("ab\ud800_tool") == (b"_tool",)
    text = 'cassette "c.jsonl"\ntool "ab\\ud800_tool" called\n'
    assert check_text(text, str(tmp_path / "s.eval")) == []
