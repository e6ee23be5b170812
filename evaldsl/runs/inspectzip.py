"""Inspect AI logs in Inspect's own `.eval` format: a ZIP archive of JSON entries.

Inspect AI writes its logs as `.eval` files by default (JSON logs are the other format it
can write, and what `inspect log convert --to json` makes). Takes the path of a file that
starts as a ZIP archive (`reading.starts_as_zip`) and gives the
`Items` of the log it holds (`read_eval_zip`): one document, as a JSON log holds it, made
of the log's header and its samples:

- the header: `header.json` (written when the eval ends: `version`, `status`, `eval`,
  `plan`, `results`, `stats`, `error`); for an eval still running or killed, the journal's
  `_journal/start.json` (`version`, `eval`, `plan`) with the status `started`; for the
  first version of the format, `start.json` and `results.json`;
- the samples: every `samples/*.json` entry, one `EvalSample` each, ordered by epoch and
  then by id (numbers by value, before texts: `inspect_ai.sample_order`, the order of a
  JSON log's samples too), so a suite's cases come in one order whatever order the
  samples were written in.

The `inspect_ai` adapter reads the document as it reads a JSON log, and a suite makes a
case of each sample.

Bounded and failing closed: the archive is read as any file read whole (a regular file of
at most `MAX_DOCUMENT_BYTES`); its entries, decompressed, come to at most that too, read
by pieces whatever sizes the archive claims (a ZIP bomb stops at the bound); an archive
that is not one, is damaged or encrypted, or compresses with a method Python does not
read (Deflate64, which early Inspect versions wrote), a header missing, or an entry that
is not a JSON object, is a `RunError` naming the file and the entry, with a way out.
"""

from __future__ import annotations

import io
import re
import zipfile
import zlib
from typing import Any

import orjson

from evaldsl.language.limits import MAX_DOCUMENT_BYTES
from evaldsl.language.reading import size_text
from evaldsl.runs.inspect_ai import sample_order
from evaldsl.runs.model import RunError, describe, read_bytes
from evaldsl.runs.providers import Items
from evaldsl.runs.surrogates import mended_loads

#: What to do with a log this module cannot read.
_CONVERT = "convert it with `inspect log convert --to json` and name the JSON log"
_SAMPLE = re.compile(r"samples/[^/]+\.json")
_PIECE = 1 << 20


def read_eval_zip(path: str) -> Items:
    """The log an Inspect AI `.eval` archive holds, as the items of one JSON document."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(read_bytes(path)))
    except (zipfile.BadZipFile, zlib.error, NotImplementedError, RuntimeError, ValueError):
        raise RunError(
            "not a readable ZIP archive (an Inspect AI `.eval` log is one)",
            path=path,
            hint=_CONVERT,
        ) from None
    with archive:
        entries = _Entries(archive, path)
        header = entries.header()
        samples = [entries.read(name) for name in archive.namelist() if _SAMPLE.fullmatch(name)]
    samples.sort(key=sample_order)
    return Items(path, [{**header, "samples": samples}], "document")


class _Entries:
    """An archive's JSON entries, read within one budget of decompressed bytes."""

    def __init__(self, archive: zipfile.ZipFile, path: str) -> None:
        self.archive, self.path = archive, path
        self.names = set(archive.namelist())
        self.budget = MAX_DOCUMENT_BYTES

    def header(self) -> dict[str, Any]:
        """The log without its samples (see the module doc)."""
        if "header.json" in self.names:
            return self.read("header.json")
        if "_journal/start.json" in self.names:  # the eval did not finish
            return {"status": "started", **self.read("_journal/start.json")}
        if "start.json" in self.names:  # the format's first version
            found = self.read("start.json")
            if "results.json" in self.names:
                found.update(self.read("results.json"))
            return found
        raise RunError(
            "this ZIP archive is not an Inspect AI log: it holds no `header.json` (nor the "
            "`_journal/start.json` of an eval still running)",
            path=self.path,
            hint="an Inspect AI `.eval` log holds its header and `samples/…` entries; " + _CONVERT,
        )

    def read(self, name: str) -> dict[str, Any]:
        """Entry `name`, a JSON object (decompressed within the budget)."""
        where = f"entry `{name}`"
        parts: list[bytes] = []
        try:
            with self.archive.open(name) as f:
                while True:
                    part = f.read(min(_PIECE, self.budget + 1))
                    if not part:
                        break
                    parts.append(part)
                    self.budget -= len(part)
                    if self.budget < 0:
                        raise RunError(
                            f"{where}: the archive holds more than "
                            f"{size_text(MAX_DOCUMENT_BYTES)} once decompressed",
                            path=self.path,
                            hint="an Inspect AI log is read whole, within the bound of "
                            "any file read whole: split the eval into logs of fewer samples",
                        )
        except (zipfile.BadZipFile, zlib.error, EOFError, OSError, ValueError) as err:
            # (ValueError: a seek before the start, from a central directory's bad offsets)
            raise RunError(f"{where}: damaged ({err})", path=self.path, hint=_CONVERT) from None
        except NotImplementedError:  # (Deflate64, which early Inspect versions wrote)
            raise RunError(
                f"{where}: compressed with a method Python cannot read",
                path=self.path,
                hint=_CONVERT,
            ) from None
        except RuntimeError:  # (an encrypted entry)
            raise RunError(f"{where}: encrypted", path=self.path, hint=_CONVERT) from None
        try:
            value = mended_loads(b"".join(parts))
        except orjson.JSONDecodeError as err:
            raise RunError(f"{where}: invalid JSON: {err}", path=self.path) from None
        if not isinstance(value, dict):
            raise RunError(f"{where} is {describe(value)}, not a JSON object", path=self.path)
        return value
