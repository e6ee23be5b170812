"""JSONPath: parse paths once and evaluate them fast.

Takes a path as written (`$.city`, `$.items[*].id`, `$['odd key']`, `$..name`,
`$.items[?(@.price < 10)]`) and gives a `CompiledPath` whose `find(value)` returns every
value the path finds. The common subset (fields, indices, `[*]`, quoted keys, and a last
step `..name`) is parsed here and evaluated by direct lookups (jsonpath-ng's `find` is
40-50× slower on such paths, and a test checks `..name` finds what it finds); anything
else is parsed and evaluated by jsonpath-ng's extended parser. A path that neither accepts
is a `PathProblem` (a check-time error).

No regex of a path runs outside RE2: jsonpath-ng matches a filter's `=~ "pattern"` with
Python's backtracking `re` (`(a+)+$` hangs it), so each such filter is replaced, once at
compile time, by one that matches with RE2 (a pattern RE2 cannot run is a check-time
error, as for `matches /…/`); `sub()`, jsonpath-ng's other regex, is refused. Filters stay
usable, and no pattern in a path can hang a run. A path nested more than `MAX_NESTING`
brackets deep is refused too.

Nor can a path's values hang a run: a `..` after another walks again under every value
the one before found (`$..*..*..*` finds 551,300 values in an answer nested 150 levels
deep, and one more `..*` runs for hours). The evaluation of a path whose values can
multiply (`CompiledPath.multiplies`: two `..` or more, or `` `parent` ``) counts what its
steps find (`Counted`: the values each step finds, and those a `..` walks over), and past
`MAX_PATH_VALUES` in one `find` it stops there: `TooManyValues`, naming the path and the
limit. Any other path (the fast form, one `..`) finds each value about once: not counted.

Keys are looked up as own keys of JSON objects only: unlike traceplay's JavaScript,
`$.items.length` and `$.constructor` find nothing. A step of digits after a dot (`$.tags.1`)
is, as in traceplay, the element at that index of a list or the key `"1"` of an object.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Hashable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

import attrs

from evaldsl.cache.regexes import regex
from evaldsl.language.limits import MAX_NESTING, MAX_PATH_VALUES
from evaldsl.language.regexes import RegexProblem, compile_regex

_STEP = regex(
    r"""\.(?P<name>[A-Za-z_][\w-]*)
      | \.(?P<member>[0-9]+)(?![\w-])
      | \.\*(?P<dotstar>)
      | \[(?P<index>-?\d+)\]
      | \[\*\](?P<star>)
      | \[(?P<sq>'(?:[^'\\]|\\.)*+')\]
      | \[(?P<dq>"(?:[^"\\]|\\.)*+")\]""",  # possessive: no backtracking record per char
    re.VERBOSE,
)

STAR = object()

_DESCEND = regex(r"\.\.(?P<name>[A-Za-z_][\w-]*)$")


@attrs.frozen
class Descend:
    """`..name` as a path's last step: every value under the key `name` at any depth
    (jsonpath-ng's order: a node's own key first, then its children in order)."""

    name: str

    def find(self, value: Any, out: list[Any]) -> None:
        name = self.name
        if isinstance(value, dict):
            if name in value:
                out.append(value[name])
            top: Iterator[Any] = iter(value.values())
        elif isinstance(value, list):
            top = iter(value)
        else:
            return
        # A stack of the open containers' iterators, each paused where a child container
        # was entered (no recursion: JSON may nest deeper than Python's stack); values
        # that are not containers are passed over where they are, never stacked. JSON's
        # own types are told by exact type first (most values are texts and numbers,
        # each of which took two `isinstance` tests); anything else (a subclass) by
        # `isinstance`, as before.
        parents: list[Iterator[Any]] = []
        while True:
            for v in top:
                t = type(v)
                if t is dict:
                    parents.append(top)
                    if name in v:
                        out.append(v[name])
                    top = iter(v.values())
                    break
                if t is list:
                    parents.append(top)
                    top = iter(v)
                    break
                if t is str or t is int or t is float or t is bool or v is None:
                    continue
                if isinstance(v, dict):
                    parents.append(top)
                    if name in v:
                        out.append(v[name])
                    top = iter(v.values())
                    break
                if isinstance(v, list):
                    parents.append(top)
                    top = iter(v)
                    break
            else:
                if not parents:
                    return
                top = parents.pop()


