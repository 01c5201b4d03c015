"""Stopping never hangs on one stuck part.

Closing the app awaits many things: cancelled workers, a pool's graceful close, the exit of a
killed process. Any one of them can wait forever: a task that swallows its cancellation, a
connection never given back to the pool, an exit CPython 3.12's child watcher never reports
(python/cpython#87744, #119710: `Process.wait()` also waits for every pipe to close). A
shutdown stuck there holds `serve`'s restart, and held stop 17's CI for 90 minutes.

| what `settle` awaits            | it ends within `within_s` | it does not                    |
|---------------------------------|---------------------------|--------------------------------|
| finished normally or cancelled  | returns True              |                                |
| raised                          | re-raised                 |                                |
| still running                   |                           | logs its stack, returns False, |
|                                 |                           | the shutdown goes on           |

`asyncio.wait_for` is not enough: on its timeout it cancels the awaited task and then waits
for that task to finish, which a stuck task never does.
"""

from __future__ import annotations

import asyncio
import io
import logging
from collections.abc import Awaitable, Iterable
from typing import Any

log = logging.getLogger(__name__)

GRACE_S = 10.0  # how long one part of a shutdown may take before it is left behind


async def settle(aws: Awaitable[Any] | Iterable[Awaitable[Any]], *, what: str,
                 within_s: float = GRACE_S) -> bool:
    """Await `aws` (one awaitable or several) for at most `within_s`. True if all ended
    (cancelled counts as ended; the first exception raised is re-raised); False, logged with
    the stacks of the ones still running, if not."""
    items = [aws] if isinstance(aws, Awaitable) else list(aws)
    if not items:
        return True
    futures = [asyncio.ensure_future(a) for a in items]
    _, pending = await asyncio.wait(futures, timeout=within_s)
    if pending:
        log.error("shutdown: %s did not end within %g s; going on without it%s", what,
                  within_s, "".join(_stack(f) for f in pending))
        return False
    for future in futures:
        failure = None if future.cancelled() else future.exception()
        if failure is not None:
            raise failure
    return True


def _stack(future: asyncio.Future[Any]) -> str:
    if not isinstance(future, asyncio.Task):
        return f"\n  {future!r}"
    out = io.StringIO()
    future.print_stack(limit=8, file=out)
    return "\n" + out.getvalue().rstrip()
