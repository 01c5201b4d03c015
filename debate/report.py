"""Debate reports: Markdown, a PDF (`tools.pdf`: the CJK font, tables, the price chart) and the
short chat summary, all in the debate's language (`meta.lang`; the words are the catalogue's
`report_pdf` namespace). Pure and synchronous: callers run `render_pdf` in a worker thread.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import pandas as pd

from core.words import has, t
from debate.models import (
    Argument,
    ArticleSource,
    ChartSource,
    DataRef,
    DebateArtifact,
    EventSource,
    ExpertTurn,
    Metric,
    Source,
)

CHART_BARS = 120

_ACTIONS = {"BUY": "debate.action_BUY", "SELL": "debate.action_SELL",
            "HOLD": "debate.action_HOLD"}
_EXPERTS = {"fundamental": "report_pdf.expert_fundamental", "risk": "report_pdf.expert_risk",
            "growth": "report_pdf.expert_growth", "sentiment": "report_pdf.expert_sentiment"}
_PANELS = {"experts": "report_pdf.panel_experts", "bull_bear": "report_pdf.panel_bull_bear"}
_SIDES = {"bull": "report_pdf.side_bull", "bear": "report_pdf.side_bear"}
# metric names by `Metric.key` (debate/metrics.py computes the values, in English labels)
_METRICS = {
    "close": "report_pdf.m_close", "ret_1m": "report_pdf.m_ret_1m",
    "ret_3m": "report_pdf.m_ret_3m", "ret_12m": "report_pdf.m_ret_12m",
    "momentum_12_1": "report_pdf.m_momentum_12_1", "vol_ann": "report_pdf.m_vol_ann",
    "max_drawdown_1y": "report_pdf.m_max_drawdown_1y", "rsi14": "report_pdf.m_rsi14",
    "dist_ma200": "report_pdf.m_dist_ma200", "pos_52w": "report_pdf.m_pos_52w",
    "volume_ratio_20_60": "report_pdf.m_volume_ratio_20_60", "pe": "report_pdf.m_pe",
    "pb": "report_pdf.m_pb",
}
# metrics of a financial report, labelled "<name> (<period>)"
_PERIOD_METRICS = {
    "roe_pct": "report_pdf.m_roe_pct", "gross_margin_pct": "report_pdf.m_gross_margin_pct",
    "net_margin_pct": "report_pdf.m_net_margin_pct",
    "debt_ratio_pct": "report_pdf.m_debt_ratio_pct",
    "revenue_yoy_pct": "report_pdf.m_revenue_yoy_pct",
    "net_profit_yoy_pct": "report_pdf.m_net_profit_yoy_pct",
}
_BETA_WINDOW = re.compile(r"\((\S+) to (\S+), (\d+) days\)")
_TIMES = re.compile(r"^([-+]?[\d,.]+)x$")


# --- words --------------------------------------------------------------------------------


def _word(table: dict[str, str], name: str, lang: str) -> str:
    key = table.get(name)
    return t(key, lang) if key is not None and has(key) else name


def action_word(action: str, lang: str) -> str:
    """BUY / SELL / HOLD in the reader's language (买入 / 卖出 / 持有)."""
    return _word(_ACTIONS, action, lang)


def expert_word(name: str, lang: str) -> str:
    return _word(_EXPERTS, name, lang)


def _panel(artifact: DebateArtifact) -> str:
    return _word(_PANELS, artifact.meta.panel, artifact.meta.lang)


def _analyst(a: Argument, lang: str) -> str:
    """`bull_1` -> "bull analyst 1" / "多方分析师 1"."""
    n = a.analyst.rsplit("_", 1)[-1]
    return t("report_pdf.analyst", lang, side=_word(_SIDES, a.side, lang), n=n)


def source_line(source: Source, lang: str) -> str:
    """One line naming a source, in the reader's language."""
    if isinstance(source, ChartSource):
        return t("report_pdf.src_chart", lang, ticker=source.ticker, start=source.start_date,
                 end=source.end_date)
    if isinstance(source, DataRef):
        return source.title or f"{source.tool} {source.ref}"
    if isinstance(source, ArticleSource):
        return t("report_pdf.src_article", lang, title=source.title or source.pk)
    if isinstance(source, EventSource):
        return t("report_pdf.src_event", lang, title=source.title or source.id,
                 date=source.date).strip()
    return t("report_pdf.src_filing", lang, form=source.form, ticker=source.ticker,
             date=source.filed_date or t("report_pdf.na", lang))