@attrs.frozen
class Member:
    """`.1`: a list's element at that index, or an object's key `"1"` (JavaScript's `in`
    on arrays: `"01"` is no index)."""

    key: str

    @property
    def index(self) -> int | None:
        return int(self.key) if self.key == "0" or not self.key.startswith("0") else None


@attrs.frozen
class PathProblem:
    """Why a path is not valid JSONPath (the message says where in the path)."""

    message: str
    hint: str | None = None


class TooManyValues(Exception):
    """A path whose evaluation found more than `MAX_PATH_VALUES` values (counting those
    between its steps); its message names the path and the limit, and says what to do
    (`why`: the same without the path, for a message that names it already)."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.why = (
            f"found more than {MAX_PATH_VALUES:,} values (the limit; a `..` after another "
            "walks under each value found): use one `..`, or name the keys ($.a..b.c)"
        )
        shown = path if len(path) <= 80 else path[:80] + "…"
        super().__init__(f"the JSONPath `{shown}` {self.why}")


#: W405, a path whose values can multiply (`CompiledPath.multiplies`): message and hint.
MULTIPLIES = (
    "this JSONPath can find the same values many times over: a `..` after another walks "
    "again under each value the first found (`parent` finds a list once per element); "
    f"past {MAX_PATH_VALUES:,} values it stops, as that assertion's error",
    "use one `..`, or name the keys between them: $.a..b.c, $..items[*].title",
)


class _Crossed(Exception):
    """Raised inside jsonpath-ng's evaluation where the count passes the limit."""


#: What the `find` running in this thread may still count (`Counted`): set by each
#: `CompiledPath.find` that jsonpath-ng evaluates, for the steps inside it, filters too.
_BUDGET = threading.local()


@attrs.frozen
class CompiledPath:
    """A parsed path: `find(value)` lists the values it finds (maybe none); it raises
    `TooManyValues` when they pass `MAX_PATH_VALUES` (only jsonpath-ng's can)."""

    text: str
    steps: tuple[object, ...] | None  # the fast form; None when jsonpath-ng evaluates it
    _ng: Any = None
    #: whether its values can multiply (two `..`, or `` `parent` ``): then counted, and
    #: `check` warns of it (W405)
    multiplies: bool = False

    def find(self, value: Any) -> list[Any]:
        if self.steps is None:
            if not self.multiplies:  # (no step of it counts: no budget to set)
                return [m.value for m in self._ng.find(value)]
            _BUDGET.left = MAX_PATH_VALUES
            try:
                return [m.value for m in self._ng.find(value)]
            except _Crossed:
                raise TooManyValues(self.text) from None
        current = [value]
        for step in self.steps:
            nxt: list[Any] = []
            for v in current:
                if type(step) is Descend:
                    step.find(v, nxt)
                elif step is STAR:
                    if isinstance(v, list):
                        nxt.extend(v)
                    elif isinstance(v, dict):
                        nxt.extend(v.values())
                elif isinstance(step, int):
                    if isinstance(v, list) and -len(v) <= step < len(v):
                        nxt.append(v[step])
                elif isinstance(step, Member):
                    if isinstance(v, dict) and step.key in v:
                        nxt.append(v[step.key])
                    elif isinstance(v, list) and step.index is not None and step.index < len(v):
                        nxt.append(v[step.index])
                elif isinstance(v, dict) and step in v:
                    nxt.append(v[step])
            if not nxt:
                return nxt
            current = nxt
        return current

    def getter(self) -> Callable[[Any], list[Any]]:
        """A specialised `find` for the hot path (one plain field: a dict lookup)."""
        steps = self.steps
        if steps is not None and len(steps) == 1 and isinstance(steps[0], str):
            key = steps[0]

            def one_field(value: Any) -> list[Any]:
                if isinstance(value, dict) and key in value:
                    return [value[key]]
                return []

            return one_field
        return self.find


def _quoted(raw: str) -> str:
    if raw[0] == "'":
        raw = '"' + raw[1:-1].replace("\\'", "'").replace('"', '\\"') + '"'
    return str(json.loads(raw))


