"""The Lark parser, built once: its tables serialised as JSON, and loaded from there.

Takes the grammar text and gives a Lark LALR parser without building it: building the
tables costs ~60 ms at every start, loading them ~10 ms. The tables are looked for in
order
1. in `grammar/evaldsl.parser.json`, shipped inside the wheel beside the grammar
   (`make tables` writes it; a test fails when it is stale);
2. in the user's cache folder (`$XDG_CACHE_HOME/evaldsl`, else `~/.cache/evaldsl`),
   written there the first time the shipped file does not fit (an edited grammar, another
   Lark release);
and each is used only when it was made for the grammar in use: a file carries the text
its tables depend on (the grammar, the Lark version and the parser options), compared
as text, and that text's SHA-256 (its key, which names a cache file). Otherwise the
parser is built.

Why JSON and not Lark's own `cache=True`: that writes a pickle into the shared temporary
folder and loads it before checking it, so on a multi-user host anyone could put code
there that every evaldsl run would execute. JSON can only ever be data; the cache folder
is made private (0700), and a file in it is read only when it belongs to this user and
nobody else may write it (`cache/folder.py`). A file that cannot be read, does not parse or
was made for another grammar is ignored (and replaced), never an error: the parser is
then built as before.
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evaldsl.cache.folder import cache_dir, read_private, write_private
from evaldsl.cache.regexes import regex

if TYPE_CHECKING:
    from lark import Lark

SHIPPED_NAME = "evaldsl.parser.json"
FORMAT = 1  # bump when the file's layout changes

#: Options of the parser that are not data: given again when the tables are loaded.
RUNTIME_OPTIONS = ("transformer", "postlex")


#: `__version__ = "1.3.1"` in Lark's `__init__.py` (annotated with `: str` or not).
_VERSION = regex(r"""^__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""", re.MULTILINE)


def lark_version() -> str:
    """The installed Lark's version: from the loaded module, else read from its
    `__init__.py` without importing it (importing Lark is a large part of a start that
    the fast loop's tables spare), else from importing it."""
    loaded = sys.modules.get("lark")
    if loaded is None:
        from importlib.util import find_spec

        with contextlib.suppress(Exception):
            spec = find_spec("lark")
            if spec is not None and spec.origin:
                with open(spec.origin, encoding="utf-8") as f:
                    found = _VERSION.search(f.read())
                if found is not None:
                    return found.group(1)
        import lark

        return str(lark.__version__)
    return str(loaded.__version__)


def key_text(grammar: str, options: dict[str, Any]) -> str:
    """What the tables depend on, as text: the file's format, the Lark version, the
    options and the grammar. A file is used only when it was made for exactly this text
    (compared as text: a start hashes nothing, and hashlib's import is ~2 ms of it)."""
    fixed = sorted((k, repr(v)) for k, v in options.items() if k not in RUNTIME_OPTIONS)
    # the post-lexer is given again at load, but the terminals it has every state's lexer
    # accept shape the lexers the fast loop's tables hold
    accepted = tuple(getattr(options.get("postlex"), "always_accept", ()))
    return f"{FORMAT}\n{lark_version()}\n{fixed!r}\n{accepted!r}\n{grammar}"


def digest(made_for: str) -> str:
    """The SHA-256 of a `key_text`: the key a file shows first, and the cache file's name."""
    import hashlib  # only to write tables or name a cache file: a start never does

    return hashlib.sha256(made_for.encode("utf-8")).hexdigest()


def stamp(made_for: str) -> dict[str, str]:
    """What a tables file says it was made for: the digest (its key, read first) and the
    `key_text` itself (what a start compares)."""
    return {"key": digest(made_for), "made_for": made_for}


def table_key(grammar: str, options: dict[str, Any]) -> str:
    """The key of the tables for the grammar text, the Lark version and the options."""
    return digest(key_text(grammar, options))


def _encode(value: Any) -> Any:
    """Lark's serialised form as JSON: dicts keyed by integers (parser states, the memo)
    are written as `{"#int": [[key, value], ...]}`, since JSON keys are text."""
    if isinstance(value, dict):
        if value and all(type(k) is int for k in value):
            return {"#int": [[k, _encode(v)] for k, v in value.items()]}
        return {str(k): _encode(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_encode(v) for v in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    raise TypeError(f"cannot serialise a {type(value).__name__} in the parser tables")


def _int_keys(obj: dict[str, Any]) -> Any:
    if len(obj) == 1 and "#int" in obj:
        return {k: v for k, v in obj["#int"]}
    return obj


def serialise(lark: Lark, made_for: str) -> str:
    """A built parser's tables as JSON text, stamped with what they were `made_for` (a
    `key_text`) and its digest."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = lark.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k not in RUNTIME_OPTIONS}
    body = {"format": FORMAT, **stamp(made_for), "data": _encode(data), "memo": _encode(memo)}
    return json.dumps(body, separators=(",", ":"))


def _load(text: str, made_for: str, runtime: dict[str, Any]) -> Lark | None:
    """The parser from JSON text, or None when the text is not the tables made for
    `made_for` (a `key_text`)."""
    from lark import Lark

    try:
        body = json.loads(text, object_hook=_int_keys)
        if not isinstance(body, dict) or body.get("made_for") != made_for:
            return None
        return Lark._load_from_dict(body["data"], body["memo"], **runtime)  # type: ignore[no-untyped-call,no-any-return]
    except Exception:  # a damaged file is ignored: the parser is built instead
        return None


def shipped_path() -> Path:
    """Where the shipped tables live: beside the grammar, in the source tree or the wheel."""
    here = Path(__file__).resolve().parents[2] / "grammar"
    if (here / "evaldsl.lark").is_file():
        return here / SHIPPED_NAME
    from importlib import resources  # an installed wheel only: the source tree has it

    return Path(str(resources.files("evaldsl.grammar").joinpath(SHIPPED_NAME)))


def shipped_key(path: Path | None = None) -> str | None:
    """The key the shipped tables (at `path`, else Lark's) were made for (None when there
    are none)."""
    try:
        with open(path or shipped_path(), encoding="utf-8") as f:
            head = f.read(200)
    except OSError:
        return None
    start = head.find('"key":"')
    return head[start + 7 : start + 71] if start >= 0 else None


def load_or_build(grammar: str, options: dict[str, Any], build: Callable[[], Lark]) -> Lark:
    """The parser for `grammar` with `options`: loaded from the shipped tables or the
    user's cache when they were made for it, else built by `build` (and cached)."""
    made_for = key_text(grammar, options)
    runtime = {k: options[k] for k in RUNTIME_OPTIONS if k in options}
    shipped = shipped_path()
    with contextlib.suppress(OSError, UnicodeDecodeError):
        found = _load(shipped.read_text(encoding="utf-8"), made_for, runtime)
        if found is not None:
            return found
    cached = cache_dir() / f"parser-{digest(made_for)[:32]}.json"
    data = read_private(cached)
    if data is not None:
        with contextlib.suppress(UnicodeDecodeError):
            found = _load(data.decode("utf-8"), made_for, runtime)
            if found is not None:
                return found
    built = build()
    write_private(cached, serialise(built, made_for).encode("utf-8"))
    return built
