"""The suite's order under xdist (`tests/slow_first.py`): the same tests, the slow ones at the
heads of worksteal's shares, those that mostly wait in the first half of the shares and those
that compute in the other, about equal seconds of each kind a share, the rest in their order."""

from __future__ import annotations

from dataclasses import dataclass

from tests.slow_first import SLOW_S, cost, order, share_sizes


@dataclass
class Item:
    nodeid: str


def _items() -> list[Item]:
    fast = [Item(f"tests/a/test_{i}.py::test_it") for i in range(120)]
    slow = [Item(f"{prefix}[case]") for prefix in SLOW_S]
    return fast[:60] + slow + fast[60:]


def _wall(item: Item) -> float:
    c = cost(item.nodeid)
    return c.wall_s if c else 0.0


def test_the_slow_tests_head_every_share_those_that_wait_apart_from_those_that_compute() -> None:
    assert {c.waits for c in SLOW_S.values()} == {True, False}  # both kinds in the table
    items = _items()
    got = order(items, 4)
    assert sorted(map(id, got)) == sorted(map(id, items))  # a permutation
    sizes = share_sizes(len(items), 4)
    assert sum(sizes) == len(items) and max(sizes) - min(sizes) <= 1
    shares, start = [], 0
    for size in sizes:
        shares.append(got[start:start + size])
        start += size
    for k, share in enumerate(shares):
        marks = [bool(_wall(it)) for it in share]
        assert marks == sorted(marks, reverse=True)  # the slow ones first
        times = [_wall(it) for it in share if _wall(it)]
        assert times == sorted(times, reverse=True)  # longest first
        kinds = {c.waits for it in share if (c := cost(it.nodeid))}
        assert kinds == ({True} if k < 2 else {False}), k  # waiting ones in shares 0 and 1
    for waits, kind in ((True, shares[:2]), (False, shares[2:])):
        loads = [sum(_wall(it) for it in share) for share in kind]
        biggest = max(c.wall_s for c in SLOW_S.values() if c.waits is waits)
        assert max(loads) - min(loads) <= biggest  # dealt evenly within the kind
    fast = [it for it in got if not _wall(it)]
    assert fast == [it for it in items if not _wall(it)]  # in their order


def test_one_process_keeps_the_file_order() -> None:
    items = _items()
    assert order(items, 1) == items
