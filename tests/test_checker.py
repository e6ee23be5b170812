"""The checker: every problem of a file before anything runs, each with its stable code.

Two kinds of tests: golden files (`tests/golden/*.eval`, rendered in full next to them as
`*.expected`; regenerate with `UPDATE_GOLDEN=1 pytest tests/test_checker.py`), and a table
of (source, the (line, column, code) it must give) for the exact positions.
"""

from __future__ import annotations

import os
import re
import unicodedata
from pathlib import Path
from typing import Any

import pytest
from clitools import run_evaldsl
from language_examples import BRIEF_SUITE

from evaldsl.api import diagnose
from evaldsl.check.sources import read_facts
from evaldsl.language.diagnostics import CODES, Diagnostic, render
from evaldsl.runs.detect import load_run
from evaldsl.runs.model import RunError
from evaldsl.suites.build import check_text
from evaldsl.syntax.parser import parse

HERE = Path(__file__).parent
GOLDEN = HERE / "golden"
DEMO = HERE / "fixtures" / "traceplay" / "demo"
UPDATE = os.environ.get("UPDATE_GOLDEN") == "1"

# The modules whose diagnostics `diagnose` gives for `.eval` text (the YAML, JSON and
# dataset loaders have codes of their own, tested with them).
CHECK_STAGES = [
    "syntax/*.py",
    "check/*.py",
    "predicates/*.py",
    "language/regexes.py",
    "language/paths.py",
    "runs/model.py",
]


def codes_of_check_stages() -> set[str]:
    root = HERE.parent / "evaldsl"
    found: set[str] = set()
    for pattern in CHECK_STAGES:
        for module in root.glob(pattern):
            text = module.read_text(encoding="utf-8")
            found |= set(re.findall(r'"([EW]\d{3})"', text))
    # a run target's module is looked for by suites only (`diagnose` never calls a
    # target): test_suites.py covers E509; W513 comes from the environment (a price table
    # EVALDSL_PRICES names, read when evaldsl starts), not the file: test_prices.py
    return found - {"E509", "W513"}


def check_file(path: Path) -> list[Diagnostic]:
    text = path.read_text(encoding="utf-8")
    *_, diagnostics = diagnose(text, path.name, base_dir=path.parent, facts=read_facts)
    return diagnostics


def rendered(path: Path) -> str:
    out = render(check_file(path), style="full")
    # messages name the folder looked in: keep the golden files independent of the checkout
    out = out.replace(str(path.parent), "tests/golden")
    return out + "\n" if out else ""


GOLDEN_FILES = sorted(GOLDEN.glob("*.eval"))


@pytest.mark.parametrize("path", GOLDEN_FILES, ids=lambda p: p.name)
def test_golden(path: Path) -> None:
    expected_path = path.with_suffix(".expected")
    got = rendered(path)
    if UPDATE:
        expected_path.write_text(got, encoding="utf-8")
    assert expected_path.exists(), f"no {expected_path.name}: run with UPDATE_GOLDEN=1"
    assert got == expected_path.read_text(encoding="utf-8")


def test_goldens_cover_every_code() -> None:
    """Every code the parser and checker can emit shows up in some golden file."""
    emitted = codes_of_check_stages()
    assert len(emitted) >= 25
    assert emitted <= set(CODES)
    seen = {d.code for path in GOLDEN_FILES for d in check_file(path)}
    assert sorted(emitted - seen) == []
    assert seen <= set(CODES)


def test_clean_golden_is_clean() -> None:
    assert check_file(GOLDEN / "clean.eval") == []


def test_every_golden_diagnostic_is_sorted_and_placed() -> None:
    for path in GOLDEN_FILES:
        diagnostics = check_file(path)
        lines = path.read_text(encoding="utf-8").splitlines()
        keys = [(d.line, d.column) for d in diagnostics]
        assert keys == sorted(keys), path.name
        for d in diagnostics:
            assert d.path == path.name
            assert 1 <= d.line <= len(lines)
            assert d.source_line == lines[d.line - 1]
            assert d.message[:1].islower() or d.message[:1] in ("`", '"', "'"), d.message


# ---- the brief's own suite ---------------------------------------------------------------


def test_language_suite_checks_clean() -> None:
    *_, diagnostics = diagnose(BRIEF_SUITE, "weather.eval")
    assert diagnostics == []


