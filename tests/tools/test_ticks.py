"""Trade-plan prices on the instrument's tick (issue 29: /plan 000001 1d printed a stop at
10.5096 CNY; an A-share ticks at 0.01): the tick sizes, the rounding each price gets, and
/plan through the offline analyst and the LLM plan mode on real data."""

from __future__ import annotations

import json
import re
from decimal import Decimal

import pytest

from analyst.ict_answer import ict_answer, plan_markdown
from analyst.plan_mode import PlanMode
from core.agent.turn import Turn, TurnOptions
from core.events import Done
from core.testing import MemoryRecorder, ScriptedLLM, text
from ict import PlanRisk, TradePlan
from tests.ict.test_tool import offline_data  # noqa: F401 (autouse fixture)
from tools import build_registry
from tools.ict_tool import PlanOut, run_ict
from tools.ticks import on_tick, plan_on_tick, tick_size, tick_text


def _on(value: float, tick: str) -> bool:
    return Decimal(str(value)) % Decimal(tick) == 0


@pytest.mark.parametrize(("market", "kind", "price", "tick"), [
    ("cn", "stock", 10.5096, 0.01), ("cn", "index", 3800.0, 0.01), ("cn", "fund", 1.234, 0.001),
    ("us", "stock", 138.85, 0.01), ("us", "stock", 1.0, 0.01), ("us", "stock", 0.5123, 0.0001),
    ("crypto", "crypto", 59016.7, None), ("fx", "fx", 1.2007, None), ("hk", "stock", 300.0, None),
])
def test_tick_sizes(market: str, kind: str, price: float, tick: float | None) -> None:
    assert tick_size(market, kind, price) == tick


def test_rounding_is_decimal_and_directed() -> None:
    assert on_tick(10.5096, 0.01) == 10.51 and on_tick(10.5046, 0.01) == 10.5
    assert on_tick(10.5001, 0.01, "up") == 10.51 and on_tick(10.5099, 0.01, "down") == 10.5
    assert on_tick(0.123456, 0.0001) == 0.1235
    assert on_tick(10.5096, None) == 10.5096
    assert tick_text(10.5, 0.01) == "10.50" and tick_text(0.1235, 0.0001) == "0.1235"


def _plan(direction: str, entry: float, stop: float, targets: tuple[float, ...]) -> TradePlan:
    return TradePlan("1D", "swing", "order-block retest", direction, entry,  # type: ignore[arg-type]
                     stop, targets, ("x",), PlanRisk(abs(entry - stop), 0.0, 1.0, ""))


def test_the_stop_moves_away_from_the_entry_and_the_risk_is_measured_again() -> None:
    short = plan_on_tick(_plan("short", 10.4312, 10.5016, (9.6849, 9.0712)), 0.01)
    assert (short.entry, short.stop, short.targets) == (10.43, 10.51, (9.68, 9.07))
    assert short.risk.risk_per_unit == 0.08 and short.risk.reward_risk == 9.38
    long = plan_on_tick(_plan("long", 8.3449, 8.1999, (8.5301,)), 0.01)
    assert (long.entry, long.stop, long.targets) == (8.34, 8.19, (8.53,))
    narrow = plan_on_tick(_plan("long", 8.341, 8.338, (8.5,)), 0.01)  # zone under a tick
    assert narrow.stop == 8.33 and narrow.entry == 8.34
    assert plan_on_tick(short, None) is short


def _prices(markdown: str) -> list[str]:
    lines = [ln for ln in markdown.splitlines()
             if ln.startswith(("- Entry", "- Stop", "- Targets"))]
    assert len(lines) == 3, markdown
    return re.findall(r"\d[\d,]*\.\d+|\d+", " ".join(ln.split(":", 1)[1] for ln in lines))


async def test_plan_000001_1d_prices_are_on_the_cent() -> None:
    run = await run_ict("000001", "1d")
    assert run.tick == 0.01
    plan = run.proposal().plan
    assert plan is not None
    assert all(_on(p, "0.01") for p in (plan.entry, plan.stop, *plan.targets))
    assert _on(plan.risk.risk_per_unit, "0.01")
    body, _ = await ict_answer("000001", "1d", True)
    prices = _prices(body)
    assert prices and all(re.fullmatch(r"[\d,]+\.\d{2}", p) for p in prices), prices


