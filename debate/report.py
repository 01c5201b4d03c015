"""Debate reports: Markdown, a PDF (fpdf2 with the CJK font, tables, the price chart) and the
short chat summary. Pure and synchronous: callers run `render_pdf` in a worker thread.
"""

from __future__ import annotations

import io
from collections.abc import Sequence

import pandas as pd

from debate.grounding import describe
from debate.models import Argument, DebateArtifact, ExpertTurn, Source

CHART_BARS = 120


def _sources_used(artifact: DebateArtifact) -> list[Source]:
    seen: dict[str, Source] = {}
    turns: list[ExpertTurn | Argument] = []
    if artifact.experts:
        turns += [t for r in artifact.experts.rounds for t in r.turns().values()]
    if artifact.bull_bear:
        turns += artifact.bull_bear.openings + artifact.bull_bear.rebuttals
    for t in turns:
        for s in t.sources:
            seen.setdefault(describe(s), s)
    return list(seen.values())


def _dropped(artifact: DebateArtifact) -> list[str]:
    out: list[str] = []
    if artifact.experts:
        for r in artifact.experts.rounds:
            for name, t in r.turns().items():
                out += [f"round {r.round} {name}: {d.raw} ({d.reason})" for d in t.dropped_sources]
    if artifact.bull_bear:
        for a in artifact.bull_bear.openings + artifact.bull_bear.rebuttals:
            out += [f"{a.phase} {a.analyst}: {d.raw} ({d.reason})" for d in a.dropped_sources]
    return out


def body(turn: ExpertTurn | Argument) -> str:
    """What a turn said, or why it said nothing."""
    return turn.text if not turn.failed else f"(turn failed: {turn.error})"


def title_of(artifact: DebateArtifact) -> str:
    m = artifact.meta
    return f"{m.name} ({m.ticker})" if m.name else m.ticker


def _conf(c: float) -> str:
    return f"{c:.2f}"


def render_markdown(artifact: DebateArtifact) -> str:
    """The full report as Markdown."""
    m = artifact.meta
    c = artifact.conclusion
    out = [f"# Debate report: {title_of(artifact)}", "",
           f"*Panel: {m.panel} · {m.generated_at:%Y-%m-%d %H:%M} UTC · data {m.data_as_of or 'n/a'}"
           + (f" · question: {m.question}" if m.question else "") + "*"]
    if m.label:
        out += ["", f"> {m.label}"]
    out += ["", "## Conclusion", "",
            f"**{c.action}** · confidence {_conf(c.confidence)} · consensus "
            f"{'yes' if c.consensus else 'no'}", "", c.text, ""]
    if c.caveats and not c.withheld:  # a withheld verdict's text already opens with them
        out += [f"**{x}**" for x in c.caveats] + [""]
    if c.missing:
        out += ["**Partial debate: these parts failed, so the confidence is lower:**", "",
                *(f"- {x}" for x in c.missing), ""]
    out += ["## Key metrics (computed from data)", "", "| Metric | Value |", "|---|---|"]
    out += [f"| {x.label} | {x.display} |" for x in artifact.metrics]
    if m.data_source:
        out += ["", f"Data: {m.data_source}"]
    if artifact.experts:
        for r in artifact.experts.rounds:
            out += ["", f"## Round {r.round}", "", "| Expert | Action | Confidence | Sources |",
                    "|---|---|---|---|"]
            turns = r.turns()
            for name, t in turns.items():
                status = "failed" if t.failed else t.action
                out.append(f"| {name} | {status} | {_conf(t.confidence)} | {len(t.sources)} |")
            for name, t in turns.items():
                out += ["", f"**{name.capitalize()}** — {body(t)}"]
    if artifact.bull_bear:
        bb = artifact.bull_bear
        h = bb.hypothesis
        out += ["", "## Hypothesis", "", h.hypothesis, "",
                "Verdict options: " + " / ".join(h.verdict_options)]
        if bb.data:
            out += ["", "## Data plan (run by code)", "", "| Tool | Arguments | Result |",
                    "|---|---|---|"]
            out += [f"| {d.tool} | `{d.args}` | {d.source_id if d.ok else 'failed: ' + d.note} |"
                    for d in bb.data]
        for phase, args in (("Openings", bb.openings), ("Rebuttals", bb.rebuttals)):
            if args:
                out += ["", f"## {phase}"]
                for a in args:
                    out += ["", f"**{a.analyst} ({a.side}, {a.profile})** — {body(a)}"]
        if bb.verdict:
            v = bb.verdict
            out += ["", "## Verdict", "", "| | |", "|---|---|",
                    f"| Verdict | {v.verdict} |", f"| Action | {v.action} |",
                    f"| Confidence | {v.confidence}/10 |",
                    f"| Time horizon | {v.time_horizon or 'n/a'} |",
                    f"| Strongest opposing data point | {v.strongest_opposing_data_point} |",
                    "", "Reasons: " + "; ".join(v.reasons),
                    "", "Key risks: " + ("; ".join(v.key_risks) or "none named")]
        if bb.summary:
            out += ["", "## Executive summary", "", bb.summary]
    notes = m.degradations + m.notes
    dropped = _dropped(artifact)
    if notes or dropped:
        out += ["", "## Notes", ""] + [f"- {n}" for n in notes]
        out += [f"- invented source dropped: {d}" for d in dropped]
    used = _sources_used(artifact)
    if used:
        out += ["", "## Sources", ""] + [f"- {describe(s)}" for s in used]
    if m.usage:
        out += ["", "## Usage", "", "| Seat | Profile | Calls | Tokens |", "|---|---|---|---|"]
        out += [f"| {u.seat} | {u.role} | {u.calls} | {u.prompt_tokens + u.completion_tokens} |"
                for u in m.usage]
        out.append(f"\nTokens used: {m.tokens_used:,}"
                   + (f" of a {m.budget_tokens:,} budget" if m.budget_tokens else ""))
    return "\n".join(out) + "\n"