def _fast_steps(text: str) -> tuple[object, ...] | None:
    if not text.startswith("$"):
        return None
    steps: list[object] = []
    pos = 1
    tail = _DESCEND.search(text)
    end = tail.start() if tail is not None else len(text)
    while pos < end:
        m = _STEP.match(text, pos)
        if not m:
            return None
        if m.group("name") is not None:
            steps.append(m.group("name"))
        elif m.group("member") is not None:
            steps.append(Member(m.group("member")))
        elif m.group("index") is not None:
            steps.append(int(m.group("index")))
        elif m.group("sq") is not None or m.group("dq") is not None:
            # (an escape JSON has not, `$['\q']`: jsonpath-ng reads the key, or says why)
            try:
                steps.append(_quoted(m.group("sq") or m.group("dq")))
            except ValueError:
                return None
        else:
            steps.append(STAR)
        pos = m.end()
    if pos != end:
        return None
    if tail is not None:
        steps.append(Descend(tail.group("name")))
    return tuple(steps)


@lru_cache(maxsize=4096)
def compile_path(text: str) -> CompiledPath | PathProblem:
    """Parse a JSONPath once.

    >>> compile_path("$.items[*].id").find({"items": [{"id": 1}, {"id": 2}]})
    [1, 2]
    >>> compile_path("city").message
    'a JSONPath starts with `$`'
    """
    if not text.startswith("$"):
        return PathProblem("a JSONPath starts with `$`", f"write `$.{text}`")
    steps = _fast_steps(text)
    if steps is not None:
        return CompiledPath(text, steps)
    if _bracket_depth(text) > MAX_NESTING:
        return PathProblem(f"the JSONPath is nested more than {MAX_NESTING} brackets deep")
    try:
        from jsonpath_ng.ext.parser import parse as ng_parse  # imported lazily: ~30 ms

        ng = ng_parse(text)
    except Exception as err:  # jsonpath-ng raises bare Exception subclasses of its own
        return _said(text, str(err))
    problem = _through_re2(ng)
    if problem is not None:
        return problem
    return CompiledPath(text, None, ng, _counted(ng))


#: What paths look like: the hint of a path that is wrong in no way said more precisely.
SHAPES = "paths look like $.a.b, $.items[0], $.items[*].id, $['odd key'], $.items[?(@.n < 3)]"

# jsonpath-ng's own messages (its lexer's and parser's), which are said again in the
# user's words: they name grammar tokens ("near token ) ())") and 0-based columns.
_NG_TOKEN = regex(r"Parse error at \d+:(?P<col>\d+) near token (?P<value>.*?) \(.+\)$", re.S)
_NG_CHAR = regex(r"Error on line \d+, col (?P<col>\d+)\b.*Unexpected character: (?P<c>.)", re.S)
_NG_END = "Parse error near the end of string!"
_NG_QUOTE = "Unexpected EOF in string literal or identifier"
_OPERATOR_END = regex(r"(?:==|!=|<=|>=|=~|<|>|=|&|\|)\s*$")


def _said(text: str, raw: str) -> PathProblem:
    """A path jsonpath-ng refused, with its message `raw` said as what is wrong, where
    in the path and how to fix it (a message it words for people is kept)."""
    unclosed = unclosed_at(text)
    if unclosed is not None:  # (an unclosed quote, bracket or parenthesis: said first)
        return unclosed_problem(text, unclosed)
    m = _NG_TOKEN.match(raw)
    if m is not None:
        at, found = int(m.group("col")), m.group("value")
        before = text[:at].rstrip()
        if _OPERATOR_END.search(before) and found in (")", "]", "&", "|"):
            return PathProblem(
                f"invalid JSONPath `{text}`: a value is missing after `{before}`",
                "a filter compares with a value: $.items[?(@.price < 10)]",
            )
        return PathProblem(f"invalid JSONPath `{text}`: `{found}` cannot follow `{before}`", SHAPES)
    m = _NG_CHAR.match(raw)
    if m is not None:
        at = int(m.group("col"))
        return PathProblem(
            f"invalid JSONPath `{text}`: `{m.group('c')}` cannot follow `{text[:at]}`",
            "quote a key with other characters: $['odd key']",
        )
    if raw == _NG_END:
        tail = text.rstrip()
        if tail.endswith(".."):
            return PathProblem(
                f"invalid JSONPath `{text}`: nothing follows its `..`",
                "a key goes after `..`: $..name finds `name` at any depth",
            )
        if tail.endswith("."):
            return PathProblem(
                f"invalid JSONPath `{text}`: nothing follows its last `.`",
                "a key goes after a dot ($.a.b), or `*` for every value ($.a.*)",
            )
        return PathProblem(f"invalid JSONPath `{text}`: it ends too early", SHAPES)
    if raw == _NG_QUOTE or raw.startswith(("Parse error", "Error on line")):
        return PathProblem(f"invalid JSONPath `{text}`", SHAPES)
    return PathProblem(f"invalid JSONPath `{text}`: {raw}", SHAPES)


