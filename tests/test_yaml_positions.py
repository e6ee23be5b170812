"""YAML and JSON suites: a place inside an embedded expression is its exact line and
column in the file, whatever the scalar's style (plain over lines, quotes with escapes,
literal and folded blocks), for check diagnostics and run-time failures alike."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given
from hypothesis import strategies as st

from evaldsl.runner.core import run_suites
from evaldsl.suites.build import load_suite
from evaldsl.suites.yaml12 import compose
from evaldsl.suites.yamlfile import yaml_draft
from evaldsl.suites.yamlplaces import line_starts, scalar_runs
from tests.clitools import run_evaldsl
from tests.fuzzing import lenient

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "tests" / "fixtures" / "traceplay" / "demo" / "cassette.example.jsonl"

GOOD = (
    "tool get_weather called once",
    'answer contains "it\'s sunny"',
    "answer matches /sun+y/",
    "steps >= 1",
    'not answer contains "rain"',
)
BAD = "answer matchs /x/"  # `matchs` is written once in each file: where it must be shown
STYLES = ("plain", "single", "double", "literal", "folded", "json")

value_lines = st.lists(st.sampled_from(GOOD), max_size=4).map(lambda ls: [*ls, BAD])


def _lines_of(words: list[str], breaks: list[bool], indent: str) -> str:
    """Words joined by a space, or by a line break and `indent` where `breaks` says."""
    out = words[0]
    for i, word in enumerate(words[1:]):
        out += ("\n" + indent if breaks[i % len(breaks)] else " ") + word
    return out


def _double(value: str, escapes: list[int], wraps: list[bool], indent: str) -> str:
    r"""A double-quoted YAML scalar for `value`: characters before the error escaped
    (`\x41`, `\u0041`, `\"`, `\n`) as `escapes` draws, spaces sometimes a line break."""
    out = ""
    end = value.index("matchs")
    for i, ch in enumerate(value):
        how = escapes[i % len(escapes)] if i < end else 0
        if ch == "\n":
            out += "\\n"
        elif ch in '"\\':
            out += "\\" + ch
        elif ch == " " and wraps[i % len(wraps)] and i < end and value[i - 1] != " ":
            out += "\n" + indent  # a line break folds into the space
        elif how == 1:
            out += f"\\x{ord(ch):02x}"
        elif how == 2:
            out += f"\\u{ord(ch):04X}"
        else:
            out += ch
    return '"' + out + '"'


def _render(style: str, lines: list[str], draw: st.DrawFn) -> tuple[str, str]:
    """A suite file (name and text) whose one case's `expect:` holds `lines` in `style`."""
    indent = " " * 8
    head = f"suite: s\ncases:\n  - name: c\n    cassette: {DEMO}\n"
    joiner = draw(st.sampled_from(["\n", " and "]))
    value = joiner.join(lines)
    wraps = draw(st.lists(st.booleans(), min_size=1, max_size=8))
    if style == "json":
        escapes = draw(st.lists(st.sampled_from([0, 0, 2]), min_size=1, max_size=8))
        text = _double(value, escapes, [False], "")
        text = text.replace("\\x", "\\u00")  # (JSON's one hexadecimal escape)
        cassette = json.dumps(str(DEMO))
        suite = (
            f'{{"suite": "s", "cases": [\n  {{"name": "c",\n    "cassette": {cassette},\n'
            f'    "expect": {text}}}]}}\n'
        )
        assert json.loads(suite)["cases"][0]["expect"] == value
        return "s.json", suite
    if style == "double":
        escapes = draw(st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=8))
        return "s.yaml", head + "    expect: " + _double(value, escapes, wraps, indent) + "\n"
    if style in ("literal", "folded"):
        header = draw(st.sampled_from(["", "-", "+", "2", "2-", "+2"]))
        if style == "literal":
            body = value.replace("\n", "\n" + indent)
        else:
            # a line break between words folds into a space; an empty line is a line feed
            body = "\n\n".join(
                _lines_of(part.split(" "), wraps, indent) for part in value.split("\n")
            ).replace("\n\n", "\n\n" + indent)
        mark = "|" if style == "literal" else ">"
        if header[-1:] == "2" or header[:1] == "2":
            # an indentation indicator: the block is 2 columns deeper than `expect:`
            indent = " " * 6
            body = body.replace("\n" + " " * 8, "\n" + indent)
        return "s.yaml", head + f"    expect: {mark}{header}\n{indent}{body}\n"
    words = value.replace("\n", " \n ").split(" ")
    # plain and single-quoted: a line feed is an empty line, a space may be a line break
    body = (
        _lines_of([w for w in words if w], wraps, indent)
        .replace("\n\n", "\n\n" + indent)
        .replace(" \n ", "\n\n" + indent)
        .replace(" \n\n", "\n\n")
    )
    if style == "single":
        return "s.yaml", head + "    expect: '" + body.replace("'", "''") + "'\n"
    return "s.yaml", head + "    expect:\n      - " + body + "\n"


@st.composite
def suites(draw: st.DrawFn) -> tuple[str, str, str]:
    style = draw(st.sampled_from(STYLES))
    lines = draw(value_lines)
    if style == "plain":
        lines = [line for line in lines if "'" not in line and '"' not in line]
        lines = lines or [BAD]
    name, text = _render(style, lines, draw)
    return style, name, text


