"""`bullpen bench sandbox` runs and reports every case against its peer (no timing asserted)."""

from __future__ import annotations

import psutil

from bot.benches import sandbox as bench


async def test_bench_reports_cold_warm_and_peer() -> None:
    out = await bench.run(repeat=2)
    assert out["bench"] == "sandbox" and out["same_answer"] is True
    for case in ("startup", "round_trip", "warm_round_trip", "peer_round_trip"):
        assert out[case]["n"] >= 2 and out[case]["median_ms"] > 0
        assert out[case]["p99_ms"] >= out[case]["min_ms"]
    assert out["ratio_median"] > 0 and out["warm_ratio_median"] > 0
    assert "in-process" in out["peer"]
    assert psutil.Process().children(recursive=True) == []
