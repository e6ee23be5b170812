"""The judge's cache: content-addressed verdict files, traceplay's key and format.

Takes a question (answer, rubric, model, endpoint) and gives its cache key, and reads and
writes the verdict files of a cache folder (`<key>.json`). traceplay's files are read too.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from evaldsl.judge.config import DEFAULT_BASE_URL, DEFAULT_MODEL
from evaldsl.judge.reply import BadReply, JudgeReply, decode_verdict, reply_from_object
from evaldsl.language.limits import MAX_JUDGE_CACHE_BYTES
from evaldsl.language.reading import FileProblem, read_regular
from evaldsl.runs.model import strip_bom

if TYPE_CHECKING:
    import logging


def judge_log() -> logging.Logger:
    """The judge's logger, `evaldsl.judge` (`logging` is loaded when there is something to
    log: `check`, and runs whose judge has nothing to say, never load it)."""
    import logging

    return logging.getLogger("evaldsl.judge")


_SURROGATE = re.compile("[\ud800-\udfff]")


def cache_key(
    answer: str, rubric: str, model: str = DEFAULT_MODEL, api_base: str = DEFAULT_BASE_URL
) -> str:
    """traceplay's cache key: SHA-256 of `JSON.stringify({answer, rubric, model, apiBase})`.

    Compact JSON, keys in that order, non-ASCII kept, hashed as UTF-8. A lone surrogate
    (which UTF-8 cannot carry) is written `\\udXXX`, as JavaScript writes it.

    >>> cache_key("Xiamen is sunny, 31C.", "mentions weather")
    '23bfe9152918833134ecb9268a2dabee3678ea8380dd2f818006852e89c52e42'
    """
    fields = {"answer": answer, "rubric": rubric, "model": model, "apiBase": api_base}
    if any(_SURROGATE.search(v) for v in fields.values()):
        # JavaScript strings are UTF-16: a surrogate pair is one character there.
        fields = {
            k: v.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "surrogatepass")
            for k, v in fields.items()
        }
    text = json.dumps(fields, separators=(",", ":"), ensure_ascii=False)
    text = _SURROGATE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def read_cache(path: str | os.PathLike[str]) -> JudgeReply | None:
    """A cached verdict, or None when the file is missing, unreadable or not a verdict
    (`cached_verdict` says why)."""
    found = cached_verdict(path)
    return found if isinstance(found, JudgeReply) else None


def cached_verdict(path: str | os.PathLike[str]) -> JudgeReply | str | None:
    """A cached verdict (its `file` set), None when there is no file, or why the file
    there was refused.

    Reads evaldsl's files and traceplay's (`{"passed": true, "reason": "…"}`, no score).
    A file without a boolean `passed` (traceplay cached `{}` for error replies) is refused,
    and so is anything but a regular file of at most `MAX_JUDGE_CACHE_BYTES` (a folder, a
    pipe or a device there is refused at once, never read or waited on).
    """
    try:
        # (a BOM, which an editor on Windows adds, is allowed, as in suites and price tables)
        text = strip_bom(read_regular(path, MAX_JUDGE_CACHE_BYTES)).decode("utf-8")
        value = decode_verdict(text)
        reply = reply_from_object(value, text, "the file")
    except FileProblem as why:
        if why.kind == "missing":
            return None
        refused = str(why)
    except UnicodeDecodeError:
        refused = "the file is not UTF-8 text"
    except (ValueError, RecursionError) as why:  # BadReply too
        refused = str(why) if isinstance(why, BadReply) else f"the file is not JSON ({why})"
    except OSError as why:
        refused = f"the file cannot be read ({why.strerror or why})"
    else:
        answered = value.get("answered_by")  # (a dict: `reply_from_object` said so)
        model = answered if isinstance(answered, str) and answered else None
        return attrs.evolve(reply, file=str(path), model=model)
    judge_log().warning("ignoring judge cache file %s: %s", path, refused)
    return refused


def write_cache(path: str | os.PathLike[str], record: Mapping[str, Any]) -> None:
    """Write a cache file atomically: a temporary file in the same folder, then `os.replace`.

    Readers see the old file or the new one, never a part of either, and two writers of
    the same key (threads or processes) leave one whole file.
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        data = json.dumps(record, ensure_ascii=False, indent=2).encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate: keep it, escaped
        data = json.dumps(record, ensure_ascii=True, indent=2).encode("ascii")
    import tempfile  # (here: with shutil, bz2 and lzma ~4 ms, and only writing needs it)

    fd, temp = tempfile.mkstemp(prefix=f".{target.stem}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as file:
            file.write(data + b"\n")
            file.flush()
            os.fsync(file.fileno())
        os.chmod(temp, 0o644)  # mkstemp makes 0600; a cache is meant to be shared
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
