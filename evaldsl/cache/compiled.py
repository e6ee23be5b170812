"""Compiled code kept between starts, as Python keeps a module's bytecode in `__pycache__`.

Takes the Python source evaldsl has generated the same way at every start — the methods
attrs writes for each of evaldsl's record classes (`__init__`, `__eq__`, `__hash__`,
`__repr__`), the `__init__`s of `language/slotinit.py` — and gives its code object:
compiled once, then loaded from the user's private cache folder (`cache/folder.py`) at the
next start. Compiling those methods for the ~90 classes a `run` imports was ~15 ms of a
~75 ms import; loading them all is under 1 ms.

- An entry is keyed by the exact source text and file name, so a hit is the code
  `compile` would give. One file per interpreter (`sys.version`): code objects do not
  travel between Python versions.
- attrs' `__hash__` hashes a salt of its own with the fields, `hash()` of the class's name,
  which differs between processes (string hashing is randomised). The salt is left out
  of the key: a cached `__hash__` keeps the salt of the process that compiled it, which is
  as good (a constant per class; equal records still hash alike, and no hash is ever the
  same in two processes anyway).
- The generated index passes (`runs/codegen.py`) too, keyed alike: at most
  `PASSES_MAX` compiled into it a process (the cache holds what it keeps until exit; the
  rest are compiled as before), and the file keeps only those the process that writes it
  used (one suite's, where the others' would pile up).
- Only evaldsl's own classes, and attrs' (its validators, made as it loads): the methods
  attrs generates for any other module's classes (a user's) go to `compile` as before.
- Written at exit when something was compiled that the file did not hold and the process
  made evaldsl's classes (pytest imports evaldsl wherever it is installed, for its
  plugin: a test run that never uses it writes nothing), atomically; not when Python
  writes no bytecode (`PYTHONDONTWRITEBYTECODE`, `-B`); at most `LIMIT` entries (past
  it, only this process's are kept). Forked workers leave by `os._exit`
  and write nothing. A file that is missing, damaged, not private or made by another
  Python is ignored, never an error.

attrs compiles through the module-level name `compile` of `attr._make`; `install` puts
`compile_for_attrs` there: before that module's code runs when attrs is imported later (a
`sys.meta_path` finder that finds nothing itself wraps its loader), at once when it
already is. So `evaldsl --version`, which needs no attrs, still does not import it.
Should attrs stop compiling that way, the hook is simply never called and every start
compiles as before (`tests/test_codecache.py` then fails: the second start would
compile).
"""

from __future__ import annotations

import atexit
import builtins
import marshal
import re
import sys
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

from evaldsl.cache.folder import cache_dir, read_private, write_private

#: Bump when the file's layout changes.
FORMAT = 1
#: Entries kept in the file at most (evaldsl has ~150 classes; the rest is headroom).
LIMIT = 2048
#: Generated passes a process compiles into the cache at most.
PASSES_MAX = 32

#: attrs' salt in a generated `__hash__`: the number on the line after `return hash((`.
_HASHING = "return hash((\n"
_SALT = re.compile(r"[ \t]*(-?\d+),")

_compile = builtins.compile


class CodeCache:
    """The code of one cache file (the user's, `cache_path()`, when `path` is None): read
    on first use; compiled entries added; written at exit when it gained any.

    An entry is a code object (`code`), or any other value `marshal` writes that someone
    compiled and keeps under a key of their own (`stored`, `store`: the regexes of
    `cache/regexes.py`)."""

    def __init__(self, path: Path | None = None, limit: int = LIMIT) -> None:
        self.path = path
        self.limit = limit
        self.known: dict[str, Any] | None = None
        self.used: dict[str, Any] = {}
        self.compiled = 0  # entries this process compiled (the file did not hold them)
        self.passes = 0  # generated passes among them (`PASSES_MAX`)
        self.saving = False

    def load(self) -> dict[str, Any]:
        """The file's entries (none when it is missing, damaged, shared or another
        Python's)."""
        if self.path is None:
            self.path = cache_path()
        data = read_private(self.path)
        if data is not None:
            try:
                body = marshal.loads(data)
            except (ValueError, EOFError, TypeError):
                return {}
            if (
                isinstance(body, tuple)
                and len(body) == 3
                and body[0] == FORMAT
                and body[1] == sys.version
                and isinstance(body[2], dict)
            ):
                return body[2]
        return {}

    def code(self, key: str, source: str, filename: str) -> CodeType:
        """The code kept under `key`, else `source` compiled (and kept, but for a
        generated pass past `PASSES_MAX`)."""
        code = self.stored(key)
        if type(code) is not CodeType:
            code = _compile(source, filename, "exec")
            if _is_pass(key):
                if self.passes >= PASSES_MAX:
                    return code
                self.passes += 1
            self.store(key, code)
        return code

    def stored(self, key: str) -> Any:
        """The value kept under `key` (noted as used), else `None`."""
        known = self.known
        if known is None:
            known = self.known = self.load()
        value = known.get(key)
        if value is not None:
            self.used[key] = value
        return value

    def store(self, key: str, value: Any) -> None:
        """Keep `value` (compiled by this process) under `key`, to be written at exit."""
        if self.known is None:
            self.known = self.load()
        self.known[key] = self.used[key] = value
        self.compiled += 1
        if not self.saving and not sys.flags.dont_write_bytecode:
            self.saving = True
            atexit.register(self.save)

    def save(self) -> None:
        """Write the entries (only this process's when there are more than `limit`), if
        this process made any of evaldsl's classes: a process that imported evaldsl
        without using it (pytest loads the plugin's module wherever evaldsl is installed)
        writes nothing, though attrs' own classes went through the cache."""
        if self.path is None or self.known is None:
            return
        if not any(_evaldsl_made(key.partition("\0")[0]) for key in self.used):
            return  # (a key starts with its file name)
        entries = self.known if len(self.known) <= self.limit else self.used
        # (generated passes, one a shape of needs and tens of kB each, only this
        # process's: the file, read whole at every start, keeps one suite's passes)
        entries = {k: v for k, v in entries.items() if k in self.used or not _is_pass(k)}
        write_private(self.path, marshal.dumps((FORMAT, sys.version, entries)))


