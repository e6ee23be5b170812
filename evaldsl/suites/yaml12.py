"""YAML 1.2: suites read as traceplay's loader reads them, with every node's position.

Takes YAML (or JSON) text and gives composed nodes that keep their marks (`compose`), the
plain values they stand for (`construct`), and the problems a YAML 1.2 loader reports
(`problems`: duplicate keys, unknown tags). PyYAML alone reads YAML 1.1; here its safe
loader (C-accelerated when present) gets the scalars of the YAML 1.2 core schema, the
schema of the npm `yaml` package traceplay parses suites with:

- `null`, `Null`, `NULL`, `~` and nothing are null; `true`/`True`/`TRUE` and the `false`
  spellings are booleans; `on`, `yes`, `no`, `off`, `y`, `n` are text;
- `017` and `+12` are decimal integers, `0o17` octal, `0x1F` hexadecimal; `1e3`, `.5`, `5.`
  and `1.5E+3` are numbers; `.inf`, `-.inf`, `.nan` (and their capitalised spellings) too;
- `1_000`, `1:30`, `0b101`, `2024-01-01`, `=` and `<<` are text (no underscores, no base 60,
  no binary, no timestamps, no merge keys);
- mapping keys become text as JavaScript makes them (`1: x` is `{"1": "x"}`, a null key is
  `""`), and a key written twice is an error, as it is for traceplay.

Explicit tags of the core schema (`!!str`, `!!int`, `!!float`, `!!bool`, `!!null`,
`!!seq`, `!!map`) are honoured; any other tag is reported.

>>> construct(compose("a: [on, 1e3, 017, 0o17, 1_000, 2024-01-01, .inf]"))
{'a': ['on', 1000.0, 17, 15, '1_000', '2024-01-01', inf]}
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from typing import Any

import attrs
import yaml

from evaldsl.cache.regexes import regex
from evaldsl.language.jsjson import has_surrogate, joined_surrogates, js_number
from evaldsl.language.values import js_text
from evaldsl.suites.yamlplaces import yaml_lines

try:  # the C parser when libyaml is present: same nodes, several times faster
    from yaml import CSafeLoader as _Base
except ImportError:  # pragma: no cover - depends on the platform's PyYAML build
    from yaml import SafeLoader as _Base  # type: ignore[assignment]

_TAG = "tag:yaml.org,2002:"
NULL, BOOL, INT, FLOAT, STR = (_TAG + t for t in ("null", "bool", "int", "float", "str"))
SEQ, MAP = _TAG + "seq", _TAG + "map"

# The core schema's scalars, as the npm `yaml` package (v2) tests them.
_NULL = re.compile(r"(?:~|[Nn]ull|NULL)?\Z")
_BOOL = re.compile(r"(?:[Tt]rue|TRUE|[Ff]alse|FALSE)\Z")
_INT_OCT = re.compile(r"0o[0-7]+\Z")
_INT_DEC = re.compile(r"[-+]?[0-9]+\Z")
_INT_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT_SPECIAL = re.compile(r"(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)\Z")
_FLOAT_EXP = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)\Z")
_INTS = (_INT_OCT, _INT_DEC, _INT_HEX)
_FLOATS = (_FLOAT_SPECIAL, _FLOAT_EXP, _FLOAT)
_KNOWN_TAGS = {NULL, BOOL, INT, FLOAT, STR, SEQ, MAP}
# an escape of a double-quoted scalar (or JSON string) that makes a character by its code
_HEX_ESCAPE = regex(r"\\(?:u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8}))")


class Loader(_Base):
    """PyYAML's safe loader with the YAML 1.2 core schema's implicit scalar types."""

    # a table of its own: PyYAML's class attribute holds the YAML 1.1 resolvers
    yaml_implicit_resolvers = {}  # noqa: RUF012


# Checked in this order on every plain scalar (a wildcard entry: a scalar's first character
# narrows too little to be worth PyYAML's per-character tables).
for _tag, _patterns in (
    (NULL, (_NULL,)),
    (BOOL, (_BOOL,)),
    (INT, _INTS),
    (FLOAT, _FLOATS),
):
    for _pattern in _patterns:
        Loader.add_implicit_resolver(_tag, _pattern, None)


class _PyLoader(yaml.SafeLoader):
    """The pure-Python reader, with `Loader`'s schema: it reads a `\\uD83D` escape (half
    of a UTF-16 pair, as JSON writes an emoji: `json.dumps` does by default) where libyaml
    refuses it."""

    yaml_implicit_resolvers = Loader.yaml_implicit_resolvers


#: What PyYAML (YAML 1.1) and libyaml end a line at, and YAML 1.2, JSON, editors and the
#: language server do not: NEL, LINE SEPARATOR, PARAGRAPH SEPARATOR.
YAML11_BREAKS = "\x85\u2028\u2029"


def compose(text: str) -> yaml.Node | None:
    """The document's root node (None for an empty document); raises `yaml.YAMLError`.

    A raw U+0085, U+2028 or U+2029 is a character, as YAML 1.2 reads it: PyYAML took it
    for a line break, so a value holding one lost it (folded into a space) and every place
    after it was a line further down than an editor shows it (a comment holding one was
    cut, the rest read as YAML). Such a text is read with each of them written as a
    character of the Private Use Area it does not hold (nor any escape of), one column
    each, and the scalars read get their own characters back (`_shielded`).

    Escapes of UTF-16 surrogate halves (`"\\ud83d\\ude00"`, valid JSON) are read as
    the character the pair makes, and a lone half as U+FFFD, as recordings are read
    (`runs.surrogates`): libyaml refuses them, so such a text is read again by PyYAML's
    Python reader, which takes them, and its scalars are mended. A surrogate written as
    itself (an editor's buffer: no file holds one) cannot be given to libyaml at all;
    the Python reader refuses it at its place (`yaml.ReaderError`).
    """
    if "\x85" in text or "\u2028" in text or "\u2029" in text:
        shielded, back = _shielded(text)
        try:
            root = _compose(shielded)
        except yaml.MarkedYAMLError as err:
            _unshield_error(err, back)
            raise
        for node in nodes(root):
            if isinstance(node, yaml.ScalarNode):
                node.value = node.value.translate(back)
        return root
    return _compose(text)


def _compose(text: str) -> yaml.Node | None:
    try:
        return yaml.compose(text, Loader=Loader)
    except UnicodeEncodeError:
        pass
    except yaml.MarkedYAMLError as err:
        if "Unicode character escape" not in str(err.problem):  # (libyaml's words)
            raise
    root = yaml.compose(text, Loader=_PyLoader)
    _join_surrogates(root)
    return root


def _shielded(text: str) -> tuple[str, dict[int, str]]:
    """`text` with each raw YAML 1.1 line break written as a Private Use character, and the
    table that gives a scalar read from it its own characters back. A stand-in is a
    character the text holds neither written nor as an escape that makes it (`\\uE000`,
    `\\U0000E000`; a pair of surrogate escapes makes no character of the BMP), so nothing
    else in a scalar can be one. A text that holds every one of them (6,400) is refused
    with a `yaml.MarkedYAMLError` at its first such line break."""
    taken = set(text)
    for escape in _HEX_ESCAPE.finditer(text):
        code = int(escape[1] or escape[2], 16)
        if code < 0x110000:
            taken.add(chr(code))
    spare = (c for c in range(0xE000, 0xF900) if chr(c) not in taken)
    forth: dict[int, int] = {}
    back: dict[int, str] = {}
    for ch in YAML11_BREAKS:
        if ch in text:
            stand_in = next(spare, None)
            if stand_in is None:
                raise _unshielded(text)
            forth[ord(ch)] = stand_in
            back[stand_in] = ch
    return text.translate(forth), back


def _unshield_error(err: yaml.MarkedYAMLError, back: dict[int, str]) -> None:
    """`err`'s words with each stand-in of `_shielded` its own character again: PyYAML's
    Python scanner quotes the character it found (`but found '\\ue000'`), a character
    the file does not hold."""
    for attr in ("problem", "context", "note"):
        words = getattr(err, attr, None)
        if isinstance(words, str):
            for stand_in, ch in back.items():
                words = words.replace(repr(chr(stand_in))[1:-1], repr(ch)[1:-1])
            setattr(err, attr, words.translate(back))


def _unshielded(text: str) -> yaml.MarkedYAMLError:
    """The error for a text `_shielded` cannot read: at its first U+0085, U+2028 or U+2029."""
    at = min(i for i in (text.find(ch) for ch in YAML11_BREAKS) if i >= 0)
    before = yaml_lines(text[:at])
    mark = yaml.Mark("<text>", at, len(before) - 1, len(before[-1]), None, 0)
    return yaml.MarkedYAMLError(
        problem=f"this U+{ord(text[at]):04X} cannot be read as a character: the text also "
        "holds every character of the Private Use Area (U+E000-U+F8FF), written or as an "
        "escape, which reading it needs one of",
        problem_mark=mark,
    )


def _join_surrogates(root: yaml.Node | None) -> None:
    """Each scalar's surrogate halves made into the character a pair makes, or U+FFFD."""
    for node in nodes(root):
        if isinstance(node, yaml.ScalarNode) and has_surrogate(node.value):
            node.value = joined_surrogates(node.value)


def nodes(root: yaml.Node | None) -> Iterator[yaml.Node]:
    """Each node under `root` once, in document order (an alias: one node, reached twice;
    no recursion, however deep the document)."""
    seen: set[int] = set()
    stack: list[yaml.Node] = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node
        if isinstance(node, yaml.MappingNode):
            stack.extend(v for pair in reversed(node.value) for v in reversed(pair))
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(reversed(node.value))


def fields(node: yaml.Node | None) -> dict[str, tuple[yaml.Node, yaml.Node]]:
    """A mapping node's entries by their key's text, each its key and value nodes (where
    diagnostics point); {} for any other node. A key that is a list or a mapping (`? [a,
    b]`) is there by its JSON text, as `construct` names it: left out, it was no field and
    no unknown one either, and a case ran with it unread."""
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {
        str(k.value) if isinstance(k, yaml.ScalarNode) else js_key(construct(k)): (k, v)
        for k, v in node.value
    }


def _int(text: str) -> int | None:
    if _INT_DEC.match(text):
        return int(text, 10)
    if _INT_OCT.match(text):
        return int(text[2:], 8)
    if _INT_HEX.match(text):
        return int(text[2:], 16)
    return None


def _float(text: str) -> float | None:
    if _FLOAT_SPECIAL.match(text):
        if text.lower().endswith("nan"):
            return math.nan
        return -math.inf if text.startswith("-") else math.inf
    if _FLOAT_EXP.match(text) or _FLOAT.match(text):
        return float(text)
    return None


def _scalar(node: yaml.ScalarNode) -> Any:
    text, tag = node.value, node.tag
    if tag == NULL:
        return None if _NULL.match(text) else text
    if tag == BOOL:
        return text.lower() == "true" if _BOOL.match(text) else text
    if tag == INT:
        number = _int(text)
        return text if number is None else number
    if tag == FLOAT:
        number = _int(text)  # `!!float 1` is the number 1
        value = _float(text) if number is None else float(number)
        return text if value is None else value
    return text  # `!!str`, and tags that `problems` reports


def js_key(key: Any) -> str:
    """A mapping key as JavaScript makes it a property name: `String(key)`, null as `""`.

    >>> [js_key(k) for k in ("a", 1, 1.0, 1.5, True, None, math.inf)]
    ['a', '1', '1', '1.5', 'true', '', 'Infinity']
    """
    if isinstance(key, str):
        return key
    if key is None:
        return ""
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        if math.isnan(key):
            return "NaN"
        if math.isinf(key):
            return "Infinity" if key > 0 else "-Infinity"
        return js_number(key)
    return js_text(key)  # a collection key: its JSON text


def construct(node: yaml.Node | None) -> Any:
    """The plain value a node stands for: dict, list, str, int, float, bool or None.

    Never raises: a node `problems` reports is read as the text or collection it holds.
    Aliases give the same value; an alias inside its own anchor is read as null.
    """
    if node is None:
        return None
    if isinstance(node, yaml.ScalarNode):  # most calls: a mapping's key
        return _scalar(node)
    return _build(node, {}, set())


def _build(node: yaml.Node, memo: dict[int, Any], building: set[int]) -> Any:
    # A function of the module, its state passed in: a nested function that calls itself
    # is a reference cycle (it, its cell), and `construct` runs for every key of a suite
    # with the collector paused, so each call's cycle and memo lived on as garbage: 2.35 M
    # of the 5.4 M objects a full collection walked in a run of 16,000 YAML cases.
    key = id(node)
    if key in memo:
        return memo[key]
    if key in building:
        return None  # a recursive alias: JSON has no such values
    building.add(key)
    value: Any
    if isinstance(node, yaml.ScalarNode):
        value = _scalar(node)
    elif isinstance(node, yaml.SequenceNode):
        value = [_build(item, memo, building) for item in node.value]
    else:
        value = {}
        for k, v in node.value:
            value[js_key(_build(k, memo, building))] = _build(v, memo, building)
    building.discard(key)
    memo[key] = value
    return value


def _key_identity(key: Any) -> Any:
    """When two keys are the same key for the npm `yaml` package: equal scalar values
    (`1` and `1.0` are, `null` and `""` or `true` and `"true"` are not; NaN never is)."""
    if isinstance(key, bool) or key is None or isinstance(key, str):
        return (type(key).__name__, key)
    if isinstance(key, (int, float)):
        return None if key != key else ("number", float(key))
    return ("json", js_text(key))


@attrs.frozen
class Problem:
    """Something a YAML 1.2 loader refuses, at a node."""

    node: yaml.Node
    message: str
    hint: str | None = None
    duplicate: bool = False  # a key written twice (JSON.parse keeps the last one)


def problems(root: yaml.Node | None) -> list[Problem]:
    """Duplicate keys, tags outside the core schema, and explicitly tagged scalars that do
    not hold what their tag says (`!!int abc`), in document order."""
    found: list[Problem] = []
    for node in nodes(root):
        tag = str(node.tag)
        if tag not in _KNOWN_TAGS:
            shown = tag.replace(_TAG, "!!")
            found.append(
                Problem(node, f"unsupported YAML tag `{shown}`", "suites hold plain JSON values")
            )
        elif isinstance(node, yaml.ScalarNode) and tag != STR:
            value = _scalar(node)
            if isinstance(value, str):
                found.append(Problem(node, f"`{value}` is not a {tag.replace(_TAG, '')}"))
        if isinstance(node, yaml.MappingNode):
            keys: dict[Any, yaml.Node] = {}
            for k, _ in node.value:
                same = _key_identity(construct(k))
                if same is not None and same in keys:
                    found.append(
                        Problem(
                            k,
                            f"duplicate key `{js_key(construct(k))}` in this mapping",
                            f"it is already at line {keys[same].start_mark.line + 1}; "
                            "keep one of them",
                            duplicate=True,
                        )
                    )
                elif same is not None:
                    keys[same] = k
    found.sort(key=lambda p: (p.node.start_mark.line, p.node.start_mark.column))
    return found
