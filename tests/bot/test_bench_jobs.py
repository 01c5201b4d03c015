"""`bullpen bench jobs` at a small size: it runs end to end and its robust facts hold (every
chat gets its report once, one report per symbol set). Timings are the bench's to print, not
this test's to assert."""

from __future__ import annotations

from bot.benches import jobs


def test_bench_jobs_small_run(pg_server: str) -> None:
    result = jobs.run(subscriptions=60, symbols=6, load_subscriptions=1000,
                      database_url=pg_server)

    for key in ("ours", "peer", "peer_ptb_rate_limiter", "load", "load_100k_s", "targets",
                "met", "within_target", "wall_s", "load_avg", "report_builder", "limit",
                "vs_peers", "direction", "load_avg_1m"):
        assert key in result, key
    ours = result["ours"]
    for key in ("delivered", "duplicates", "lost", "rate_per_s", "rate_share", "lateness_s",
                "reports_built", "builder_calls", "peak_rss_mb", "due_s", "deliveries"):
        assert key in ours, key
    assert set(ours["lateness_s"]) == {"p50", "p99", "max"}
    assert ours["delivered"] == 60
    assert ours["duplicates"] == 0
    assert ours["lost"] == 0
    assert ours["wrong_report"] == 0 and ours["unexpected_chat"] == 0
    assert ours["reports_built"] == 6 and ours["builder_calls"] == 6
    assert ours["fires"] == {"done": 60}
    assert ours["deliveries"] == {"delivered": 60}
    assert not ours["timed_out"]
    for peer in ("peer", "peer_ptb_rate_limiter"):
        side = result[peer]
        assert side["delivered"] + side["lost"] == 60
        assert side["duplicates"] == 0
        # a competent peer: 429s retried after retry_after, a misfire grace that fits
        assert side["lost"] == 0, side
        assert side["misfire_grace_time_s"] == jobs.PEER_MISFIRE_GRACE_S
        assert side["reports_built"] == 60  # one job per subscription builds its own
        assert sum(side["outcomes"].values()) >= 60
    assert result["load"]["loaded"] == 1000
    assert result["load"]["schedules"] == 144