def sources_note(sources: list[Source], lang: str) -> str:
    """`Sources: a; b` / `来源：a；b`."""
    sep = t("grammar.clause_sep", lang)
    return t("report_pdf.sources_line", lang,
             items=sep.join(dict.fromkeys(source_line(s, lang) for s in sources)))


def metric_label(metric: Metric, lang: str) -> str:
    """The metric's name in `lang`; its label as computed when the catalogue lacks the key."""
    if metric.key in _METRICS:
        return t(_METRICS[metric.key], lang)
    if metric.key == "beta_1y":
        bench = metric.label.partition(" vs ")[2]
        return (t("report_pdf.m_beta_vs", lang, bench=bench) if bench
                else t("report_pdf.m_beta_1y", lang))
    if metric.key in _PERIOD_METRICS and metric.label.endswith(")") and " (" in metric.label:
        period = metric.label[metric.label.rindex(" (") + 2:-1]
        return t(_PERIOD_METRICS[metric.key], lang, period=period)
    return metric.label


def metric_display(metric: Metric, lang: str) -> str:
    """The metric's value as computed, its words (n/a, a beta's window) in `lang`."""
    if metric.display == "n/a":
        return t("report_pdf.na", lang)
    if times := _TIMES.match(metric.display):
        return t("report_pdf.times", lang, n=times.group(1))
    return _BETA_WINDOW.sub(lambda m: t("report_pdf.beta_window", lang, start=m.group(1),
                                        end=m.group(2), days=m.group(3)), metric.display)


# --- the facts a report shows ---------------------------------------------------------------


def _sources_used(artifact: DebateArtifact) -> list[Source]:
    seen: dict[str, Source] = {}
    turns: list[ExpertTurn | Argument] = []
    if artifact.experts:
        turns += [x for r in artifact.experts.rounds for x in r.turns().values()]
    if artifact.bull_bear:
        turns += artifact.bull_bear.openings + artifact.bull_bear.rebuttals
    for turn in turns:
        for s in turn.sources:
            seen.setdefault(source_line(s, "en"), s)
    return list(seen.values())


def _dropped(artifact: DebateArtifact) -> list[str]:
    lang = artifact.meta.lang
    out: list[str] = []
    if artifact.experts:
        for r in artifact.experts.rounds:
            for name, turn in r.turns().items():
                out += [f"{t('report_pdf.round', lang, n=r.round)} {expert_word(name, lang)}: "
                        f"{d.raw} ({d.reason})" for d in turn.dropped_sources]
    if artifact.bull_bear:
        for a in artifact.bull_bear.openings + artifact.bull_bear.rebuttals:
            out += [f"{_analyst(a, lang)}: {d.raw} ({d.reason})" for d in a.dropped_sources]
    return [t("report_pdf.dropped", lang, what=d) for d in out]


def body(turn: ExpertTurn | Argument, lang: str = "en") -> str:
    """What a turn said, or why it said nothing."""
    return turn.text if not turn.failed else t("report_pdf.turn_failed", lang, error=turn.error)


def title_of(artifact: DebateArtifact) -> str:
    m = artifact.meta
    return f"{m.name} ({m.ticker})" if m.name else m.ticker


def _conf(c: float) -> str:
    return f"{c:.2f}"


def _meta_line(artifact: DebateArtifact) -> str:
    m = artifact.meta
    return t("report_pdf.meta_line", m.lang, panel=_panel(artifact),
             generated=f"{m.generated_at:%Y-%m-%d %H:%M}",
             as_of=m.data_as_of or t("report_pdf.na", m.lang))


def _label(artifact: DebateArtifact) -> str:
    """The run's notice: an offline panel says so in the reader's language."""
    m = artifact.meta
    return t("report_pdf.offline_label", m.lang) if m.offline else m.label


def _conclusion_line(artifact: DebateArtifact) -> str:
    c, lang = artifact.conclusion, artifact.meta.lang
    return t("report_pdf.conclusion_line", lang, action=action_word(c.action, lang),
             confidence=_conf(c.confidence),
             consensus=t("report_pdf.consensus_yes" if c.consensus
                         else "report_pdf.consensus_no", lang))


