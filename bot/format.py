"""Templated Markdown for tool results (the offline analyst's voice), in English or Chinese.

Formatting belongs here, not in the tools: tools return typed models, this turns them into
words. Unknown result types fall back to a compact field listing.
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel

from core import numbers
from core.errors import BullpenError, UnknownSymbol
from core.localize import localize, source_label, word
from core.words import t
from tools.symbols.normalize import has_cjk
from tools.symbols.sources import chinese_name


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


_LATIN_TAIL = re.compile(r"\s+[A-Za-z][\w&.()/ -]*$")


def _zh_name(symbol: str, name: str) -> str:
    """The name a Chinese reader knows: an A-share's own, the curated Chinese name of a US
    stock, index or coin (英伟达, 标普500, 比特币), else none (the code says it)."""
    if has_cjk(name):
        return _LATIN_TAIL.sub("", name)  # 沪深300 CSI 300 index -> 沪深300
    return chinese_name(symbol) or ""


_NAMES = {"zh": _zh_name}


def display_name(symbol: str, name: str, lang: str) -> str:
    """"Name (CODE)" in the reader's language, or the code alone."""
    name = _NAMES.get(lang, lambda _s, n: n)(symbol, name or "")
    return f"{name} ({symbol})" if name else symbol


def _name(x: Any, lang: str) -> str:
    return display_name(str(x.symbol), getattr(x, "name", "") or "", lang)


def _source(src: Any, lang: str) -> str:
    if src is None:
        return ""
    key = "src.line_snapshot" if getattr(src, "offline", False) else "src.line"
    return t(key, lang, label=source_label(src, lang))


def no_symbol(lang: str) -> str:
    if lang == "zh":
        return ("我没有在问题里找到股票代码或名称。请写出代码或名称，例如"
                "“600519 最新收盘价”或“NVDA 最近一个月走势”。")
    return ("I couldn't find a stock in your question. Name one by ticker, code or name, "
            "e.g. \"NVDA latest close\" or \"600519 last month\".")


def tool_error(exc: BullpenError | str, lang: str) -> str:
    if isinstance(exc, UnknownSymbol):
        if lang == "zh":
            hint = f"你是不是想找：{'、'.join(exc.suggestions)}？" if exc.suggestions else ""
            return f"找不到“{exc.query}”。{hint}"
        hint = f" Did you mean: {', '.join(exc.suggestions)}?" if exc.suggestions else ""
        return f"I don't know the symbol \"{exc.query}\".{hint}"
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
    up = (q.change or 0) >= 0
    if lang == "zh":
        move = "上涨" if up else "下跌"
        lines = [f"**{name}** 在 {date} 收于 **{c}{_px(q.close, q)}**，较前一交易日{move} "
                 f"{c}{_px(abs(q.change or 0), q)}（{_pct(q.change_pct)}）。",
                 (f"52周区间：{c}{_px(q.low_52w, q)} – {c}{_px(q.high_52w, q)}；"
                  if _has_range(q) else "") + f"成交量：{_vol(q.volume, lang, q)}。"]
    else:
        move = "up" if up else "down"
        lines = [f"**{name}** closed at **{c}{_px(q.close, q)}** on {date}, {move} "
                 f"{c}{_px(abs(q.change or 0), q)} ({_pct(q.change_pct)}) from the previous close.",
                 (f"52-week range: {c}{_px(q.low_52w, q)} – {c}{_px(q.high_52w, q)}; volume "
                  if _has_range(q) else "Volume ") + f"{_vol(q.volume, lang, q)}."]
    lines.append(_source(getattr(q, "source", None), lang))
    return "\n".join(lines)


def _fx_quote(q: Any, lang: str) -> str:
    name = _name(q, lang)
    date = q.as_of.isoformat()
    rate, change = _num(q.close, 4), _num(abs(q.change or 0), 4)
    up = (q.change or 0) >= 0
    if lang == "zh":
        lines = [f"**{name}** 在 {date} 的汇率为 **{rate}**，较前值{'上涨' if up else '下跌'} "
                 f"{change}（{_pct(q.change_pct)}）。",
                 f"52周区间：{_num(q.low_52w, 4)} – {_num(q.high_52w, 4)}。"]
    else:
        lines = [f"**{name}** was at **{rate}** on {date}, {'up' if up else 'down'} {change} "
                 f"({_pct(q.change_pct)}) from the previous close.",
                 f"52-week range: {_num(q.low_52w, 4)} – {_num(q.high_52w, 4)}."]
    lines.append(_source(getattr(q, "source", None), lang))
    return "\n".join(lines)


def quotes(ql: Any, lang: str) -> str:
    head = ("| 代码 | 名称 | 收盘 | 涨跌幅 | 日期 |" if lang == "zh"
            else "| Symbol | Name | Close | Change | Date |")
    rows = [head, "|---|---|---:|---:|---|"] if ql.quotes else []  # no empty table
    for q in ql.quotes:
        short = _NAMES.get(lang, lambda _s, n: n)(q.symbol, q.name or "")
        rows.append(f"| {q.symbol} | {short} | {_cur(q.currency)}{_px(q.close, q)} | "
                    f"{_pct(q.change_pct)} | {q.as_of.isoformat()} |")
    out = "\n".join(rows)
    for e in ql.errors:
        out += f"\n{e.symbol}: {e.error}"
    sources = {source_label(q.source, lang) for q in ql.quotes}
    if sources:
        out += "\n" + t("src.lines", lang, labels="; ".join(sorted(sources)))
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
    if lang == "zh":
        text = (f"**{name}** {s.first} 至 {s.last}（{o.total_bars} 根{iv}K线）："
                f"从 {c}{_px(s.open, o)} 到 {c}{_px(s.close, o)}，涨跌 {_pct(s.change_pct)}；"
                f"最高 {c}{_px(s.high, o)}，最低 {c}{_px(s.low, o)}。")
    else:
        text = (f"**{name}** from {s.first} to {s.last} ({o.total_bars} {o.interval} bars): "
                f"{c}{_px(s.open, o)} → {c}{_px(s.close, o)} ({_pct(s.change_pct)}); "
                f"high {c}{_px(s.high, o)}, low {c}{_px(s.low, o)}.")
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
        if lang == "zh":
            lines.append(f"{name}：{s.first} 至 {s.last}，{s.bars} 根K线，"
                         f"区间涨跌 {_pct(s.change_pct)}，最新 {_px(s.last_close, s)}。")
        else:
            lines.append(f"{name}: {s.first} to {s.last}, {s.bars} bars, "
                         f"{_pct(s.change_pct)} over the range, last {_px(s.last_close, s)}.")
    head = "已生成图表（见图片）。" if lang == "zh" else "Chart attached."
    if note := getattr(r, "range_note", ""):  # a comparison cut to the dates all share
        lines.append(f"对比区间为所有标的共有的日期，截至 {r.series[0].last}。" if lang == "zh"
                     else note[0].upper() + note[1:] + ".")
    covered = getattr(r, "coverage", None)
    if covered is not None:
        names = ", ".join(_name(s, lang) for s in r.series)
        lines.append(t("chat.period_partial", lang, name=names, **_window(covered)))
    sources = {source_label(s.source, lang) for s in r.series}
    tail = t("src.line", lang, label="; ".join(sorted(sources)))
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
