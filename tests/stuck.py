"""What a stuck test was waiting for.

pytest-timeout fails a test that runs past its limit and prints every thread's stack, but an
asyncio test stuck on an `await` shows only the event loop idling in `epoll`. A minute before
that limit, `watch` prints the stack of every asyncio task of every open event loop, which
names the await that never ends (stop 17's CI hung 90 minutes in one with nothing to read).
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import sys
import threading
from collections.abc import Iterator

import pytest

WARN_BEFORE_S = 60.0


def _open_loops() -> list[asyncio.AbstractEventLoop]:
    return [o for o in gc.get_objects()
            if isinstance(o, asyncio.AbstractEventLoop) and not o.is_closed()]


def dump_tasks(title: str) -> None:
    out = sys.__stderr__
    if out is None:
        return
    print(f"\n===== {title}: the stack of every asyncio task =====", file=out)
    for loop in _open_loops():
        tasks: set[asyncio.Task[object]] = set()
        for _ in range(3):  # the loop may still run (a thread reading it races)
            with contextlib.suppress(RuntimeError):
                tasks = asyncio.all_tasks(loop)
                break
        for task in sorted(tasks, key=lambda t: t.get_name()):
            with contextlib.suppress(Exception):
                task.print_stack(limit=12, file=out)
    print("===== end of tasks =====", file=out, flush=True)


@contextlib.contextmanager
def watch(item: pytest.Item) -> Iterator[None]:
    """Dump the tasks if `item` is still running a minute before pytest-timeout's limit."""
    try:
        limit = float(item.config.getini("timeout") or 0)
    except (ValueError, KeyError):
        limit = 0.0
    if limit <= WARN_BEFORE_S:
        yield
        return
    timer = threading.Timer(limit - WARN_BEFORE_S, dump_tasks,
                            args=(f"{item.nodeid} still running after "
                                  f"{limit - WARN_BEFORE_S:g} s",))
    timer.daemon = True
    timer.start()
    try:
        yield
    finally:
        timer.cancel()
