"""Integers past 64 bits in JSON text, read exactly.

Takes JSON text (bytes or str) that orjson decoded, with the value it gave, and gives that
value, or the value with every integer exact when the text may hold one that orjson read as
the nearest double: orjson gives integers from -2**63 to 2**64 - 1 exactly and any other
as a float (`18446744073709551617` as `1.8446744073709552e+19`), which then compares as
another number (`== 1.8446744073709552e19` would pass, `> 2**64` fail) and is shown as
another. Such an integer has 19 digits or more; text without a run of 19 digits (nearly
all) is given as orjson read it, and text with one is decoded again by msgspec, whose
integers are exact and which reads everything else as orjson does (orjson decoded it
first: a text it refuses is refused as before). `loads` is both steps for bytes.
"""

from __future__ import annotations

from typing import IO, Any

import orjson

#: Digits of the shortest integer orjson does not give exactly (-9223372036854775809).
LONG = 19
#: Each byte a digit "0", any other a space: a run of `LONG` digits is then a substring.
_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_RUN = b"0" * LONG
_BLOCK = 1 << 20


def may_round(text: bytes | memoryview | str) -> bool:
    """Whether JSON text holds a run of `LONG` digits (in a number, or in a string: then
    it is decoded again for nothing, and gives the same value).

    >>> may_round(b'{"n": 18446744073709551617}'), may_round('{"n": 42}')
    (True, False)
    """
    if isinstance(text, str):  # (encoded and looked through: ~10x a regex's speed)
        text = text.encode("utf-8", "surrogatepass")
    elif isinstance(text, memoryview):
        text = bytes(text)
    # (`find`, not `in`: `in` tries the text as an integer first, a byte's value, and
    # clears the error it makes: ~2,000 instructions a call, most of a short text's test)
    return text.translate(_DIGITS).find(_RUN) >= 0


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
            if _RUN in (tail + block).translate(_DIGITS):
                return True
            tail = block[-(LONG - 1) :]  # (a run across two blocks)
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
