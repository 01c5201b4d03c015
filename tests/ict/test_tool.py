"""The `ict_analyze` tool, `enforced_interval` and `bullpen ict SYMBOL` on the offline snapshot."""

from __future__ import annotations

import argparse
import json
import logging
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import ict
from bot.cli.ict import register
from core import context
from core.agent.normal import NormalMode
from core.agent.turn import Turn, TurnOptions
from core.errors import DataUnavailable, InvalidArguments, UnknownSymbol
from core.events import Done
from core.testing import MemoryRecorder, ScriptedLLM
from core.tools import MAX_TOOL_RESULT_CHARS
from core.types import LLMResponse, ToolCall
from tools import build_registry
from tools.data import DataConfig, configure
from tools.data.config import get_config
from tools.ict_tool import ICTResult, enforced_interval, ict_analyze, run_ict
from tools.market import load_bars

PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(autouse=True)
def offline_data() -> Iterator[None]:
    """Serve the snapshot whatever an earlier test configured."""
    before = get_config()
    configure(DataConfig())
    yield
    configure(before)


def _keys(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set(value) | {k for v in value.values() for k in _keys(v)}
    if isinstance(value, list):
        return {k for v in value for k in _keys(v)}
    return set()


# --- enforcement ------------------------------------------------------------------------------


def test_chat_interval_overrides_the_model_and_logs(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO):
        enf = enforced_interval("15m", "1h", requested_lookback=1000)
    assert (enf.interval, enf.source_interval, enf.lookback_bars) == ("60min", "1min", 336)
    assert enf.timeframe.key == "1H" and enf.overridden
    assert any("'15m' overridden with '60min'" in n for n in enf.notes)
    assert any("lookback 1000 overridden with 336" in n for n in enf.notes)
    assert any(r.name == "tools.ict_tool" and r.levelno == logging.WARNING
               for r in caplog.records)


def test_enforcement_accepts_keys_and_intervals() -> None:
    assert enforced_interval("1d", "1D").interval == "daily"
    assert enforced_interval("daily", "1d", requested_lookback=365).overridden is False
    assert enforced_interval(None, "4h").source_interval == "60min"
    assert enforced_interval(None, "1w").timeframe.key == "3M"  # weekly row
    assert enforced_interval("4h", None).timeframe.key == "4H"  # no chat setting: as asked
    with pytest.raises(InvalidArguments):
        enforced_interval(None, None)
    with pytest.raises(InvalidArguments):
        enforced_interval("1d", "7 fortnights")


# --- the tool ---------------------------------------------------------------------------------


async def test_the_tool_honours_the_interval_the_chat_set_over_the_models() -> None:
    ctx = context.RunContext(interval="1h")
    token = context.use(ctx)
    try:
        result = await ict_analyze("EURUSD", "15m", lookback=1000)
    finally:
        context.reset(token)
    assert (result.timeframe, result.interval, result.lookback_bars) == ("1H", "60min", 336)
    assert any("timeframe enforced: interval '15m' overridden with '60min'" in n
               for n in result.notes)
    plain = await ict_analyze("EURUSD", "1h", lookback=200)  # no chat setting: as asked
    assert plain.lookback_bars == 200 and not any("enforced" in n for n in plain.notes)


async def test_a_chat_interval_without_a_row_pins_the_interval_and_an_unknown_one_is_ignored(
        ) -> None:
    for chat, asked, expected, note in (
            ("30m", "1h", "30min", "interval '1h' overridden with '30min'"),
            ("30m", "30min", "30min", None),
            ("2h", "1h", "60min", "the chat's timeframe '2h' is unknown; 1h analysed as asked")):
        token = context.use(context.RunContext(interval=chat))
        try:
            result = await ict_analyze("BTC-USD", asked, lookback=120)
        finally:
            context.reset(token)
        assert (result.interval, result.lookback_bars) == (expected, 120)
        assert (note is None) == (not any("enforced" in n or "unknown" in n
                                          for n in result.notes)), result.notes
        assert note is None or any(note in n for n in result.notes), result.notes


async def test_normal_mode_enforces_the_chats_interval_on_the_models_tool_call() -> None:
    call = ToolCall(id="c1", name="ict_analyze",
                    arguments='{"symbol": "EURUSD", "interval": "4h", "lookback": 50}')
    llm = ScriptedLLM([LLMResponse(tool_calls=[call]), LLMResponse(content="Bias explained.")])
    mode = NormalMode(llm=llm, registry=build_registry(), plan=False)
    turn = Turn(text="ICT analysis of EURUSD on the 1h chart", history=[],
                recorder=MemoryRecorder(), options=TurnOptions(intent="ict", interval="1h"))
    events = [e async for e in mode.run(turn)]
    assert events[-1] == Done(text="Bias explained.")
    tool_msg = next(m for m in llm.requests[1]["messages"] if m.role == "tool")
    result = json.loads(tool_msg.content)
    assert (result["interval"], result["lookback_bars"]) == ("60min", 336)
    assert any("'4h' overridden with '60min'" in n for n in result["notes"])


async def test_daily_digest_matches_a_direct_analysis() -> None:
    result = await ict_analyze("NVDA", "1d")
    assert (result.symbol, result.timeframe, result.interval) == ("NVDA", "1D", "daily")
    assert result.currency == "USD" and result.horizon.startswith("daily")
    assert result.source.provider == "snapshot" and result.source.offline
    assert result.source.as_of is not None and result.source.as_of.isoformat() == "2025-02-14"
    assert result.bars == result.lookback_bars == 365 and result.source_interval == "daily"

    bars = await load_bars("NVDA", "1d", 400)
    direct = ict.analyze(bars, interval="1d", options={"lookback_bars": 365})
    assert result.bias == direct.structure.bias
    assert result.last_close == pytest.approx(float(bars["close"].iloc[-1]))
    digest = result.analysis
    assert digest["structure"]["events_total"] == len(direct.structure.events)
    assert digest["fvgs"]["total"] == len(direct.fvgs)
    dr = direct.dealing_range
    assert dr is not None
    assert digest["dealing_range"]["equilibrium"] == pytest.approx(dr.equilibrium, rel=1e-5)
    assert "USD" in result.units


async def test_digest_is_compact_and_has_no_bar_positions() -> None:
    result = await ict_analyze("EURUSD", "1h", stack=True, plan=True)
    text = result.model_dump_json(exclude_none=True)
    assert len(text) < 25_000 < MAX_TOOL_RESULT_CHARS
    keys = _keys(json.loads(text))
    assert not any(k == "index" or k.endswith("_index") for k in keys)
    assert "options" not in result.analysis["meta"]


async def test_four_hour_bars_are_built_from_hourly_per_the_table() -> None:
    result = await ict_analyze("EURUSD", "4h")
    assert result.interval == "4h" and result.source_interval == "60min"
    assert result.bars == 180 and not result.notes
    hourly = await load_bars("EURUSD", "1h", 2000)
    direct = ict.analyze(ict.resample(hourly, "4h"), interval="4h",
                         options={"lookback_bars": 180})
    assert result.last_bar_time == direct.meta.last_bar.time
    assert result.bias == direct.structure.bias


async def test_missing_source_falls_back_and_says_so() -> None:
    result = await ict_analyze("EURUSD", "1h")  # the table's source is 1min: not offline
    assert result.source_interval == "60min" and result.bars == 336
    assert any("no 1min source bars" in n for n in result.notes)


async def test_stack_degrades_where_the_snapshot_has_no_data() -> None:
    result = await ict_analyze("NVDA", "1d", stack=True)
    stack = result.stack
    assert stack is not None
    tfs = {t.interval: t for t in stack.timeframes}
    assert list(tfs) == list(ict.STACK_ORDER)
    assert tfs["daily"].available and tfs["daily"].bars == 365
    for iv in ("4h", "15min", "5min", "1min"):
        assert not tfs[iv].available and "no finer than 1d" in tfs[iv].note
    assert stack.status == "wait" and stack.wait_reason == "Waiting for a 15m analysis"
    assert result.bias == result.analysis["structure"]["bias"]  # no 15m: the chart's own


async def test_stack_is_anchored_at_the_analysed_bar() -> None:
    run = await run_ict("BTC-USD", "15m", stack=True)
    assert run.stack is not None
    anchor = ict.bar_end(pd.Timestamp(run.frame.bars.index[-1]), "15min")
    assert "daily" in run.stack.missing and "before the analysed time" in \
        run.stack.missing["daily"]  # the daily file ends two months earlier
    assert set(run.stack.analyses) == {"4h", "15min"}
    for iv, a in run.stack.analyses.items():
        assert ict.bar_end(pd.Timestamp(a.meta.last_bar.time), iv) <= anchor
    assert run.stack.analyses["4h"].meta.interval == "4h"
    assert run.bias == run.stack.stack.bias  # the 15m sets the intraday bias


async def test_forming_bar_is_dropped_unless_asked() -> None:
    bars = await load_bars("EURUSD", "1h", 5)
    now = (bars.index[-1] + timedelta(minutes=30)).to_pydatetime()
    closed = await run_ict("EURUSD", "1h", now=now)
    assert closed.analysis.meta.last_bar.time == bars.index[-2]
    kept = await run_ict("EURUSD", "1h", now=now, include_current_bar=True)
    assert kept.analysis.meta.includes_current_bar
    assert kept.analysis.meta.last_bar.time == bars.index[-1]


async def test_chart_is_emitted_as_a_png() -> None:
    ctx = context.RunContext()
    token = context.use(ctx)
    try:
        result = await ict_analyze("BTC-USD", "15m", chart=True)
    finally:
        context.reset(token)
    assert len(ctx.files) == 1 and result.chart == ctx.files[0].filename
    f = ctx.files[0]
    assert f.kind == "image" and f.mime_type == "image/png" and f.data[:8] == PNG
    assert "BTC-USD" in f.caption and "2021-12-29" in f.caption


async def test_plan_proposal_is_validated_or_says_wait() -> None:
    result = await ict_analyze("NVDA", "1d", plan=True)
    assert result.proposal is not None and result.proposal.status == "plan"
    plan = result.proposal.plan
    assert plan is not None and plan.timeframe == "1D"
    data = plan.model_dump()
    data["risk"] = {"risk_percent": plan.risk_percent}
    assert ict.validate_plan(data, bias=result.bias, timeframe="1D").ok
    waiting = await ict_analyze("AAPL", "1w", plan=True)
    assert waiting.proposal is not None and waiting.proposal.status == "wait"
    assert waiting.proposal.reason


# --- through the registry ---------------------------------------------------------------------


async def test_registered_with_a_derived_schema() -> None:
    reg = build_registry()
    spec = reg.get("ict_analyze")
    params = spec.schema()["function"]["parameters"]["properties"]
    assert set(params) == {"symbol", "interval", "lookback", "session", "include_current_bar",
                           "stack", "chart", "plan"}
    assert all(p.get("description") for p in params.values())
    outcome = await reg.call("ict_analyze", {"symbol": "EURUSD", "interval": "4h"})
    assert outcome.ok and isinstance(outcome.result, ICTResult)
    assert "truncated" not in outcome.content
    assert json.loads(outcome.content)["source"]["as_of"] == "2017-12-29"


@pytest.mark.parametrize(("args", "error", "text"), [
    ({"symbol": "NVDA", "interval": "7x"}, InvalidArguments, "unknown interval"),
    ({"symbol": "NVDA", "interval": "4h"}, DataUnavailable, "no finer than 1d"),
    ({"symbol": "ZZZQQX", "interval": "1d"}, UnknownSymbol, "Unknown symbol"),
    ({"symbol": "NVDA", "lookback": 2}, InvalidArguments, "lookback"),
])
async def test_errors_come_back_typed(args: dict[str, Any], error: type[Exception],
                                      text: str) -> None:
    outcome = await build_registry().call("ict_analyze", args)
    assert not outcome.ok and isinstance(outcome.error, error)
    assert text in outcome.content


# --- bullpen ict SYMBOL -----------------------------------------------------------------------


def _cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bullpen")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_cli_symbol_json_with_plan(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["ict", "NVDA", "--interval", "1d", "--json", "--plan"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["analysis"]["meta"]["symbol"] == "NVDA"
    assert out["analysis"]["meta"]["bars"] == 365
    assert out["source"]["as_of"] == "2025-02-14" and out["source"]["offline"] is True
    assert out["plan"]["plan"] is not None or out["plan"]["reason"]


def test_cli_symbol_summary_stack_and_chart(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    chart = tmp_path / "ict.png"
    assert _cli(["ict", "EURUSD", "--interval", "1h", "--stack", "--chart", str(chart)]) == 0
    text = capsys.readouterr().out
    assert text.startswith("EURUSD · 60min · 336 bars")
    assert "Bias stack:" in text and "15min: left out" in text
    assert "Source: snapshot" in text and "2017-12-29" in text
    assert chart.read_bytes()[:8] == PNG


def test_cli_symbol_errors_are_exit_code_two(capsys: pytest.CaptureFixture[str]) -> None:
    assert _cli(["ict", "NVDA", "--interval", "4h"]) == 2
    assert "no finer than 1d" in capsys.readouterr().err
    assert _cli(["ict", "ZZZQQX"]) == 2
    assert "Unknown symbol" in capsys.readouterr().err