#: The file name of the generated index passes' code (`runs/codegen.py`).
GENERATED_PASS = "<evaldsl generated pass>"


def _is_pass(key: str) -> bool:
    """Whether an entry is a generated pass's code."""
    return key.startswith(GENERATED_PASS + "\0")


def cache_path() -> Path:
    """The user's cache file of this interpreter's code."""
    return cache_dir() / f"code-{sys.implementation.cache_tag or 'python'}.marshal"


_cache = CodeCache()


def compile_cached(source: str, filename: str) -> CodeType:
    """The code of `source` (a module's worth of definitions, for `exec`), from the cache
    when an earlier start compiled the same text under the same name."""
    return _cache.code(f"{filename}\0{source}", source, filename)


def stored(key: str) -> Any:
    """The value kept under `key` in the user's cache file (`None` when it holds none)."""
    return _cache.stored(key)


def store(key: str, value: Any) -> None:
    """Keep `value` under `key` in the user's cache file (written at exit, as code is)."""
    _cache.store(key, value)


def compiled_this_process() -> int:
    """How many entries this process compiled because the cache did not hold them."""
    return _cache.compiled


def _evaldsl_made(filename: str) -> bool:
    """Whether generated code of this file name is for one of evaldsl's classes (attrs
    names it `<attrs generated methods evaldsl.….Class>`; slotinit, `<evaldsl slot init
    evaldsl.….Class>`)."""
    return " evaldsl." in filename


def compile_for_attrs(source: Any, filename: Any, mode: Any, *args: Any, **kwargs: Any) -> Any:
    """`compile` as attrs calls it: the methods of evaldsl's classes (and of attrs' own,
    its validators') from the cache, anything else compiled as always."""
    if (
        args
        or kwargs
        or mode != "exec"
        or type(source) is not str
        or type(filename) is not str
        or not filename.startswith("<attrs generated ")
        or not (_evaldsl_made(filename) or " attr." in filename)
    ):
        return _compile(source, filename, mode, *args, **kwargs)
    return _cache.code(f"{filename}\0{_unsalted(source)}", source, filename)


def _unsalted(source: str) -> str:
    """`source` with the salt of its `__hash__` (if any) written `#salt`: the text found
    by a plain search, then the number matched there (a regex searching the whole text of
    each class's methods was ~3 M instructions of a start)."""
    head, hashing, rest = source.partition(_HASHING)
    salt = _SALT.match(rest) if hashing else None
    if salt is None:
        return source
    return f"{head}{hashing}{rest[: salt.start(1)]}#salt{rest[salt.end(1) :]}"


def _hook(make: ModuleType) -> None:
    make.compile = compile_for_attrs  # type: ignore[attr-defined]


class _BeforeAttrs:
    """A finder (`sys.meta_path`) that finds nothing itself: when `attr._make` is
    imported, it asks the finders after it and has the loader they give put the hook into
    the module before its code runs, so attrs' own classes (made as it loads) use it too."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname != "attr._make":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            spec = find(fullname, path, target) if find is not None else None
            if spec is not None:
                break
        else:
            return None
        loader = spec.loader
        run = getattr(loader, "exec_module", None)
        if run is None:
            return spec

        def exec_module(module: ModuleType) -> None:
            _hook(module)  # a module-level name: attrs' functions look `compile` up there
            run(module)

        loader.exec_module = exec_module
        return spec


def install() -> None:
    """Have attrs compile evaldsl's classes' methods through the cache: now when attrs is
    loaded, else as soon as it is."""
    make = sys.modules.get("attr._make")
    if make is not None:
        _hook(make)
    elif not any(isinstance(f, _BeforeAttrs) for f in sys.meta_path):
        sys.meta_path.insert(0, _BeforeAttrs())
