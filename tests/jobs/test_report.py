"""The scheduled push report on the real offline snapshot, symbols directory and ICT analyzer:
figures checked against values computed here from the same bars, the chart, the PDF, unknown
symbols, the narrative (scripted model or template) and the report key."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from typing import Any

import pandas as pd
import pytest

from core.errors import LLMError, LLMTimeout, UnknownSymbol
from core.testing import ScriptedLLM
from core.testing import text as llm_text
from jobs.report import Report, ReportRow, build_report, report_key
from tools import snapshot
from tools.data import DataConfig, configure
from tools.ict_tool import run_ict
from tools.symbol_lookup import resolve_symbol

PNG = b"\x89PNG\r\n\x1a\n"
UNKNOWN = "ZZZZZQ"


@pytest.fixture(autouse=True, scope="module")
def _offline_data() -> Iterator[None]:
    configure(DataConfig())
    yield
    configure(DataConfig())


@pytest.fixture(scope="module")
async def reports() -> dict[str, Report]:
    """The NVDA + AAPL report in each language, with its PDF (built once for the module)."""
    return {lang: await build_report(["NVDA", "AAPL"], lang=lang, pdf=True)
            for lang in ("en", "zh")}


def _expected(code: str) -> dict[str, Any]:
    """The figures of `code`, computed here from the snapshot's daily bars."""
    bars = snapshot.load(code, "1d")
    c = bars["close"]
    last = float(c.iloc[-1])
    year = bars[bars.index > bars.index[-1] - pd.Timedelta(days=365)]
    low, high = float(year["low"].min()), float(year["high"].max())
    month_ago = c[c.index <= c.index[-1] - pd.DateOffset(months=1)].iloc[-1]
    delta = c.diff()
    gain = delta.clip(lower=0).ewm(alpha=1 / 14, adjust=False).mean()
    loss = (-delta.clip(upper=0)).ewm(alpha=1 / 14, adjust=False).mean()
    return {
        "close": last,
        "as_of": bars.index[-1].date(),
        "d1": (last / c.iloc[-2] - 1) * 100,
        "d5": (last / c.iloc[-6] - 1) * 100,
        "m1": (last / month_ago - 1) * 100,
        "position": (last - low) / (high - low),
        "rsi": float(100 - 100 / (1 + gain.iloc[-1] / loss.iloc[-1])),
        "above": {n: last > float(c.rolling(n).mean().iloc[-1]) for n in (20, 50, 200)},
    }


def _check_row(row: ReportRow, code: str) -> None:
    want = _expected(code)
    assert row.symbol == code
    assert row.as_of == want["as_of"]
    assert row.close == pytest.approx(want["close"], abs=0.01)
    assert row.change_1d_pct == pytest.approx(want["d1"], abs=0.006)
    assert row.change_5d_pct == pytest.approx(want["d5"], abs=0.006)
    assert row.change_1m_pct == pytest.approx(want["m1"], abs=0.006)
    assert row.range_position == pytest.approx(want["position"], abs=0.001)
    assert row.rsi14 == pytest.approx(want["rsi"], abs=0.01)
    assert {m.window: m.close_is == "above" for m in row.moving_averages} == want["above"]
    assert row.currency == "USD"
    assert row.source.offline and row.source.as_of == want["as_of"]


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_report_figures_match_the_bars(lang: str, reports: dict[str, Report]) -> None:
    report = reports[lang]
    assert report.lang == lang
    assert report.symbols == ["NVDA", "AAPL"]
    assert report.errors == []
    assert [r.symbol for r in report.rows] == ["NVDA", "AAPL"]
    for row in report.rows:
        _check_row(row, row.symbol)
        ict_run = await run_ict(row.symbol, "1d", stack=True)  # the tool, called directly
        assert row.ict.bias == ict_run.analysis.structure.bias
        assert ict_run.stack is not None and row.ict.grade == ict_run.stack.stack.grade
        assert row.ict.missing == ["4h", "15min", "5min", "1min"]  # the snapshot is daily only
    assert report.data_date == date(2025, 2, 14)  # NVDA's last bar; AAPL ends in 2013
    assert report.key == report_key(["AAPL", "NVDA"], lang, date(2025, 2, 14))

    nvda = report.rows[0]
    assert f"{nvda.close:.2f}" in report.text and "2025-02-14" in report.text
    assert "2013-03-01" in report.text
    assert report.narrative_source == "offline template"
    if lang == "zh":
        assert "_叙述：离线模板_" in report.text and "（离线快照）" in report.text
        assert report.narrative.startswith(f"NVDA 收于 ${nvda.close:.2f}（2025-02-14），较前一日 ")
    else:
        assert "_Narrative: offline template_" in report.text
        assert "(offline snapshot)" in report.text
        assert report.narrative.startswith(f"NVDA closed at ${nvda.close:.2f} on 2025-02-14")

    assert report.chart is not None and report.chart.data.startswith(PNG)
    assert report.chart.mime_type == "image/png"
    # calendar-aligned: AAPL's 2013 data has no dates in the chart window ending 2025-02-14
    assert "NVDA" in report.chart.caption and any("AAPL" in n for n in report.notes)
    assert report.pdf_file is not None and report.pdf_file.data.startswith(b"%PDF")
    assert report.pdf_file.mime_type == "application/pdf"


