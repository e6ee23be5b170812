"""The formats read whole, at scale: reading a large file ÷ bare decoding of its lines.

Run:  .venv/bin/python benchmarks/formats.py [--scale S] [--runs R]

Cassettes and JSONL of events stream through the generated pass (`speed.py` times them);
the other formats are decoded and adapted whole into events first. This benchmark makes
large files of three of them from the real traces in `tests/fixtures/realworld/`, each
repeated S times (1 by default: 40,000 OpenAI responses, 3,000 Anthropic stream
messages, 20,000 OpenInference spans):

- "openai": Chat Completions responses, one a line (`openai-chat-jsonl`), each repeat's
  ids made its own;
- "openai, ids shared": the same lines with their ids as recorded, so every repeat's
  tool calls carry the first one's ids (as in a log that joins many runs, or from a
  server that reuses ids);
- "anthropic stream": Messages stream events, one a line (`anthropic-stream-tooluse`),
  ids made their own; "anthropic stream, ids shared" as recorded;
- "phoenix": OpenInference spans as Phoenix exports them (`openinference-phoenix-spans`),
  span, trace and parent ids made their own.

Times, in turns, `load_run(path)` (what `check` and the run read) and bare orjson
decoding of every line of the same file (GC paused as the reading pauses it), CPU time,
best of R each, and prints the ratio. Files are written under `benchmarks/data/`.
"""

from __future__ import annotations

import argparse
import gc
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import orjson  # noqa: E402

from evaldsl.runs.detect import load_run  # noqa: E402

REALWORLD = ROOT / "tests" / "fixtures" / "realworld"
DATA = ROOT / "benchmarks" / "data"

# (name, fixture, repeats at scale 1, ids made their own)
FILES = (
    ("openai", "openai-chat-jsonl/responses.jsonl", 20_000, True),
    ("openai, ids shared", "openai-chat-jsonl/responses.jsonl", 20_000, False),
    ("anthropic stream", "anthropic-stream-tooluse/events.jsonl", 3_000, True),
    ("anthropic stream, ids shared", "anthropic-stream-tooluse/events.jsonl", 3_000, False),
    ("phoenix", "openinference-phoenix-spans/spans.jsonl", 10_000, True),
)

_PROVIDER_ID = re.compile(r'"(call_|toolu_|msg_|chatcmpl-)([A-Za-z0-9]+)"')
_SPAN_ID = re.compile(r'"(span_id|trace_id|parent_id)": ?"([0-9a-f-]+)"')


def own_ids(line: str, repeat: int) -> str:
    """`line` with its provider and span ids made the `repeat`-th copy's own."""
    line = _PROVIDER_ID.sub(lambda m: f'"{m[1]}{m[2]}{repeat}"', line)
    return _SPAN_ID.sub(lambda m: f'"{m[1]}": "{m[2]}-{repeat:x}"', line)


def make_file(fixture: str, repeats: int, unique: bool) -> Path:
    """The fixture's lines repeated, written once under `benchmarks/data/`."""
    stem = fixture.split("/")[0]
    path = DATA / f"formats-{stem}-{repeats}{'' if unique else '-shared'}.jsonl"
    if path.exists():
        return path
    lines = [line for line in (REALWORLD / fixture).read_text().splitlines() if line.strip()]
    DATA.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as out:
        for repeat in range(repeats):
            for line in lines:
                out.write((own_ids(line, repeat) if unique else line) + "\n")
    return path


def decode_lines(path: Path) -> int:
    """Bare orjson decoding of every line: the floor of a reading that decodes all."""
    n = 0
    with path.open("rb") as f:
        for line in f:
            if line.strip():
                orjson.loads(line)
                n += 1
    return n


def cpu_time(work: Callable[[], object], *, paused: bool) -> float:
    """The CPU time of `work()`, with the collector on (as in a process) or paused."""
    gc.collect()
    if paused:
        gc.disable()
    start = time.process_time()
    work()
    spent = time.process_time() - start
    gc.enable()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--scale", type=float, default=1.0, help="repeats × this")
    parser.add_argument("--runs", type=int, default=3, help="timings of each (best taken)")
    args = parser.parse_args()
    print(f"command: {' '.join([Path(sys.executable).name, *sys.argv])}")
    print(f"{'file':<30} {'lines':>8} {'events':>8} {'reading':>10} {'orjson':>9} {'ratio':>7}")
    for name, fixture, repeats, unique in FILES:
        path = make_file(fixture, max(1, int(repeats * args.scale)), unique)
        lines = decode_lines(path)
        events = len(load_run(path).events or [])  # (also warms the imports)
        read_s = bare_s = float("inf")
        for _ in range(args.runs):  # in turns, so a change of load falls on both
            read_s = min(read_s, cpu_time(lambda p=path: load_run(p), paused=False))
            bare_s = min(bare_s, cpu_time(lambda p=path: decode_lines(p), paused=True))
        print(
            f"{name:<30} {lines:>8,} {events:>8,} {read_s * 1000:>8.0f}ms "
            f"{bare_s * 1000:>7.0f}ms {read_s / bare_s:>6.1f}x"
        )


if __name__ == "__main__":
    main()