@lenient(200)
@given(suites())
def test_an_error_inside_expect_text_is_shown_where_it_is_written(
    case: tuple[str, str, str],
) -> None:
    style, name, text = case
    at = text.index("matchs")
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    draft = yaml_draft(text, name)
    found = [
        (d.line, d.column, d.end_line, d.end_column)
        for d in draft.diagnostics + tuple(x for c in draft.cases for x in c.diagnostics)
        if "matchs" in d.message
    ]
    assert found == [(line, column, line, column + len("matchs"))], (style, text)


def test_a_run_time_failure_after_an_escaped_line_feed_is_on_its_own_line(
    tmp_path: Path,
) -> None:
    """The second statement of `"…once\\ntool … twice"` fails where it is written, on the
    last line of the file (never past it)."""
    path = tmp_path / "s.json"
    last = '"expect": "tool get_weather called once\\ntool get_weather called twice"}]}'
    path.write_text(
        '{"suite": "j", "cases": [{"name": "x", "cassette": '
        + json.dumps(str(DEMO))
        + ",\n"
        + last,
        encoding="utf-8",
    )
    report = run_suites([load_suite(path)])
    [failed] = [a for c in report.cases for a in c.assertions if a.status == "fail"]
    column = last.index("tool get_weather called twice") + 1
    assert (failed.line, failed.column, failed.end_column) == (2, column, column + 29)


def _places(runs: list[tuple[int, int, int]], length: int) -> list[tuple[int, int]]:
    """The line and column of each of a value's characters, from its runs."""
    places = []
    for i in range(length):
        start, line, column = max(r for r in runs if r[0] <= i)
        places.append((line, column + i - start))
    return places


@lenient(300)
@given(
    # (not NEL: PyYAML's emitter writes it raw as a YAML 1.1 line break, which the
    # reader then folds into a space: a round trip PyYAML itself does not keep)
    st.text(
        st.characters(codec="utf-8", exclude_categories=["Cs"], exclude_characters="\x85"),
        max_size=40,
    ),
    st.sampled_from([None, "'", '"', "|", ">"]),
    st.integers(min_value=10, max_value=60),
)
def test_every_character_of_any_scalar_is_found_where_it_is_written(
    value: str, style: str | None, width: int
) -> None:
    """Whatever PyYAML writes for a value, each character maps to where it is written:
    itself, or the backslash or quote that escapes it, or (made by folding) a place at
    the end of a line."""
    text = yaml.dump({"expect": value}, default_style=style, width=width, allow_unicode=True)
    node = compose(text)
    assert isinstance(node, yaml.MappingNode)
    scalar = node.value[0][1]
    assert isinstance(scalar, yaml.ScalarNode) and scalar.value == value
    runs = scalar_runs(text, line_starts(text), scalar)
    assert runs is not None, text
    lines = text.split("\n")
    for ch, (line, column) in zip(value, _places(runs, len(value)), strict=True):
        here = lines[line - 1][column - 1 : column]
        assert here == ch or here in ("\\", "'") or (ch in " \n" and here == ""), (text, ch)


MARKED = """\
suite: s
cases:
  - name: one
    cassete: run.jsonl
    timeout: "abc"
  - name: two
    cassette: missing.jsonl
    assertions:
      - {kind: tool.called, name: get_weather, tims: 2}
      - kind: tool.called
        name: get_weather
        times: "x"
  - {name: three, cassette: run.jsonl, expect: "tool get_weather called", flaky: true}
  - name: four
    dataset: rows.json
    run: agent:answer
    expect: output == 1
"""
ROWS = '[{"input": 1, "expectedOutputs": 2}]'


def test_a_yaml_diagnostic_marks_the_key_or_value_it_is_about_whole(tmp_path: Path) -> None:
    # An editor underlines a diagnostic's range: a misspelt key, a bad value, a missing
    # file's field are marked whole where they are written on one line (not their first
    # character, nor an empty range); what goes on over lines (a case) at its start.
    (tmp_path / "run.jsonl").write_text(DEMO.read_text("utf-8"), "utf-8")
    (tmp_path / "s.yaml").write_text(MARKED, "utf-8")
    (tmp_path / "rows.json").write_text(ROWS, "utf-8")
    (tmp_path / "agent.py").write_text("def answer(x):\n    return x\n", "utf-8")
    done = run_evaldsl("check", "s.yaml", "--format", "json", cwd=tmp_path)

    def marked(d: dict[str, Any]) -> str:
        assert d["end_line"] == d["line"], d
        lines = (tmp_path / d["path"]).read_text("utf-8").splitlines()
        return str(lines[d["line"] - 1][d["column"] - 1 : d["end_column"] - 1])

    found = {(d["code"], marked(d)) for d in json.loads(done.stdout)}
    assert found == {
        ("E503", "n"),  # case "one" has no source: the case, over several lines
        ("E506", "n"),  # nor assertions
        ("E508", "cassete"),
        ("E507", '"abc"'),
        ("E501", "cassette: missing.jsonl"),
        ("E508", "tims"),  # a field of a traceplay object
        ("E507", "times"),
        ("E508", "flaky"),
        ("E508", '"expectedOutputs"'),  # a dataset row's field, in the dataset's file
    }, done.stdout
