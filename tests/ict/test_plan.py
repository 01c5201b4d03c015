"""Trade-plan mode: intent detection, validation with reasons, deterministic proposals."""

from __future__ import annotations

import json
from typing import Any

import pytest

import ict
from tests.ict.data import eurusd_hourly, nvda_daily


def _plan(**over: Any) -> dict[str, Any]:
    plan: dict[str, Any] = {
        "timeframe": "4H", "horizon": "medium swing (≈30 days)",
        "strategy": "order-block retest", "entry": 1.1000, "stop": 1.0950,
        "targets": [1.1100, 1.1200], "confluence": ["bullish ChoCH", "discount"],
        "risk": {"risk_percent": 1.0, "notes": "1% of equity"},
    }
    plan.update(over)
    return plan


@pytest.mark.parametrize(("text", "intent"), [
    ("/plan EURUSD", True), ("  /plan", True), ("give me a trade plan for NVDA", True),
    ("where is the entry and stop?", True), ("stop-loss and take profit please", True),
    ("给我一个交易计划", True), ("止损放在哪里", True),
    ("what is the bias on the 15m?", False), ("/planet", False), ("", False),
])
def test_plan_intent(text: str, intent: bool) -> None:
    assert ict.detect_plan_intent(text) is intent


def test_a_sound_plan_passes() -> None:
    check = ict.validate_plan(_plan(), bias="bullish", timeframe="4H")
    assert check.ok and check.reasons == ()
    assert check.plan is not None and check.plan.direction == "long"
    assert check.plan.risk.reward_risk == pytest.approx(2.0)
    assert check.plan.risk.risk_per_unit == pytest.approx(0.005)
    assert ict.validate_plan(_plan(timeframe="4h"), timeframe="4H").ok  # interval spelling


def test_stop_on_the_wrong_side_is_rejected() -> None:
    check = ict.validate_plan(_plan(direction="long", stop=1.1050), bias="bullish")
    assert not check.ok
    assert any("stop 1.105 is not below the entry 1.1" in r for r in check.reasons)
    short = ict.validate_plan(_plan(direction="short", stop=1.0950, targets=[1.09]))
    assert any("not above the entry" in r for r in short.reasons)


def test_targets_against_the_bias_are_rejected() -> None:
    short = _plan(stop=1.1050, targets=[1.0900])  # a short: stop above, target below
    check = ict.validate_plan(short, bias="bullish")
    assert not check.ok
    assert check.reasons == ("targets point down (short plan) but the bias is bullish",)
    assert ict.validate_plan(short, bias="bearish").ok


def test_targets_on_the_wrong_side_of_the_entry() -> None:
    check = ict.validate_plan(_plan(targets=[1.1100, 1.0900]), bias="bullish")
    assert check.reasons == ("target 1.09 is on the wrong side of the entry 1.1 for a long "
                             "plan",)


def test_timeframe_must_echo_the_enforced_one() -> None:
    check = ict.validate_plan(_plan(timeframe="1D"), timeframe="4H")
    assert any("not the enforced timeframe" in r for r in check.reasons)


def test_malformed_plans_list_every_reason() -> None:
    with pytest.raises(ict.PlanValidationError) as info:
        ict.parse_plan(_plan(entry="soon", targets=[], horizon=""))
    reasons = info.value.reasons
    assert any("entry must be a number" in r for r in reasons)
    assert any("targets must be a non-empty list" in r for r in reasons)
    assert any("horizon must be a non-empty string" in r for r in reasons)
    missing = ict.validate_plan({"entry": 1.0})
    assert not missing.ok and "missing key(s)" in missing.reasons[0]
    assert ict.validate_plan("not a plan").reasons == ("a plan must be a JSON object",)  # type: ignore[arg-type]


@pytest.mark.parametrize(("loader", "interval"), [(eurusd_hourly, "1h"), (nvda_daily, "1d")])
def test_proposals_are_valid_and_follow_the_bias(loader: Any, interval: str) -> None:
    bars = loader()
    proposed = 0
    for end in range(600, len(bars), 450):
        analysis = ict.analyze(bars.iloc[:end], interval=interval)
        proposal = ict.propose_plan(analysis)
        if proposal.plan is None:
            assert proposal.reason
            continue
        proposed += 1
        plan = proposal.plan
        assert ict.validate_plan(plan, bias=analysis.bias, timeframe=plan.timeframe).ok
        long = analysis.bias == "bullish"
        assert plan.direction == ("long" if long else "short")
        if long:
            assert plan.stop < plan.entry < min(plan.targets)
        else:
            assert plan.stop > plan.entry > max(plan.targets)
        assert plan.timeframe == ict.timeframe_for_interval(interval).key
        assert plan.risk.reward_risk >= 1.0
        json.dumps(plan.to_dict())
    assert proposed >= 3


def test_neutral_bias_gives_no_plan() -> None:
    analysis = ict.analyze(eurusd_hourly().iloc[:8], interval="1h")
    proposal = ict.propose_plan(analysis)
    assert proposal.plan is None and proposal.reason == "no directional bias: no plan"