def unclosed_at(text: str) -> tuple[int, str] | None:
    """Where a path's first quote, bracket or parenthesis that is never closed opens,
    and which it is (None: each is closed).

    >>> unclosed_at("$.a[0"), unclosed_at("$.a['x]"), unclosed_at("$.a[0]")
    ((3, '['), (4, "'"), None)
    """
    opened: list[tuple[int, str]] = []
    closing = {"]": "[", ")": "("}
    i = 0
    while i < len(text):
        ch = text[i]
        if ch in "'\"":
            end = i + 1
            while end < len(text) and text[end] != ch:
                end += 2 if text[end] == "\\" else 1
            if end >= len(text):
                return i, ch
            i = end
        elif ch in "[(":
            opened.append((i, ch))
        elif ch in closing and opened:
            if opened[-1][1] != closing[ch]:
                return opened[-1]  # (`$.a[?(@.b]`: the `(` is what is left open)
            opened.pop()
        i += 1
    return opened[0] if opened else None


_CLOSERS = {"[": "]", "(": ")", "'": "'", '"': '"'}


def unclosed_problem(text: str, unclosed: tuple[int, str], shown: str | None = None) -> PathProblem:
    """The problem of a path whose quote, bracket or parenthesis at `unclosed` is never
    closed (`$.a[0`, `$.a['x]`), at that character; `shown` is the path as the message
    shows it (else its text, cut at 40 characters)."""
    at, ch = unclosed
    what = "quote" if ch in "'\"" else "bracket" if ch == "[" else "parenthesis"
    if shown is None:
        shown = text if len(text) <= 40 else text[:40] + "…"
    hint = {
        "[": "close it with `]`: $.items[0], $.items[*], $['odd key']",
        "(": "close it with `)`: $.items[?(@.price < 10)]",
    }.get(ch, f"close it with `{ch}`: $[{ch}odd key{ch}]")
    return PathProblem(
        f"invalid JSONPath `{shown}`: the {what} `{ch}` at character {at + 1} is not closed",
        hint,
    )


def _bracket_depth(text: str) -> int:
    depth = deepest = 0
    for ch in text:
        if ch in "[(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch in "])":
            depth -= 1
    return deepest


def _through_re2(root: Any) -> PathProblem | None:
    """Make every `=~` filter of a parsed jsonpath-ng path match with RE2, in place;
    the problem when a pattern cannot run on RE2, or when the path uses `sub()`.

    The tree is walked with a stack of its own: a path's nodes are plain objects whose
    attributes (and lists of them) hold the nodes below."""
    from jsonpath_ng.ext.filter import Expression
    from jsonpath_ng.ext.string import Sub
    from jsonpath_ng.jsonpath import JSONPath

    re2_expression = _re2_expression_class()
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if isinstance(node, Sub):
            return PathProblem(
                "`sub()` is not supported in paths: its regex would run on Python's "
                "backtracking engine, which a pattern can hang",
                "test the value instead: args $.x matches /…/",
            )
        for name, value in list(vars(node).items()):
            items = value if isinstance(value, list) else [value]
            for i, item in enumerate(items):
                if not isinstance(item, JSONPath):
                    continue
                if isinstance(item, Expression) and item.op == "=~":
                    if not isinstance(item.value, str):
                        return PathProblem('`=~` in a filter takes a quoted pattern: =~ "a.*"')
                    compiled = compile_regex(item.value)
                    if isinstance(compiled, RegexProblem):
                        return PathProblem(
                            f"the filter pattern {json.dumps(item.value)}: {compiled.message}",
                            compiled.hint,
                        )
                    item = re2_expression(item.target, item.value, compiled)
                    if isinstance(value, list):
                        value[i] = item
                    else:
                        setattr(node, name, item)
                stack.append(item)
    return None


