"""Templated Markdown for tool results (the offline analyst's voice), in English or Chinese.

Formatting belongs here, not in the tools: tools return typed models, this turns them into
words. Unknown result types fall back to a compact field listing.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from core import numbers
from core.errors import BullpenError, UnknownSymbol
from core.localize import localize, source_label, word
from core.words import t
from tools.symbols.sources import reader_name


def _num(v: float | None, digits: int = 2) -> str:
    return numbers.plain(v, places=digits)


def _pct(v: float | None) -> str:
    return numbers.pct(v)


def _market(x: Any) -> str:
    """The instrument's market ("cn", "us", ...): named by quotes, told by the currency or
    an A-share code otherwise (an index is quoted in points, with no currency)."""
    if market := getattr(x, "market", ""):
        return str(market)
    currency = getattr(x, "currency", "")
    code = str(getattr(x, "symbol", "")).split(".")[0]
    if currency == "CNY" or (not currency and len(code) == 6 and code.isdigit()):
        return "cn"
    return "us" if currency == "USD" else ""


def _px(v: float | None, x: Any) -> str:
    """A price of instrument `x` on its tick (¥0.61, not ¥0.6100)."""
    return numbers.price(v, market=_market(x), symbol=str(getattr(x, "symbol", "")))


def _vol(v: int | None, lang: str, x: Any) -> str:
    """Shares for a stock; an index's or a coin's volume without a unit word (its source
    names none)."""
    stock = bool(getattr(x, "currency", "")) and _market(x) in ("cn", "us")
    return numbers.volume(v, lang, unit=stock)


def _cur(currency: str) -> str:
    return numbers.currency_sign(currency)


def display_name(symbol: str, name: str, lang: str) -> str:
    """"Name (CODE)" in the reader's language, or the code alone."""
    name = reader_name(symbol, name or "", lang)
    return f"{name} ({symbol})" if name else symbol


def _name(x: Any, lang: str) -> str:
    return display_name(str(x.symbol), getattr(x, "name", "") or "", lang)


def _source(src: Any, lang: str) -> str:
    if src is None:
        return ""
    key = "src.line_snapshot" if getattr(src, "offline", False) else "src.line"
    return t(key, lang, label=source_label(src, lang))


def no_symbol(lang: str) -> str:
    return t("answer.no_symbol", lang)


def tool_error(exc: BullpenError | str, lang: str) -> str:
    if isinstance(exc, UnknownSymbol):
        names = t("grammar.list_sep", lang).join(exc.suggestions)
        hint = t("answer.did_you_mean", lang, names=names) if exc.suggestions else ""
        return t("answer.unknown_symbol", lang, query=exc.query, hint=hint)
    return f"⚠️ {exc}"


def _has_range(q: Any) -> bool:
    """A 52-week range to show (a one-day quote has none)."""
    return getattr(q, "low_52w", None) is not None and getattr(q, "high_52w", None) is not None


def _is_fx(symbol: str) -> bool:
    """A currency pair (EURUSD, EURUSD=X): a rate, quoted to 4 decimals without a sign."""
    pair = symbol.removesuffix("=X").replace("/", "")
    return len(pair) == 6 and pair.isalpha() and pair.isupper()


def quote(q: Any, lang: str) -> str:
    if _is_fx(q.symbol):
        return _fx_quote(q, lang)
    c = _cur(getattr(q, "currency", ""))
    name = _name(q, lang)
    date = q.as_of.isoformat()
    move = t("answer.up" if (q.change or 0) >= 0 else "answer.down", lang)
    volume = _vol(q.volume, lang, q)
    lines = [t("answer.quote", lang, name=name, close=f"{c}{_px(q.close, q)}", date=date,
               move=move, change=f"{c}{_px(abs(q.change or 0), q)}", pct=_pct(q.change_pct)),
             t("answer.range_volume", lang, low=f"{c}{_px(q.low_52w, q)}",
               high=f"{c}{_px(q.high_52w, q)}", volume=volume) if _has_range(q)
             else t("answer.volume", lang, volume=volume)]
    lines.append(_source(getattr(q, "source", None), lang))
    return "\n".join(lines)


def _fx_quote(q: Any, lang: str) -> str:
    name = _name(q, lang)
    date = q.as_of.isoformat()
    rate, change = _num(q.close, 4), _num(abs(q.change or 0), 4)
    move = t("answer.up" if (q.change or 0) >= 0 else "answer.down", lang)
    lines = [t("answer.fx_quote", lang, name=name, rate=rate, date=date, move=move,
               change=change, pct=_pct(q.change_pct)),
             t("answer.fx_range", lang, low=_num(q.low_52w, 4), high=_num(q.high_52w, 4))]
    lines.append(_source(getattr(q, "source", None), lang))
    return "\n".join(lines)


