"""Machine instructions of one pass: each speed.py mix's generated pass beside its
hand-written pass, and the pass of K distinct statements, counted by valgrind.

Run:  .venv/bin/python benchmarks/pass_instructions.py [--events N] [--only NAME ...]
      (needs valgrind: `apt-get install valgrind`)

On a shared machine, wall times drift by more than the few percent a change to the pass
makes; instruction counts do not move with the load. Each figure is counted by `valgrind
--tool=cachegrind --cache-sim=no` on a child process (`PYTHONHASHSEED=0`, so sets and
dicts are laid out alike) that decodes the first N events of speed.py's cassette into a
list and runs one pass over them 1 time and 3 times: the difference, halved, is one pass,
without the start, the decoding, the compile or what only a first pass or check does (a
`case.check` generates its pass at the first; the code cache is filled by one uncounted
run first, in a cache folder of this run's own), as `speed.py`'s medians of repeated
checks see it. Printed: the hand-written and the generated pass of "mixed", "hard" and
"families" with their ratio, and the generated pass of K = 1, 10, 100, 1000 distinct
statements with each K's ratio to K = 1 and to K = 10 (docs/speed.md, "Where the unmet
in-memory targets stand"). `--whole` counts each one's whole check too (`case.check`, as
`speed.py` times it: the pass and the assertions decided after it), which a pass alone
leaves out.
"""

from __future__ import annotations

import argparse
import gc
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
for where in (ROOT, ROOT / "benchmarks"):
    if str(where) not in sys.path:
        sys.path.insert(0, str(where))

import speed  # noqa: E402

import evaldsl  # noqa: E402
from evaldsl.runs.passes import pass_for  # noqa: E402

CASSETTE_EVENTS = 300_000  # speed.py --quick's cassette (made by bench.py when missing)
KS = (1, 10, 100, 1000)
_REFS = re.compile(r"I\s+refs:\s+([\d,]+)")


def child(name: str, which: str, reps: int, events: int, cassette: Path) -> None:
    """Run `which` ("hand" or "evaldsl") of `name` (a mix, or "kN") `reps` times over the
    cassette's first `events` events."""
    decoded = speed.bench.load_events(cassette, events)
    gc.freeze()
    if name.startswith("k"):
        text, hand = speed.k_statements(int(name[1:])), None
    else:
        text, hand = speed.MIXES[name]
    case = evaldsl.compile(text).cases[0]
    run: Callable[[], Any]
    if which == "hand":
        assert hand is not None
        run = lambda: hand(decoded)  # noqa: E731
    elif which == "check":  # the whole check: the pass and the assertions after it
        run = lambda: case.check(decoded)  # noqa: E731
    else:
        made = pass_for(case.needs, raw=False)
        run = lambda: made.run(decoded, None, True)  # noqa: E731
    gc.disable()
    for _ in range(reps):
        run()


def counted(
    name: str, which: str, reps: int, events: int, cassette: Path, *, count: bool = True
) -> int:
    """Instructions of a child running `reps` passes (`count` False: run, not counted, so
    the code cache holds the pass's code before the counted runs read it)."""
    valgrind = ("valgrind", "--tool=cachegrind", "--cache-sim=no")
    cmd = [
        *((*valgrind, "--cachegrind-out-file=/dev/null") if count else ()),
        sys.executable,
        __file__,
        "--child",
        name,
        which,
        str(reps),
        str(events),
        str(cassette),
    ]
    # (without PYTHONDONTWRITEBYTECODE: a child that cannot keep its bytecode compiles
    # every module it imports again, and a count taken while the bytecode was being
    # written came out inflated)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONHASHSEED"] = "0"
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
    if not count:
        return 0
    found = _REFS.search(done.stderr)
    if done.returncode != 0 or found is None:
        raise SystemExit(f"{name} {which}: valgrind failed:\n{done.stderr[-2000:]}")
    return int(found.group(1).replace(",", ""))


def per_pass(name: str, which: str, events: int, cassette: Path) -> int:
    """One pass as repeated passes each cost it: three less one, halved (two less none
    counted a check's generation of its pass, once, as half a pass: ~15 M of "hard"'s)."""
    counted(name, which, 1, events, cassette, count=False)
    three, one = (counted(name, which, reps, events, cassette) for reps in (3, 1))
    return (three - one) // 2


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--events", type=int, default=60_000, help="events a pass reads")
    parser.add_argument(
        "--only", action="append", choices=[*speed.MIXES, "k"], help="a mix, or k (repeat)"
    )
    parser.add_argument(
        "--whole",
        action="store_true",
        help="count the whole check (case.check: the pass and what runs after it) too",
    )
    parser.add_argument("--child", nargs=5, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        name, which, reps, events, path = args.child
        child(name, which, int(reps), int(events), Path(path))
        return 0
    if shutil.which("valgrind") is None:
        raise SystemExit("valgrind is not installed: apt-get install valgrind")
    cassette, _, _ = speed.bench.ensure_data(CASSETTE_EVENTS, 10_000)  # (once, here)
    with tempfile.TemporaryDirectory(prefix="evaldsl-pass-instructions-") as cache:
        # the children's code cache is this run's own: a shared one, rewritten by other
        # processes between a count's children, changed what they loaded and compiled
        # (counts off by up to ~80 M, a whole check counted below its pass)
        os.environ["XDG_CACHE_HOME"] = cache
        report(args, cassette)
    return 0


def report(args: argparse.Namespace, cassette: Path) -> None:
    """Count and print what `args` asks for."""
    chosen = args.only or [*speed.MIXES, "k"]
    print(f"instructions of one pass over the first {args.events:,} events (valgrind)")
    for mix in (m for m in speed.MIXES if m in chosen):
        hand, ours = (per_pass(mix, w, args.events, cassette) for w in ("hand", "evaldsl"))
        line = f"  {mix}: hand-written {hand / 1e6:.1f} M, evaldsl {ours / 1e6:.1f} M, "
        line += f"{ours / hand:.2f}x"
        if args.whole:
            whole = per_pass(mix, "check", args.events, cassette)
            line += f"; whole check {whole / 1e6:.1f} M, {whole / hand:.2f}x"
        print(line)
    if "k" in chosen:
        ks = {k: per_pass(f"k{k}", "evaldsl", args.events, cassette) for k in KS}
        wholes = (
            {k: per_pass(f"k{k}", "check", args.events, cassette) for k in KS} if args.whole else {}
        )
        for k, n in ks.items():
            line = f"  K={k}: {n / 1e6:.1f} M ({n / ks[1]:.2f}x K=1, {n / ks[10]:.2f}x K=10)"
            if wholes:
                w = wholes[k]
                line += f"; whole check {w / 1e6:.1f} M ({w / wholes[1]:.2f}x K=1)"
            print(line)


if __name__ == "__main__":
    raise SystemExit(main())
