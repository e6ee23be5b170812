"""What `evaldsl score` prints, as records come: text, one JSON document, or JSON lines.

Takes `TraceRecord`s one at a time and the `Summary` at the end, and writes to a text
stream as it goes (nothing is held back but the summary's counters):

- `jsonl`: one line per trace, `{"trace", "id", "passed", "skipped", "score", "statuses",
  "failures", "error"}`, then a last line `{"summary": {…}}`;
- `json`: one document `{"program", "assertions", "traces": [one per trace], "summary"}`,
  written while the traces are scored;
- `text`: a block per trace that failed or could not be read (passing traces are counted,
  not shown), then the summary.

JSON is written compact (`jsontext.compact_json`): a lone surrogate, from a trace's file
name whose bytes are not UTF-8, as its escape (orjson refused it, and the run stopped at
that trace).
"""

from __future__ import annotations

from typing import Literal, Protocol, TextIO

from evaldsl.jsontext import compact_json
from evaldsl.language.printable import visible
from evaldsl.score.scoring import TraceRecord
from evaldsl.score.summary import Summary

Format = Literal["text", "json", "jsonl"]
FORMATS: tuple[Format, ...] = ("text", "json", "jsonl")


class Writer(Protocol):
    def trace(self, rec: TraceRecord) -> None: ...

    def finish(self, summary: Summary) -> None: ...


class JsonLines:
    """`--format jsonl`."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def trace(self, rec: TraceRecord) -> None:
        self.out.write(compact_json(rec) + "\n")

    def finish(self, summary: Summary) -> None:
        self.out.write(compact_json({"summary": summary.to_json()}) + "\n")


class JsonDocument:
    """`--format json`: the document is opened before the first trace and closed after
    the summary, so it is whole once the command ends and never held in memory."""

    def __init__(self, out: TextIO, program: str, assertions: list[str]) -> None:
        self.out = out
        self.first = True
        head = f'{{"program": {compact_json(program)}, "assertions": {compact_json(assertions)},'
        out.write(head + "\n")
        out.write(' "traces": [')

    def trace(self, rec: TraceRecord) -> None:
        self.out.write(("\n  " if self.first else ",\n  ") + compact_json(rec))
        self.first = False

    def finish(self, summary: Summary) -> None:
        self.out.write(("" if self.first else "\n ") + "],\n")
        self.out.write(f' "summary": {compact_json(summary.to_json())}}}\n')


class Text:
    """`--format text`: failing and unreadable traces, then the summary."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def trace(self, rec: TraceRecord) -> None:
        # (a trace's file name and what a message quotes of it are the trace's text: an
        # escape sequence in them must show, not act on the terminal)
        if rec["error"] is not None:
            self.out.write(f"ERROR {visible(rec['trace'], newlines=False)}\n  ")
            self.out.write(visible(rec["error"], newlines=False) + "\n")
        elif not rec["passed"]:
            trace = visible(rec["trace"], newlines=False)
            self.out.write(f"FAIL {trace}  score {rec['score']:.2f}\n")
            for f in rec["failures"]:
                said = f"{f['status']}: {f['assertion']}: {f['message']}"
                self.out.write(f"  {visible(said, newlines=False)}\n")

    def finish(self, summary: Summary) -> None:
        self.out.write(summary.render() + "\n")


def writer(fmt: Format, out: TextIO, program: str, assertions: list[str]) -> Writer:
    """The writer of a format."""
    if fmt == "jsonl":
        return JsonLines(out)
    if fmt == "json":
        return JsonDocument(out, program, assertions)
    return Text(out)
