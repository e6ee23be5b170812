"""The collector paused around bulk work, and the frozen set `-j` forks its workers under
(`evaldsl/gcpause.py`)."""

from __future__ import annotations

import gc
import os

import pytest

from evaldsl.gcpause import frozen_for_workers, paused_gc


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every `gc.get_freeze_count()` asked, with its answer."""
    asked: list[int] = []
    real = gc.get_freeze_count

    def count() -> int:
        asked.append(real())
        return asked[-1]

    monkeypatch.setattr(gc, "get_freeze_count", count)
    return asked


def test_the_collector_is_paused_and_restored() -> None:
    assert gc.isenabled()
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(KeyError), paused_gc(long_lived=True):
        raise KeyError("x")
    assert gc.isenabled() and gc.get_freeze_count() == 0
    gc.disable()
    try:
        with paused_gc():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_long_lived_objects_are_handed_to_the_oldest_generation(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # frozen, then unfrozen into the oldest generation: two list splices, where the young
    # collections after the block would walk every object made in it
    calls: list[str] = []
    for name in ("freeze", "unfreeze"):
        real = getattr(gc, name)
        monkeypatch.setattr(gc, name, lambda real=real, name=name: (calls.append(name), real()))
    with paused_gc():
        pass
    assert calls == []
    with paused_gc(long_lived=True):
        assert calls == []
    assert calls == ["freeze", "unfreeze"]
    with frozen_for_workers(), paused_gc(long_lived=True):
        pass  # (the frozen set is the workers': left as it is)
    assert calls == ["freeze", "unfreeze", "freeze", "unfreeze"]


def test_workers_never_count_the_frozen_set(counted: list[int]) -> None:
    # counting it walks every frozen object: in a forked worker, every object it shares
    with frozen_for_workers():
        assert counted == [0]  # (counted once, before freezing: nothing was)
        with paused_gc(long_lived=True):
            [{"n": n} for n in range(100)]
        read, write = os.pipe()
        pid = os.fork()
        if pid == 0:  # a worker: its compiles and readings do not count either
            with paused_gc(long_lived=True):
                pass
            os.write(write, str(len(counted)).encode())
            os._exit(0)
        os.waitpid(pid, 0)
        assert os.read(read, 16) == b"1"
        os.close(read)
        os.close(write)
    assert counted == [0]
    with paused_gc(long_lived=True):  # counted again outside it: nothing frozen now
        pass
    assert counted == [0, 0]


def test_an_applications_frozen_set_is_left_as_it_is() -> None:
    gc.freeze()
    try:
        with frozen_for_workers(), paused_gc(long_lived=True):
            kept = [[n] for n in range(100)]
        assert gc.get_freeze_count() > 0  # not unfrozen by the block
        with paused_gc(long_lived=True):
            kept.append([0])
        assert gc.get_freeze_count() > 0  # nor by a long-lived pause
    finally:
        gc.unfreeze()
