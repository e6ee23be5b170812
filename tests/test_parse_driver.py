"""The parser's fast path gives exactly what Lark's own loop gives: the one-loop driver
(`drive`), on Lark's parser and on the tables loaded from the shipped file
(`drivetables.py`), produces the same AST, spans included, as `Lark.parse` for every statement of
every `.eval` file in the project and of generated text (valid programs, token soup,
nesting deeper than the driver remembers, and with its memo bounded to a few stacks), and
on broken text it steps aside (None), so Lark reports the error (kind, position, expected
terminals) as it always does."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, cast

import attrs
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lark.exceptions import UnexpectedInput

from evaldsl.syntax import drive as drive_module
from evaldsl.syntax.build import Builder
from evaldsl.syntax.drive import drive
from evaldsl.syntax.drivetables import keyword_spellings
from evaldsl.syntax.grammar import (
    CLOSING,
    OPENING,
    loaded_drive_tables,
    new_lark,
)
from tests.clitools import fresh_python, last_json
from tests.fuzzing import examples
from tests.test_parser_properties import assertion, declaration

ROOT = Path(__file__).resolve().parents[1]
FILES = sorted(
    p
    for folder in ("examples", "examples-failing", "tests")
    for p in (ROOT / folder).rglob("*.eval")
    if "node_modules" not in p.parts
)
FAST = new_lark(Builder())
STOCK = new_lark(Builder())
LOADED = loaded_drive_tables(Builder())


def full(result: object) -> list[object]:
    """A parse's result with every span in it (`==` on AST nodes leaves spans out): its
    nodes and collections in preorder, each with its type and size (a loop, not a
    recursion: the corpus nests deeper than Python's recursion limit)."""
    out: list[object] = []
    stack = [result]
    while stack:
        item = stack.pop()
        if attrs.has(type(item)):
            fields = [getattr(item, f.name) for f in attrs.fields(cast(Any, type(item)))]
            out.append((type(item).__name__, len(fields)))
            stack.extend(reversed(fields))
        elif isinstance(item, tuple | list):
            out.append((type(item).__name__, len(item)))
            stack.extend(reversed(item))
        else:
            out.append(item)
    return out


def driven(text: str, lark: Any = FAST, start: str = "file") -> object:
    """What `drive` gives, or Lark's error when it steps aside (as `parse` then does); the
    loaded tables give the same as Lark's parser, or step aside as it does."""
    result = drive(lark, text, start)  # type: ignore[arg-type]
    assert LOADED is not None, "the shipped tables of the fast loop do not fit: make tables"
    loaded = drive(LOADED, text, start)  # type: ignore[arg-type]
    assert (loaded is None) == (result is None), text
    if result is not None:
        assert full(loaded) == full(result), text
    return outcome(STOCK, text, start) if result is None else full(result)


def outcome(lark: Any, text: str, start: str = "file") -> object:
    try:
        return full(lark.parse(text, start=start))
    except UnexpectedInput as err:
        token = getattr(err, "token", None)
        return (
            type(err).__name__,
            getattr(token, "type", None),
            getattr(token, "start_pos", None),
            getattr(err, "pos_in_stream", None),
            sorted(getattr(err, "expected", None) or getattr(err, "allowed", None) or ()),
        )


@pytest.mark.parametrize("path", FILES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_files_parse_the_same(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    for chunk in [text, *text.splitlines()]:
        expected = outcome(STOCK, chunk)
        assert driven(chunk) == expected, chunk
        if not isinstance(expected, tuple):  # it parses: the driver must not step aside
            assert drive(FAST, chunk, "file") is not None, chunk


WORDS = [
    "tool",
    "called",
    "calls",
    "tools",
    "answer",
    "json",
    "contains",
    "matches",
    "not",
    "and",
    "or",
    "case",
    "suite",
    "state",
    "status",
    "==",
    "<=",
    "2",
    "2s",
    "$0.05",
    "$.city",
    '"x"',
    "'y'",
    "/a b/i",
    "[",
    "]",
    "{",
    "}",
    "(",
    ")",
    ",",
    ":",
    ";",
    "\n",
    "#c\n",
    "  ",
    "\t",
    "x",
    "between",
    "times",
    "once",
    "is",
    "empty",
    "string",
    "every",
    "args",
    "result",
    "memory",
    ".",
    "a",
    "@",
    '"unterminated',
    "in",
    "order",
    "judged",
    "by",
    "0.7",
    ">=",
]


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.sampled_from(WORDS), max_size=14))
def test_token_soup_parses_the_same(words: list[str]) -> None:
    text = " ".join(words)
    assert driven(text) == outcome(STOCK, text)


@settings(max_examples=examples(400), deadline=None)
@given(st.lists(st.tuples(st.sampled_from(WORDS), st.sampled_from(["", " "])), max_size=14))
def test_words_run_together_parse_the_same(pieces: list[tuple[str, str]]) -> None:
    """Words written with and without blanks between them (`calledonce`, `2times`,
    `tokens<=5`): the fast loop reads the same words as Lark's lexer."""
    text = "".join(word + blank for word, blank in pieces)
    assert driven(text) == outcome(STOCK, text)


#: Keywords and numbers run into the next word: an error for both loops, in that word.
RUN_TOGETHER = [
    'answer startswith "x"',
    "tool x calledonce",
    "tool x called 2times",
    "answer isempty",
    "answer notempty",
    "tool x called between 1and 3 times",
    "answer json $.a == 0.5and tokens < 3",
]


@pytest.mark.parametrize("start", ["file", "statements"])
@pytest.mark.parametrize("text", RUN_TOGETHER)
def test_keywords_run_together_are_an_error_in_both_loops(text: str, start: str) -> None:
    assert drive(FAST, text, start) is None  # type: ignore[arg-type]
    assert LOADED is not None and drive(LOADED, text, start) is None  # type: ignore[arg-type]
    error = outcome(STOCK, text, start)
    assert isinstance(error, tuple), text
    word = re.search(r"(?:startswith|calledonce|2times|isempty|notempty|1and|0\.5and)", text)
    at = error[2] if error[2] is not None else error[3]
    assert word is not None and word.start() <= at < word.end(), error  # (`0.5and`: at `.`)


@pytest.mark.parametrize(
    "text",
    ["tool called_api called once", "tool once_more called", "tool answer_bot called",
     "tool x args $.answer == 1", "tokens<=5", "tool calls called", "answer is string"],
)  # fmt: skip
def test_names_that_begin_with_a_keyword_parse_the_same(text: str) -> None:
    assert drive(FAST, text, "file") is not None
    assert driven(text) == outcome(STOCK, text)


def parsed_in_new_thread(texts: list[str]) -> list[object]:
    """Each text parsed by a parser built in a fresh thread (parsers are per thread)."""
    import threading

    from evaldsl.syntax.parser import parse

    results: list[object] = []

    def work() -> None:
        for text in texts:
            r = parse(text)
            results.append(
                (r.program, [(d.code, d.line, d.column, d.message) for d in r.diagnostics])
            )

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    return results


def test_the_corpus_parses_the_same_without_the_fast_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # When the Lark in use is not one `drive` was written for (nor the one the shipped
    # tables were made with), Lark's own loop parses everything: the same programs and the
    # same diagnostics, error-free or not.
    from evaldsl.syntax import drive as drive_module

    texts = [p.read_text(encoding="utf-8") for p in FILES]
    texts += ["tool a caled\nlatency < 2", "answer contains [1,\ntool b called"]
    fast = parsed_in_new_thread(texts)
    calls: list[object] = []
    monkeypatch.setattr(drive_module, "drive", lambda *a: calls.append(a))
    monkeypatch.setattr(drive_module, "available", lambda lark: False)
    # (the shipped tables are keyed by the Lark version: another Lark does not load them)
    from evaldsl.syntax import parser as parser_module

    monkeypatch.setattr(parser_module, "loaded_drive_tables", lambda builder: None)
    assert parsed_in_new_thread(texts) == fast
    assert calls == []  # the fast loop was never used


def test_the_fast_loop_is_used_with_the_lark_it_was_written_for() -> None:
    from evaldsl.syntax import drive as drive_module

    assert drive_module.available(FAST)


def test_error_free_text_is_parsed_without_making_larks_parser(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the loaded tables parse it; Lark's parser is made for the first text with an error
    from evaldsl.syntax import parser as parser_module

    made: list[object] = []
    real = parser_module.new_lark

    def counted(builder: Builder) -> object:
        made.append(builder)
        return real(builder)

    monkeypatch.setattr(parser_module, "new_lark", counted)
    texts = [p.read_text(encoding="utf-8") for p in FILES[:20]]
    good = [t for t in texts if parser_module.parse(t).ok]
    made.clear()
    fresh = parsed_in_new_thread(good)
    assert made == [] and all(not diagnostics for _, diagnostics in fresh)  # type: ignore[misc]
    broken = parsed_in_new_thread(["tool a caled"])
    assert len(made) == 1 and broken[0][1]  # type: ignore[index]


def test_tables_made_for_another_grammar_are_not_loaded() -> None:
    from evaldsl.syntax import drivetables
    from evaldsl.syntax.grammar import build_lark

    data = drivetables.export(build_lark(None))
    assert data is not None
    text = drivetables.serialise(data, "another key")
    assert drivetables.load(text, "another key", Builder()) is not None
    assert drivetables.load(text, "the grammar in use", Builder()) is None
    assert drivetables.load("{damaged", "another key", Builder()) is None


#: A start that loads the shipped tables, says whether its rows came marshalled (kept in
#: the cache file by an earlier start), that every row is the file's, and what it parses.
KEPT_TABLES = r"""
import json, orjson
from evaldsl.syntax.build import Builder
from evaldsl.syntax.drive import drive
from evaldsl.syntax.grammar import loaded_drive_tables, shipped_path
tables = loaded_drive_tables(Builder())
rows = orjson.loads(shipped_path().with_name("evaldsl.drive.json").read_bytes())["data"]["states"]
assert [tables.state_row(s) for s in range(len(rows))] == rows
texts = [open(p, encoding="utf-8").read() for p in PATHS]
parsed = [repr(drive(tables, text, "file")) for text in texts]
kept = sum(isinstance(row, bytes) for row in tables.raw_states)
print(json.dumps({"kept": kept, "rows": len(rows), "parsed": parsed}))
"""


def test_the_tables_kept_between_starts_parse_as_the_file(tmp_path: Path) -> None:
    # the second start reads the tables from the user's cache file, each state's row
    # marshalled apart and decoded when first visited: the same rows, the same trees
    paths = [str(p) for p in FILES[:12]]
    code = KEPT_TABLES.replace("PATHS", repr(paths))
    first = last_json(fresh_python(code, tmp_path))
    second = last_json(fresh_python(code, tmp_path))
    assert first["kept"] == 0 and second["kept"] == second["rows"] == first["rows"]
    assert second["parsed"] == first["parsed"]
    assert sum(tree != "None" for tree in cast(list[str], first["parsed"])) >= 8, first


@pytest.mark.parametrize("damage", ["none", "a row", "the rest", "a row dropped", "not kept"])
def test_tables_kept_with_a_changed_byte_are_decoded_from_the_file_again(
    damage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a kept row is decoded only when a parse first reaches its state: one changed on disk
    # must be found as the tables load (its CRC), not mid-parse, or never (a wrong parse)
    import marshal

    import orjson

    from evaldsl.syntax import drivetables
    from evaldsl.syntax.grammar import shipped_path

    text = shipped_path().with_name("evaldsl.drive.json").read_text(encoding="utf-8")
    cache: dict[str, Any] = {}
    monkeypatch.setattr(drivetables, "stored", cache.get)
    monkeypatch.setattr(drivetables, "store", cache.__setitem__)
    fresh = drivetables.decoded(text)  # nothing kept yet: decoded, and kept
    assert fresh == orjson.loads(text) and len(cache) == 1
    (key,) = cache
    crc, head, rows = cache[key]
    if damage == "a row":
        row = bytearray(rows[7])
        row[-1] ^= 1
        cache[key] = (crc, head, [*rows[:7], bytes(row), *rows[8:]])
    elif damage == "the rest":
        cache[key] = (crc, head[:-1] + bytes([head[-1] ^ 1]), rows)
    elif damage == "a row dropped":
        cache[key] = (crc, head, rows[1:])
    elif damage == "not kept":
        cache[key] = {"a value": "of another shape"}
    again = drivetables.decoded(text)
    states = again["data"]["states"]
    if damage == "none":  # kept: every row still marshalled, and each the file's
        assert all(type(row) is bytes for row in states)
        assert [marshal.loads(row) for row in states] == fresh["data"]["states"]
        assert {**again, "data": {**again["data"], "states": None}} == {
            **fresh,
            "data": {**fresh["data"], "states": None},
        }
    else:  # not what was kept: the file decoded again, as the first start did
        assert again == fresh


@st.composite
def eval_file(draw: st.DrawFn, header: bool = True) -> str:
    """A valid file: header and case lines (when `header`) and assertions, separated by
    newlines, semicolons, comments and blank lines."""
    kinds = st.one_of(declaration(), assertion()) if header else assertion()
    items = draw(st.lists(kinds, min_size=1, max_size=12))
    seps = st.sampled_from(["\n", ";", " ; ", "\n\n", "  # note\n", ";\n", "\r\n", "\n\t"])
    return "".join(text + draw(seps) for text, _ in items) + draw(st.sampled_from(["", "  "]))


GENERATED = settings(
    max_examples=examples(300), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


@GENERATED
@given(eval_file())
def test_generated_files_parse_the_same(text: str) -> None:
    expected = outcome(STOCK, text)
    assert not isinstance(expected, tuple), expected  # the generator writes valid files
    assert driven(text) == expected


@GENERATED
@given(eval_file(header=False))
def test_generated_statement_lists_parse_the_same(text: str) -> None:
    expected = outcome(STOCK, text, "statements")
    assert not isinstance(expected, tuple), expected
    assert driven(text, start="statements") == expected


def test_nesting_deeper_than_the_memo_parses_the_same() -> None:
    # stacks deeper than MAX_STACK are walked step by step, from where the memo stops
    deep = drive_module.MAX_STACK + 20
    texts = [
        "not " * deep + "tool a called",
        "(" * deep + "steps < 1" + ")" * deep + "\nerrors == 0",
        "answer == " + "[" * deep + "1" + "]" * deep + "; tool b called",
        "input " + "[" * deep + "\n" + "]" * deep,
    ]
    for text in texts:
        expected = outcome(STOCK, text)
        assert not isinstance(expected, tuple), expected
        assert driven(text) == expected


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(eval_file(), st.integers(1, 6))
def test_a_full_memo_parses_the_same(monkeypatch_text: str, configs: int) -> None:
    # past MAX_CONFIGS stacks the loop walks the table from there on: the same result
    lark = new_lark(Builder())
    original = drive_module.MAX_CONFIGS
    drive_module.MAX_CONFIGS = configs
    try:
        assert driven(monkeypatch_text, lark) == outcome(STOCK, monkeypatch_text)
        assert driven(monkeypatch_text, lark) == outcome(STOCK, monkeypatch_text)
    finally:
        drive_module.MAX_CONFIGS = original


@pytest.mark.parametrize("words", [0, 2, drive_module.MAX_WORDS])
def test_names_past_the_words_a_config_remembers_parse_the_same(words: int) -> None:
    # a config remembers the step of each keyword and of up to MAX_WORDS names; the
    # names past that, and keywords where they stand as names, are found again each time
    lark = new_lark(Builder())
    original = drive_module.MAX_WORDS
    drive_module.MAX_WORDS = words
    names = [f"tool_{i}" for i in range(original + 8)] + ["called", "tool", "times", "args"]
    text = "\n".join(
        f"tool {name} called 2 times; tool {name} args $.x == 1; no tool {name}" for name in names
    )
    try:
        for _ in range(2):  # the second time from the words remembered
            assert driven(text, lark) == outcome(STOCK, text)
            assert driven(text, lark, start="statements") == outcome(STOCK, text, "statements")
    finally:
        drive_module.MAX_WORDS = original


BLANKS = st.lists(st.sampled_from([" ", "\t", "\ufeff", "  ", "\t "]), min_size=1, max_size=3)


@GENERATED
@given(eval_file(), st.lists(BLANKS.map("".join), min_size=1, max_size=8), st.booleans())
def test_blank_runs_parse_the_same(text: str, blanks: list[str], trailing: bool) -> None:
    # the fast loop takes the spaces and tabs before a token in the token's match: runs of
    # blanks of every kind (the BOM is white space too), and blanks ending the text
    words = text.split(" ")
    spaced = "".join(w + blanks[i % len(blanks)] for i, w in enumerate(words[:-1])) + words[-1]
    if trailing:
        spaced += blanks[0]
    assert driven(spaced) == outcome(STOCK, spaced)


def test_blank_text_and_a_bad_token_after_blanks() -> None:
    for text in ["", " ", "\t\t ", " \n\t", "tool a called  \t", "tool a called \t @", "  @"]:
        assert driven(text) == outcome(STOCK, text), repr(text)
    assert drive(FAST, "tool a called \t @", "file") is None


def test_the_builder_is_given_the_same_token_tuples_by_both_loops() -> None:
    # the fast loop makes its tokens as (terminal, text, start, end); Lark's parser gives
    # the builder its own tokens as the same tuples (`grammar.TokenTuples`)
    for make in (loaded_drive_tables, new_lark):
        seen: list[Any] = []
        builder = Builder()
        original = builder.tool

        def tool(c: list[Any], seen: list[Any] = seen, original: Any = original) -> Any:
            seen.extend(c)
            return original(c)

        builder.tool = tool  # type: ignore[method-assign]
        parser = make(builder)
        assert parser is not None
        if make is new_lark:
            parser.parse("  tool\tsearch called", start="file")
        else:
            drive(parser, "  tool\tsearch called", "file")
        assert seen == [("TOOL", "tool", 2, 6), ("NAME", "search", 7, 13)], make
        assert [type(t) for t in seen] == [tuple, tuple]
        assert [type(part) for t in seen for part in t] == [str, str, int, int] * 2


def test_keywords_are_never_brackets_or_newlines() -> None:
    # the loop turns a NAME into the keyword it spells without asking whether the kind is
    # a bracket or a newline (`drive`: each kind asks one thing): so no lexer plan may
    # give such a kind keywords, and no keyword may be one (the shipped tables' plans,
    # and Lark's, whose keyword callbacks the loop reads as the same words)
    layout = OPENING | CLOSING | {"_NL"}
    assert LOADED is not None
    lexers = FAST.parser.lexer.lexer.lexers
    for state in range(len(LOADED.raw_states)):
        _, _, keywords = LOADED.lexing[state]
        lexer = lexers[state]
        assert lexer.scanner  # (Lark makes a state's lexer's callbacks with its scanner)
        larks = {kind: keyword_spellings(cb) for kind, cb in lexer.callback.items()}
        assert larks == keywords, state
        for kind, words in keywords.items():
            assert kind not in layout and not set(words.values()) & layout, (state, kind)


def test_a_newline_is_the_same_token_in_every_state() -> None:
    # `drive` takes a "\n" met where a token ended as `_NL` without matching it: each
    # state's scanner (behind the blanks `drive` puts before it) must read it so
    assert LOADED is not None
    for state in range(len(LOADED.raw_states)):
        scanners, _, _ = LOADED.lexing[state]
        found = None
        for pattern, flags in scanners:
            found = re.compile(f"[ \t]*+(?:{pattern})", flags).match("x\ny", 1)
            if found is not None:
                break
        assert found is not None, state
        assert (found.lastgroup, found[found.lastgroup], found.end()) == ("_NL", "\n", 2), state


BASED = Builder()
BASED_TABLES = loaded_drive_tables(BASED)
BASED_STOCK = Builder()
BASED_LARK = new_lark(BASED_STOCK)


@pytest.mark.parametrize("path", FILES[:8], ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_statement_parsed_at_an_offset_has_the_spans_lark_gives_it(path: Path) -> None:
    # text with an error is parsed statement by statement, each at its offset in the file
    # (`Builder.base`), by the fast loop first: its spans must be Lark's at that offset
    assert BASED_TABLES is not None
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines()):
        BASED.reset(base=37 * n + 5)
        BASED_STOCK.reset(base=37 * n + 5)
        result = drive(BASED_TABLES, line, "file")  # type: ignore[arg-type]
        assert (result is None) == isinstance(outcome(BASED_LARK, line), tuple), line
        if result is not None:
            BASED_STOCK.reset(base=37 * n + 5)
            assert full(result) == full(BASED_LARK.parse(line, start="file")), line
            assert all(st.span.start >= 37 * n + 5 for st in result.statements), line


def test_a_token_callback_is_given_a_lark_token_and_its_result_is_a_tuple() -> None:
    # a Lark token callback other than plain keywords (none in the shipped tables) reads
    # and assigns a token's attributes: the loop gives it one and keeps what it leaves
    def shout(tok: Any) -> Any:
        tok.type, tok.value = "LOUD", tok.value.upper()
        return tok

    assert drive_module.callback_token(shout, "NAME", "hey", 9) == ("LOUD", "HEY", 6, 9)
