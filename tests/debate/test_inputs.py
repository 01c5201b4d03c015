"""Debates honest about their inputs (issue 29 item 5), on the real offline data packs where
the row is about real data:

- /debate 600519 (one day of prices, no statements offline) says why in one sentence, in the
  asker's language, not the providers' error text;
- /debate 000001 (2020 Q1 statements next to a 2024 price) gives no BUY/SELL verdict, and
  000001 is Ping An Bank while 上证指数 is debated on the SSE Composite's own bars;
- 601318's beta is measured on the CSI 300 bars that overlap its history (2019-2020), and the
  window is said.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pandas as pd
import pytest

from core.words import catalogue
from debate import offline as offline_panel
from debate.evidence import STALE_CONFIDENCE_FACTOR, Evidence, _age, gather_evidence, stale_sentence
from debate.grounding import SourceCatalog
from debate.metrics import Fundamentals, beta_fit, price_metrics
from debate.mode import DebateMode, apply_input_limits
from debate.models import DebateArtifact, DebateMeta
from tests.debate.helpers import (
    TODAY,
    SeatFake,
    moderator,
    produce,
    reply,
    router,
    run_mode,
    synthetic_bars,
)
from tools.data.config import DataConfig, configure, get_config
from tools.symbol_lookup import resolve_symbol


@pytest.fixture(autouse=True)
def offline_data() -> Iterator[None]:
    """Serve the offline snapshot (the real data packs) whatever an earlier test set."""
    before = get_config()
    configure(DataConfig())
    yield
    configure(before)


def real_mode(registry) -> DebateMode:
    """The offline experts on the real data layer (no synthetic loader)."""
    return DebateMode(llm=None, registry=registry, make_pdf=False, today=lambda: TODAY)


# --- a debate that cannot run -------------------------------------------------------------------


async def test_600519_cannot_be_debated_and_says_why_in_one_sentence(registry):
    events, rec = await run_mode(real_mode(registry), "600519")
    assert [e.type for e in events][-1] == "failed"
    assert events[-1].error == (
        "No debate on 贵州茅台 (600519): the offline data has only one day of its prices "
        "(2023-08-25) and no financial statements, and a debate needs a price history.")
    assert rec.messages == []


async def test_the_cannot_run_sentence_is_chinese_for_a_chinese_asker(registry):
    events, _ = await run_mode(real_mode(registry), "茅台 值得买吗", lang="zh")
    error = events[-1].error
    assert events[-1].type == "failed"
    assert error == ("无法对 贵州茅台 (600519) 进行辩论：离线数据只有它一天的价格（2023-08-25），"
                     "没有财务报表，而辩论需要一段价格历史。")
    for raw in ("akshare", "it holds", "offline:", "snapshot", "unavailable"):
        assert raw not in error


def test_every_sentence_about_inputs_exists_in_both_languages():
    debate = {k: v for k, v in catalogue().items() if k.startswith("debate.")}
    assert debate
    for key, table in debate.items():
        assert set(table) == {"en", "zh"}, key
        if key == "debate.write_in":  # told to the model, whose prompts are English
            continue
        zh = table["zh"]
        words = re.sub(r"\{[^}]*\}", "", zh)  # the values filled in are not words
        words = re.sub(r"\b[A-Z][A-Z0-9_]+\b", "", words)  # nor a setting's name
        cjk = sum("\u4e00" <= ch <= "\u9fff" for ch in words)
        latin = sum(ch.isascii() and ch.isalpha() for ch in words)
        assert cjk > 2 * latin, (key, zh)  # reads as Chinese, not English with a few words
        fields = {f for f in _fields(table["en"])}
        assert fields == set(_fields(zh)), key
    assert _age(54, "zh") == "4.5 年" and _age(11, "en") == "11 months"


def _fields(template: str) -> list[str]:
    import string

    return [f for _, f, _, _ in string.Formatter().parse(template) if f]


# --- fundamentals older than the price ----------------------------------------------------------


async def test_000001_is_the_bank_and_its_2020_statements_withhold_a_2024_verdict(registry):
    mode = real_mode(registry)
    out, _, _ = await produce(mode, "000001")
    art = out.artifact
    assert (art.meta.ticker, art.meta.name) == ("000001", "平安银行")
    assert "000001.sz" in art.meta.data_source and art.meta.data_as_of == "2024-09-19"
    c = art.conclusion
    assert c.action == "HOLD" and c.withheld and c.confidence == 0.0 and not c.consensus
    sentence = ("No BUY/SELL verdict: the latest financial statements (2020一季报, period "
                "ended 2020-03-31) are 4.5 years older than the price (2024-09-19), past the "
                "18-month limit; HOLD here means insufficient data.")
    assert c.caveats == [sentence] and c.text.startswith(sentence)
    assert "The panel's own reading (" in c.text  # what the panel said is kept, after it
    assert sentence in out.markdown and "BUY** ·" not in out.markdown
    bb, _, _ = await produce(mode, "000001", panel="bull_bear", lang="zh")
    c = bb.artifact.conclusion
    assert c.action == "HOLD" and c.caveats == [
        "不给出买入/卖出结论：最新财务报表（2020一季报，截至 2020-03-31）比价格数据（2024-09-19）"
        "早 4.5 年，超过 18 个月的上限；此处的“持有”表示数据不足。"]


async def test_a_model_panels_buy_on_stale_statements_is_withheld_too(registry):
    """The limit holds whatever panel ran: the models are told the statements are stale, and
    a unanimous BUY (consensus) on 2020 statements next to a 2024 price is not a verdict."""
    scripts = {s: [reply("BUY", 0.9), reply("BUY", 0.9)]
               for s in ("fundamental", "risk", "growth", "sentiment")}
    scripts["moderator"] = [moderator("stop", "BUY")]
    async with SeatFake(scripts) as fake:
        llm = router(fake)
        mode = DebateMode(llm=llm, registry=registry, make_pdf=False, today=lambda: TODAY)
        out, _, _ = await produce(mode, "000001")
        await llm.aclose()
    c = out.artifact.conclusion
    assert c.action == "HOLD" and c.withheld and c.confidence == 0.0
    assert c.text.startswith("No BUY/SELL verdict: the latest financial statements (2020一季报")
    assert "The panel's own reading (BUY)" in c.text
    context = fake.by_seat["fundamental"][0]["messages"][1]["content"]
    assert "4.5 years older than the price (2024-09-19)" in context  # the models were told


async def test_the_sse_composite_is_debated_on_its_own_bars_not_the_banks(registry):
    out, _, _ = await produce(real_mode(registry), "上证指数")
    art = out.artifact
    assert (art.meta.ticker, art.meta.name) == ("000001.SH", "上证指数")
    assert "000001.sh" in art.meta.data_source and art.meta.currency == ""
    close = next(m.value for m in art.metrics if m.key == "close")
    assert close is not None and close > 1000  # index points, not the bank's ~10 CNY
    assert not art.conclusion.caveats  # an index has no statements to be stale


def _evidence(period_end: str, period: str = "2024三季报") -> Evidence:
    bars = synthetic_bars(11, 20.0)  # ends 2025-06-30
    sym = resolve_symbol("600519")
    pm = price_metrics(bars)
    fund = Fundamentals(period=period, period_end=period_end, pe=12.0, pb=1.1, roe_pct=14.0,
                        net_margin_pct=30.0, debt_ratio_pct=40.0, revenue_yoy_pct=35.0,
                        net_profit_yoy_pct=45.0)
    return Evidence(symbol=sym, bars=bars, price=pm, fundamentals=fund,
                    catalog=SourceCatalog())


def _artifact(ev: Evidence, lang: str = "en") -> DebateArtifact:
    from datetime import UTC, datetime

    out = offline_panel.run_experts(ev, lang=lang, today=TODAY)
    meta = DebateMeta(panel="experts", ticker="600519", generated_at=datetime.now(UTC))
    return DebateArtifact(meta=meta, experts=out)


def test_statements_a_year_older_than_the_price_lower_the_confidence():
    ev = _evidence("2024-06-30")  # 12 months before the 2025-06-30 close
    art = _artifact(ev)
    before = art.conclusion.model_copy()
    apply_input_limits(art, ev, "en")
    c = art.conclusion
    assert c.action == before.action and not c.withheld
    assert c.confidence == round(before.confidence * STALE_CONFIDENCE_FACTOR, 2)
    assert c.caveats == ["The latest financial statements (2024三季报, period ended 2024-06-30) "
                         "are 12 months older than the price (2025-06-30): confidence lowered."]
    zh = stale_sentence(ev, "zh")
    assert zh is not None and zh[1].endswith("早 12 个月，已降低信心。")


def test_recent_statements_change_nothing_and_the_limit_is_18_months():
    ev = _evidence("2025-03-31")  # 3 months: a normal quarter
    art = _artifact(ev)
    before = art.conclusion.model_dump()
    apply_input_limits(art, ev, "en")
    assert art.conclusion.model_dump() == before
    assert stale_sentence(_evidence("2024-01-15"), "en") is not None
    withheld = stale_sentence(_evidence("2024-01-15"), "en")
    assert withheld is not None and not withheld[0]  # 17.5 months: lowered, not withheld
    past = stale_sentence(_evidence("2023-12-15"), "en")
    assert past is not None and past[0]  # 18.5 months: withheld


# --- beta over the benchmark's real overlap -----------------------------------------------------


async def test_601318_beta_uses_the_csi_300_bars_that_overlap_its_history(registry):
    ev = await gather_evidence(resolve_symbol("601318"), registry=registry)
    pm = ev.price
    assert pm.as_of == "2020-06-16" and pm.benchmark == "000300"
    assert pm.beta_1y is not None and 0.3 < pm.beta_1y < 2.0
    assert (pm.beta_start, pm.beta_end) == ("2019-06-04", "2020-06-16") and pm.beta_days >= 240
    assert ("Beta vs 000300 measured over 2019-06-04 to 2020-06-16 "
            f"({pm.beta_days} common trading days).") in ev.notes
    assert not any("overlap" in n for n in ev.notes)
    row = next(m for m in ev.metrics() if m.key == "beta_1y")
    assert row.display.endswith(f"(2019-06-04 to 2020-06-16, {pm.beta_days} days)")


def test_beta_is_measured_on_the_overlap_that_exists_and_says_which():
    stock = synthetic_bars(5, 30.0)["close"]  # 520 bars to 2025-06-30
    bench = synthetic_bars(6, 3800.0)["close"]
    half = bench[bench.index <= pd.Timestamp("2025-01-15", tz="Asia/Shanghai")]
    fit = beta_fit(stock, half)
    assert fit.value is not None and fit.end == "2025-01-15"
    assert 60 <= fit.days < 252 and fit.start == str(stock.index[-253].date())
    short = bench[bench.index <= pd.Timestamp("2024-08-15", tz="Asia/Shanghai")]
    none = beta_fit(stock, short)
    assert none.value is None and none.days < 60
    same = beta_fit(stock, stock)
    assert same.value is not None and np.isclose(same.value, 1.0) and same.days == 252


async def test_a_benchmark_without_overlap_is_said_in_the_askers_language():
    async def loader(symbol: str, *, end=None) -> pd.DataFrame:
        df = synthetic_bars(7 if symbol == "600519" else 8, 100.0)
        if symbol == "000300":
            df = df.iloc[:100]  # ends long before the stock's last year
        return df if end is None else df[df.index.date <= end]

    ev = await gather_evidence(resolve_symbol("600519"), bars_loader=loader, lang="zh")
    assert ev.price.beta_1y is None
    bench = synthetic_bars(8, 100.0).iloc[:100]
    start, end = bench.index[0].date(), bench.index[-1].date()
    assert any(n.startswith(f"无法计算贝塔：这里的 000300 价格从 {start} 到 {end}，与该股最近一年")
               and "只有 0 个共同交易日，至少需要 60 个。" in n for n in ev.notes), ev.notes
