"""The Lark parser, built once: its tables serialised as JSON, and loaded from there.

Takes the grammar text and gives a Lark LALR parser without building it: building the
tables costs ~60 ms at every start, loading them ~10 ms. The tables are looked for in
order
1. in `grammar/evaldsl.parser.json`, shipped inside the wheel beside the grammar
   (`make tables` writes it; a test fails when it is stale);
2. in the user's cache folder (`$XDG_CACHE_HOME/evaldsl`, else `~/.cache/evaldsl`),
   written there the first time the shipped file does not fit (an edited grammar, another
   Lark release);
and each is used only when its key (a SHA-256 of the grammar text, the Lark version and
the parser options) is the key of the grammar in use. Otherwise the parser is built.

Why JSON and not Lark's own `cache=True`: that writes a pickle into the shared temporary
folder and loads it before checking it, so on a multi-user host anyone could put code
there that every evaldsl run would execute. JSON can only ever be data; the cache folder
is made private (0700), and a file in it is read only when it belongs to this user and
nobody else may write it. A file that cannot be read, does not parse or has the wrong key
is ignored (and replaced), never an error: the parser is then built as before.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import stat
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from lark import Lark

SHIPPED_NAME = "evaldsl.parser.json"
FORMAT = 1  # bump when the file's layout changes

#: Options of the parser that are not data: given again when the tables are loaded.
RUNTIME_OPTIONS = ("transformer", "postlex")


#: `__version__ = "1.3.1"` in Lark's `__init__.py` (annotated with `: str` or not).
_VERSION = re.compile(r"""^__version__\s*(?::\s*str\s*)?=\s*["']([^"']+)["']""", re.MULTILINE)


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


def table_key(grammar: str, options: dict[str, Any]) -> str:
    """What the tables depend on: the grammar text, the Lark version and the options."""
    fixed = sorted((k, repr(v)) for k, v in options.items() if k not in RUNTIME_OPTIONS)
    text = f"{FORMAT}\n{lark_version()}\n{fixed!r}\n{grammar}"
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


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


def serialise(lark: Lark, key: str) -> str:
    """A built parser's tables as JSON text, stamped with `key`."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = lark.memo_serialize([TerminalDef, Rule])
    data["options"] = {k: v for k, v in data["options"].items() if k not in RUNTIME_OPTIONS}
    body = {"format": FORMAT, "key": key, "data": _encode(data), "memo": _encode(memo)}
    return json.dumps(body, separators=(",", ":"))


def _load(text: str, key: str, runtime: dict[str, Any]) -> Lark | None:
    """The parser from JSON text, or None when the text is not the tables for `key`."""
    from lark import Lark

    try:
        body = json.loads(text, object_hook=_int_keys)
        if not isinstance(body, dict) or body.get("key") != key:
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


def cache_dir() -> Path:
    """The user's own cache folder for evaldsl."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "evaldsl"


def _private(path: Path) -> bool:
    """Owned by this user and writable by nobody else (on systems with owners)."""
    if not hasattr(os, "getuid"):
        return True
    try:
        info = path.stat()
    except OSError:
        return False
    return info.st_uid == os.getuid() and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)


def _read_cached(path: Path) -> str | None:
    if not (_private(path.parent) and _private(path)):
        return None
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _write_cached(path: Path, text: str) -> None:
    """Write the cache file atomically in a private folder; any failure is ignored."""
    with contextlib.suppress(OSError):
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        if not _private(path.parent):
            return
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".parser-", suffix=".tmp")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, path)
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)


def load_or_build(grammar: str, options: dict[str, Any], build: Callable[[], Lark]) -> Lark:
    """The parser for `grammar` with `options`: loaded from the shipped tables or the
    user's cache when their key fits, else built by `build` (and cached)."""
    key = table_key(grammar, options)
    runtime = {k: options[k] for k in RUNTIME_OPTIONS if k in options}
    shipped = shipped_path()
    with contextlib.suppress(OSError, UnicodeDecodeError):
        found = _load(shipped.read_text(encoding="utf-8"), key, runtime)
        if found is not None:
            return found
    cached = cache_dir() / f"parser-{key[:32]}.json"
    text = _read_cached(cached)
    if text is not None:
        found = _load(text, key, runtime)
        if found is not None:
            return found
    built = build()
    _write_cached(cached, serialise(built, key))
    return built