def _counted(root: Any) -> bool:
    """Make a parsed jsonpath-ng path's steps count what they find (`Counted`: the right
    side of each `a.b` and `a..b`, of filters' paths too), in place, when its values can
    multiply (then True); else leave it as it is, which costs nothing more (False).

    They can multiply only when a value can be found more than once: a path of at most
    one `..` finds each value about once (each of its other steps goes one level down, or
    stays: `@`; a union adds its branches), but a second `..` walks again under every
    value the first found (its own descendants among them), and `` `parent` `` finds a
    list once for each of its elements. (Counting every path cost a fifth more on
    `$..meta.src`.)"""
    from jsonpath_ng.jsonpath import Child, Descendants, JSONPath, Parent

    nodes: list[Any] = []
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        nodes.append(node)
        for value in vars(node).values():
            items = value if isinstance(value, list) else [value]
            stack.extend(item for item in items if isinstance(item, JSONPath))
    walks = sum(isinstance(node, Descendants) for node in nodes)
    if walks < 2 and not any(isinstance(node, Parent) for node in nodes):
        return False
    counted = _counted_class()
    for node in nodes:
        if isinstance(node, Child | Descendants):
            node.right = counted(node.right, isinstance(node, Descendants))
    return True


@lru_cache(maxsize=1)
def _counted_class() -> Any:
    """The right side of a jsonpath-ng `a.b` or `a..b`, counting against the `find`
    running what it finds (for `a.b`: `a.b` calls `b` on each value `a` found) or, for
    `a..b` (`walked`), the value it is called on (`a..b` calls `b` on each value under
    each value `a` found: the values the walk goes over, which it finds again as it goes
    down); past the limit it stops that `find`. Made on first use: jsonpath-ng is
    imported lazily."""
    from jsonpath_ng.jsonpath import JSONPath

    class Counted(JSONPath):
        def __init__(self, inner: Any, walked: bool) -> None:
            self.inner = inner
            self.walked = walked

        def find(self, datum: Any) -> list[Any]:
            found: list[Any] = self.inner.find(datum)
            left = _BUDGET.left - (1 + len(found) if self.walked else len(found))
            _BUDGET.left = left
            if left < 0:
                raise _Crossed
            return found

        def __str__(self) -> str:
            return str(self.inner)

        def __repr__(self) -> str:
            return repr(self.inner)

    return Counted


@lru_cache(maxsize=1)
def _re2_expression_class() -> Any:
    """jsonpath-ng's filter expression, matching `=~` with a compiled RE2 pattern (made on
    first use: jsonpath-ng is imported lazily)."""
    from jsonpath_ng.ext.filter import Expression
    from jsonpath_ng.jsonpath import DatumInContext

    class Re2Expression(Expression):
        """`@.path =~ "pattern"`: the values at the path that are text the pattern finds."""

        def __init__(self, target: Any, pattern: str, compiled: Any) -> None:
            super().__init__(target, "=~", pattern)
            self.compiled = compiled

        def find(self, datum: Any) -> list[Any]:
            found = self.target.find(DatumInContext.wrap(datum))
            search = self.compiled.search
            return [d for d in found if isinstance(d.value, str) and search(d.value)]

    return Re2Expression


#: The crossings noted in this thread (`noted_crossings`), while one is open.
_NOTED = threading.local()


@contextmanager
def noted_crossings() -> Iterator[dict[Hashable, str]]:
    """While open, in this thread, a finder made by `noting_finder` whose path passes
    `MAX_PATH_VALUES` finds nothing and notes its label here, with what `TooManyValues`
    says of it (`why`), instead of raising (a run is indexed with it open: one call's values must
    not stop the pass, and the assertion on that path says it, as its error)."""
    outer = getattr(_NOTED, "log", None)
    log: dict[Hashable, str] = {}
    _NOTED.log = log
    try:
        yield log
    finally:
        _NOTED.log = outer


def noting_finder(path: str | None, label: Hashable) -> Callable[[Any], list[Any]]:
    """`path_finder(path)`, which under `noted_crossings` notes `label` where the path
    passes the limit, and finds nothing there (no crossing open: it raises). A path whose
    values cannot multiply never passes it: its own finder."""
    finder = path_finder(path)
    compiled = compile_path(path) if path is not None else None
    if not isinstance(compiled, CompiledPath) or not compiled.multiplies:
        return finder

    def noting(value: Any) -> list[Any]:
        try:
            return finder(value)
        except TooManyValues as crossed:
            log = getattr(_NOTED, "log", None)
            if log is None:
                raise
            log.setdefault(label, crossed.why)
            return []

    return noting


def path_finder(path: str | None) -> Callable[[Any], list[Any]]:
    """The values a checked path finds in a value (no path: the value itself).

    >>> path_finder("$.city")({"city": "Paris"}), path_finder(None)(3)
    (['Paris'], [3])
    """
    if path is None:
        return lambda v: [v]
    compiled = compile_path(path)
    assert isinstance(compiled, CompiledPath), "the checker rejects invalid paths"
    return compiled.getter()
