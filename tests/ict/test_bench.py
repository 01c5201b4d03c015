"""The ICT bench runs and reports every figure (timings are the bench's job, not asserted)."""

from __future__ import annotations

import json

from bot.benches.ict import run


def test_bench_reports_both_sides() -> None:
    out = run(bars=400, repeat=1)
    json.dumps(out)
    for key in ("ours_median_ms", "peer_median_ms", "ratio", "stack_median_ms",
                "peer_default_swing_length_median_ms"):
        assert isinstance(out[key], float) and out[key] > 0
    assert "400 bars" in out["data"] and out["peer"].startswith("smartmoneyconcepts")
    assert out["found"]["ours"]["fvgs"] > 0 and out["found"]["peer"]["fvgs"] > 0
