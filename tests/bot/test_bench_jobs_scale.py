"""`bullpen bench jobs_scale` at a small size: it runs end to end on real Postgres and its
robust facts hold (every chat's fire stored once, none lost; a /subscribe reaches the leader
without a full resync; a restart's catch-up fires nothing twice). Timings are the bench's to
print, not this test's to assert."""

from __future__ import annotations

from bot.benches import jobs_scale


def test_bench_jobs_scale_small_run(pg_server: str) -> None:
    result = jobs_scale.run(fire=600, load=1500, symbols=20, database_url=pg_server)

    for key in ("fire", "load", "change", "targets", "met", "within_target", "direction",
                "load_avg_1m", "cpus"):
        assert key in result, key
    fire = result["fire"]
    assert fire["delivered_chats"] == 600 and fire["deliveries"] == 600
    assert fire["duplicates"] == 0 and fire["lost"] == 0
    assert fire["job_fires"] == {"done": 600}
    assert fire["reports_built"] == 20  # one per symbol set
    load = result["load"]
    assert load["schedules"] == 144
    for key in ("sync_s", "catch_up_first_s", "catch_up_again_s", "load_s",
                "sync_loop_stall_max_ms", "catch_up_again_loop_stall_max_ms"):
        assert isinstance(load[key], float), key
    # the catch-up recorded each schedule's missed fires once; the second one added nothing
    assert set(load["job_fires_after"]) <= {"missed", "done"}
    for name in ("new_schedule", "existing_schedule"):
        assert result["change"][name]["full_resyncs"] == 0, result["change"][name]
    assert result["met"]["change_full_resyncs"] is True
