"""Inspect AI logs of many samples for the tests: the two samples of the test data's
two-sample log (`fr` calls `lookup` and answers Paris; `de` calls no tool and answers
Berlin) in turns, each an id of its own and its answer numbered."""

from __future__ import annotations

import copy
import json
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data" / "formats"


def write_log(path: Path, samples: int, *, indent: int | None = 2) -> list[str]:
    """A log of `samples` samples (`s0`, `s1`, …; answers `Paris 0`, `Berlin 1`, …),
    written with `indent` (None: on one line); its sample ids."""
    log = json.loads((DATA / "inspect-two-samples.json").read_text(encoding="utf-8"))
    made = []
    for k in range(samples):
        sample = copy.deepcopy(log["samples"][k % 2])
        sample["id"] = f"s{k}"
        text = json.dumps(sample).replace('"Paris"', f'"Paris {k}"')
        made.append(json.loads(text.replace('"Berlin"', f'"Berlin {k}"')))
    log["samples"] = made
    path.write_text(json.dumps(log, indent=indent), encoding="utf-8")
    return [s["id"] for s in made]
