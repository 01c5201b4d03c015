"""The debate report reads as finished in the reader's language: every page rasterised (to
tests/artifacts/reports/), no markup printed, no English in the Chinese report beyond tickers and
acronyms and no Chinese in the English one, and no heading left alone at the foot of a page."""

from __future__ import annotations

import pytest

from bot.eval.score import english_words
from debate.models import DebateArtifact
from debate.report import render_chart, render_markdown, render_pdf, summary_markdown
from tests.debate.helpers import fake_bars, make_mode, produce
from tests.reports_pdf import CJK, TAG, pages_ending_in_a_heading, pdf_text, rasterise


def said(art: DebateArtifact) -> str:
    """Everything the debate itself said (experts, judge, data labels): the report's content,
    as opposed to the report's own words."""
    parts = [art.conclusion.text, *art.conclusion.caveats, *art.conclusion.missing,
             art.meta.data_source, *art.meta.notes, *art.meta.degradations, art.meta.question,
             art.meta.stop_reason]
    parts += [x.label.rpartition(" (")[2] for x in art.metrics]  # report periods
    parts += [x.display for x in art.metrics]
    if art.experts:
        parts += [x.text for r in art.experts.rounds for x in r.turns().values()]
    if art.bull_bear:
        bb = art.bull_bear
        parts += [bb.hypothesis.hypothesis, *bb.hypothesis.verdict_options, bb.summary]
        parts += [a.text for a in bb.openings + bb.rebuttals]
        if bb.verdict:
            v = bb.verdict
            parts += [v.verdict, v.time_horizon, v.strongest_opposing_data_point, *v.reasons,
                      *v.key_risks]
    return "\n".join(parts)


async def _debate(registry, symbol: str, lang: str, panel: str = "experts") -> tuple[
        DebateArtifact, bytes]:
    outcome, _, _ = await produce(make_mode(None, registry), symbol, panel=panel, lang=lang)
    assert outcome.pdf is not None and outcome.pdf.startswith(b"%PDF")
    return outcome.artifact, outcome.pdf


@pytest.mark.parametrize("panel", ["experts", "bull_bear"])
async def test_a_chinese_debate_report_is_chinese_throughout(registry, panel: str) -> None:
    art, pdf = await _debate(registry, "600519", "zh", panel)
    pages = rasterise(pdf, f"debate-{panel}-zh")
    assert pages and all(p.stat().st_size > 10_000 for p in pages)
    text = pdf_text(pdf)
    assert "辩论报告：贵州茅台 (600519)" in text and "结论" in text and "关键指标" in text
    assert "指标" in text and "数值" in text and "Metric" not in text
    assert not TAG.search(text), TAG.search(text)
    # the report's own words: no English beyond what the debate itself said
    own = [w for w in english_words(text) if w not in english_words(said(art))]
    assert own == [], own
    for md in (render_markdown(art), summary_markdown(art)):
        stray = [w for w in english_words(md) if w not in english_words(said(art))]
        assert stray == [], [ln for ln in md.splitlines() if any(w in ln for w in stray)]
    assert pages_ending_in_a_heading(pdf) == []


# the test bars' provider and dataset (tests/debate/helpers.py): the fixture's names, not words
FIXTURE_NAMES = english_words("test synthetic bars")


@pytest.mark.parametrize("panel", ["experts", "bull_bear"])
async def test_the_offline_experts_say_nothing_in_english_under_zh(registry, panel: str) -> None:
    """Everything in the PDF, the chat summary and the lines shown while the debate ran: the
    experts' factors, actions and reactions are the catalogue's Chinese."""
    outcome, events, _ = await produce(make_mode(None, registry), "600519", panel=panel,
                                       lang="zh")
    assert outcome.pdf is not None
    shown = [getattr(e, "text", "") for e in events]
    for text in (pdf_text(outcome.pdf), summary_markdown(outcome.artifact), *shown):
        stray = [w for w in english_words(text) if w not in FIXTURE_NAMES]
        assert stray == [], (stray, text)


@pytest.mark.parametrize("panel", ["experts", "bull_bear"])
async def test_an_english_debate_report_has_no_chinese(registry, panel: str) -> None:
    art, pdf = await _debate(registry, "NVDA", "en", panel)
    rasterise(pdf, f"debate-{panel}-en")
    text = pdf_text(pdf)
    assert "Debate report:" in text and "Key metrics" in text
    assert not CJK.search(text), CJK.findall(text)[:20]
    assert not TAG.search(text)
    assert not CJK.search(render_markdown(art) + summary_markdown(art))
    assert pages_ending_in_a_heading(pdf) == []


@pytest.fixture(scope="module")
async def zh_debate_and_chart(registry) -> tuple[DebateArtifact, bytes]:
    """One Chinese experts' debate and its chart, shared read-only by the page layouts below
    (each layout copies the artifact; nothing changes it)."""
    outcome, _, _ = await produce(make_mode(None, registry), "600519", lang="zh")
    art: DebateArtifact = outcome.artifact
    chart = render_chart(await fake_bars("600519"), "贵州茅台 (600519)", "cn")
    assert chart is not None and art.experts is not None
    return art, chart


# one test per layout: they spread over the xdist workers (one test of all 22 took 6 minutes
# of one worker under load)
@pytest.mark.parametrize("lines", range(0, 44, 2))
async def test_no_heading_ends_a_page_wherever_the_content_pushes_it(
        zh_debate_and_chart: tuple[DebateArtifact, bytes], lines: int) -> None:
    """Caveats of growing length (`lines` of them, 0 to 42) push the chart, round and table
    headings across every position at the foot of a page; none may be left there alone."""
    art, chart = zh_debate_and_chart
    assert art.experts is not None
    conclusion = art.experts.conclusion.model_copy(update={"caveats": [
        f"第 {i + 1} 条提示：数据有限，仅供参考。" for i in range(lines)], "withheld": False})
    padded = art.model_copy(update={"experts": art.experts.model_copy(
        update={"conclusion": conclusion})})
    pdf = render_pdf(padded, chart)
    if ends := pages_ending_in_a_heading(pdf):
        rasterise(pdf, f"debate-heading-at-foot-{lines}")
    assert ends == []
