"""YAML and JSON traps: what the reader did with a suite's text, in the user's words.

Takes a PyYAML error (`yaml_error`), a JSON decoding error (`json_error`), or a node
YAML read differently from what was meant (`misread_mapping`: an unquoted `: ` made a
mapping; `comment_cut`: an unquoted ` #` started a comment), each with the file's text,
and gives the place (1-based line and column), a message saying what YAML or JSON did,
and a hint saying how to fix it (most often: quote the item).

>>> err = None
>>> try:
...     yaml.safe_load("a: 1\\n---\\nb: 2\\n")
... except yaml.MarkedYAMLError as e:
...     err = e
>>> yaml_error(err, "a: 1\\n---\\nb: 2\\n", "s.yaml")[:3]
(2, 1, 'a suite file holds one YAML document, and `---` here starts a second')
"""

from __future__ import annotations

import contextlib
import json
import re
import unicodedata

import yaml

from evaldsl.suites.yamlplaces import yaml_lines

Trap = tuple[int, int, str, str | None]  # line, column, message, hint


def _line(text: str, line: int) -> str:
    lines = yaml_lines(text)
    return lines[line - 1] if 1 <= line <= len(lines) else ""


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def _place(text: str, at: int) -> tuple[int, int]:
    """The line and column (1-based) of character `at`, lines ending as an editor ends them."""
    head = yaml_lines(text[:at])
    return len(head), len(head[-1]) + 1


def reader_error(err: yaml.reader.ReaderError, text: str) -> Trap:
    """The place, message and hint for a character the YAML reader refuses: a control
    character, or a lone UTF-16 surrogate (which only an editor's buffer can hold). It is
    found in the text by itself: libyaml's `position` counts bytes of UTF-8, PyYAML's
    characters, and neither is a line and column."""
    code = int(err.character)  # (a code point: both readers are given text, not bytes)
    at = text.find(chr(code))
    line, column = _place(text, max(at, 0))
    if 0xD800 <= code <= 0xDFFF:
        message = f"a lone UTF-16 surrogate U+{code:04X}: half of a character, which no text holds"
        return line, column, message, "remove it (a character cut in two when it was copied)"
    name = unicodedata.name(chr(code), "a control character").lower()
    return (
        line,
        column,
        f"a raw U+{code:04X} ({name}): the YAML reader refuses control characters",
        f'remove it, or write it as an escape in a double-quoted string: "\\u{code:04x}"',
    )