def test_a_header_no_tool_above_a_state_case_is_said_at_the_header() -> None:
    """A header assertion holds for every case, and a state records no tool calls: the
    one problem, said at the header, naming the state case (it was an error verdict at
    run time, after a clean check)."""
    text = BRIEF_SUITE.replace("tokens <= 50000 ", "no tool execute_shell", 1)
    *_, diagnostics = diagnose(text, "weather.eval")
    assert [(d.line, d.column, d.code) for d in diagnostics] == [(5, 1, "E303")]
    assert diagnostics[0].message.startswith('in case "research pipeline completes" (1 of 2')


def test_no_tool_outside_the_tools_line_is_not_an_error() -> None:
    text = "tools get_weather, search, summarize\nno tool execute_shell\ntool search called"
    *_, diagnostics = diagnose(text)
    assert diagnostics == []
    # but a near miss of a declared tool is flagged: it would always pass
    *_, diagnostics = diagnose("tools get_weather, search\nno tool get_wether")
    assert [(d.code, d.hint) for d in diagnostics] == [("W301", "did you mean `get_weather`?")]


def test_every_tools_and_nodes_line_declares_its_names_in_order() -> None:
    """Several `tools` (`nodes`) lines are one declaration: their names in order, at the
    first line; a name of any line is known, and a near miss of one is flagged."""
    text = "tools a_tool, b_tool\nnodes n2\ntools c_tool\nnodes n1, n3\n"
    asserts = "tool c_tool called\nno tool b_tool\nno tool c_tol\nnode n3 visited\nnode n4 visited"
    _, _, outline, diagnostics = diagnose(text + asserts)
    assert outline.tools is not None and outline.nodes is not None
    assert [n.value for n in outline.tools.names] == ["a_tool", "b_tool", "c_tool"]
    assert [n.value for n in outline.nodes.names] == ["n2", "n1", "n3"]
    assert (outline.tools.span.start, outline.nodes.span.start) == (0, text.index("nodes"))
    assert [(d.line, d.code, d.hint) for d in diagnostics] == [
        (7, "W301", "did you mean `c_tool`?"),
        (9, "E302", "add it to the suite's nodes"),
    ]


def test_an_unknown_name_lists_ten_declared_names_and_counts_the_rest() -> None:
    tools = [f"tool_{n:02d}" for n in range(15)]
    unknown = [f"probe_{n}" for n in range(3)] + ["tool_3"]
    text = f"tools {', '.join(reversed(tools))}\n" + "".join(f"tool {u} called\n" for u in unknown)
    *_, diagnostics = diagnose(text + "nodes b, a\nnode c visited")
    shown = ", ".join(tools[:10])
    assert [d.message for d in diagnostics] == [
        *(f'unknown tool "{u}": the suite declares the tools {shown} and 5 more' for u in unknown),
        'unknown node "c": the suite declares the nodes a, b',
    ]
    assert diagnostics[-2].hint == "did you mean `tool_13`?"  # (difflib: the last of a tie)


# ---- exact places, one table -------------------------------------------------------------