async def test_today_cuts_the_bars() -> None:
    report = await build_report(["NVDA"], today=date(2025, 2, 1))  # a Saturday
    (row,) = report.rows
    bars = snapshot.load("NVDA", "1d")
    upto = bars[bars.index.date <= date(2025, 2, 1)]
    assert row.as_of == report.data_date == date(2025, 1, 31)
    assert row.close == pytest.approx(float(upto["close"].iloc[-1]), abs=0.01)
    assert row.change_5d_pct == pytest.approx(
        (upto["close"].iloc[-1] / upto["close"].iloc[-6] - 1) * 100, abs=0.006)


async def test_unknown_symbol_is_an_error_line_and_the_others_still_come() -> None:
    report = await build_report(["NVDA", UNKNOWN, "AAPL"])
    assert [r.symbol for r in report.rows] == ["NVDA", "AAPL"]
    assert report.symbols == ["NVDA", "AAPL"]
    assert len(report.errors) == 1 and report.errors[0].startswith(f"{UNKNOWN}: unknown symbol")
    with pytest.raises(UnknownSymbol) as info:
        resolve_symbol(UNKNOWN)
    assert info.value.suggestions and info.value.suggestions[0] in report.errors[0]
    assert report.errors[0] in report.text and "**Not reported:**" in report.text
    assert report.chart is not None
    # the error line is part of the text, so the key differs from the NVDA+AAPL report's
    assert report.key != report_key(["NVDA", "AAPL"], "en", report.data_date)


async def test_all_unknown_gives_only_errors_and_no_chart() -> None:
    report = await build_report([UNKNOWN, "XQXQXQ"], lang="zh", pdf=True)
    assert report.rows == [] and report.symbols == [] and report.data_date is None
    assert report.chart is None
    assert [e.split("：")[0] for e in report.errors] == [UNKNOWN, "XQXQXQ"]
    assert "找不到该标的" in report.errors[0]
    assert report.narrative_source == "offline template"
    assert all(e in report.text for e in report.errors)
    assert report.pdf_file is not None and report.pdf_file.data.startswith(b"%PDF")


async def test_llm_narrative_is_used_when_the_model_answers() -> None:
    words = "NVDA rose over the week while AAPL slipped below all three averages."
    llm = ScriptedLLM([llm_text(words)])
    report = await build_report(["NVDA", "AAPL"], llm=llm)
    assert report.narrative == words and report.narrative_source == "llm"
    assert "_Narrative: LLM, from the computed figures above_" in report.text
    assert not any(n.startswith("Unverified") for n in report.notes)
    (request,) = llm.requests
    assert request["role"] == "summarizer" and request["tools"] is None
    payload = json.loads(request["messages"][-1].content)
    assert list(payload) == ["rows"]  # the model gets the computed rows, nothing else
    assert [r["symbol"] for r in payload["rows"]] == ["NVDA", "AAPL"]
    assert payload["rows"][0]["close"] == report.rows[0].close


@pytest.mark.parametrize(("script", "why"), [
    (LLMTimeout("the summarizer timed out"), "LLMTimeout"),
    (LLMError("provider down"), "LLMError"),
    (llm_text("   "), "empty answer"),
])
async def test_template_stands_in_when_the_model_fails(script: Any, why: str,
                                                       reports: dict[str, Report]) -> None:
    report = await build_report(["NVDA", "AAPL"], llm=ScriptedLLM([script]))
    assert report.narrative_source == "offline template"
    assert report.narrative == reports["en"].narrative
    assert f"_Narrative: offline template (the LLM failed: {why})_" in report.text


async def test_figures_the_model_invents_are_labelled_unverified() -> None:
    llm = ScriptedLLM([llm_text("NVDA closed at 138.85 on 2025-02-14 and could reach 500.")])
    report = await build_report(["NVDA"], llm=llm)
    assert report.narrative_source == "llm"
    (note,) = [n for n in report.notes if n.startswith("Unverified")]
    assert note.endswith(": 500") and note in report.text


async def test_report_key_is_order_insensitive_and_changes_with_lang_and_date(
        reports: dict[str, Report]) -> None:
    day = date(2025, 2, 14)
    key = report_key(["NVDA", "AAPL"], "en", day)
    assert key == report_key(["AAPL", "NVDA"], "en", day)
    assert key == report_key([" aapl", "NVDA", "NVDA"], "en", day)
    assert key != report_key(["NVDA", "AAPL"], "zh", day)
    assert key != report_key(["NVDA", "AAPL"], "en", date(2025, 2, 13))
    assert key != report_key(["NVDA"], "en", day)
    # names resolve to the same codes, in any order: one report for both subscribers
    other = await build_report(["苹果", "英伟达"])
    assert other.symbols == ["AAPL", "NVDA"]
    assert other.key == reports["en"].key == key