def summary_markdown(artifact: DebateArtifact) -> str:
    """The chat's final message: positions, the conclusion, what went wrong."""
    m = artifact.meta
    c = artifact.conclusion
    lines = [f"**Debate: {title_of(artifact)}** — {m.panel} panel, {m.rounds_run} round(s)"]
    if artifact.experts and artifact.experts.rounds:
        last = artifact.experts.rounds[-1]
        lines.append("Final positions: " + " · ".join(
            f"{n.capitalize()} {'failed' if t.failed else f'{t.action} {t.confidence:.2f}'}"
            for n, t in last.turns().items()))
    if artifact.bull_bear:
        lines.append(f"Hypothesis: {artifact.bull_bear.hypothesis.hypothesis}")
    lines += ["", f"**Conclusion: {c.action}** (confidence {c.confidence:.2f}, "
                  f"{'consensus' if c.consensus else 'no consensus'}"
                  + (", partial: some parts failed" if c.missing else "") + ")", c.text]
    if c.caveats and not c.withheld:
        lines += c.caveats
    if c.missing:
        lines.append("**Missing:** " + "; ".join(c.missing[:6])
                     + (f"; and {len(c.missing) - 6} more" if len(c.missing) > 6 else ""))
    if m.stop_reason:
        lines.append(f"\n_Stopped: {m.stop_reason}_")
    extra = m.degradations + [n for n in m.notes if n not in c.caveats]
    if extra:
        lines += [""] + [f"- {n}" for n in extra[:8]]
    return "\n".join(lines)


def render_chart(bars: pd.DataFrame | None, title: str, market: str) -> bytes | None:
    """The candlestick chart PNG for the report (None without bars), in the colours of the
    instrument's `market`."""
    if bars is None or len(bars) < 2:
        return None
    from tools.charts import render_candles

    return render_candles(bars, title=title, bars=CHART_BARS, market=market, size=(10.0, 5.5),
                          dpi=110)


