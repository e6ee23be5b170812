"""Regexes compiled once and then loaded, as `compiled.py` keeps attrs' methods.

Takes a pattern and its flags and gives `re.compile(pattern, flags)`. Python's `re`
compiles a pattern in Python code (parse, then code generation) and keeps the result for
the process only; the parser's lexer (`syntax/drive.py`) compiles one large pattern per
parser state it meets, ~28 for a typical file: ~9 ms of every `check` and `run`; and
the modules a `run` imports compile ~30 patterns of their own as they load (text and
bytes). Here the code the compiler made is kept in the user's cache file
(`compiled.store`) and, at the next start, handed to the regex engine as the compiler
itself hands it over (a few microseconds a pattern).

- The key is the exact pattern (text or bytes, keyed apart), the flags as a number
  (`re.M` and `8` alike) and the engine's `MAGIC`; the file is one per interpreter
  (`sys.version`), so the code always comes from this engine's compiler.
- The engine checks the code it is given (`_sre` refuses invalid code with an error), the
  entry's CRC-32 that the code is what was kept, and a pattern loaded here compares equal
  to `re.compile`'s (the engine compares the pattern, the flags and every word of the
  code): `tests/test_regexcache.py` asserts it.
- Only what CPython's `re` provides: the compiler's `_parser.parse`, `_compiler._code` and
  `_sre.compile` (Python 3.11 to 3.13). Where any of them is missing or fails, or the entry
  is damaged, the pattern is compiled by `re.compile` as always: a cache is never an error.
- Written when Python writes bytecode, with the code cache (`compiled.py`).
"""

from __future__ import annotations

import array
import binascii
import re
from typing import Any, overload

from evaldsl.cache import compiled

try:  # CPython's own regex compiler and engine (see the module doc)
    import _sre  # type: ignore[import-not-found]
    from re import _compiler, _parser  # type: ignore[attr-defined]

    _ENGINE: Any = _sre
    _MAKE: Any = _compiler._code
    _PARSE: Any = _parser.parse
    _MAGIC = str(_sre.MAGIC)
except (ImportError, AttributeError):  # another Python: `re.compile` every time
    _ENGINE = _MAKE = _PARSE = None
    _MAGIC = ""

#: A code word's array type: the engine's code words are unsigned 32-bit numbers.
_WORD = "I" if array.array("I").itemsize == 4 else "L"


#: Flags `re.compile` handles itself (it prints the code of a `DEBUG` pattern): such a
#: pattern is compiled there every time.
_OWN = re.DEBUG

#: What is kept of a compiled pattern: its flags (the inline ones too), its code words (as
#: bytes) and their CRC-32 (a word changed on disk could still be valid code, for another
#: pattern), the number of groups, the group names to numbers and numbers to names.
Entry = tuple[int, bytes, int, int, dict[str, int], tuple[str | None, ...]]


@overload
def regex(pattern: str, flags: int = 0) -> re.Pattern[str]: ...
@overload
def regex(pattern: bytes, flags: int = 0) -> re.Pattern[bytes]: ...


def regex(pattern: Any, flags: int = 0) -> Any:
    """`re.compile(pattern, flags)` for a text or bytes pattern, its compiled code kept
    between starts (see the module doc). The flags may be `re`'s own (`re.M | re.S`: an
    `int` subclass), kept as the number they are."""
    kind = type(pattern)
    if _ENGINE is None or (kind is not str and kind is not bytes) or not isinstance(flags, int):
        return re.compile(pattern, flags)
    flags = int(flags)
    if flags & _OWN:
        return re.compile(pattern, flags)
    # (a bytes pattern's key spells each byte as the code point of the same number)
    if kind is str:
        key = f"re\0{_MAGIC}\0{flags}\0{pattern}"
    else:
        key = f"rb\0{_MAGIC}\0{flags}\0{pattern.decode('latin-1')}"
    entry = compiled.stored(key)
    if entry is not None:
        try:
            return _made(pattern, entry)
        except Exception:  # a damaged entry: compiled anew below, and kept again
            pass
    try:
        entry = _compiled(pattern, flags)
    except Exception:  # a bad pattern (`re.compile` raises its own error, in its words),
        return re.compile(pattern, flags)  # or internals this module does not know
    made = _made(pattern, entry)
    compiled.store(key, entry)
    return made


def _compiled(pattern: str | bytes, flags: int) -> Entry:
    """What `re`'s compiler makes of `pattern`, as its own `compile` hands it over."""
    parsed = _PARSE(pattern, flags)
    code = _MAKE(parsed, flags)
    state = parsed.state
    groupindex = dict(state.groupdict)
    indexgroup: list[str | None] = [None] * state.groups
    for name, i in groupindex.items():
        indexgroup[i] = name
    words = array.array(_WORD, code).tobytes()
    crc = binascii.crc32(words)
    return (flags | state.flags, words, crc, state.groups - 1, groupindex, tuple(indexgroup))


def _made(pattern: Any, entry: Entry) -> Any:
    """The engine's pattern of a kept entry (the engine checks the code is valid code,
    the CRC that it is the code that was kept); `ValueError` when either is not."""
    flags_all, words, crc, groups, groupindex, indexgroup = entry
    if binascii.crc32(words) != crc:
        raise ValueError("the code changed since it was kept")
    code = array.array(_WORD, words).tolist()
    return _ENGINE.compile(pattern, flags_all, code, groups, groupindex, indexgroup)
