"""A case's run read whole by its check, kept for its run in the same command.

Takes the run a case's check read from its recording (`keep`: the recording as named,
the file's identity taken before it was read, the run) and gives it to that case's run
(`take`), in place of reading the file again, when it was read into memory whole (a JSON
document, an OpenAI or Anthropic body, a file read whole: never a stream, which each
pass reads anew) from a file larger than `heldfiles.HOLD_BYTES` that has not changed
since, and read for at least what the run reads.

Why: a recording read whole was read twice by `evaldsl run`, once by its check (its
kind, its tool names, why it cannot be read) and once by its run: a 37 MB OTLP document
was decoded and made into events twice. Streamed recordings and large JSONL files were
already read from their head at check time (`detect.read_head`, `toolnames.py`); a
document cannot be read from its head.

- Only within a reading (`heldfiles.reading_once`: `check`, `run`, a `-j` worker, one
  check of the language server), in the thread that began it. Between two checks of
  the language server, or two calls of the API, nothing is held.
- One run at most (`heldfiles.hold`): it is let go of before any other file but a small
  one is read whole, by a check (`before_reading`) or a run (`take`), and before a live
  target runs; `take` lets go of it too. So two documents are never held at once where
  one was before, and peak memory does not grow.
- The file's identity is its path, device, inode, size and modification time in ns,
  from one stat taken before it was read (`samplelogs.file_key`); a file that differs at
  `take` is read again. A rewrite at the same size within the clock's tick is not seen,
  within one command (small files are read once a command anyway: `heldfiles`).
- A run read in full (outside `reads.reading`: what a check reads) serves any reading;
  one read for some `Reads`, a reading for the same alone.
- A run is only read: a pass reads its events, state and output and builds facts of its
  own, and nothing writes into what it reads (`tests/test_heldruns.py`).
"""

from __future__ import annotations

from evaldsl.runs.cassette import EventStream
from evaldsl.runs.heldfiles import HOLD_BYTES, held_value, hold, let_go
from evaldsl.runs.model import Run
from evaldsl.runs.reads import Reads, current
from evaldsl.runs.samplelogs import FileKey, file_key

#: A recording as a case names it: its path, its format as written (None: detected), its
#: sample (an Inspect AI log's).
Recording = tuple[str, str | None, str | None]

__all__ = ["Recording", "before_reading", "keep", "let_go", "take"]


class _Held:
    """A run held for the run of the case that named `recording`. (A plain class: made at
    every start of `check`, where an attrs class cost ~1 M instructions.)"""

    __slots__ = ("key", "reads", "recording", "run")

    def __init__(self, recording: Recording, key: FileKey, reads: Reads | None, run: Run) -> None:
        self.recording = recording
        self.key = key  # its file's identity, taken before it was read
        self.reads = reads  # what it was read for (None: everything)
        self.run = run


def _small(key: FileKey | None) -> bool:
    """Whether a file of identity `key` is small (or cannot be read, so nothing is)."""
    return key is None or key[3] <= HOLD_BYTES


def before_reading(key: FileKey | None) -> None:
    """Let go of the run held, unless the file about to be read (identity `key`) is small:
    two files read whole are never held at once."""
    if not _small(key):
        let_go()


def keep(recording: Recording, key: FileKey | None, run: Run) -> None:
    """Hold `run`, just read from `recording` (its file's identity `key`, taken before it
    was read), for that case's run: when it is held in memory whole and its file is not
    small. What is read (`reads.current()`) is kept beside it."""
    if key is None or _small(key) or isinstance(run.events, EventStream):
        return
    if run.events is not None and not isinstance(run.events, list):
        return  # (events some reader makes as they are read: read them again)
    hold(_Held(recording, key, current(), run))


def take(recording: Recording) -> Run | None:
    """The run held for `recording`, let go of, if its file is unchanged and it was read
    for no less than what is read now (in full, or for the same `Reads`); None otherwise,
    and the run held let go of too, unless `recording`'s file is small."""
    held = held_value()
    if not isinstance(held, _Held):
        return None
    now = file_key(recording[0])
    if held.recording != recording and _small(now):
        return None  # (a small file read beside it: held on for its own run)
    let_go()
    if held.recording != recording or now != held.key:
        return None
    if held.reads is not None and held.reads != current():
        return None
    return held.run