def render_pdf(artifact: DebateArtifact, chart_png: bytes | None = None) -> bytes:
    """The report as PDF bytes: title, conclusion, metrics table, chart, rounds, notes."""
    from fpdf import FPDF
    from fpdf.fonts import FontFace

    from tools.charts import cjk_font_path

    m = artifact.meta
    c = artifact.conclusion
    pdf = FPDF(format="A4")
    pdf.set_auto_page_break(auto=True, margin=15)
    font = cjk_font_path()
    pdf.add_font("cjk", fname=font)
    pdf.add_font("cjk", style="B", fname=font)
    pdf.set_title(f"Debate report: {title_of(artifact)}")
    pdf.add_page()
    bold = FontFace(emphasis="BOLD", fill_color=(235, 238, 245))

    def heading(text: str, size: int = 13) -> None:
        pdf.ln(2)
        pdf.set_font("cjk", "B", size)
        pdf.multi_cell(0, size * 0.55, text, align="L", new_x="LMARGIN", new_y="NEXT")
        pdf.set_font("cjk", "", 10)

    def para(text: str, size: int = 10) -> None:
        pdf.set_font("cjk", "", size)
        pdf.multi_cell(0, 5.2, text.replace("**", ""), align="L", new_x="LMARGIN",
                       new_y="NEXT")

    def table(rows: Sequence[Sequence[str]], widths: Sequence[int]) -> None:
        pdf.set_font("cjk", "", 9)
        with pdf.table(col_widths=tuple(widths), text_align="LEFT", headings_style=bold,
                       line_height=5.5) as t:
            for row in rows:
                cells = t.row()
                for value in row:
                    cells.cell(value)
        pdf.ln(2)

    heading(f"Debate report: {title_of(artifact)}", 16)
    para(f"Panel: {m.panel} | generated {m.generated_at:%Y-%m-%d %H:%M} UTC | data as of "
         f"{m.data_as_of or 'n/a'}" + (f"\nQuestion: {m.question}" if m.question else ""), 9)
    if m.label:
        para(m.label, 9)
    heading("Conclusion")
    para(f"{c.action} | confidence {c.confidence:.2f} | "
         f"{'consensus' if c.consensus else 'no consensus'}", 11)
    para(c.text)
    if c.caveats and not c.withheld:
        for caveat in c.caveats:
            para(caveat)
    heading("Key metrics (computed from data)")
    table([("Metric", "Value")] + [(x.label, x.display) for x in artifact.metrics], (60, 40))
    if m.data_source:
        para(f"Data: {m.data_source}", 8)
    if chart_png:
        heading("Price chart")
        pdf.image(io.BytesIO(chart_png), w=pdf.epw)
    if artifact.experts:
        for r in artifact.experts.rounds:
            heading(f"Round {r.round}")
            turns = r.turns()
            table([("Expert", "Action", "Confidence", "Sources")] + [
                (n, "failed" if t.failed else t.action, f"{t.confidence:.2f}",
                 str(len(t.sources))) for n, t in turns.items()], (30, 20, 20, 20))
            for n, t in turns.items():
                para(f"{n.capitalize()}: {body(t)}")
                pdf.ln(1)
    if artifact.bull_bear:
        bb = artifact.bull_bear
        heading("Hypothesis")
        para(bb.hypothesis.hypothesis)
        para("Verdict options: " + " / ".join(bb.hypothesis.verdict_options), 9)
        for phase, args in (("Openings", bb.openings), ("Rebuttals", bb.rebuttals)):
            if args:
                heading(phase)
                for a in args:
                    para(f"{a.analyst} ({a.side}): {body(a)}")
                    pdf.ln(1)
        if bb.verdict:
            v = bb.verdict
            heading("Verdict")
            table([("Item", "Judge"), ("Verdict", v.verdict), ("Action", v.action),
                   ("Confidence", f"{v.confidence}/10"),
                   ("Time horizon", v.time_horizon or "n/a"),
                   ("Reasons", "; ".join(v.reasons)),
                   ("Key risks", "; ".join(v.key_risks) or "none named"),
                   ("Strongest opposing data point", v.strongest_opposing_data_point or "n/a")],
                  (30, 70))
        if bb.summary:
            heading("Executive summary")
            para(bb.summary.replace("#", ""))
    notes = m.degradations + m.notes + [f"invented source dropped: {d}"
                                        for d in _dropped(artifact)]
    if notes:
        heading("Notes")
        for note in notes:
            para(f"- {note}", 9)
    used = _sources_used(artifact)
    if used:
        heading("Sources")
        for s in used:
            para(f"- {describe(s)}", 9)
    return bytes(pdf.output())
