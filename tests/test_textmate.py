"""The TextMate grammar, tokenized as VS Code tokenizes it.

`grammar/evaldsl.tmLanguage.json` colors `.eval` files in VS Code (and in any editor that
reads TextMate grammars). These tests run it with vscode-textmate on the Oniguruma WASM
build, the tokenizer VS Code itself uses: `tests/textmate/tokenize.mjs`, with the two npm
packages pinned in `tests/textmate/package-lock.json`. The first run on a fresh clone
installs them with `npm ci` (about a second, from the npm registry); only a machine without
`node` or `npm` skips. One node process tokenizes every file.

What is checked: the grammar's copy in the VS Code extension is byte-identical; every
keyword of `evaldsl.lark` has a pattern; every example tokenizes; specific tokens of the
weather example and of a file of tricky lines get their scopes (`#` in a string is not a
comment, `/` in a string is not a regex); and, against the real lexer of `evaldsl.lark`,
every string, regex, path, number, duration, money, comment, comparison and `;` of the
examples (and of the formatter's corpus, `tests/format/*.eval`) has its scope, and no
string, regex or comment scope spills outside those tokens.
"""

from __future__ import annotations

import functools
import json
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from lark import Lark
from nodetools import missing_tool, node_and_npm, npm_ci

ROOT = Path(__file__).resolve().parents[1]
GRAMMAR = ROOT / "grammar" / "evaldsl.tmLanguage.json"
LARK = ROOT / "grammar" / "evaldsl.lark"
VSCODE = ROOT / "editors" / "vscode"
GRAMMAR_COPY = VSCODE / "syntaxes" / "evaldsl.tmLanguage.json"
TEXTMATE = ROOT / "tests" / "textmate"
PACKAGES = ("vscode-textmate", "vscode-oniguruma")

EXAMPLES = sorted(ROOT.glob("examples/*/*.eval"))
FORMAT_CORPUS = sorted(ROOT.glob("tests/format/*.eval"))
FAILING = sorted(ROOT.glob("examples-failing/*.eval"))
WEATHER = ROOT / "examples" / "weather" / "weather.eval"

# Lines a highlighter gets wrong easily. Not all of them are valid evaldsl (a bad escape,
# unterminated strings); an editor shows broken text while it is typed.
TRICKY = r"""answer contains "no # comment here" # but here
answer contains 'a/b/c' and answer contains "x/y"
answer matches /a#b[/#]c\/d/ims # comment
answer json $["#x"][0].y == 'it\'s "q" \u00e9\n'; answer json $..id is string
tool called called 2 times
tool calls <= 3
tool "web-search" called between 1 and 2 times
tools contains search; nodes == [a, b]
memory.suite == 1; memory["odd key"] == null
output tokens < 5; input tokens > 1.5e3
latency < 1.5m; latency > 250ms; cost <= $12
answer[-1] contains "bad \q escape"
(tool a called or tool b called) and not answer contains "I cannot"
trace "t.json" as otel
judge model "gpt-4o"
timeout 30s
status == timeout
answer judged "{{ user.name }} ok" >= 0.7 by "m"
node "odd-node" visited
memory.summary not empty; memory.x is null
input {input: 1, state: "s", tools: [a]}
state "states/done.json"
run agents.live:answer
answer contains "unterminated # not a comment
answer matches /unterminated # not a comment either
"""

Token = dict[str, Any]
Line = dict[str, Any]
Tokenized = dict[str, list[Line]]


def _rel(path: Path) -> str:
    try:
        return path.resolve().relative_to(ROOT).as_posix()
    except ValueError:
        return str(path)


# ---- running vscode-textmate --------------------------------------------------------------


