"""The suite's order under xdist (`tests/slow_first.py`): the same tests, the slow ones at the
heads of worksteal's shares with about equal slow seconds each, the rest in their order."""

from __future__ import annotations

from dataclasses import dataclass

from tests.slow_first import SLOW_S, order, seconds, share_sizes


@dataclass
class Item:
    nodeid: str


def _items() -> list[Item]:
    fast = [Item(f"tests/a/test_{i}.py::test_it") for i in range(120)]
    slow = [Item(f"{prefix}[case]") for prefix in SLOW_S]
    return fast[:60] + slow + fast[60:]


def test_the_slow_tests_head_every_share_and_nothing_is_lost_or_moved_otherwise() -> None:
    items = _items()
    got = order(items, 4)
    assert sorted(map(id, got)) == sorted(map(id, items))  # a permutation
    sizes = share_sizes(len(items), 4)
    assert sum(sizes) == len(items) and max(sizes) - min(sizes) <= 1
    shares, start = [], 0
    for size in sizes:
        shares.append(got[start:start + size])
        start += size
    loads = []
    for share in shares:
        marks = [bool(seconds(it.nodeid)) for it in share]
        assert marks == sorted(marks, reverse=True)  # the slow ones first
        times = [seconds(it.nodeid) for it in share if seconds(it.nodeid)]
        assert times == sorted(times, reverse=True)  # longest first
        loads.append(sum(times))
    assert max(loads) - min(loads) <= max(SLOW_S.values())  # dealt evenly
    fast = [it for it in got if not seconds(it.nodeid)]
    assert fast == [it for it in items if not seconds(it.nodeid)]  # in their order


def test_one_process_keeps_the_file_order() -> None:
    items = _items()
    assert order(items, 1) == items