def quotes(ql: Any, lang: str) -> str:
    head = t("answer.quotes_head", lang)
    rows = [head, "|---|---|---:|---:|---|"] if ql.quotes else []  # no empty table
    for q in ql.quotes:
        short = reader_name(q.symbol, q.name or "", lang)
        rows.append(f"| {q.symbol} | {short} | {_cur(q.currency)}{_px(q.close, q)} | "
                    f"{_pct(q.change_pct)} | {q.as_of.isoformat()} |")
    out = "\n".join(rows)
    for e in ql.errors:
        out += f"\n{e.symbol}: {e.error}"
    sources = {source_label(q.source, lang) for q in ql.quotes}
    if sources:
        labels = t("grammar.clause_sep", lang).join(sorted(sources))
        out += "\n" + t("src.lines", lang, labels=labels)
    return out.lstrip("\n")


def ohlcv(o: Any, lang: str, period: str | None) -> str:
    name = _name(o, lang)
    s = o.summary
    covered = getattr(o, "coverage", None)
    if s is None:
        return (t("chat.period_none", lang, name=name, **_window(covered)) if covered is not None
                else t("chat.no_bars", lang, name=name))
    c = _cur(o.currency)
    iv = word("ta.interval_", o.interval, lang)
    text = t("answer.bars", lang, name=name, first=s.first, last=s.last, bars=o.total_bars,
             interval=iv, open=f"{c}{_px(s.open, o)}", close=f"{c}{_px(s.close, o)}",
             pct=_pct(s.change_pct), high=f"{c}{_px(s.high, o)}", low=f"{c}{_px(s.low, o)}")
    cols = list(o.columns)
    keep = [i for i, col in enumerate(cols) if col in ("date", "time", "close", "volume",
                                                        "ma5", "ma20")]
    if keep and o.rows:
        table = ["| " + " | ".join(word("ta.col_", cols[i], lang) for i in keep) + " |",
                 "|" + "---|" * len(keep)]
        for row in o.rows[-8:]:
            table.append("| " + " | ".join(_cell(cols[i], row[i], lang, o) for i in keep)
                         + " |")
        text += "\n\n" + "\n".join(table)
    if covered is not None:  # the asked window reaches past the data: said (house rule 17)
        text += "\n\n" + t("chat.period_partial", lang, name=name, **_window(covered))
    return text + "\n" + _source(o.source, lang)


def _cell(col: str, v: Any, lang: str, o: Any) -> str:
    """One cell of a bars table: prices on the tick, volumes in the language's units."""
    if col == "volume" and isinstance(v, int | float):
        return _vol(int(v), lang, o)
    return _px(v, o) if isinstance(v, float) else str(v)


def _window(c: Any) -> dict[str, str]:
    """A `tools.market.Coverage` as the words' fields ("…" for an open end)."""
    return {"asked_start": str(c.asked_start or "…"), "asked_end": str(c.asked_end or "…"),
            "data_first": str(c.data_first), "data_last": str(c.data_last)}


def indicators(r: Any, lang: str) -> str:
    name = _name(r, lang)
    head = t("ta.indicators_head", lang, name=name, interval=word("ta.interval_", r.interval, lang),
             day=r.as_of, close=_px(r.close, r))
    lines = [head]
    for ind in r.indicators:
        values = ", ".join(f"{word('ta.ind_', k, lang)} {numbers.value(v, lang)}"
                           for k, v in ind.latest.items())
        signals = [localize(x, lang, "ta.sig_") for x in ind.signals]
        sig = f" — {'; '.join(signals)}" if signals else ""
        lines.append(f"- **{localize(ind.name, lang, 'ta.ind_name_')}**: {values}{sig}")
    lines.append(_source(r.source, lang))
    return "\n".join(lines)


def chart(r: Any, lang: str) -> str:
    lines = []
    for s in r.series:
        name = _name(s, lang)
        lines.append(t("answer.chart_series", lang, name=name, first=s.first, last=s.last,
                       bars=s.bars, pct=_pct(s.change_pct), close=_px(s.last_close, s)))
    head = t("answer.chart_attached", lang)
    if note := getattr(r, "range_note", ""):  # a comparison cut to the dates all share
        note = localize(note, lang)
        lines.append(t("answer.sentence", lang, text=note[0].upper() + note[1:]))
    covered = getattr(r, "coverage", None)
    if covered is not None:
        names = ", ".join(_name(s, lang) for s in r.series)
        lines.append(t("chat.period_partial", lang, name=names, **_window(covered)))
    sources = {source_label(s.source, lang) for s in r.series}
    tail = t("src.line", lang, label=t("grammar.clause_sep", lang).join(sorted(sources)))
    return "\n".join([head, *lines, tail])


def generic(result: BaseModel) -> str:
    data = result.model_dump(exclude_none=True)
    return "\n".join(f"- {k}: {v}" for k, v in list(data.items())[:12])


def render_step(tool: str, result: BaseModel | None, error: str, lang: str, *,
                period: str | None = None) -> str:
    if error:
        return f"⚠️ {error}"
    if result is None:
        return ""
    renderers = {
        "get_quote": lambda: quote(result, lang),
        "get_quotes": lambda: quotes(result, lang),
        "get_ohlcv": lambda: ohlcv(result, lang, period),
        "get_indicators": lambda: indicators(result, lang),
        "generate_chart": lambda: chart(result, lang),
    }
    fn = renderers.get(tool)
    return fn() if fn else generic(result)
