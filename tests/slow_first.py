"""The longest tests start first, spread over the xdist workers (`make test`: `-n 4 --dist
worksteal`), so no worker begins a minutes-long test after the others have run dry, and the ones
that mostly wait (a 60 s window of 429s, a lease to expire) never hold every worker at once.

worksteal hands each worker a contiguous share of the collection (the same cut as `--dist
load`) and an idle worker later steals the back half of the longest queue. `order` puts the
known-slow tests at the heads of those shares and fills each share with the other tests in
their file order; stealing takes from the back, so the slow heads stay where they were put.
Two workers per core: while a worker waits on a serve process or a clock, another has the
core. When all four started with tests that wait, the cores idled for a minute and more (busy
48-80 % of 90 s in a quiet run). So the tests that mostly wait are dealt to the first half of
the shares and the slow tests that compute to the other half, each longest first to the share
with the fewest of its kind's seconds. Run in one process (`JOBS=1`) the order is left alone.

The figures are one quiet run's CPU ledger (`BULLPEN_TEST_CPU`: 4 workers on 2 cores,
2026-11-27): wall seconds and CPU seconds (the test's process and its children). Only their
ranking and the share of CPU matter. A test missing from the table just runs in its file order;
keep the table to the tests that take ten seconds and more.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol


class Cost(NamedTuple):
    wall_s: float
    cpu_s: float

    @property
    def waits(self) -> bool:
        """Mostly waiting (on processes, fakes, a clock): under 40 % of its time on a CPU
        (a kill and restart of serve is ~35 %, a bench or a backtest over 50 %)."""
        return self.cpu_s < 0.4 * self.wall_s


# node id prefix (a test function, every parametrization of it) -> its cost, each
SLOW_S: dict[str, Cost] = {
    "tests/bot/test_serve_faults.py::test_two_serves_deliver_once": Cost(87, 8.0),
    "tests/bot/test_serve_faults.py::test_a_429_on_every_send_for_60_s": Cost(66, 4.3),
    "tests/bot/test_serve_crash.py::test_a_429_on_every_send_and_edit": Cost(66, 2.8),
    "tests/bot/test_serve_faults.py::test_kill_9_between_fire_and_delivery": Cost(60, 7.8),
    "tests/bot/test_serve_kill_load.py::test_kill_9_under_load_": Cost(42, 10.5),
    "tests/bot/test_serve_kill_load.py::test_kill_9_of_serve_and_of_its_postgres": Cost(39, 11.8),
    "tests/bot/test_bench_soak.py::test_bench_soak_short_run": Cost(25, 14.1),
    "tests/jobs/test_database_outage.py::test_a_fire_due_during_a_database_outage": Cost(22, 0.2),
    "tests/bot/test_serve_db_outage.py::test_postgres_killed_mid_answer": Cost(21, 4.4),
    "tests/tools/sandbox/test_sandbox_bench.py::test_bench_reports_cold_warm": Cost(20, 10.2),
    "tests/bot/test_bench_jobs.py::test_bench_jobs_small_run": Cost(20, 11.5),
    "tests/bot/test_bench_symbols_chart.py::test_symbols_bench_reports_both_sets": Cost(15, 6.4),
    "tests/tools/test_tools_indicators.py::test_all_default_indicators": Cost(11, 6.0),
    "tests/bot/test_startup_lines.py::test_a_console_question_is_one_line": Cost(9, 4.2),
    # eight kills (a point, a platform), one test each
    "tests/bot/test_serve_crash.py::test_kill_9_mid_answer_then_restart": Cost(8.6, 2.9),
    "tests/ict/test_causality.py::test_every_prefix_reports_what_the_full_series_knew": Cost(7.3,
                                                                                            4.5),
}


class _Item(Protocol):
    nodeid: str


def cost(nodeid: str) -> Cost | None:
    """The table's cost of a test (None: not a slow one)."""
    return next((c for prefix, c in SLOW_S.items() if nodeid.startswith(prefix)), None)


def share_sizes(n: int, workers: int) -> list[int]:
    """The sizes of worksteal's first shares of `n` tests (its cut: what is left, split
    evenly over the workers not yet served)."""
    sizes = []
    for i in range(workers):
        sizes.append(n // (workers - i))
        n -= sizes[-1]
    return sizes


def order[T: _Item](items: Sequence[T], workers: int) -> list[T]:
    """`items` in the order that starts the slow ones first on every worker, those that wait
    in the first half of the shares (see above)."""
    if workers < 2:
        return list(items)
    costs = {id(it): c for it in items if (c := cost(it.nodeid)) is not None}
    slow = sorted((it for it in items if id(it) in costs), key=lambda it: -costs[id(it)].wall_s)
    sizes = share_sizes(len(items), workers)
    heads: list[list[T]] = [[] for _ in sizes]
    load = [0.0] * workers
    half = workers // 2
    for it in slow:  # longest first, to the share of its kind with the fewest slow seconds
        kind = range(half) if costs[id(it)].waits else range(half, workers)
        room = [k for k in kind if len(heads[k]) < sizes[k]] or \
            [k for k in range(workers) if len(heads[k]) < sizes[k]]
        k = min(room, key=load.__getitem__)
        heads[k].append(it)
        load[k] += costs[id(it)].wall_s
    rest = iter([it for it in items if id(it) not in costs])
    out: list[T] = []
    for head, size in zip(heads, sizes, strict=True):
        out += head
        out += [next(rest) for _ in range(size - len(head))]
    return out