def _notes(artifact: DebateArtifact) -> list[str]:
    m = artifact.meta
    return m.degradations + m.notes + _dropped(artifact)


def _tokens_line(artifact: DebateArtifact) -> str:
    m = artifact.meta
    if m.budget_tokens:
        return t("report_pdf.tokens_budget", m.lang, used=f"{m.tokens_used:,}",
                 budget=f"{m.budget_tokens:,}")
    return t("report_pdf.tokens_used", m.lang, used=f"{m.tokens_used:,}")


def _verdict_rows(artifact: DebateArtifact) -> list[tuple[str, str]]:
    assert artifact.bull_bear is not None and artifact.bull_bear.verdict is not None
    v, lang = artifact.bull_bear.verdict, artifact.meta.lang
    na = t("report_pdf.na", lang)
    sep = t("grammar.clause_sep", lang)
    return [(t("report_pdf.verdict_row", lang), v.verdict),
            (t("report_pdf.action", lang), action_word(v.action, lang)),
            (t("report_pdf.confidence", lang), t("report_pdf.out_of_ten", lang,
                                                   n=v.confidence)),
            (t("report_pdf.time_horizon", lang), v.time_horizon or na),
            (t("report_pdf.reasons", lang), sep.join(v.reasons)),
            (t("report_pdf.key_risks", lang),
             sep.join(v.key_risks) or t("report_pdf.none_named", lang)),
            (t("report_pdf.strongest_against", lang), v.strongest_opposing_data_point or na)]


# --- Markdown --------------------------------------------------------------------------------


def _md_table(rows: Sequence[Sequence[str]]) -> list[str]:
    head, *rest = rows
    cells = [[c.replace("|", "\\|").replace("\n", " ") for c in r] for r in [head, *rest]]
    return ([f"| {' | '.join(cells[0])} |", "|" + "---|" * len(head)]
            + [f"| {' | '.join(r)} |" for r in cells[1:]])


def render_markdown(artifact: DebateArtifact) -> str:
    """The full report as Markdown, in the debate's language."""
    m = artifact.meta
    c = artifact.conclusion
    lang = m.lang
    out = [f"# {t('report_pdf.debate_title', lang, title=title_of(artifact))}", "",
           f"*{_meta_line(artifact)}"
           + (f" · {t('report_pdf.question', lang, question=m.question)}" if m.question
              else "") + "*"]
    if label := _label(artifact):
        out += ["", f"> {label}"]
    out += ["", f"## {t('report_pdf.conclusion', lang)}", "", f"**{_conclusion_line(artifact)}**",
            "", c.text, ""]
    if c.caveats and not c.withheld:  # a withheld verdict's text already opens with them
        out += [f"**{x}**" for x in c.caveats] + [""]
    if c.missing:
        out += [f"**{t('report_pdf.partial', lang)}**", "", *(f"- {x}" for x in c.missing), ""]
    out += [f"## {t('report_pdf.key_metrics', lang)}", ""]
    out += _md_table([(t("report_pdf.metric", lang), t("report_pdf.value", lang))]
                     + [(metric_label(x, lang), metric_display(x, lang))
                        for x in artifact.metrics])
    if m.data_source:
        out += ["", t("report_pdf.data_line", lang, source=m.data_source)]
    if artifact.experts:
        for r in artifact.experts.rounds:
            turns = r.turns()
            out += ["", f"## {t('report_pdf.round', lang, n=r.round)}", ""]
            out += _md_table([(t("report_pdf.expert", lang), t("report_pdf.action", lang),
                               t("report_pdf.confidence", lang),
                               t("report_pdf.source_count", lang))] + [
                (expert_word(n, lang), t("report_pdf.failed", lang) if x.failed
                 else action_word(x.action, lang), _conf(x.confidence), str(len(x.sources)))
                for n, x in turns.items()])
            for n, x in turns.items():
                out += ["", f"**{expert_word(n, lang)}** — {body(x, lang)}"]
    if artifact.bull_bear:
        bb = artifact.bull_bear
        h = bb.hypothesis
        out += ["", f"## {t('report_pdf.hypothesis', lang)}", "", h.hypothesis, "",
                t("report_pdf.verdict_options", lang, options=" / ".join(h.verdict_options))]
        if bb.data:
            out += ["", f"## {t('report_pdf.data_plan', lang)}", ""]
            out += _md_table([(t("report_pdf.tool", lang), t("report_pdf.arguments", lang),
                               t("report_pdf.result", lang))] + [
                (d.tool, f"`{d.args}`", d.source_id if d.ok
                 else f"{t('report_pdf.failed', lang)}: {d.note}") for d in bb.data])
        for key, args in (("report_pdf.openings", bb.openings),
                          ("report_pdf.rebuttals", bb.rebuttals)):
            if args:
                out += ["", f"## {t(key, lang)}"]
                for a in args:
                    out += ["", f"**{_analyst(a, lang)}** — {body(a, lang)}"]
        if bb.verdict:
            out += ["", f"## {t('report_pdf.verdict', lang)}", ""]
            out += _md_table([(t("report_pdf.item", lang), t("report_pdf.judge", lang)),
                              *_verdict_rows(artifact)])
        if bb.summary:
            out += ["", f"## {t('report_pdf.summary', lang)}", "", bb.summary]
    if notes := _notes(artifact):
        out += ["", f"## {t('report_pdf.notes', lang)}", ""] + [f"- {n}" for n in notes]
    if used := _sources_used(artifact):
        out += ["", f"## {t('report_pdf.sources', lang)}", ""]
        out += [f"- {source_line(s, lang)}" for s in used]
    if m.usage:
        out += ["", f"## {t('report_pdf.usage', lang)}", ""]
        out += _md_table([(t("report_pdf.seat", lang), t("report_pdf.profile", lang),
                           t("report_pdf.calls", lang), t("report_pdf.tokens", lang))] + [
            (u.seat, u.role, str(u.calls), str(u.prompt_tokens + u.completion_tokens))
            for u in m.usage])
        out += ["", _tokens_line(artifact)]
    return "\n".join(out) + "\n"


