"""The offline analyst's ICT answer: templated Markdown from the tool's numbers, with the chart."""

from __future__ import annotations

import pytest

from analyst.ict_answer import ict_answer
from analyst.offline import OfflineAnalyst
from core.agent.turn import Turn, TurnOptions
from core.errors import DataUnavailable, UnknownSymbol
from core.events import Done, File, ToolFinished
from core.testing import MemoryRecorder
from tests.ict.test_tool import PNG, offline_data  # noqa: F401 (autouse fixture)
from tools import build_registry
from tools.ict_tool import run_ict
from tools.market import load_bars


async def test_daily_answer_with_a_plan() -> None:
    text, files = await ict_answer("NVDA", "1d", True)
    assert text.startswith("**ICT analysis · NVIDIA Corp (NVDA) · 1D** · daily")
    bars = await load_bars("NVDA", "1d", 1)
    assert f"last close {float(bars['close'].iloc[-1]):g} USD" in text
    plan = (await run_ict("NVDA", "1d")).proposal().plan
    assert plan is not None
    assert "**Trade plan** (computed from the analysis" in text
    assert f"Entry: {plan.entry:g} USD" in text and f"Stop: {plan.stop:g} USD" in text
    assert "Data as of 2025-02-14" in text and "offline snapshot" in text
    assert "Bias stack" not in text  # daily: no intraday stack
    assert [f.filename for f in files] == ["ict_NVDA_daily.png"] and files[0].data[:8] == PNG


async def test_chinese_answer_with_the_stack() -> None:
    text, files = await ict_answer("EURUSD", "1h", False, lang="zh")
    assert text.startswith("**ICT 分析 · 欧元兑美元 (EURUSD) · 1H** · 短波段（约14天）")
    assert "**多周期偏向：**" in text and "未计入评级" in text and "15分钟、5分钟、1分钟" in text
    assert "数据截至 2017-12-29" in text and "不构成投资建议" in text
    assert "交易计划" not in text and len(files) == 1


async def test_intraday_stack_lists_what_was_left_out() -> None:
    text, _ = await ict_answer("BTC-USD", "15m", False)
    assert "**Bias stack:** bearish" in text or "**Bias stack:** bullish" in text \
        or "**Bias stack:** neutral" in text
    assert "Not graded (no data, or data ending too early): daily, 5min, 1min." in text
    assert "✅" in text or "❌" in text
    assert "**Session (NY):**" in text


async def test_plan_without_bias_says_wait() -> None:
    text, _ = await ict_answer("AAPL", "1w", True)
    assert "**No plan: wait** – no directional bias: no plan." in text


@pytest.mark.parametrize(("symbol", "interval", "error"), [
    ("ZZZQQX", "1d", UnknownSymbol), ("NVDA", "4h", DataUnavailable),
])
async def test_errors_are_raised_for_the_analyst_to_word(symbol: str, interval: str,
                                                         error: type[Exception]) -> None:
    with pytest.raises(error):
        await ict_answer(symbol, interval, False)


async def test_wired_into_the_offline_analyst() -> None:
    analyst = OfflineAnalyst(registry=build_registry(), find_symbols=lambda _: [],
                             ict_answer=ict_answer)
    recorder = MemoryRecorder()
    turn = Turn(text="ICT analysis of NVDA on the 1d chart", history=[], recorder=recorder,
                options=TurnOptions(intent="ict", symbol="NVDA", interval="1d"))
    events = [e async for e in analyst.run(turn)]
    assert any(isinstance(e, File) and e.file.data[:8] == PNG for e in events)
    assert any(isinstance(e, ToolFinished) and e.ok for e in events)
    done = events[-1]
    assert isinstance(done, Done) and done.label.startswith("offline analyst")
    assert "ICT analysis · NVIDIA Corp (NVDA) · 1D" in done.text
    assert recorder.messages[-1].content == done.text