def yaml_error(err: yaml.MarkedYAMLError, text: str, path: str) -> Trap:
    """The place, message and hint for PyYAML's error about `text`."""
    mark = err.problem_mark or err.context_mark
    line = mark.line + 1 if mark else 1
    column = mark.column + 1 if mark else 1
    problem = str(err.problem or err)
    here = _line(text, line)
    ch = here[column - 1 : column]
    what = "JSON" if path.lower().endswith(".json") else "YAML"
    if "cannot start any token" in problem and ch == "\t":
        return (
            line,
            column,
            "a tab in the indentation: YAML does not allow tabs for indentation",
            "indent with spaces",
        )
    if "cannot start any token" in problem and ch:
        return (
            line,
            column,
            f"YAML cannot start a plain value with `{ch}`",
            f"quote the value: '{here[column - 1 :].strip()}'",
        )
    if "another document" in problem:
        return (
            line,
            column,
            "a suite file holds one YAML document, and `---` here starts a second",
            "remove the `---` line; put another suite in a file of its own",
        )
    if "mapping values are not allowed" in problem:
        above = next((t for t in reversed(yaml_lines(text)[: line - 1]) if t.strip()), "")
        key = len(above) - len(above.lstrip(" -"))  # where the key above starts
        # (a `: ` before the refused one on its own line is in the value of that line's
        # key, `- name: x (note: y)`: a value to quote, however the line is indented)
        if _indent(here) > key and ":" in above and ": " not in here[: column - 1]:
            name = above[key:].split(":", 1)[0]
            return (
                line,
                _indent(here) + 1,
                "this line is indented deeper than the line above it, so YAML reads it as "
                "more of that line's value, and a value cannot hold `key: value`",
                f"indent it as `{name}:` above it ({key} spaces)",
            )
        return (
            line,
            column,
            "YAML reads `: ` as the start of a mapping, which cannot begin here",
            "quote the value that holds `: `",
        )
    if "did not find expected ',' or ']'" in problem or "did not find expected ',' or '}'" in (
        problem
    ):
        start = err.context_mark
        opened = f" at line {start.line + 1}, column {start.column + 1}" if start else ""
        bracket = "]" if "']'" in problem else "}"
        kind = "list" if bracket == "]" else "mapping"
        opening = "[" if bracket == "]" else "{"
        if not text[(mark.index if mark else 0) :].strip():  # (the file ended first)
            return (
                line,
                column,
                f"the `{opening}`{opened} is never closed: YAML reads it as a {kind}",
                f"close it with `{bracket}`, or quote the value if the `{opening}` is text",
            )
        return (
            line,
            column,
            f"YAML reads the `{opening}`{opened} as a {kind}, and expected `,` or `{bracket}` here",
            "quote the value if the bracket is text (expect: '…'); in a `[…]` list, quote "
            "each item that holds `[`, `]`, `{`, `}` or `,`",
        )
    if "unknown escape character" in problem:
        if here[column - 1 : column] != "\\" and here[column - 2 : column - 1] == "\\":
            column -= 1  # (PyYAML's Python scanner marks the character after the backslash)
        escape = here[column - 1 : column + 1]
        return (
            line,
            column,
            f"`{escape}` is not an escape in a double-quoted YAML string",
            f"write `\\\\{escape[1:]}`, or quote with single quotes ('…' keeps a backslash)",
        )
    if "undefined alias" in problem:
        name = here[column - 1 :].split()[0] if here[column - 1 :].strip() else "*"
        return (
            line,
            column,
            f"YAML reads `{name}` as an alias, and no anchor `&{name[1:]}` is defined",
            f"quote the value if the `*` is text: '{here[column - 1 :].strip()}'",
        )
    if "end of stream" in problem and "quoted scalar" in str(err.context):
        start = err.context_mark
        opened = f" at line {start.line + 1}, column {start.column + 1}" if start else ""
        if start is not None:
            line, column = start.line + 1, start.column + 1
        return (line, column, f"the quote{opened} is never closed", "close it on its line")
    hint = (
        f"{err.context} that starts at line {err.context_mark.line + 1}, column "
        f"{err.context_mark.column + 1}"
        if err.context and err.context_mark
        else err.context
    )
    return line, column, f"invalid {what}: {problem}", hint


#: A JSON string, or a constant Python's `json` takes and JSON does not.
_CONSTANT = re.compile(r'"(?:[^"\\]|\\.)*"|(-?Infinity|NaN)', re.DOTALL)


def strict_loads(text: str) -> None:
    """Checks that `text` is strict JSON, as `json.loads` reads it, refusing `NaN`, `Infinity`
    and `-Infinity` (Python's `json` takes them; `JSON.parse` does not) with a
    `JSONDecodeError` at the first of them. Its values are not kept (the YAML reader reads
    them, at their places), so integers are not converted: one of more than 4,300 digits
    raised ValueError here (Python's limit), where the YAML reader says it at its place.
    Nor is a document nested deeper than Python's decoder goes (RecursionError) checked:
    the YAML reader refuses its nesting at its place."""

    def refuse(name: str) -> object:
        found = next(m for m in _CONSTANT.finditer(text) if m.group(1) is not None)
        raise json.JSONDecodeError(f"{name} is no JSON value", text, found.start())

    with contextlib.suppress(RecursionError):
        json.loads(text, parse_constant=refuse, parse_int=len)