async def test_a_models_plan_is_printed_on_the_tick() -> None:
    """The LLM plan mode validates the model's plan, then prints it on the tick."""
    plan = (await run_ict("000001", "1d")).proposal().plan
    assert plan is not None
    reply = {"timeframe": "1D", "horizon": plan.horizon, "strategy": plan.strategy,
             "direction": plan.direction, "entry": plan.entry + 0.0037,
             "stop": plan.stop + 0.0004 if plan.direction == "short" else plan.stop - 0.0004,
             "targets": [t + 0.0021 for t in plan.targets], "confluence": ["structure"],
             "risk": {"risk_percent": 1, "notes": "a close beyond the stop"}}
    llm = ScriptedLLM([text(f"```json\n{json.dumps(reply)}\n```\nWhy.")])
    mode = PlanMode(llm=llm, registry=build_registry())
    events = [e async for e in mode.run(Turn(
        text="/plan 000001 1d", history=[], recorder=MemoryRecorder(), lang="en",
        options=TurnOptions(intent="plan", symbol="000001", interval="1d")))]
    done = events[-1]
    assert isinstance(done, Done)
    prices = _prices(done.text)
    assert prices and all(re.fullmatch(r"[\d,]+\.\d{2}", p) for p in prices), prices


def test_plan_out_puts_a_plan_on_the_tick() -> None:
    out = PlanOut.of(_plan("short", 10.4312, 10.5096, (9.6849,)), tick=0.01)
    assert (out.entry, out.stop, out.targets) == (10.43, 10.51, [9.68])
    assert "10.51 CNY" in plan_markdown(out, currency="CNY", tick=0.01)


def test_a_half_tick_midpoint_in_floats_rounds_as_the_half_it_is() -> None:
    mid = (8.36 + 8.37) / 2  # 8.364999999999998 in floats
    assert on_tick(mid, 0.01) == 8.37 and on_tick(mid, 0.01, "down") == 8.36
    assert on_tick(10.435, 0.01) == 10.44


def test_confluence_prices_are_put_on_the_tick_and_nothing_else_is() -> None:
    from tools.ticks import words_on_tick

    assert words_on_tick("entry zone: bearish order block 10.39-10.47 (CE 10.435)", 0.01) == (
        "entry zone: bearish order block 10.39-10.47 (CE 10.44)")
    assert words_on_tick("target 9.6849: PDL", 0.01) == "target 9.68: PDL"
    assert words_on_tick("target 1716.165: PDL", 0.01) == "target 1,716.17: PDL"
    for line in ("last ChoCH down at 2024-09-09T00:00:00+08:00 (displaced)",
                 "equilibrium (50% of the dealing range)", "stack grade A (85), ready"):
        assert words_on_tick(line, 0.01) == line
    assert words_on_tick("target 59016.75: PDL", None) == "target 59016.75: PDL"


_PLAN_LINES = ("- Entry", "- Stop", "- Targets", "- Confluence")


@pytest.mark.parametrize(("symbol", "interval"), [
    ("000001", "1d"), ("600000", "1d"), ("000001", "1h"), ("399006", "1d"), ("NVDA", "1d")])
async def test_every_price_a_plan_prints_is_on_the_tick(symbol: str, interval: str) -> None:
    """Entry, stop, targets and the prices the confluence names (the entry zone's CE was
    printed as 8.335, 9.885, 146.135 next to an entry on the cent), on real data."""
    body, files = await ict_answer(symbol, interval, True)
    plan = body.split("**Trade plan**", 1)[1]
    lines = [ln for ln in plan.splitlines() if ln.startswith(_PLAN_LINES)]
    assert len(lines) == 4, plan
    prices = [p.replace(",", "") for ln in lines
              for p in re.findall(r"(?<![\d:T+-])\d[\d,]*\.\d+", ln.split(":", 1)[1])]
    assert len(prices) >= 5, lines
    assert all(re.fullmatch(r"\d+\.\d{2}", p) and _on(float(p), "0.01") for p in prices), prices
    assert "(CE " in lines[-1]
    assert files and files[0].kind == "image"  # the chart draws zones, not plan prices
