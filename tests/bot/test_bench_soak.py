"""`bullpen bench soak` at a small size: a real serve process on the lean Telegram fake for
about 12 s. Its JSON has the shape the issue asks for and nothing is lost; the numbers (rates,
latencies, memory growth) are the bench's to print, not this test's to assert: it must hold
on a loaded 2-core machine, so every wait in it is an event with a generous bound."""

from __future__ import annotations

import math

from bot.benches import soak


def test_bench_soak_short_run(pg_dsn: str) -> None:
    result = soak.run(chats=3, minutes=12 / 60, interval_s=4.0, warmup_minutes=4 / 60,
                      drain_s=120.0, database_url=pg_dsn)

    for key in ("messages_per_s", "first_reply_ms", "final_ms", "rss_per_minute",
                "warmup_minutes", "growth_pct", "slope_mb_per_min", "target_growth_pct",
                "memory_flat", "lost", "inbound_states", "within_target", "answered"):
        assert key in result, key
    assert result["bench"] == "soak" and result["chats"] == 3
    assert result["serve_alive"], result
    assert result["lost"] == 0, result
    assert result["inbound_not_answered"] == 0, result["inbound_states"]
    # the three warm-up questions, and every question of the timed load, answered and stored
    assert result["inbound_states"] == {"answered": result["answered"] + 3}
    assert result["answered"] >= 3
    assert sum(result["answered_per_minute"]) == result["answered_in_time"]
    for name in ("first_reply_ms", "final_ms"):
        assert set(result[name]) == {"p50", "p99"}
        assert 0 < result[name]["p50"] <= result[name]["p99"]
    assert result["first_reply_ms"]["p50"] <= result["final_ms"]["p50"]
    series = result["rss_per_minute"]
    assert len(series) >= 2, series  # a point every 4 s of the 12
    for point in series:
        assert set(point) == {"minute", "rss_mb", "peak_rss_mb", "answered"}
        assert point["rss_mb"] > 50 and not math.isnan(point["rss_mb"])
    assert result["growth_pct"] is not None
    assert result["memory_flat"] == (result["growth_pct"] <= soak.TARGET_GROWTH_PCT)
    assert result["serve_log_errors"] == 0, result["serve_log_first_errors"]