CASSETTE = 'case "c"\ncassette "cassette.example.jsonl"\n'
STATE = 'case "s"\nstate "../../../golden/runs/research.json"\n'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # E201: a predicate that does not apply to its subject
        ('tool search contains "x"', [(1, 13, "E201")]),
        ("status > 2", [(1, 8, "E201")]),
        ("answer within budget", [(1, 8, "E201")]),
        ("every tool a called", [(1, 1, "E201")]),
        # E202: units
        ("latency < 2", [(1, 11, "E202")]),
        ("cost < 5", [(1, 8, "E202")]),
        ("tokens < 2s", [(1, 10, "E202")]),
        # E203: status values
        ("status == complete", [(1, 11, "E203")]),
        # E204: bare text
        ("answer == hello", [(1, 11, "E204")]),
        ("output == {a: b}", [(1, 15, "E204")]),
        # E205: values of the wrong type
        ('tokens == "x"', [(1, 11, "E205")]),
        ("answer contains 5", [(1, 17, "E205")]),
        ("status == 3", [(1, 11, "E205")]),
        ('tool a args $.n < "x"', [(1, 19, "E205")]),
        # (a list of names never equals one name: `==` could never pass)
        ("tools == search", [(1, 10, "E205")]),
        ('nodes != "a b"', [(1, 10, "E205")]),
        # (JSON numbers have no unit: `== 2s` compared 2 with them, as `< 2s` was refused)
        ("answer json $.t == 2s", [(1, 20, "E205")]),
        ("tool a args $.n in [1, $2]", [(1, 24, "E205")]),
        ("output contains {t: 250ms}", [(1, 21, "E205")]),
        # (no run calls a tool of no name: `tool "" called` could never pass)
        ('tool "" called', [(1, 1, "E205")]),
        ('no tool ""', [(1, 1, "E205")]),
        ('tools contains ""', [(1, 16, "E205")]),
        ('node "" visited', [(1, 1, "E205")]),
        # E206: lines in the wrong place
        (
            'cassette "x.jsonl"\ncase "c"\nrun a.b:c\nsuite "s"\noutput == 1',
            [(1, 1, "E206"), (4, 1, "E206")],
        ),
        ("input {a: 1}", [(1, 1, "E206")]),
        # E207: counts and indexes
        ("tool a called between 3 and 1 times", [(1, 15, "E207")]),
        ("tool a called -1 times", [(1, 15, "E207")]),
        ('answer[0] contains "a"', [(1, 1, "E207")]),
        # E208: judge thresholds
        ('answer judged "x" >= 2', [(1, 8, "E208")]),
        ('answer judged "x" < 0.5', [(1, 8, "E208")]),
        # E301 / E302: names against the tools and nodes lines
        ("tools a, b\ntool c called", [(2, 1, "E301")]),
        ("tools a, b\ntools contains c", [(2, 16, "E301")]),
        ("nodes a, b\nnode c visited", [(2, 1, "E302")]),
        # E303: a subject the source cannot provide
        (CASSETTE + "status == completed", [(3, 1, "E303")]),
        (CASSETTE + "node a visited", [(3, 1, "E303")]),
        (CASSETTE + "tokens within budget", [(3, 8, "E303")]),
        (STATE + 'answer contains "x"', [(3, 1, "E303")]),
        # E401 / E402 / E403 / E404: regexes and paths
        ("answer matches /(/", [(1, 16, "E401")]),
        ("answer matches /(a)\\1/", [(1, 16, "E402")]),
        ("answer matches /a(?=b)/", [(1, 16, "E402")]),
        ("answer matches /x/q", [(1, 16, "E403")]),
        ("answer json $.. is string", [(1, 13, "E404")]),
        ("tool a args $[abc def] == 1", [(1, 13, "E404")]),
        # E501 / E502: source files
        ('case "c"\ncassette "missing.jsonl"\nanswer contains "x"', [(2, 1, "E501")]),
        # E503: case sources
        ('case "c"\nanswer contains "x"', [(1, 1, "E503")]),
        (CASSETTE + 'state "s.json"\nanswer contains "x"', [(3, 1, "E503")]),
        # E507: an empty name where a name is declared, as a YAML suite's `name: ""`
        ('case ""\ncassette "cassette.example.jsonl"\nanswer contains "x"', [(1, 1, "E507")]),
        ('tools a, ""\nnodes ""', [(1, 10, "E507"), (2, 7, "E507")]),
        # W301: a tool the cassette never recorded, with a did-you-mean
        (CASSETTE + "tool get_wether called", [(3, 1, "W301")]),
        (CASSETTE + "tool unrelated_tool called", []),  # no near miss: no warning
        # W504: a case with no assertions
        (CASSETTE, [(1, 1, "W504")]),
        # W601: can never fail
        ('answer contains ""', [(1, 8, "W601")]),
        ("answer matches /x*/", [(1, 16, "W601")]),
        ("answer matches /^/m", [(1, 16, "W601")]),
        ("tokens >= 0", [(1, 8, "W601")]),
        ("tools in order []", [(1, 7, "W601")]),
        ("not nodes in order []", [(1, 11, "W602")]),
        # W602: can never pass
        ("tool x called 0 times\ntool x called", [(2, 1, "W602")]),
        ("tool x called\ntool x called 0 times", [(2, 1, "W602")]),
        ("tool x called once; no tool x", [(1, 21, "W602")]),
        ("tool x called twice\ntool x called at most 1 time", [(2, 1, "W602")]),
        ("tokens < 0", [(1, 8, "W602")]),
        # consistent counts are fine
        ("tool x called\ntool x called at most 3 times\ntool x called twice", []),
        ("tool x called 0 times\ntool y called", []),
    ],
)
def test_diagnostic_places(text: str, expected: list[tuple[int, int, str]]) -> None:
    *_, diagnostics = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert [(d.line, d.column, d.code) for d in diagnostics] == expected, render(diagnostics)


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ("latency < 2", "write `2s` or `2ms`"),
        ("cost < 5", "write `$5`"),
        ("status == complete", "did you mean `completed`?"),
        ("answer == hello", 'write "hello"'),
        ("tools get_weather, search\ntool get_wether called", "did you mean `get_weather`?"),
        ("nodes researcher\nnode reseacher visited", "did you mean `researcher`?"),
        # (a name that looks the same as the one it is near: another Unicode form of it)
        (
            'tools "caf\u00e9"\ntool "cafe\u0301" called',
            "did you mean `caf\u00e9`? It looks the same, but is written here with U+0065 U+0301 "
            "where that name has U+00E9",
        ),
        (
            'nodes plan\nnode "plan\u200b" visited',
            "did you mean `plan`? It looks the same, but is written here with U+200B where that "
            "name has nothing",
        ),
        (CASSETTE + "tool get_wether called", "did you mean `get_weather`?"),
        (
            "tools == search",
            "write `[search]` (or `tools contains search` for one name among them)",
        ),
        (
            "answer json $.t != 1.5m",
            "write the number as the JSON holds it (`90` if it counts seconds)",
        ),
    ],
)
def test_hints(text: str, hint: str) -> None:
    *_, diagnostics = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert [d.hint for d in diagnostics] == [hint]


