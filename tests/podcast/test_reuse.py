"""Today's debate reports are reused from Postgres; new debates are stored for the next run."""

from __future__ import annotations

from debate.mode import DebateMode, DebateRequest
from podcast import produce_podcast


async def test_todays_reports_are_reused_and_new_ones_stored(pg_pool):
    mode = DebateMode(llm=None, registry=None, pool=pg_pool, make_pdf=False)
    stored = await mode.produce(DebateRequest(symbol="NVDA"), lang="en")

    first = await produce_podcast(["NVDA", "TSLA"], pool=pg_pool)
    by = {s.code: s for s in first.tickers}
    assert by["NVDA"].state == "reused" and by["TSLA"].state == "debated"
    assert first.debates["NVDA"].meta.generated_at == stored.artifact.meta.generated_at
    rows = await pg_pool.fetch("SELECT ticker, pdf IS NOT NULL AS pdf FROM debate_reports "
                               "ORDER BY id")
    assert [(r["ticker"], r["pdf"]) for r in rows] == [("NVDA", False), ("TSLA", True)]

    # a report of another day is not today's: NVDA is debated afresh; TSLA's is reused
    await pg_pool.execute("UPDATE debate_reports SET created_at = now() - interval '2 days' "
                          "WHERE ticker = 'NVDA'")
    second = await produce_podcast(["NVDA", "TSLA"], pool=pg_pool)
    by = {s.code: s for s in second.tickers}
    assert by["NVDA"].state == "debated" and by["TSLA"].state == "reused"
    # a Chinese podcast does not reuse English reports
    third = await produce_podcast(["TSLA"], pool=pg_pool, lang="zh")
    assert third.tickers[0].state == "debated"