def json_error(err: json.JSONDecodeError) -> Trap:
    """The place, message and hint for a `.json` suite that is not strict JSON."""
    text, at = err.doc, err.pos
    ch = text[at : at + 1]
    before = text[:at].rstrip()
    place = _place(text, at)  # (json's lineno counts \n only: a lone \r is a line break too)
    if ch in ("/", "#"):
        message, hint = "JSON has no comments", "remove it, or write the suite as YAML (.yaml)"
    elif ch == "'":
        message = "a JSON string is written in double quotes"
        hint = "write \"…\" for '…'"
    elif ch in ("]", "}") and before.endswith(","):
        place = _place(text, len(before) - 1)
        message, hint = "JSON allows no comma after the last item", "remove the comma"
    elif err.msg.endswith(" is no JSON value"):
        message = f"`{err.msg.split()[0]}` is not a JSON number"
        hint = "JSON has no NaN or infinity: write null, or a number"
    elif err.msg == "Extra data":
        message = "text after the end of the JSON document"
        hint = "a .json suite holds one object: remove what follows it"
    elif err.msg.startswith("Invalid control character"):
        message = "a line break or control character inside a JSON string"
        hint = "write a line break as \\n and a tab as \\t"
    elif err.msg.startswith("Unterminated string"):
        message, hint = "this string is never closed", 'close it with " on its line'
    elif err.msg.startswith("Invalid \\escape"):
        message = f"`\\{text[at + 1 : at + 2]}` is not a JSON escape"
        hint = (
            'write a backslash as \\\\; JSON escapes are \\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX'
        )
    elif err.msg.startswith("Expecting ',' delimiter"):
        message, hint = "expected `,` between two items", "add the comma"
    elif err.msg.startswith("Expecting ':' delimiter"):
        message, hint = "expected `:` after the property name", 'write "name": value'
    elif err.msg.startswith("Expecting property name"):
        message = "expected a property name in double quotes"
        hint = 'write "name": value'
    elif err.msg.startswith("Expecting value") and not text[at:].strip():
        message, hint = "the JSON document ends too soon", "close every [ and { it opens"
    elif err.msg.startswith("Expecting value"):
        message = "expected a JSON value: a string in double quotes, a number, true, false, "
        message += "null, [ or {"
        hint = "quote text with double quotes"
    else:  # (a number JSON does not have: NaN, Infinity)
        message, hint = err.msg, None
    return place[0], place[1], f"invalid JSON: {message}", hint


def misread_mapping(node: yaml.MappingNode, text: str) -> Trap | None:
    """The place (its `:`), message and hint for a mapping of one plain key and value where
    text was meant: an unquoted `: ` made YAML read the item as `key: value` (`text`: the
    file's, where the item is written; nodes' marks index its characters)."""
    if len(node.value) != 1 or node.flow_style:
        return None
    key, value = node.value[0]
    if not isinstance(key, yaml.ScalarNode) or key.style not in (None, ""):
        return None
    if not isinstance(value, yaml.ScalarNode) or " " not in key.value.strip():
        return None  # (a key of one word is a field's name)
    written = text[key.start_mark.index : value.end_mark.index]  # (its quotes kept)
    if value.style in ('"', "'"):  # (`answer contains: "x"`: a colon too many, not text)
        wrote = written[len(key.value) :].lstrip(": ")
        hint = f"remove the `:` after `{key.value}`: {key.value} {wrote}"
    else:
        hint = (
            f"quote the item: '{written}'" if "'" not in written else f'quote the item: "{written}"'
        )
    return (
        key.end_mark.line + 1,
        key.end_mark.column + 1,
        f"YAML read this item as a mapping (`{key.value}` → `{value.value}`): "
        "an unquoted `: ` starts one",
        hint,
    )


def comment_cut(text: str, starts: list[int], node: yaml.ScalarNode) -> tuple[int, int] | None:
    """Where a ` #` that ended a plain scalar starts (1-based), if one did: YAML reads the
    rest of the line as a comment."""
    if node.style not in (None, ""):
        return None
    end = node.end_mark
    if end.line >= len(starts):
        return None
    at = starts[end.line] + end.column
    stop = text.find("\n", at)
    rest = text[at : stop if stop >= 0 else len(text)]
    spaces = len(rest) - len(rest.lstrip(" \t"))
    if spaces and rest[spaces : spaces + 1] == "#":
        return end.line + 1, end.column + spaces + 1
    return None