def summary_markdown(artifact: DebateArtifact) -> str:
    """The chat's final message: positions, the conclusion, what went wrong."""
    m = artifact.meta
    c = artifact.conclusion
    lang = m.lang
    sep = t("grammar.clause_sep", lang)
    lines = [t("report_pdf.summary_head", lang, title=title_of(artifact), panel=_panel(artifact),
               rounds=m.rounds_run)]
    if artifact.experts and artifact.experts.rounds:
        last = artifact.experts.rounds[-1]
        lines.append(t("report_pdf.final_positions", lang, items=" · ".join(
            f"{expert_word(n, lang)} " + (t("report_pdf.failed", lang) if x.failed
                                          else f"{action_word(x.action, lang)} "
                                               f"{x.confidence:.2f}")
            for n, x in last.turns().items())))
    if artifact.bull_bear:
        lines.append(t("report_pdf.hypothesis_line", lang,
                       text=artifact.bull_bear.hypothesis.hypothesis))
    consensus = t("report_pdf.consensus_yes" if c.consensus else "report_pdf.consensus_no", lang)
    if c.missing:
        consensus += t("report_pdf.summary_partial", lang)
    lines += ["", t("report_pdf.summary_conclusion", lang, action=action_word(c.action, lang),
                    confidence=_conf(c.confidence), consensus=consensus), c.text]
    if c.caveats and not c.withheld:
        lines += c.caveats
    if c.missing:
        more = (t("report_pdf.and_more", lang, n=len(c.missing) - 6)
                if len(c.missing) > 6 else "")
        lines.append(t("report_pdf.missing", lang, items=sep.join(c.missing[:6]) + more))
    if m.stop_reason:
        lines.append("\n" + t("report_pdf.stopped", lang, reason=m.stop_reason))
    extra = m.degradations + [n for n in m.notes if n not in c.caveats]
    if extra:
        lines += [""] + [f"- {n}" for n in extra[:8]]
    return "\n".join(lines)


def pdf_filename(artifact: DebateArtifact) -> str:
    m = artifact.meta
    return t("report_pdf.debate_file", m.lang, code=m.ticker.replace("^", ""),
             date=f"{m.generated_at:%Y%m%d}")


def pdf_caption(artifact: DebateArtifact) -> str:
    lang = artifact.meta.lang
    return t("report_pdf.debate_caption", lang, title=title_of(artifact),
             action=action_word(artifact.conclusion.action, lang))


# --- PDF -------------------------------------------------------------------------------------