@pytest.fixture(scope="module")
def tokenized(tmp_path_factory: pytest.TempPathFactory) -> Tokenized:
    node, npm = node_and_npm()
    npm_ci(TEXTMATE, PACKAGES, npm)
    tricky = tmp_path_factory.mktemp("textmate") / "tricky.eval"
    tricky.write_text(TRICKY, encoding="utf-8")
    files = [*EXAMPLES, *FORMAT_CORPUS, *FAILING, tricky]
    proc = subprocess.run(
        [node, str(TEXTMATE / "tokenize.mjs"), "--grammar", str(GRAMMAR), *map(str, files)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, f"tokenize.mjs failed:\n{proc.stderr}"
    out = json.loads(proc.stdout)
    result = {_rel(Path(f["path"])): f["lines"] for f in out["files"]}
    result["<tricky>"] = result.pop(_rel(tricky))
    return result


# ---- looking tokens up --------------------------------------------------------------------


def has_scope(scopes: list[str], selector: str) -> bool:
    """TextMate selector matching for one scope name: `string.regexp` matches
    `string.regexp.evaldsl`."""
    return any(s == selector or s.startswith(selector + ".") for s in scopes)


def _span_tokens(lines: list[Line], needle: str, line_has: str | None, nth: int) -> list[Token]:
    """The tokens covering the `nth` occurrence of `needle` on the first line containing
    `line_has` (default: the needle itself)."""
    marker = line_has if line_has is not None else needle
    for line in lines:
        text = line["text"]
        if marker not in text:
            continue
        start = -1
        for _ in range(nth + 1):
            start = text.find(needle, start + 1)
            assert start >= 0, f"{needle!r} occurs fewer than {nth + 1} times in {text!r}"
        # columns are UTF-16 code units
        u16 = len(text[:start].encode("utf-16-le")) // 2
        end = u16 + len(needle.encode("utf-16-le")) // 2
        found = [t for t in line["tokens"] if t["start"] < end and t["end"] > u16]
        assert found, f"no token covers {needle!r} in {text!r}"
        return found
    raise AssertionError(f"no line contains {marker!r}")


def _describe(tokens: list[Token]) -> str:
    return "; ".join(f"{t['text']!r}: {' '.join(t['scopes'][1:]) or '-'}" for t in tokens)


def assert_scope(
    lines: list[Line], needle: str, selector: str, *, line: str | None = None, nth: int = 0
) -> None:
    tokens = _span_tokens(lines, needle, line, nth)
    assert all(has_scope(t["scopes"], selector) for t in tokens), (
        f"{needle!r} should be {selector}: {_describe(tokens)}"
    )


def assert_no_scope(
    lines: list[Line], needle: str, selector: str, *, line: str | None = None, nth: int = 0
) -> None:
    tokens = _span_tokens(lines, needle, line, nth)
    assert not any(has_scope(t["scopes"], selector) for t in tokens), (
        f"{needle!r} should not be {selector}: {_describe(tokens)}"
    )


# ---- the grammar files ------------------------------------------------------------------------


def _grammar() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(GRAMMAR.read_text(encoding="utf-8"))
    return data


def _rules(grammar: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Every rule of the grammar (the top-level patterns and the repository's)."""
    yield from _walk(grammar["patterns"])
    yield from _walk(grammar["repository"])


def _walk(rule: Any) -> Iterator[dict[str, Any]]:
    if isinstance(rule, dict):
        yield rule
        for value in rule.values():
            yield from _walk(value)
    elif isinstance(rule, list):
        for item in rule:
            yield from _walk(item)


def test_grammar_copies_are_identical() -> None:
    assert GRAMMAR_COPY.read_bytes() == GRAMMAR.read_bytes(), (
        "editors/vscode/syntaxes/evaldsl.tmLanguage.json must be a byte-identical copy of "
        "grammar/evaldsl.tmLanguage.json: cp grammar/evaldsl.tmLanguage.json "
        "editors/vscode/syntaxes/"
    )


def test_grammar_header_and_includes() -> None:
    grammar = _grammar()
    assert grammar["scopeName"] == "source.evaldsl"
    assert grammar["fileTypes"] == ["eval"]
    repository = grammar["repository"]
    for rule in _rules(grammar):
        include = rule.get("include")
        if isinstance(include, str) and include.startswith("#"):
            assert include[1:] in repository, f"include {include} has no repository entry"
        for key in ("name", "contentName"):
            if isinstance(rule.get(key), str):
                assert all(s.endswith(".evaldsl") for s in rule[key].split()), rule[key]


def test_every_keyword_of_the_lark_grammar_has_a_pattern() -> None:
    """A keyword added to evaldsl.lark needs a place in the highlighting too."""
    keywords = _lark_keywords()
    assert {"suite", "case", "called", "judged", "within"} <= keywords
    patterns = " ".join(
        str(rule[key])
        for rule in _rules(_grammar())
        for key in ("match", "begin")
        if isinstance(rule.get(key), str)
    )
    missing = sorted(
        kw for kw in keywords if not re.search(rf"(?<![A-Za-z]){kw}(?![A-Za-z])", patterns)
    )
    assert not missing, f"keywords of evaldsl.lark the TextMate grammar does not know: {missing}"


def test_every_keyword_the_textmate_grammar_colours_is_one_of_the_language() -> None:
    """The other way round: no word stays in the highlighting after the language drops it."""
    known = _lark_keywords() | {"string", "number", "integer", "boolean", "array", "object"}
    words: set[str] = set()
    for rule in _rules(_grammar()):
        if "keyword" in str(rule.get("name", "")) and isinstance(rule.get("match"), str):
            for group in re.findall(r"\(\?:([a-z|]+)\)", rule["match"]):
                words.update(group.split("|"))
    assert words, "no keyword alternation found in the TextMate grammar"
    assert sorted(words - known) == []


def test_vscode_extension_manifest() -> None:
    manifest = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))
    assert manifest["name"] == "evaldsl" and manifest["publisher"] == "evaldsl"
    assert manifest["engines"]["vscode"] == "^1.85.0"
    assert (VSCODE / manifest["main"]).is_file()
    assert set(manifest["activationEvents"]) >= {
        "onLanguage:evaldsl",
        "onLanguage:yaml",  # YAML and JSON suites (the server tells which files are)
        "onLanguage:json",
        "workspaceContains:**/*.eval",
    }
    (language,) = manifest["contributes"]["languages"]
    assert language["id"] == "evaldsl" and language["extensions"] == [".eval"]
    assert language["aliases"]
    (grammar,) = manifest["contributes"]["grammars"]
    assert grammar["language"] == "evaldsl" and grammar["scopeName"] == "source.evaldsl"
    assert (VSCODE / grammar["path"]).resolve() == GRAMMAR_COPY.resolve()
    setting = manifest["contributes"]["configuration"]["properties"]["evaldsl.server.command"]
    assert setting["default"] == ["evaldsl", "lsp"]
    assert "vscode-languageclient" in manifest["dependencies"]

    config = json.loads((VSCODE / language["configuration"]).read_text(encoding="utf-8"))
    assert config["comments"]["lineComment"] == "#"
    assert ["[", "]"] in config["brackets"] and ["{", "}"] in config["brackets"]
    opens = {pair["open"] for pair in config["autoClosingPairs"]}
    assert {"[", "{", "(", '"', "'"} <= opens

    source = (VSCODE / "extension.js").read_text(encoding="utf-8")
    assert "vscode-languageclient/node" in source and '"server.command"' in source
    assert '{ language: "yaml", pattern: "**/*.{yaml,yml}" }' in source
    assert '{ language: "json", pattern: "**/*.json" }' in source


def test_extension_js_is_valid_javascript() -> None:
    node = shutil.which("node")
    if node is None:
        missing_tool("node is not on PATH")
    proc = subprocess.run(
        [node, "--check", str(VSCODE / "extension.js")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


# ---- every file --------------------------------------------------------------------------------


def test_every_file_tokenizes_completely(tokenized: Tokenized) -> None:
    assert EXAMPLES, "no examples/*/*.eval found"
    for path in [*EXAMPLES, *FORMAT_CORPUS, *FAILING]:
        assert _rel(path) in tokenized, f"{_rel(path)} was not tokenized"
    for name, lines in tokenized.items():
        assert lines, f"{name}: no lines"
        for line in lines:
            where = f"{name}:{line['line']}"
            assert not line["stoppedEarly"], f"{where}: tokenization stopped early"
            # tokens tile the line: no gaps, no overlaps
            position = 0
            for token in line["tokens"]:
                assert token["start"] == position, f"{where}: gap or overlap at {position}"
                assert token["scopes"][0] == "source.evaldsl"
                position = token["end"]
            length = len(line["text"].encode("utf-16-le")) // 2
            assert position == length, f"{where}: tokens end at {position} of {length}"


# ---- specific tokens ---------------------------------------------------------------------------


def test_weather_example_scopes(tokenized: Tokenized) -> None:
    w = tokenized[_rel(WEATHER)]
    assert_scope(w, "# A weather agent", "comment.line.number-sign.evaldsl")
    assert_scope(w, "suite", "keyword.control.evaldsl", line='suite "weather agent"')
    assert_scope(w, '"weather agent"', "string.quoted.double.evaldsl")
    assert_scope(w, "tools", "keyword.control.evaldsl", line="tools get_weather, search")
    assert_scope(w, "search", "entity.name.function.tool.evaldsl", line="tools get_weather, search")
    assert_scope(w, "case", "keyword.control.evaldsl", line='case "answers with the Xiamen')
    assert_scope(w, '"answers with the Xiamen forecast"', "entity.name.section.evaldsl")
    assert_scope(w, '"answers with the Xiamen forecast"', "string.quoted.double.evaldsl")
    assert_scope(w, "cassette", "keyword.control.evaldsl", line="cassettes/xiamen.jsonl")
    assert_scope(w, "tool", "variable.language.evaldsl", line="tool get_weather called once")
    assert_scope(
        w, "get_weather", "entity.name.function.tool.evaldsl", line="tool get_weather called once"
    )
    assert_scope(w, "called", "keyword.operator.word.evaldsl", line="tool get_weather called once")
    assert_scope(w, "once", "keyword.operator.word.evaldsl", line="tool get_weather called once")
    assert_scope(w, "$.city", "variable.other.jsonpath.evaldsl")
    assert_scope(w, '"Xiamen"', "string.quoted.double.evaldsl")
    assert_scope(w, "==", "keyword.operator.comparison.evaldsl", line='$.city == "Xiamen"')
    assert_scope(w, r"/\d+\s*C/", "string.regexp.evaldsl")
    assert_scope(w, "matches", "keyword.operator.word.evaldsl", line=r"/\d+\s*C/")
    assert_scope(w, "2000", "constant.numeric.evaldsl")
    assert_no_scope(w, "2000", "constant.numeric.duration")
    assert_scope(w, "5s", "constant.numeric.duration.evaldsl")
    assert_scope(w, ";", "punctuation.terminator.evaldsl", line="steps <= 5; latency")
    assert_scope(w, "$0.01", "constant.numeric.money.evaldsl")
    assert_no_scope(w, "$0.01", "variable.other.jsonpath")
    assert_scope(w, "0.7", "constant.numeric.evaldsl")
    assert_scope(
        w, "not", "keyword.operator.logical.evaldsl", line='not answer contains "I cannot"'
    )
    assert_scope(w, "answer", "variable.language.evaldsl", line='not answer contains "I cannot"')
    assert_scope(w, "no", "keyword.operator.word.evaldsl", line="no tool execute_shell")
    assert_scope(w, "execute_shell", "entity.name.function.tool.evaldsl")
    assert_scope(w, "# holds for every case below", "comment.line.number-sign.evaldsl")
    assert_scope(w, "every", "keyword.operator.word.evaldsl", line="every tool get_weather")
    assert_scope(w, "cites", "keyword.operator.word.evaldsl")
    assert_scope(w, "tokens", "variable.language.evaldsl", line="tokens <= 2000")
    assert_scope(w, "latency", "variable.language.evaldsl")
    assert_scope(w, "each", "keyword.control.evaldsl", line="each [{file:")
    assert_scope(w, "{{file}}", "variable.other.placeholder.evaldsl")
    assert_scope(w, "{{file}}", "string.quoted.double.evaldsl")


def test_other_examples_scopes(tokenized: Tokenized) -> None:
    research = tokenized["examples/research/research.eval"]
    assert_scope(research, "nodes", "keyword.control.evaldsl", line="nodes planner, researcher")
    assert_scope(research, "nodes", "variable.language.evaldsl", line="nodes in order")
    assert_scope(research, "state", "keyword.control.evaldsl", line="states/completed.json")
    assert_scope(research, "state", "variable.language.evaldsl", line="state.iteration_count")
    assert_scope(research, "researcher", "entity.name.tag.node.evaldsl", line="node researcher")
    assert_scope(research, "within", "keyword.operator.word.evaldsl")
    assert_scope(research, "true", "constant.language.evaldsl")
    assert_scope(research, "array", "support.type.evaldsl")
    assert_scope(research, "$0.05", "constant.numeric.money.evaldsl")
    live = tokenized["examples/live/live.eval"]
    assert_scope(live, "run", "keyword.control.evaldsl", line="run agent:answer")
    assert_scope(live, "agent:answer", "entity.name.function.target.evaldsl")
    assert_scope(live, "input", "keyword.control.evaldsl", line='input {city: "{{city}}"}')
    assert_scope(live, "timeout", "keyword.control.evaldsl", line="timeout 10s")
    assert_scope(live, "10s", "constant.numeric.duration.evaldsl")


def test_tricky_lines(tokenized: Tokenized) -> None:
    t = tokenized["<tricky>"]
    # `#` inside a string, a regex or a path is text; after them it is a comment
    assert_scope(t, "no # comment here", "string.quoted.double.evaldsl")
    assert_no_scope(t, "no # comment here", "comment")
    assert_scope(t, "# but here", "comment.line.number-sign.evaldsl")
    assert_scope(t, r"/a#b[/#]c\/d/ims", "string.regexp.evaldsl")
    assert_no_scope(t, r"/a#b[/#]c\/d/ims", "comment")
    assert_scope(t, "ims", "keyword.other.flag.regexp.evaldsl")
    assert_scope(t, "# comment", "comment.line.number-sign.evaldsl", line="/ims # comment")
    assert_scope(t, '$["#x"][0].y', "variable.other.jsonpath.evaldsl")
    # `/` inside a string is not a regex
    assert_scope(t, "'a/b/c'", "string.quoted.single.evaldsl")
    assert_no_scope(t, "'a/b/c'", "string.regexp")
    assert_scope(t, '"x/y"', "string.quoted.double.evaldsl")
    assert_no_scope(t, '"x/y"', "string.regexp")
    assert_scope(t, "and", "keyword.operator.logical.evaldsl", line="'a/b/c' and")
    # escapes and placeholders
    assert_scope(t, r"\'", "constant.character.escape.evaldsl")
    assert_scope(t, r"\u00e9", "constant.character.escape.evaldsl")
    assert_scope(t, r"\n", "constant.character.escape.evaldsl", line=r"\u00e9\n")
    assert_scope(t, r"\q", "invalid.illegal")
    assert_scope(t, "{{ user.name }}", "variable.other.placeholder.evaldsl")
    assert_scope(t, "string", "support.type.evaldsl", line="$..id is string")
    # a keyword where a name fits is a name; `tool calls` is a subject
    assert_scope(t, "called", "entity.name.function.tool.evaldsl", line="tool called called")
    assert_scope(t, "called", "keyword.operator.word.evaldsl", line="tool called called", nth=1)
    assert_scope(t, "calls", "variable.language.evaldsl", line="tool calls <=")
    assert_scope(t, '"web-search"', "entity.name.function.tool.evaldsl")
    assert_scope(t, '"web-search"', "string.quoted.double.evaldsl")
    assert_scope(t, "and", "keyword.operator.word.evaldsl", line="between 1 and 2")
    assert_scope(t, "tools", "variable.language.evaldsl", line="tools contains search")
    assert_scope(t, "suite", "variable.other.property.evaldsl", line="memory.suite")
    assert_scope(t, "null", "constant.language.evaldsl", line='["odd key"] == null')
    assert_scope(t, "null", "support.type.evaldsl", line="memory.x is null")
    assert_scope(t, "tokens", "variable.language.evaldsl", line="input tokens")
    assert_scope(t, "input", "variable.language.evaldsl", line="input tokens")
    assert_scope(t, "1.5e3", "constant.numeric.evaldsl")
    assert_scope(t, "1.5m", "constant.numeric.duration.evaldsl")
    assert_scope(t, "250ms", "constant.numeric.duration.evaldsl")
    assert_scope(t, "$12", "constant.numeric.money.evaldsl")
    assert_scope(t, "-1", "constant.numeric.evaldsl")
    assert_scope(t, "not", "keyword.operator.logical.evaldsl", line="and not answer")
    assert_scope(t, "or", "keyword.operator.logical.evaldsl", line="tool a called or")
    assert_scope(t, "(", "punctuation.section.parens.begin.evaldsl", line="(tool a")
    assert_scope(t, "as", "keyword.control.evaldsl", line='"t.json" as otel')
    assert_scope(t, "model", "keyword.control.evaldsl", line="judge model")
    assert_scope(t, "timeout", "keyword.control.evaldsl", line="timeout 30s")
    assert_no_scope(t, "timeout", "keyword.control", line="status == timeout")
    assert_scope(t, "by", "keyword.operator.word.evaldsl", line='>= 0.7 by "m"')
    assert_scope(t, '"odd-node"', "entity.name.tag.node.evaldsl")
    assert_scope(t, "not", "keyword.operator.word.evaldsl", line="summary not empty")
    assert_scope(t, "input", "support.type.property-name.evaldsl", line="{input: 1", nth=1)
    assert_scope(t, "state", "support.type.property-name.evaldsl", line="{input: 1")
    assert_scope(t, "state", "keyword.control.evaldsl", line='state "states/done.json"')
    assert_scope(t, "agents.live:answer", "entity.name.function.target.evaldsl")
    # an unterminated string or regex ends with its line and swallows no comment
    assert_scope(t, '"unterminated # not a comment', "string.quoted.double.evaldsl")
    assert_no_scope(t, "# not a comment", "comment", line='"unterminated # not')
    assert_scope(t, "/unterminated # not a comment either", "string.regexp.evaldsl")
    last = t[-1]["tokens"]
    assert has_scope(last[-1]["scopes"], "string.regexp")
    after = t[-1]["line"]
    assert after == len(TRICKY.splitlines())


# ---- against the real lexer ------------------------------------------------------------------

# lexer terminal -> the scope its whole text must have
TERMINAL_SCOPES = {
    "REGEX": "string.regexp.evaldsl",
    "PATH": "variable.other.jsonpath.evaldsl",
    "DURATION": "constant.numeric.duration.evaldsl",
    "MONEY": "constant.numeric.money.evaldsl",
    "INT": "constant.numeric.evaldsl",
    "DECIMAL": "constant.numeric.evaldsl",
    "COMMENT": "comment.line.number-sign.evaldsl",
    "CMP_OP": "keyword.operator.comparison.evaldsl",
    "SEMICOLON": "punctuation.terminator.evaldsl",
}
# keywords that are colored only in their place (`timeout 30s`, `run mod:fn`, `judge model`,
# `state "x"`); elsewhere they are names (`status == timeout`) and stay plain
CONTEXTUAL_KEYWORDS = frozenset({"timeout", "run", "model", "state"})
# scopes that only the matching terminals may carry
EXCLUSIVE = {
    "string.quoted": ("STRING",),
    "string.regexp": ("REGEX",),
    "comment": ("COMMENT",),
    "variable.other.jsonpath": ("PATH",),
}


def _lark_keywords() -> set[str]:
    return set(re.findall(r'"([a-z]+)"', LARK.read_text(encoding="utf-8")))


@functools.cache
def _lexer() -> Lark:
    return Lark(LARK.read_text(encoding="utf-8"), parser="lalr", lexer="basic", start="file")


@pytest.mark.parametrize("path", [*EXAMPLES, *FORMAT_CORPUS, *FAILING], ids=lambda p: _rel(p))
def test_scopes_agree_with_the_lexer(tokenized: Tokenized, path: Path) -> None:
    """Lex the file with evaldsl.lark's terminals: each terminal's text has its scope, every
    keyword has one, and strings, regexes, comments and paths are exactly where the lexer
    has them."""
    text = path.read_text(encoding="utf-8")
    # (every file lexes, the failing examples too: they fail later, when parsed or
    # checked; one that did not lex would fail here, never be skipped)
    lexed = list(_lexer().lex(text, dont_ignore=True))
    lines = tokenized[_rel(path)]
    keywords = _lark_keywords()
    by_line: dict[int, list[tuple[int, int, str]]] = {}
    for tok in lexed:
        if tok.type in ("_NL", "WS") or tok.line is None or tok.column is None:
            continue
        line_text = lines[tok.line - 1]["text"]
        start = len(line_text[: tok.column - 1].encode("utf-16-le")) // 2
        end = start + len(str(tok).encode("utf-16-le")) // 2
        by_line.setdefault(tok.line, []).append((start, end, tok.type))
        tm = [t for t in lines[tok.line - 1]["tokens"] if t["start"] < end and t["end"] > start]
        if tok.type == "STRING":
            kind = "double" if str(tok).startswith('"') else "single"
            wanted = f"string.quoted.{kind}.evaldsl"
        elif tok.type in ("AND", "OR", "NOT"):
            wanted = "keyword.operator"  # logical, or part of `between N and M`, `not empty`
        else:
            wanted = TERMINAL_SCOPES.get(tok.type, "")
        if str(tok) in keywords and str(tok) not in CONTEXTUAL_KEYWORDS:
            assert all(len(t["scopes"]) > 1 for t in tm), (
                f"{_rel(path)}:{tok.line}: the keyword {str(tok)!r} is not colored"
            )
        if wanted:
            assert all(has_scope(t["scopes"], wanted) for t in tm), (
                f"{_rel(path)}:{tok.line}: {tok.type} {str(tok)!r} should be {wanted}: "
                f"{_describe(tm)}"
            )
    for line in lines:
        spans = by_line.get(line["line"], [])
        for token in line["tokens"]:
            for selector, terminals in EXCLUSIVE.items():
                if not has_scope(token["scopes"], selector):
                    continue
                inside = any(
                    s <= token["start"] and token["end"] <= e and kind in terminals
                    for s, e, kind in spans
                )
                assert inside, (
                    f"{_rel(path)}:{line['line']}: {token['text']!r} is {selector} but the "
                    f"lexer has no {'/'.join(terminals)} there"
                )
