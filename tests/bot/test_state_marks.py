"""Message states by group commit (`bot.state_marks`): marks made while a write is in flight
go out together, merged per message, in order; each caller returns once its mark is written
and gets the write's error."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from bot.state_marks import Key, StateMarks


class SlowTable:
    def __init__(self) -> None:
        self.rows: dict[Key, dict[str, Any]] = {}
        self.batches: list[dict[Key, dict[str, Any]]] = []
        self.fail_next = False

    async def write(self, batch: dict[Key, dict[str, Any]]) -> None:
        await asyncio.sleep(0.05)
        if self.fail_next:
            self.fail_next = False
            raise ConnectionError("the database went away")
        self.batches.append({k: dict(v) for k, v in batch.items()})
        for key, row in batch.items():
            self.rows.setdefault(key, {}).update(row)


async def test_marks_during_a_write_go_out_together_merged_per_message() -> None:
    table = SlowTable()
    marks = StateMarks(table.write)
    a, b = ("t", "1", "10"), ("t", "1", "11")
    first = asyncio.create_task(marks.mark(a, "running", placeholder="p10", lang="en"))
    await asyncio.sleep(0.01)  # the first write is in flight
    rest = [asyncio.create_task(marks.mark(b, "running", placeholder="p11")),
            asyncio.create_task(marks.mark(a, "answered")),
            asyncio.create_task(marks.mark(b, "failed"))]
    await asyncio.gather(first, *rest)
    assert marks.writes == 2  # one for the first mark, one for the three made meanwhile
    assert table.batches[1] == {a: {"status": "answered"},
                                b: {"status": "failed", "placeholder": "p11"}}
    assert table.rows[a] == {"status": "answered", "placeholder": "p10", "lang": "en"}


async def test_an_idle_writer_writes_a_mark_at_once_and_errors_reach_its_caller() -> None:
    table = SlowTable()
    marks = StateMarks(table.write)
    await marks.mark(("t", "1", "12"), "answered")
    assert marks.writes == 1 and table.rows[("t", "1", "12")]["status"] == "answered"
    table.fail_next = True
    with pytest.raises(ConnectionError):
        await marks.mark(("t", "1", "13"), "answered")
    await marks.mark(("t", "1", "13"), "answered")  # the next write goes on
    assert table.rows[("t", "1", "13")]["status"] == "answered"


async def test_a_cancelled_caller_leaves_its_mark_and_the_others_their_wait() -> None:
    """Callers of one batch wait each on their own: one cancelled (a /stop, a shutdown) does
    not cancel the others' wait, and its mark is written with theirs."""
    table = SlowTable()
    marks = StateMarks(table.write)
    a, b = ("t", "2", "20"), ("t", "2", "21")
    first = asyncio.create_task(marks.mark(a, "running"))
    await asyncio.sleep(0.01)  # in flight: the next two share the second write
    gone = asyncio.create_task(marks.mark(a, "answered"))
    stays = asyncio.create_task(marks.mark(b, "answered"))
    await asyncio.sleep(0)
    gone.cancel()
    await asyncio.gather(first, stays)
    with pytest.raises(asyncio.CancelledError):
        await gone
    assert table.rows[a]["status"] == "answered" and table.rows[b]["status"] == "answered"
    assert marks.writes == 2
