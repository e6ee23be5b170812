"""The signals that stop a run (Ctrl-C, SIGTERM), and holding them while a step must not
be cut.

Takes nothing and gives `STOP_SIGNALS`, `sigint_mask` (block or unblock them in this
thread), `sigint_held` (a block during which one that comes waits, and is delivered when
the block ends: forked workers start with them held, `forkpool`) and `stops_deferred`
(the same for Python's handlers: `evaldsl run` defers a stop while it checks that its
reports overwrite none of its inputs and while it writes its reports, so that a stop
then still leaves every report asked for). A module of its own: `run` without `-j` does
not load the fork pool.
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Iterator

#: The signals that stop a run: Ctrl-C, and SIGTERM (`evaldsl run` raises at both).
STOP_SIGNALS = frozenset(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM") if hasattr(signal, name)
)


def sigint_mask(how: int) -> None:
    """Block or unblock Ctrl-C and SIGTERM in this thread (where the platform can)."""
    if hasattr(signal, "pthread_sigmask"):
        signal.pthread_sigmask(how, STOP_SIGNALS)


@contextlib.contextmanager
def sigint_held() -> Iterator[None]:
    """Hold Ctrl-C and SIGTERM (while workers start: they inherit the mask and ignore
    both before they let them in); one meanwhile is delivered when this block ends."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


@contextlib.contextmanager
def stops_deferred() -> Iterator[None]:
    """Defer Ctrl-C and SIGTERM until the block ends (in the main thread; elsewhere
    Python runs no handler): one that comes meanwhile is raised again then, to the
    handlers it would have met (`KeyboardInterrupt`, `evaldsl run`'s SIGTERM). Not the
    signal mask of `sigint_held`: another thread (a judge call's) would take the signal,
    and its handler ran in the main thread at once."""
    import threading  # (here: only `run` defers)

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    came: list[int] = []
    # (None: a handler not set from Python, which could not be set back)
    before = {n: h for n in STOP_SIGNALS if (h := signal.getsignal(n)) is not None}
    for number in before:
        signal.signal(number, lambda number, frame: came.append(number))
    try:
        yield
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
        if came:
            signal.raise_signal(came[0])