@pytest.mark.parametrize(
    ("threshold", "shown"), [("1e400", "1e400"), ("1e999", "1e999"), ("-0.5", "-0.5"), ("2", "2")]
)
def test_a_judge_threshold_out_of_range_is_said_as_written(threshold: str, shown: str) -> None:
    """`>= 1e400` (read as infinity) was said as "inf is out of range"."""
    *_, diagnostics = diagnose(f'answer judged "x" >= {threshold}', "t.eval")
    assert [(d.code, d.message) for d in diagnostics] == [
        ("E208", f"a judge score is between 0 and 1; {shown} is out of range")
    ]


@pytest.mark.parametrize(
    ("text", "column", "message"),
    [
        # a bracket never closed: the path's own error at its `[`, not "found `[`"
        ("tool search args $.a[ == 1", 21, "the bracket `[` at character 4 is not closed"),
        ("tool search args $.a[0 == 1", 21, "`$.a[0…`: the bracket `[`"),
        ("tool search args $.a['x] == 1", 21, "its quote `'` is never closed"),
        ("answer json $.a[ == 1", 16, "the bracket `[` at character 4 is not closed"),
        ("every tool s result $..b[1 is string", 25, "the bracket `[`"),
        # jsonpath-ng's own words ("Parse error near the end of string!") said as the fault
        ("tool search args $. == 1", 18, "`$.`: nothing follows its last `.`"),
        ("tool search args $.a.b. == 1", 18, "nothing follows its last `.`"),
        ("tool search args $[?(@.x ==)] == 1", 18, "a value is missing after `$[?(@.x ==`"),
        ("tool search args $[?(@.x <)] == 1", 18, "a value is missing after `$[?(@.x <`"),
        ("tool search args $.a[(] == 1", 18, "the parenthesis `(` at character 5 is not closed"),
        ("tool search args $.a[?(@.b] == 1", 18, "the parenthesis `(` at character 6"),
        ("tool search args $[a^b] == 1", 18, "`^` cannot follow `$[a`"),
        ("tool search args $[abc def] == 1", 18, "`def` cannot follow `$[abc`"),
        ("tool search args $.a[?(@.x == 'y)] == 1", 21, "its quote `'` is never closed"),
        (
            "answer json $[?(@.x == 'y')][1:",
            29,
            "`$[?(@.x == 'y')][1:`: the bracket `[` at character 17",
        ),
    ],
)
def test_a_bad_path_says_what_is_wrong_where(text: str, column: int, message: str) -> None:
    *_, diagnostics = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert [(d.code, d.column) for d in diagnostics] == [("E404", column)], render(diagnostics)
    assert message in diagnostics[0].message, diagnostics[0].message
    # never jsonpath-ng's own words (its tokens and 0-based columns)
    assert "Parse error" not in diagnostics[0].message
    assert "near token" not in diagnostics[0].message
    assert diagnostics[0].hint