def render_chart(bars: pd.DataFrame | None, title: str, market: str, lang: str = "en"
                 ) -> bytes | None:
    """The candlestick chart PNG for the report (None without bars), in the colours of the
    instrument's `market` and the words of the report's `lang`."""
    if bars is None or len(bars) < 2:
        return None
    from tools.chart_draw import render_candles

    return render_candles(bars, title=title, bars=CHART_BARS, market=market, size=(10.0, 5.5),
                          dpi=110, lang=lang)


def render_pdf(artifact: DebateArtifact, chart_png: bytes | None = None) -> bytes:
    """The report as PDF bytes: title, conclusion, metrics table, chart, rounds, notes."""
    from tools.pdf import PARA_KEEP, TABLE_KEEP, Document

    m = artifact.meta
    c = artifact.conclusion
    lang = m.lang
    title = t("report_pdf.debate_title", lang, title=title_of(artifact))
    doc = Document(title)
    doc.heading(title, 16)
    doc.para(_meta_line(artifact)
             + (f"\n{t('report_pdf.question', lang, question=m.question)}" if m.question
                else ""), 9)
    if label := _label(artifact):
        doc.para(label, 9)
    doc.heading(t("report_pdf.conclusion", lang), keep=2 * PARA_KEEP)
    doc.para(_conclusion_line(artifact), 11)
    doc.para(c.text.replace("**", ""))
    if c.caveats and not c.withheld:
        for caveat in c.caveats:
            doc.para(caveat.replace("**", ""))
    if c.missing:
        doc.para(t("report_pdf.partial", lang) + "\n" + "\n".join(f"- {x}" for x in c.missing),
                 9)
    doc.heading(t("report_pdf.key_metrics", lang), keep=TABLE_KEEP)
    doc.table([(t("report_pdf.metric", lang), t("report_pdf.value", lang))]
              + [(metric_label(x, lang), metric_display(x, lang)) for x in artifact.metrics],
              (60, 40))
    if m.data_source:
        doc.note(t("report_pdf.data_line", lang, source=m.data_source))
    if chart_png:
        doc.heading(t("report_pdf.price_chart", lang), keep=doc.image_height(chart_png))
        doc.image(chart_png)
    if artifact.experts:
        for r in artifact.experts.rounds:
            turns = r.turns()
            doc.heading(t("report_pdf.round", lang, n=r.round), keep=TABLE_KEEP)
            doc.table([(t("report_pdf.expert", lang), t("report_pdf.action", lang),
                        t("report_pdf.confidence", lang), t("report_pdf.source_count", lang))]
                      + [(expert_word(n, lang), t("report_pdf.failed", lang) if x.failed
                          else action_word(x.action, lang), _conf(x.confidence),
                          str(len(x.sources))) for n, x in turns.items()], (30, 20, 20, 20))
            for n, x in turns.items():
                doc.para(body(x, lang).replace("**", ""),
                         lead=t("report_pdf.lead", lang, who=expert_word(n, lang)))
                doc.gap()
    if artifact.bull_bear:
        bb = artifact.bull_bear
        doc.heading(t("report_pdf.hypothesis", lang))
        doc.para(bb.hypothesis.hypothesis)
        doc.para(t("report_pdf.verdict_options", lang,
                   options=" / ".join(bb.hypothesis.verdict_options)), 9)
        for key, args in (("report_pdf.openings", bb.openings),
                          ("report_pdf.rebuttals", bb.rebuttals)):
            if args:
                doc.heading(t(key, lang))
                for a in args:
                    doc.para(body(a, lang).replace("**", ""),
                             lead=t("report_pdf.lead", lang, who=_analyst(a, lang)))
                    doc.gap()
        if bb.verdict:
            doc.heading(t("report_pdf.verdict", lang), keep=TABLE_KEEP)
            doc.table([(t("report_pdf.item", lang), t("report_pdf.judge", lang)),
                       *_verdict_rows(artifact)], (30, 70))
        if bb.summary:
            doc.heading(t("report_pdf.summary", lang))
            doc.para(bb.summary.replace("#", "").replace("**", ""))
    if notes := _notes(artifact):
        doc.heading(t("report_pdf.notes", lang))
        for note in notes:
            doc.para(f"- {note}", 9)
    if used := _sources_used(artifact):
        doc.heading(t("report_pdf.sources", lang))
        for s in used:
            doc.para(f"- {source_line(s, lang)}", 9)
    return doc.output()
