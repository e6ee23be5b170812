"""Integers past 64 bits in JSON text, read exactly.

Takes JSON text (bytes or str) that orjson decoded, with the value it gave, and gives that
value, or the value with every integer exact when the text may hold one that orjson read as
the nearest double: orjson gives integers from -2**63 to 2**64 - 1 exactly and any other
as a float (`18446744073709551617` as `1.8446744073709552e+19`), which then compares as
another number (`== 1.8446744073709552e19` would pass, `> 2**64` fail) and is shown as
another. Such an integer has 19 digits or more, and in JSON a number never follows a
quote (`"a"1` is not JSON); text without a run of 19 digits that does not follow one
(nearly all: OTLP writes its 19-digit times as strings, `"1700000000000000000"`) is
given as orjson read it, and text with one is decoded again by msgspec, whose integers
are exact and which reads everything else as orjson does (orjson decoded it first: a
text it refuses is refused as before). `loads` is both steps for bytes.
"""

from __future__ import annotations

from typing import IO, Any

import orjson

#: Digits of the shortest integer orjson does not give exactly (-9223372036854775809).
LONG = 19
#: Each byte a digit "0", a quote a "q", any other a space: a run of `LONG` digits is then
#: `_RUN`, and one that follows a quote `_QUOTED` too.
_DIGITS = bytes(48 if 48 <= b <= 57 else 113 if b == 34 else 32 for b in range(256))
_RUN = b"0" * LONG
_QUOTED = b"q" + _RUN
_BLOCK = 1 << 20


def may_round(text: bytes | memoryview | str) -> bool:
    """Whether JSON text holds a run of `LONG` digits that does not follow a quote (in a
    number, or in a string: then it is decoded again for nothing, and gives the same
    value), or one of twice `LONG` that does (`_unquoted_run`). OTLP writes its 19-digit
    times in strings: each line of an OTLP file was decoded twice (the 50 lines detection
    reads of speed.py's 2,000-export file: ~5 M instructions of a check).

    >>> may_round(b'{"n": 18446744073709551617}'), may_round('{"n": 42}')
    (True, False)
    >>> may_round(b'{"t": "1700000000000000000"}'), may_round(b"-9223372036854775809")
    (False, True)
    """
    if isinstance(text, str):  # (encoded and looked through: ~10x a regex's speed)
        text = text.encode("utf-8", "surrogatepass")
    elif isinstance(text, memoryview):
        text = bytes(text)
    # (counted, not looked for by `in`: `in` tries the text as an integer first, a byte's
    # value, and clears the error it makes: ~2,000 instructions a call)
    return _unquoted_run(text.translate(_DIGITS))


def _unquoted_run(marked: bytes) -> bool:
    """Whether text marked by `_DIGITS` holds a run of `LONG` digits that does not follow
    a quote, or one of twice `LONG` that does (counted without overlaps, each run that
    follows a quote is one `_RUN` and one `_QUOTED`). Two counts, each of which skips
    most of the text (a search for a mark before a run, where every byte not a digit is
    one, looked at every byte: ~10 M instructions of a span file's check)."""
    return marked.count(_RUN) > marked.count(_QUOTED)


def file_may_round(f: IO[bytes]) -> bool:
    """Whether an open file holds a run of `LONG` digits from where it is (read a block at
    a time, at C speed; it is left where it was): a file whose lines are decoded by
    `orjson.loads` alone at C speed needs `loads` only then.

    >>> import io
    >>> file_may_round(io.BytesIO(b'{"a": 1}\\n{"n": 12345678901234567890}\\n'))
    True
    """
    start = f.tell()
    tail = b""
    try:
        while block := f.read(_BLOCK):
            joined = tail + block
            marked = joined.translate(_DIGITS)
            if _unquoted_run(marked):
                return True
            # (a run shorter than `LONG` at its end, with what it follows, is read again
            # with the next block; a longer one was counted, and what continues it is a
            # run of its own only past twice `LONG`)
            digits = len(marked) - len(marked.rstrip(b"0"))
            tail = joined[-(digits + 1) :] if digits < LONG else b""
        return False
    finally:
        f.seek(start)


def exact(text: bytes | memoryview | str, value: Any) -> Any:
    """`value`, orjson's reading of `text`, with its integers exact (see the module).

    >>> exact(b"[18446744073709551617, 1.5]", orjson.loads(b"[18446744073709551617, 1.5]"))
    [18446744073709551617, 1.5]
    """
    if not may_round(text):
        return value
    import msgspec  # (imported on first use: most runs never read such text)

    try:
        return msgspec.json.decode(text)
    except (msgspec.DecodeError, RecursionError):  # (a depth orjson takes): orjson's reading
        return value


def loads(data: bytes | memoryview) -> Any:
    """`orjson.loads(data)` (its errors too), integers exact.

    >>> loads(b'{"id": -9223372036854775809}')
    {'id': -9223372036854775809}
    """
    return exact(data, orjson.loads(data))