def _cassette_case(name: str, *lines: str) -> str:
    return "\n".join([f'case "{name}"', 'cassette "cassette.example.jsonl"', *lines, ""])


def _state_case(name: str, *lines: str) -> str:
    return "\n".join([f'case "{name}"', 'state "../../../golden/runs/research.json"', *lines, ""])


def test_a_header_assertion_is_checked_in_each_cases_environment() -> None:
    """Suite-level assertions hold for every case: `answer` in a header is an error for
    a state case though another case is a cassette's, said once at the header."""
    text = "answer not empty\n" + _cassette_case("trace", "steps >= 1")
    text += _state_case("state case", "status == completed")
    *_, diagnostics = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert [(d.line, d.column, d.code) for d in diagnostics] == [(1, 1, "E303")], render(
        diagnostics
    )
    assert diagnostics[0].message.startswith('in case "state case" (1 of 2 cases): a state ')
    assert "`answer`" in diagnostics[0].message


def test_a_header_problem_of_every_case_is_said_as_it_is() -> None:
    text = "answer not empty\n" + _state_case("s1", "status == completed")
    text += _state_case("s2", "status == completed")
    *_, diagnostics = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert [d.code for d in diagnostics] == ["E303"]
    assert diagnostics[0].message.startswith("a state cannot provide `answer`")


def test_a_header_problem_names_the_first_cases_and_counts_the_rest() -> None:
    text = "status == completed\n" + _state_case("s", "status == completed")
    text += "".join(_cassette_case(f"c{n}", "steps >= 1") for n in range(5))
    *_, diagnostics = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert [d.code for d in diagnostics] == ["E303"]
    assert diagnostics[0].message.startswith('in cases "c0", "c1", "c2" and 2 more (5 of 6 ')


