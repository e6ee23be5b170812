"""Templates: `{{key}}` placeholders of `each` rows, rendered into a case.

Takes a row (a JSON object) and gives rendered strings, AST nodes and plain values with
every `{{ key }}` replaced, as traceplay's `each` does: the key may be dotted
(`{{ user.name }}` reads into the row, unless the row has the key `user.name` itself,
which traceplay reads), surrounded by spaces; a known key renders as text
(null as ""; numbers and booleans as JSON writes them; objects as compact JSON); an
unknown key is left as written, so a typo shows up in the report instead of vanishing.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from typing import Any, TypeVar, cast

import attrs

from evaldsl.cache.regexes import regex
from evaldsl.language.values import MISSING, js_text

_PLACEHOLDER = regex(r"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}")

T = TypeVar("T")


def _lookup(row: dict[str, Any], key: str) -> Any:
    """The row's value for `key`: the row's own key first, as traceplay looks it up
    (`{{a.b}}` of `{"a.b": 1}` is 1), then the dotted path into it (`{"a": {"b": 1}}`)."""
    if key in row:
        return row[key]
    value: Any = row
    for part in key.split("."):
        if isinstance(value, dict) and part in value:
            value = value[part]
        else:
            return MISSING
    return value


def render_text(text: str, row: dict[str, Any]) -> str:
    """Replace placeholders in one string.

    >>> render_text("weather in {{ city }} {{nope}}", {"city": "Paris"})
    'weather in Paris {{nope}}'
    """
    if "{{" not in text:
        return text

    def replace(m: re.Match[str]) -> str:
        value = _lookup(row, m.group(1))
        if value is MISSING:
            return m.group(0)
        if value is None:
            return ""
        if isinstance(value, float) and not math.isfinite(value):  # String(NaN) is "NaN"
            return "NaN" if value != value else ("Infinity" if value > 0 else "-Infinity")
        return value if isinstance(value, str) else js_text(value)

    return _PLACEHOLDER.sub(replace, text)


def any_rendering(text: str) -> re.Pattern[str]:
    """A pattern that every text `text` may render to matches (each placeholder: any
    text), for a template whose rows are not known.

    >>> bool(any_rendering("runs/{{ city }}.jsonl").fullmatch("runs/Paris.jsonl"))
    True
    """
    parts = _PLACEHOLDER.split(text)  # (literal text, a key, literal text, …)
    return re.compile(
        "".join(".*" if k % 2 else re.escape(part) for k, part in enumerate(parts)), re.S
    )


def render_value(value: Any, row: dict[str, Any]) -> Any:
    """Render every string inside a plain JSON value (keys included)."""
    if isinstance(value, str):
        return render_text(value, row)
    if isinstance(value, list):
        return [render_value(v, row) for v in value]
    if isinstance(value, dict):
        return {render_text(k, row): render_value(v, row) for k, v in value.items()}
    return value


def render_node(node: T, row: dict[str, Any]) -> T:
    """Render every string field of an AST node and its children (attrs nodes, tuples)."""
    if isinstance(node, str):
        return render_text(node, row)  # type: ignore[return-value]
    if isinstance(node, tuple):
        return tuple(render_node(item, row) for item in node)  # type: ignore[return-value]
    if not attrs.has(type(node)):
        return node
    changes: dict[str, Any] = {}
    for field in attrs.fields(cast(Any, type(node))):
        if field.name == "span":
            continue
        old = getattr(node, field.name)
        new = render_node(old, row)
        if new is not old and new != old:
            changes[field.name] = new
    return attrs.evolve(node, **changes) if changes else node  # type: ignore[misc]


def placeholders(value: Any, found: dict[str, None] | None = None) -> dict[str, None]:
    """Every placeholder key in `value` (an AST node, a tuple, a plain JSON value or a
    string), in order, once each (added to `found` when given): what `missing` asks a
    row for.

    >>> list(placeholders(["{{city}} {{ town }}", {"k": "{{a.b}}"}]))
    ['city', 'town', 'a.b']
    """
    found = {} if found is None else found
    if isinstance(value, str):
        if "{{" in value:
            for m in _PLACEHOLDER.finditer(value):
                found.setdefault(m.group(1), None)
    elif isinstance(value, tuple | list):
        for item in value:
            placeholders(item, found)
    elif isinstance(value, dict):
        for k, v in value.items():
            placeholders(k, found)
            placeholders(v, found)
    elif attrs.has(type(value)):
        for field in attrs.fields(cast(Any, type(value))):
            if field.name != "span":
                placeholders(getattr(value, field.name), found)
    return found


def missing(keys: Iterable[str], row: dict[str, Any]) -> list[str]:
    """The placeholder `keys` that `row` has no value for: each is left as written when
    rendered.

    >>> missing(["city", "town", "a.b"], {"city": 1, "a": {}})
    ['town', 'a.b']
    """
    return [key for key in keys if _lookup(row, key) is MISSING]


def placeholder_span(text: str, key: str) -> tuple[int, int] | None:
    """Where the first placeholder naming `key` is in `text` (its start and end), if any.

    >>> placeholder_span("in {{ city }} or {{city}}", "city")
    (3, 13)
    """
    for m in _PLACEHOLDER.finditer(text):
        if m.group(1) == key:
            return m.span()
    return None


def row_label(row: dict[str, Any]) -> str:
    """How a row names its case: `k=v, k2=v2` (non-text values as JSON)."""
    return ", ".join(f"{k}={v if isinstance(v, str) else js_text(v)}" for k, v in row.items())
