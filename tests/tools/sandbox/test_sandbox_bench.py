"""`bullpen bench sandbox` runs and reports every case, jailed and not, against its peer (no
timing asserted)."""

from __future__ import annotations

from bot.benches import sandbox as bench
from tests import warm_bullpen


async def test_bench_reports_cold_warm_jailed_unjailed_and_peer() -> None:
    out = await bench.run(repeat=2)
    assert out["bench"] == "sandbox" and out["same_answer"] is True
    assert out["peer_round_trip"]["n"] >= 2 and "in-process" in out["peer"]
    for variant in ("jailed", "unjailed"):
        for case in ("startup", "round_trip", "warm_round_trip", "warm_back_to_back"):
            stats = out[variant][case]
            assert stats["n"] == 2 and stats["median_ms"] > 0
            assert stats["p99_ms"] >= stats["min_ms"]
    assert out["jailed"]["isolation"]["jail"] == "bubblewrap"
    assert "jail" not in out["unjailed"]["isolation"]
    assert set(out["jail_cost"]) == {"startup", "round_trip", "warm_round_trip",
                                     "warm_back_to_back"}
    assert all(r > 0 for r in out["ratio_median"].values()) and "lower is better" in \
        out["direction"]
    assert warm_bullpen.descendants() == []
