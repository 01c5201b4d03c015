"""Offline podcasts on the real snapshot: deterministic debates, the deterministic writer."""

from __future__ import annotations

import json

from core.words import t
from debate.grounding import canonical_key
from podcast import PodcastScript, produce_podcast, render_markdown, script_json
from tests.podcast.helpers import numbers

TICKERS = ["NVDA", "TSLA", "AAPL"]


async def test_offline_three_tickers_in_order_grounded_in_their_debates():
    events = []
    result = await produce_podcast(TICKERS, emit=events.append)
    script = result.script
    assert [c.name for c in script.chapter] == [
        "opening", "theme", "ticker:NVDA", "ticker:TSLA", "ticker:AAPL", "closing"]
    assert [t.id for t in script.scripts] == list(range(len(script.scripts)))
    assert all(a.end_id + 1 == b.start_id for a, b in zip(script.chapter, script.chapter[1:],
                                                               strict=False))
    assert script.chapter[-1].end_id == len(script.scripts) - 1
    assert script.user_tickers == TICKERS and {t.speaker for t in script.scripts} == {
        "host", "analyst"}
    # labelled offline, in the notes and in the opening
    assert result.offline and result.llm_calls == 0 and result.budget.used == 0
    assert any(n.kind == "offline" for n in result.notes)
    assert t("podcast.offline", "en") in script.scripts[0].text
    # the opening's index moves carry their own data dates and sources
    markets = script.section("opening")[1]
    for move in result.markets:
        assert move.as_of and f"closed at {move.close_display} on {move.as_of}" in markets.text
        assert move.source is not None and move.source in markets.sources
    assert {m.code for m in result.markets} >= {"^GSPC", "000300"}

    for code in TICKERS:
        section = script.section(f"ticker:{code}")
        art = result.debates[code]
        status = next(s for s in result.tickers if s.code == code)
        assert status.state == "debated" and status.writer == "offline"
        assert status.action == art.conclusion.action
        text = " ".join(t.text for t in section)
        # quotes its debate's conclusion
        assert art.conclusion.text in text and f"conclusion: {art.conclusion.action}" in text
        # only figures its debate artifact holds
        assert numbers(text) <= numbers(art.model_dump_json()), (
            code, numbers(text) - numbers(art.model_dump_json()))
        # every source is one of its debate's sources
        debate_sources = {canonical_key(s) for r in art.experts.rounds
                          for t in r.turns().values() for s in t.sources}
        cited = [canonical_key(s) for t in section for s in t.sources]
        assert cited and set(cited) <= debate_sources
        assert f"no intraday bars for {code}" in section[-1].text  # the snapshot has none
    # no ticker section cites another ticker's debate
    assert not any(s.ticker != "NVDA" for t in script.section("ticker:NVDA") for s in t.sources)
    assert any(e.text.startswith("[TSLA] Round 1") for e in events)

    # the document forms
    md = render_markdown(script, "en")
    assert md.startswith(f"# Bullpen daily podcast: {result.script.date[:4]}-")
    assert md.index("## Opening") < md.index("## NVDA") < md.index("## TSLA") < md.index(
        "## AAPL") < md.index("## Closing")
    again = PodcastScript.model_validate(json.loads(script_json(script)))
    assert again == script


async def test_intraday_bars_are_summarised_when_the_data_has_them():
    result = await produce_podcast(["BTC-USD", "NVDA"], lang="zh")
    btc = result.script.section("ticker:BTC-USD")
    last = btc[-1]
    assert last.text.startswith("日内（") and "15分钟" in last.text and last.speaker == "主持人"
    assert last.sources and last.sources[0].ticker == "BTC-USD"
    assert "没有 NVDA 的日内K线" in result.script.section("ticker:NVDA")[-1].text
    assert all(t.speaker in ("主持人", "分析师") for t in result.script.scripts)
    assert "## 开场" in render_markdown(result.script, "zh")
