"""Where `evaldsl score` finds its traces: files, folders, globs and standard input.

Takes the TRACES arguments of the command and gives a lazy stream of `Item`s, each a trace
to score: a file path, or one line of standard input (`-`) with its line number. Nothing is
listed ahead: a folder of millions of files is walked as it is read, so memory does not grow
with the number of traces.

- a file is a trace, whatever its name;
- a folder is walked recursively for files ending in `TRACE_EXTENSIONS` and for Inspect
  AI `.eval` logs (ZIP archives: an evaldsl suite of that extension is no trace), skipping
  hidden files and folders; entries come in the file system's own order (like `find`), not
  sorted, since sorting a folder of millions of names means holding them all;
- an argument with `*`, `?` or `[` is a glob (`**` crosses folders; quote it so the shell
  leaves it alone): each match that is a file is a trace, each folder is walked;
- `-` is standard input: one trace per non-blank line (see `scoring.run_from_line`).

>>> [i.key for i in items(["tests/fixtures/traceplay/streaming/cassette.streaming.jsonl"])]
['tests/fixtures/traceplay/streaming/cassette.streaming.jsonl']
"""

from __future__ import annotations

import glob
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from typing import BinaryIO, NamedTuple

from evaldsl.language.reading import present, starts_as_zip

#: The file names a folder walk takes as traces (a file named on the command line is
#: always read, whatever its name): JSON, JSON lines, and server-sent events (a recorded
#: OpenAI or Anthropic stream, which `evaldsl.load_run` reads as it reads a named file).
TRACE_EXTENSIONS = (".json", ".jsonl", ".ndjson", ".sse")

STDIN = "-"
GLOB_CHARACTERS = frozenset("*?[")


class Item(NamedTuple):
    """One trace to score: `key` names it in the output (a path, or `<stdin>:LINE`).

    `line` holds the raw bytes of a standard-input line (and `lineno` its number); a file
    has `line=None` and is read where it is scored. `problem` is why a path named by a
    folder walk cannot be read at all (an unreadable folder).
    """

    key: str
    line: bytes | None = None
    lineno: int = 0
    problem: str | None = None


def is_glob(argument: str) -> bool:
    """Whether an argument is a pattern rather than a path."""
    return any(ch in GLOB_CHARACTERS for ch in argument)


def missing_paths(arguments: Sequence[str]) -> list[str]:
    """The arguments that are neither `-`, a glob, nor an existing file or folder."""
    return [a for a in arguments if a != STDIN and not is_glob(a) and not present(a)]


def items(arguments: Iterable[str], stdin: BinaryIO | None = None) -> Iterator[Item]:
    """Every trace the arguments name, in argument order, read lazily.

    A glob that matches nothing yields nothing (the caller counts traces and says so
    when there are none at all).
    """
    named = _Named()
    for argument in arguments:
        if argument == STDIN:
            yield from stdin_items(stdin if stdin is not None else sys.stdin.buffer)
        elif is_glob(argument):
            for match in glob.iglob(argument, recursive=True):
                yield from named.new(match)
        else:
            yield from named.new(argument)


class _Named:
    """The paths named so far, so that a trace named twice (`score P runs runs`, a file and
    its folder, overlapping globs) is scored once, where first named: the files named one
    by one and the folders walked are kept, not every file a walk gives."""

    def __init__(self) -> None:
        self.files: set[str] = set()
        self.folders: list[str] = []

    def new(self, path: str) -> Iterator[Item]:
        real = os.path.realpath(path)
        if real in self.files or any(_within(real, f) for f in self.folders):
            return
        if not os.path.isdir(path):
            self.files.add(real)
            yield Item(path)
            return
        self.folders.append(real)
        for item in walk(path):
            if not self.files or os.path.realpath(item.key) not in self.files:
                yield item


def _within(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip(os.sep) + os.sep)


def walk(folder: str) -> Iterator[Item]:
    """Trace files under `folder`, depth first, hidden entries skipped, without a listing
    held in memory beyond the folders still to visit."""
    stack = [folder]
    while stack:
        current = stack.pop()
        try:
            entries = os.scandir(current)
        except OSError as err:
            # An unreadable folder is in the output with its reason, never silently missing.
            reason = err.strerror or type(err).__name__
            yield Item(current, problem=f'cannot read folder "{current}": {reason}')
            continue
        with entries:
            subfolders = []
            for entry in entries:
                if entry.name.startswith("."):
                    continue
                if entry.is_dir(follow_symlinks=False):
                    subfolders.append(entry.path)
                elif entry.name.lower().endswith(TRACE_EXTENSIONS) or (
                    entry.name.lower().endswith(".eval") and starts_as_zip(entry.path)
                ):  # (an Inspect AI log; an evaldsl suite is no trace)
                    yield Item(entry.path)
        stack.extend(reversed(subfolders))


def stdin_items(stream: BinaryIO) -> Iterator[Item]:
    """One item per non-blank line of a byte stream, keyed `<stdin>:LINE`."""
    for lineno, line in enumerate(stream, 1):
        if line.strip():
            yield Item(f"<stdin>:{lineno}", line, lineno)
