"""Scoring production traces at scale: one program over millions of traces.

Takes a program (its header and assertions) and traces (files, folders, globs, JSON lines)
and gives one record per trace and a summary of counters, in bounded memory, serially, in
N processes (`engines`) or on a Dask cluster (`evaldsl.dask`). The modules, in the order
the data flows: `sources` (what to read), `scoring` (one trace → one record), `engines`
(batches, order, processes), `summary` (counters and samples), `output` (text, json,
jsonl) and `command` (`evaldsl score`).

>>> from evaldsl.score import ProgramSpec, Summary, score_items
>>> from evaldsl.score.sources import Item
>>> spec = ProgramSpec("tool search called once")
>>> events = b'[{"type": "tool.call", "name": "search"}]'
>>> [r["passed"] for r in score_items(spec, [Item("<stdin>:1", events, 1)])]
[True]
"""

from evaldsl.score.engines import score_items
from evaldsl.score.scoring import ProgramSpec, TraceRecord, score_batch
from evaldsl.score.sources import Item, items
from evaldsl.score.summary import Summary

__all__ = ["Item", "ProgramSpec", "Summary", "TraceRecord", "items", "score_batch", "score_items"]