def test_the_header_is_checked_once_per_environment_not_per_case(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from evaldsl.suites import build

    header = "answer not empty\n"
    seen: list[str] = []
    check_statements = build.check_statements

    def counted(statements: Any, source: Any, *args: Any, **kwargs: Any) -> Any:
        seen.append(source.text[: len(header)])
        return check_statements(statements, source, *args, **kwargs)

    monkeypatch.setattr(build, "check_statements", counted)
    text = header + "".join(_cassette_case(f"c{n}", "steps >= 1") for n in range(40))
    text += "".join(_state_case(f"s{n}", "status == completed") for n in range(40))
    *_, diagnostics = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert [d.code for d in diagnostics] == ["E303"]
    assert "(40 of 80 cases)" in diagnostics[0].message
    # each case's own assertions once, and the header once per environment (two)
    assert len(seen) == 80 + 2


@pytest.mark.parametrize(
    ("header", "own", "line"),
    [
        ("no tool get_weather", "tool get_weather called", 4),
        ("tool get_weather called at most 1 time", "tool get_weather called twice", 4),
        ("tool get_weather called\nno tool x", "tool get_weather never called", 5),
    ],
)
def test_a_case_count_that_contradicts_the_headers_is_w602_at_the_case(
    header: str, own: str, line: int
) -> None:
    text = header + "\n" + _cassette_case("c", own)
    *_, diagnostics = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert [(d.line, d.code) for d in diagnostics] == [(line, "W602")], render(diagnostics)
    assert "the suite-level count of tool" in diagnostics[0].message
    assert "on line 1" in diagnostics[0].message


@pytest.mark.parametrize(
    ("first", "second", "never"),
    [
        ("latency < 2s", "latency >= 2000ms", True),  # units compared as seconds
        ("latency < 2s", "latency >= 1999ms", False),
        ("tokens > 99.5", "tokens < 100", True),  # a count is whole: > 99.5 is >= 100
        ("tokens > 99.5", "tokens <= 100", False),
        ("cost < $0.50", "cost == $0.5", True),
        ("cost <= $0.50", "cost == $0.5", False),
        ("guards == 0", "guards >= 1", True),
        ("steps != 2", "steps == 2", False),  # `!=` bounds nothing (not a range)
        ("tokens < 100", "output tokens > 200", False),  # another measure
        ("tokens > 10", "not tokens < 5", False),  # under `not`: never narrowed
    ],
)
def test_bounds_of_one_measure_that_no_run_meets_together_are_w602(
    first: str, second: str, never: bool
) -> None:
    *_, diagnostics = diagnose(
        CASSETTE + f"{first}\n{second}", "t.eval", base_dir=DEMO, facts=read_facts
    )
    said = [(d.line, d.code, d.message) for d in diagnostics]
    if never:
        assert said == [(4, "W602", f"this can never pass: it contradicts `{first}` on line 3")]
    else:
        assert said == []


def test_a_case_bound_that_contradicts_the_headers_is_w602_at_the_case() -> None:
    """The header's bounds of a measure are every case's: a case's own that leaves no
    value is W602 at the case, naming the header's line; each case is held apart."""
    text = "tokens < 1000\nlatency <= 2s\n" + _cassette_case("c", "tokens > 2000", "steps > 5")
    # (case c's own bounds are not case d's: `steps < 3` contradicts nothing here)
    text += _cassette_case("d", "steps < 3", "latency > 2000ms")
    *_, diagnostics = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert [(d.line, d.code, d.message) for d in diagnostics] == [
        (
            5,
            "W602",
            "this can never pass: it contradicts the suite-level `tokens < 1000` on line 1",
        ),
        (
            10,
            "W602",
            "this can never pass: it contradicts the suite-level `latency <= 2s` on line 2",
        ),
    ], render(diagnostics)


def test_status_in_a_cassette_case_lists_what_cassettes_have() -> None:
    *_, (diag,) = diagnose(
        CASSETTE + "status == completed", "t.eval", base_dir=DEMO, facts=read_facts
    )
    assert diag.code == "E303"
    assert "cassette" in diag.message and "status" in diag.message
    assert diag.hint is not None and "answer" in diag.hint and "tool NAME" in diag.hint


@pytest.mark.parametrize(
    ("source", "text", "said"),
    [
        (CASSETTE, "output == null", "cassette cannot provide `output`: it records events, "
         "not a `run` target's return value"),
        (CASSETTE, "status == completed", "it records events, not a workflow state"),
        (STATE, 'answer contains "x"', "it is a workflow's final state, not a trace of events or a "
         "`run` target's return value"),
    ],
)  # fmt: skip
def test_a_subject_the_source_cannot_provide_is_said_as_what_it_reads(
    source: str, text: str, said: str
) -> None:
    """`output` is a `run` target's return value, not the workflow state a cassette's
    message once said it was not."""
    *_, (diag,) = diagnose(source + text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert diag.code == "E303" and said in diag.message


def test_unreadable_run(tmp_path: Path) -> None:
    (tmp_path / "bad.jsonl").write_text("this is not json\n", encoding="utf-8")
    text = 'case "c"\ncassette "bad.jsonl"\nanswer contains "x"'
    *_, diagnostics = diagnose(text, "t.eval", base_dir=tmp_path, facts=read_facts)
    assert [(d.line, d.column, d.code) for d in diagnostics] == [(2, 1, "E502")]


def test_missing_file_names_the_path() -> None:
    text = 'case "c"\ncassette "cassettes/nowhere.jsonl"\nanswer contains "x"'
    *_, (diag,) = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert diag.code == "E501"
    assert '"cassettes/nowhere.jsonl"' in diag.message


def test_templated_paths_are_read_once_rendered() -> None:
    # `each` rows are expanded before checking (the API and suites share one pipeline):
    # the template itself is never looked up, each row's rendered path is.
    text = 'case "c"\neach [{f: "cassette.example"}]\ncassette "{{f}}.jsonl"\nanswer contains "x"'
    *_, diagnostics = diagnose(text, "t.eval", base_dir=DEMO, facts=read_facts)
    assert diagnostics == []
    missing = text.replace("cassette.example", "a")
    *_, (diag,) = diagnose(missing, "t.eval", base_dir=DEMO, facts=read_facts)
    assert (diag.code, diag.line) == ("E501", 3) and '"a.jsonl"' in diag.message


def test_checker_keeps_going_after_syntax_errors() -> None:
    text = "tool a caled\nlatency < 2\nanswer contans 'x'\nstatus == complete"
    *_, diagnostics = diagnose(text, "t.eval")
    assert [(d.line, d.code) for d in diagnostics] == [
        (1, "E101"),
        (2, "E202"),
        (3, "E101"),
        (4, "E203"),
    ]


@pytest.mark.parametrize(
    ("written", "hint"),
    [
        # a slip of a name in the folder: by the whole name and its stem
        ("cassettes/xiamen.json", 'did you mean "cassettes/xiamen.jsonl"?'),
        ("cassettes/xaimen.jsonl", 'did you mean "cassettes/xiamen.jsonl"?'),
        # only the extension in common: no guess; a small folder is listed instead
        ("cassettes/nope.jsonl", '"{base}/cassettes" holds paris.jsonl, xiamen.jsonl'),
        # a slip of the folder's name
        (
            "casettes/xiamen.jsonl",
            'there is no folder "casettes" in "{base}": did you mean "cassettes/xiamen.jsonl"?',
        ),
        (
            "nowhere/deeper/x.jsonl",
            'there is no folder "nowhere/deeper": paths are relative to the suite file',
        ),
        ("x.jsonl", '"{base}" holds cassettes, suite.eval'),
    ],
)
def test_a_missing_file_says_what_is_near(tmp_path: Path, written: str, hint: str) -> None:
    (tmp_path / "cassettes").mkdir()
    for name in ("xiamen.jsonl", "paris.jsonl", ".hidden"):
        (tmp_path / "cassettes" / name).write_text("", encoding="utf-8")
    (tmp_path / "suite.eval").write_text("", encoding="utf-8")
    for absolute in (False, True):
        path = str(tmp_path / written) if absolute else written
        text = f'case "c"\ncassette "{path}"\nanswer contains "x"'
        *_, (diag,) = diagnose(text, "t.eval", base_dir=tmp_path, facts=read_facts)
        assert diag.code == "E501"
        # an absolute path was not looked for in the suite's folder
        assert diag.message.endswith(f'"{path}"' if absolute else f"(looked in {tmp_path})")
        shown = hint.replace("{base}", str(tmp_path))
        if absolute:
            shown = (
                shown.replace('mean "', f'mean "{tmp_path}/')
                .replace('"nowhere/deeper"', f'"{tmp_path}/nowhere/deeper"')
                .replace(": paths are relative to the suite file", "")
            )
        assert diag.hint == shown, (absolute, diag.hint)


def test_a_link_to_nothing_names_its_target_at_check_run_and_inspect(tmp_path: Path) -> None:
    # (a did-you-mean offered the link's own name: the folder lists it)
    (tmp_path / "run.jsonl").symlink_to("gone/run.jsonl")
    text = 'case "c"\ncassette "run.jsonl"\nanswer contains "x"'
    *_, (diag,) = diagnose(text, "t.eval", base_dir=tmp_path, facts=read_facts)
    said = f'"{tmp_path}/run.jsonl" is a link to "gone/run.jsonl", which does not exist'
    assert diag.code == "E501" and diag.hint is not None and diag.hint.startswith(said)
    with pytest.raises(RunError) as info:
        load_run(tmp_path / "run.jsonl")
    assert (info.value.hint or "").startswith(said)
    out = run_evaldsl("inspect", "run.jsonl", cwd=tmp_path)
    assert out.returncode == 2
    assert '"run.jsonl" is a link to "gone/run.jsonl", which does not exist' in out.stderr


def test_a_missing_file_in_a_large_folder_is_not_listed(tmp_path: Path) -> None:
    for i in range(9):
        (tmp_path / f"run-{i:02}.jsonl").write_text("", encoding="utf-8")
    text = 'case "c"\ncassette "nothing-near.jsonl"\nanswer contains "x"'
    *_, (diag,) = diagnose(text, "t.eval", base_dir=tmp_path, facts=read_facts)
    assert diag.hint == "paths are relative to the suite file"


@pytest.mark.parametrize("repeats", [1, 400])  # read whole by check, and past its head
@pytest.mark.parametrize("header", [True, False])
def test_a_recording_cut_in_the_middle_of_a_line_is_a_check_error(
    tmp_path: Path, repeats: int, header: bool
) -> None:
    first, *events = (DEMO / "cassette.example.jsonl").read_text(encoding="utf-8").splitlines()
    lines = ([first] if header else []) + events * repeats
    whole = "\n".join(lines)
    assert len(whole) > 64 * 1024 or repeats == 1
    text = 'case "c"\ncassette "run.jsonl"\nsteps >= 1'
    for written, cut in ((whole, False), (whole + "\n", False), (whole[:-25], True)):
        (tmp_path / "run.jsonl").write_text(written, encoding="utf-8")
        *_, diagnostics = diagnose(text, "t.eval", base_dir=tmp_path, facts=read_facts)
        if not cut:  # (a last line without its newline, but whole, is fine)
            assert diagnostics == []
            continue
        (diag,) = diagnostics
        assert (diag.code, diag.line) == ("E502", 2)
        assert f"invalid JSON on line {len(lines)}: unexpected end of data" in diag.message
        assert diag.hint is not None and "ends in the middle of this line" in diag.hint


@pytest.mark.parametrize(
    ("line", "hint"),
    [('cassette ""', 'cassette "runs/x.jsonl"'), ('state " "', 'state "states/final.json"')],
)
def test_an_empty_source_path_is_said_as_that(tmp_path: Path, line: str, hint: str) -> None:
    # joined to the suite's folder, it named the folder: '"." is a folder, not a run file'
    text = f'case "c"\n{line}\ntokens > 0'
    *_, diagnostics = diagnose(text, "t.eval", base_dir=tmp_path, facts=read_facts)
    (diag,) = [d for d in diagnostics if d.line == 2]
    assert (diag.code, diag.line) == ("E503", 2)
    assert diag.message.endswith("line names no file: its path is empty")
    assert diag.hint == f"write the path of the file between the quotes: {hint}"


def test_a_file_that_cannot_be_read_is_said_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # (as root, chmod does not stop reading: the refusal is the one `os.open` gives)
    (tmp_path / "sub").mkdir()
    (tmp_path / "x0.jsonl").write_text('{"cassette": "traceplay", "version": 1}\n')
    opened = os.open

    def refused(path: str, flags: int, *rest: int) -> int:
        if str(path).endswith("x0.jsonl"):
            raise PermissionError(13, "Permission denied", str(path))
        return opened(path, flags, *rest)

    monkeypatch.setattr(os, "open", refused)
    for written, said in [
        ("x0.jsonl", 'cannot read "x0.jsonl": Permission denied'),
        ("sub", '"sub" is a folder, not a run file'),
    ]:
        text = f'case "c"\ncassette "{written}"\nanswer contains "x"'
        *_, (diag,) = diagnose(text, "t.eval", base_dir=tmp_path, facts=read_facts)
        assert diag.message == said


@pytest.mark.parametrize("before", ["天気", "😀", "ｆｕｌｌ", "é", "e\u0301"])
def test_the_caret_stands_under_its_span_after_wide_characters(before: str) -> None:
    """Carets are placed by terminal columns (a wide or fullwidth character takes two, a
    combining mark none), not code points; the diagnostic's column stays a code point."""
    text = f'case "c"\n  run a.b:c\n  answer == "{before}" and tool cállx called\n'
    (diag,) = parse(text, "t.eval").diagnostics
    assert diag.column == text.splitlines()[2].index("á") + 1  # (code points)
    *_, line, carets, _ = render([diag], style="full").splitlines()
    shown = line[line.index("| ") + 2 :]
    wide = sum(2 if unicodedata.east_asian_width(c) in "WF" else 1 for c in before)
    wide -= sum(1 for c in before if unicodedata.combining(c))
    lead = carets[carets.index("| ") + 2 :].index("^")
    assert lead == shown.index("á") - len(before) + wide
    assert carets.endswith("| " + " " * lead + "^")


def test_a_case_named_with_blanks_alone_is_an_empty_name() -> None:
    # `case "  "` ran as a case of no visible name in every report, where `case ""` is E507
    text = 'case "  "\n  trace "x.json"\n  steps > 0\n'
    assert [d.code for d in check_text(text, "t.eval") if d.code == "E507"] == ["E507"]
