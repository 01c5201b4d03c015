"""The longest tests start first, spread over the xdist workers (`make test`: `-n 4 --dist
worksteal`), so no worker begins a minutes-long test after the others have run dry.

worksteal hands each worker a contiguous share of the collection (the same cut as `--dist
load`) and an idle worker later steals the back half of the longest queue. `order` puts the
known-slow tests at the heads of those shares, dealt so each share's slow seconds are about
equal (longest first, each to the lightest share), and fills each share with the other tests
in their file order. Stealing takes from the back, so the slow heads stay where they were put.
Run in one process (`JOBS=1`) the order is left alone.

The seconds are one measured run's `--durations` (4 workers on 2 cores at a load average of
about 10, 2026-11-27): only their ranking matters. A test missing from the table just runs in
its file order; keep the table to the tests that take tens of seconds.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

# node id prefix (a test function, every parametrization of it) -> seconds each
SLOW_S: dict[str, float] = {
    "tests/bot/test_serve_kill_load.py::test_kill_9_under_load_": 206,
    "tests/bot/test_serve_kill_load.py::test_kill_9_of_serve_and_of_its_postgres": 164,
    "tests/bot/test_serve_faults.py::test_two_serves_deliver_once": 157,
    "tests/bot/test_serve_faults.py::test_kill_9_between_fire_and_delivery": 139,
    "tests/bot/test_cli_tools.py::test_run_list_and_bad_arguments": 127,
    "tests/bot/test_serve_faults.py::test_a_429_on_every_send_for_60_s": 121,
    "tests/bot/test_bench_jobs.py::test_bench_jobs_small_run": 101,
    "tests/bot/test_serve_crash.py::test_a_429_on_every_send_and_edit": 94,
    "tests/bot/test_cli_tools.py::test_revoke_takes_every_version_away": 92,
    "tests/bot/test_serve_spool.py::test_a_slack_message_acknowledged": 85,
    "tests/bot/test_bench_soak.py::test_bench_soak_short_run": 84,
    "tests/tools/sandbox/test_sandbox_bench.py::test_bench_reports_cold_warm": 83,
    "tests/jobs/test_database_outage.py::test_a_fire_due_during_a_database_outage": 80,
    "tests/adapters/test_console_tmux.py::test_piped_question_is_answered_once": 76,
    "tests/bot/test_serve_crash.py::test_kill_9_mid_answer_then_restart": 67,
    "tests/bot/test_cli.py::test_ask_with_embedded_postgres": 67,
    "tests/bot/test_serve_db_outage.py::test_postgres_killed_mid_answer": 64,
    "tests/bot/test_startup_errors.py::test_an_unreachable_model_is_one_line": 63,
    "tests/bot/test_serve_pg_watchdog.py::test_a_holder_restarted_at_once": 61,
    "tests/bot/test_serve_pg_watchdog.py::test_two_holders_killed_with_9": 55,
    "tests/bot/test_startup_lines.py::test_a_console_question_is_one_line": 51,
    "tests/bot/test_startup_errors.py::test_the_note_speaks_the_askers_language": 51,
    "tests/bot/test_bench_symbols_chart.py::test_symbols_bench_reports_both_sets": 51,
    "tests/ict/test_causality.py::test_every_prefix_reports_what_the_full_series_knew": 34,
    "tests/tools/test_offline_packs.py::test_apples_latest_10k_risk_factors": 42,
    "tests/analyst/test_offline_packs.py::test_apple_risk_factors_in_the_latest_10k": 42,
    "tests/adapters/conformance/test_conformance.py::test_a_voice_note_is_heard": 41,
    "tests/tools/test_tools_indicators.py::test_all_default_indicators": 41,
    "tests/bot/test_symbols_store.py::test_a_stale_table_is_rebuilt": 39,
    "tests/bot/test_startup_lines.py::test_serve_with_web_port_says_where": 39,
    # 22 page layouts, one test each (was one test of 361 s)
    "tests/debate/test_report_language.py::test_no_heading_ends_a_page": 16,
}


class _Item(Protocol):
    nodeid: str


def seconds(nodeid: str) -> float:
    """The table's seconds for a test (0: not a slow one)."""
    return next((s for prefix, s in SLOW_S.items() if nodeid.startswith(prefix)), 0.0)


def share_sizes(n: int, workers: int) -> list[int]:
    """The sizes of worksteal's first shares of `n` tests (its cut: what is left, split
    evenly over the workers not yet served)."""
    sizes = []
    for i in range(workers):
        sizes.append(n // (workers - i))
        n -= sizes[-1]
    return sizes


def order[T: _Item](items: Sequence[T], workers: int) -> list[T]:
    """`items` in the order that starts the slow ones first on every worker (see above)."""
    if workers < 2:
        return list(items)
    slow = sorted((it for it in items if seconds(it.nodeid)), key=lambda it: -seconds(it.nodeid))
    sizes = share_sizes(len(items), workers)
    heads: list[list[T]] = [[] for _ in sizes]
    load = [0.0] * workers
    for it in slow:  # longest first, to the share with the fewest slow seconds that has room
        k = min((k for k in range(workers) if len(heads[k]) < sizes[k]), key=load.__getitem__)
        heads[k].append(it)
        load[k] += seconds(it.nodeid)
    picked = {id(it) for it in slow}
    rest = iter([it for it in items if id(it) not in picked])
    out: list[T] = []
    for head, size in zip(heads, sizes, strict=True):
        out += head
        out += [next(rest) for _ in range(size - len(head))]
    return out
