"""The deterministic writer: every turn the code writes itself, in English or Chinese.

The opening (the date and the index moves), the theme (what the tickers share, then where the
debates came out), the closing, the short honest section of a ticker with no debate, and,
offline or when a worker fails, a ticker's whole section from its debate artifact. Every
figure here is copied from the data or the artifact as it is displayed there; nothing is
recomputed into a new number.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from debate.grounding import canonical_key
from debate.models import Action, DebateArtifact, ExpertName, ExpertTurn, Source
from podcast.models import IndexMove, IntradaySummary, Role, TickerProfile, TickerStatus

ACTION_ZH: dict[str, str] = {"BUY": "买入", "HOLD": "持有", "SELL": "卖出"}
EXPERT_ZH: dict[str, str] = {"fundamental": "基本面", "risk": "风险", "growth": "成长",
                             "sentiment": "情绪"}
INDEX_LABELS: dict[str, tuple[str, str]] = {
    "sp500": ("S&P 500", "标普500"), "nasdaq100": ("Nasdaq-100", "纳斯达克100"),
    "dow30": ("Dow 30", "道琼斯30"), "csi300": ("CSI 300", "沪深300"),
    "csi500": ("CSI 500", "中证500"),
}
MARKET_LABELS: dict[str, tuple[str, str]] = {
    "us": ("US", "美股"), "cn": ("A-share", "A股"), "hk": ("Hong Kong", "港股"),
    "crypto": ("crypto", "加密资产"), "fx": ("currency", "外汇"),
}
KEY_METRICS: dict[str, str] = {"close": "最新收盘价", "ret_1m": "近1月回报",
                               "ret_12m": "近12月回报", "vol_ann": "年化波动率",
                               "max_drawdown_1y": "近1年最大回撤"}
_WORDS_EN = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine",
             "ten")
_WORDS_ZH = "零一两三四五六七八九十"
QUOTE_CHARS = 320
OFFLINE_EN = ("This episode was made offline: the debates are scored from data by fixed rules "
              "and a deterministic writer wrote the script; no language model took part.")
OFFLINE_ZH = "本期为离线制作：辩论由固定规则根据数据打分，脚本由确定性程序撰写，没有使用语言模型。"


@dataclass
class Draft:
    """A turn before it has an id: who says it, what, and on which sources."""

    role: Role
    text: str
    sources: list[Source] = field(default_factory=list)


def _n(n: int, zh: bool) -> str:
    if zh:
        return _WORDS_ZH[n] if 0 <= n <= 10 else str(n)
    return _WORDS_EN[n] if 0 <= n <= 10 else str(n)


def _join(items: Sequence[str], zh: bool) -> str:
    if zh:
        return "、".join(items)
    if len(items) <= 2:
        return " and ".join(items)
    return ", ".join(items[:-1]) + " and " + items[-1]


def _unique(sources: Sequence[Source]) -> list[Source]:
    seen: set[tuple[str, ...]] = set()
    out: list[Source] = []
    for s in sources:
        key = canonical_key(s)
        if key not in seen:
            seen.add(key)
            out.append(s)
    return out


def _clip(text: str, limit: int = QUOTE_CHARS) -> str:
    """At most `limit` characters, cut at a space (never inside a figure)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text.rfind(" ", 0, limit)
    return (text[:cut] if cut > limit // 2 else text[:limit]).rstrip(" ,;:") + " …"


def action_word(action: Action | str, zh: bool) -> str:
    return f"{ACTION_ZH.get(action, action)}（{action}）" if zh else str(action)


def mentions_action(text: str, action: Action | str) -> bool:
    """Whether a text names the action (BUY/SELL/HOLD, or its Chinese word)."""
    if re.search(rf"\b{action}\b", text, re.IGNORECASE):
        return True
    return ACTION_ZH.get(action, "\0") in text


# --- opening and theme ---------------------------------------------------------------------


def opening(day: str, profiles: Sequence[TickerProfile], moves: Sequence[IndexMove], *,
            offline: bool, zh: bool) -> list[Draft]:
    """Greeting with the date and the tickers, then the index moves (each with its date)."""
    names = [f"{p.name} ({p.code})" if p.name else p.code for p in profiles] or ["—"]
    if zh:
        hello = f"欢迎收听 Bullpen 每日简报，今天是 {day}。今天讨论的股票：{_join(names, zh)}。"
        hello += OFFLINE_ZH if offline else ""
    else:
        hello = (f"Welcome to the Bullpen daily brief for {day}. On today's list: "
                 f"{_join(names, zh)}.") + (" " + OFFLINE_EN if offline else "")
    parts: list[str] = []
    sources: list[Source] = []
    for m in moves:
        if m.error:
            parts.append(f"{m.name}：没有数据（{_clip(m.error, 160)}）" if zh else
                         f"{m.name}: no data ({_clip(m.error, 160)})")
            continue
        latest = m.as_of != day
        if zh:
            move = f"，当日{m.change_display}" if m.change_display else ""
            parts.append(f"{m.name}在 {m.as_of} 收于 {m.close_display}{move}"
                         + ("（数据中最新）" if latest else ""))
        else:
            move = f", {m.change_display} on the day" if m.change_display else ""
            parts.append(f"{m.name} closed at {m.close_display} on {m.as_of}{move}"
                         + (" (the latest the data has)" if latest else ""))
        if m.source is not None:
            sources.append(m.source)
    historical = any("offline snapshot" in m.data_label for m in moves if not m.error)
    if zh:
        markets = "市场方面：" + "；".join(parts) + "。" + (
            "以上为离线快照中的历史数据，并非实时行情。" if historical else "")
    else:
        markets = "The markets: " + "; ".join(parts) + "." + (
            " These are historical figures from the offline snapshot, not live." if historical
            else "")
    return [Draft("host", hello), Draft("analyst", markets, _unique(sources))]


def theme_intro(profiles: Sequence[TickerProfile], *, zh: bool) -> Draft:
    """What the day's tickers have in common: market, exchange, sector, index membership."""
    n = len(profiles)
    if n == 0:
        return Draft("host", "今天没有可以讨论的股票。" if zh else
                     "There is no name to discuss today.")
    facts: list[str] = []
    markets = Counter(p.market for p in profiles)
    kinds = Counter(p.kind for p in profiles)
    kind_en = {"stock": "stocks", "index": "indexes", "crypto": "assets", "fx": "pairs",
               "fund": "funds"}
    if len(markets) == 1:
        market = MARKET_LABELS.get(next(iter(markets)), (next(iter(markets)),) * 2)
        kind = next(iter(kinds)) if len(kinds) == 1 else "stock"
        facts.append(f"{'全部' if n > 1 else ''}是{market[1]}" if zh else
                     f"{'all ' + _n(n, zh) + ' are' if n > 1 else 'it is'} "
                     f"{market[0]} {kind_en.get(kind, kind + 's') if n > 1 else kind}")
    else:
        mix = [f"{_n(c, zh)}{'只' if zh else ' '}{MARKET_LABELS.get(m, (m, m))[1 if zh else 0]}"
               for m, c in markets.most_common()]
        facts.append(("市场分布：" if zh else "a mix: ") + _join(mix, zh))
    exchanges = {p.exchange for p in profiles}
    if len(exchanges) == 1 and "" not in exchanges:
        ex = next(iter(exchanges))
        facts.append(f"都在 {ex} 上市" if zh else f"listed on {ex}")
    sectors = {p.sector for p in profiles}
    if len(sectors) == 1 and "" not in sectors:
        facts.append(f"同属{next(iter(sectors))}行业" if zh else
                     f"in the same sector ({next(iter(sectors))})")
    elif sectors - {""}:
        facts.append(("行业：" if zh else "sectors: ") + _join(
            [f"{p.code} {p.sector}" for p in profiles if p.sector], zh))
    common = set(profiles[0].indices).intersection(*(set(p.indices) for p in profiles[1:]))
    if common:
        labels = [INDEX_LABELS.get(i, (i, i))[1 if zh else 0]
                  for i in profiles[0].indices if i in common]
        facts.append((f"都是{_join(labels, zh)}成分股" if n > 1 else f"是{_join(labels, zh)}成分股")
                     if zh else f"members of the {_join(labels, zh)}")
    if zh:
        head = "今天这几只股票的共同点：" if n > 1 else "今天只有一只股票："
        return Draft("host", head + "，".join(facts) + "。")
    head = "What today's names have in common: " if n > 1 else "One name today: "
    return Draft("host", head + "; ".join(facts) + ".")


def theme_verdicts(statuses: Sequence[TickerStatus], *, zh: bool) -> Draft:
    """Where the debates came out, and which way the panels lean on balance."""
    by_action: dict[str, list[str]] = {}
    missing: list[str] = []
    for s in statuses:
        if s.action is not None and s.state in ("debated", "reused"):
            by_action.setdefault(s.action, []).append(s.code or s.ticker)
        else:
            missing.append(s.code or s.ticker)
    parts = [f"{action_word(a, zh)}：{_join(codes, zh)}" if zh else
             f"{a} for {_join(codes, zh)}"
             for a in ("BUY", "HOLD", "SELL") if (codes := by_action.get(a))]
    buys, sells = len(by_action.get("BUY", [])), len(by_action.get("SELL", []))
    if not parts:
        lean = ""
    elif buys > sells:
        lean = "总体来看，专家组偏多。" if zh else "On balance the panels lean bullish."
    elif sells > buys:
        lean = "总体来看，专家组偏空。" if zh else "On balance the panels lean bearish."
    elif buys:
        lean = "多空意见各半。" if zh else "Bulls and bears are evenly split."
    else:
        lean = "专家组整体观望。" if zh else "The panels mostly wait and see."
    if zh:
        text = ("辩论结果：" + "；".join(parts) + "。" if parts else "今天没有任何辩论得出结论。")
        text += f"今天没有结论：{_join(missing, zh)}。" if missing else ""
    else:
        text = ("Where the debates came out: " + "; ".join(parts) + "." if parts else
                "No debate reached a verdict today.")
        text += f" No verdict today for {_join(missing, zh)}." if missing else ""
    return Draft("analyst", (text + lean) if zh else f"{text} {lean}".strip())


def closing(day: str, statuses: Sequence[TickerStatus], *, offline: bool, zh: bool
            ) -> list[Draft]:
    recap = [f"{s.code or s.ticker} {action_word(s.action, zh)}" for s in statuses
             if s.action is not None and s.state in ("debated", "reused")]
    missing = [s.code or s.ticker for s in statuses
               if not (s.action is not None and s.state in ("debated", "reused"))]
    if zh:
        text = ("回顾一下：" + "，".join(recap) + "。" if recap else "今天没有得出结论的辩论。")
        text += f"没有辩论：{_join(missing, zh)}。" if missing else ""
        bye = (f"以上就是 {day} 的 Bullpen 简报。所有数据均由代码根据所注明的数据源计算；"
               "本节目仅供研究参考，不构成投资建议。")
        bye += "本期为离线制作，未使用语言模型。" if offline else ""
    else:
        text = ("To recap: " + "; ".join(recap) + "." if recap else
                "No debate reached a verdict today.")
        text += f" No debate today for {_join(missing, zh)}." if missing else ""
        bye = (f"That's the Bullpen brief for {day}. Every figure was computed in code from the "
               "data named with it; this is research, not investment advice.") + (
            " Made offline, without a language model." if offline else "")
    return [Draft("analyst", text), Draft("host", bye)]


# --- ticker sections -----------------------------------------------------------------------

HonestReason = tuple[str, str]  # (en, zh)
REASONS: dict[str, HonestReason] = {
    "unknown": ("not a security I know", "无法识别这个代码"),
    "no_data": ("there is no data for it", "没有它的数据"),
    "no_verdict": ("every expert's turn failed, so there is no verdict",
                   "所有专家的发言都失败了，因此没有结论"),
    "over_budget": ("the token budget affords no new debate and no report of today is stored",
                    "令牌预算不足以进行新的辩论，且没有今天的已存报告"),
    "failed": ("the debate could not run", "辩论无法进行"),
}


def honest_section(status: TickerStatus, *, zh: bool) -> list[Draft]:
    """The short section of a ticker with no debate: what is missing and why."""
    who = f"{status.name}（{status.code}）" if zh and status.name else (
        f"{status.name} ({status.code})" if status.name else (status.code or status.ticker))
    en, cn = REASONS.get(status.state, REASONS["failed"])
    detail = _clip(status.detail, 240) if status.detail else ""
    if zh:
        text = f"今天没有{who}的辩论：{cn}" + (f"（{detail}）" if detail else "") + "。我们跳过它。"
    else:
        text = (f"No debate for {who} today: {en}" + (f" ({detail})" if detail else "")
                + ". We'll skip it.")
    return [Draft("host", text)]


def _intro_word(index: int, total: int, zh: bool) -> str:
    if total == 1:
        return "今天的股票" if zh else "Our name today"
    if index == 0:
        return "首先" if zh else "First up"
    if index == total - 1:
        return "最后" if zh else "And finally"
    return "接下来" if zh else "Next"


def _expert(name: str, zh: bool) -> str:
    return EXPERT_ZH.get(name, name) if zh else name


def _positions(turns: dict[ExpertName, ExpertTurn], zh: bool) -> str:
    out = []
    for name, t in turns.items():
        if t.failed:
            out.append(f"{_expert(name, zh)}未作答" if zh else f"{name} gave no answer")
        else:
            out.append(f"{_expert(name, zh)} {t.action} {t.confidence:.2f}")
    return ("，" if zh else ", ").join(out)


def artifact_sources(art: DebateArtifact) -> list[Source]:
    """Every source the debate's turns cite, once each, in order."""
    out: list[Source] = []
    if art.experts is not None:
        for rnd in art.experts.rounds:
            for t in rnd.turns().values():
                out += t.sources
    return _unique(out)


def verdict_turn(art: DebateArtifact, *, zh: bool) -> Draft:
    """The panel's conclusion, quoted."""
    c = art.conclusion
    if zh:
        text = f"专家组结论：{action_word(c.action, zh)}。{c.text}"
        text += "这是一致意见。" if c.consensus else ""
    else:
        text = f"The panel's conclusion: {c.action}. {c.text}" + (
            " That is a consensus." if c.consensus else "")
    return Draft("analyst", text, artifact_sources(art))


def intraday_turn(code: str, summary: IntradaySummary | None, *, zh: bool) -> Draft:
    if summary is None:
        return Draft("host", f"数据中没有 {code} 的日内K线，所以今天没有日内解读。" if zh else
                     f"There are no intraday bars for {code} in the data, so no intraday read "
                     "today.")
    s = summary
    if zh:
        text = (f"日内（{s.day}，{s.interval} K线，{s.first_time} 至 {s.last_time}）："
                f"开盘 {s.open}，最高 {s.high}，最低 {s.low}，最新 {s.last}，"
                f"较开盘 {s.change_pct}。")
    else:
        text = (f"Intraday on {s.day} ({s.interval} bars, {s.first_time} to {s.last_time}): "
                f"opened at {s.open}, high {s.high}, low {s.low}, last {s.last}, "
                f"{s.change_pct} from the open.")
    return Draft("host", text, [s.source])


def ticker_section(art: DebateArtifact, intraday: IntradaySummary | None, *, index: int,
                   total: int, zh: bool) -> list[Draft]:
    """A ticker's section written from its debate artifact alone (offline, or when the
    worker's answer could not be used)."""
    m = art.meta
    who = f"{m.name}（{m.ticker}）" if zh and m.name else (
        f"{m.name} ({m.ticker})" if m.name else m.ticker)
    intro = _intro_word(index, total, zh)
    if zh:
        hello = f"{intro}：{who}。" + (f"四位专家基于截至 {m.data_as_of} 的数据进行了辩论。"
                                      if m.data_as_of else "四位专家对它进行了辩论。")
    else:
        hello = f"{intro}: {who}. " + (
            f"The four experts debated it on data as of {m.data_as_of}." if m.data_as_of
            else "The four experts debated it.")
    drafts = [Draft("host", hello)]
    sources = artifact_sources(art)
    out = art.experts
    if out is not None and out.rounds:
        first, last = out.rounds[0].turns(), out.rounds[-1].turns()
        if zh:
            text = f"首轮立场：{_positions(first, zh)}。"
            if len(out.rounds) > 1:
                text += f"最后一轮：{_positions(last, zh)}。"
        else:
            text = f"Opening positions: {_positions(first, zh)}."
            if len(out.rounds) > 1:
                text += f" In the final round: {_positions(last, zh)}."
        drafts.append(Draft("analyst", text, sources))
        cases: list[str] = []
        cited: list[Source] = []
        for side, label_en, label_zh in (("BUY", "The bull case", "看多理由"),
                                         ("SELL", "The bear case", "看空理由")):
            backers = sorted(((n, t) for n, t in first.items()
                              if not t.failed and t.action == side and t.text.strip()),
                             key=lambda nt: -nt[1].confidence)
            if backers:
                name, t = backers[0]
                cited += t.sources
                cases.append(f"{label_zh}（{_expert(name, zh)}）：{_clip(t.text)}" if zh else
                             f"{label_en}, from the {name} expert: {_clip(t.text)}")
            else:
                cases.append(f"没有专家主张{ACTION_ZH[side]}。" if zh else
                             f"Nobody argued to {side.lower()}.")
        drafts.append(Draft("analyst", ("" if zh else " ").join(cases).strip(), _unique(cited)))
    figures = [(KEY_METRICS[x.key] if zh else x.label, x.display) for x in art.metrics
               if x.key in KEY_METRICS and x.value is not None]
    if figures:
        if zh:
            text = "关键数据：" + "；".join(f"{label} {value}" for label, value in figures) + "。"
        else:
            text = "Key figures: " + "; ".join(f"{label} {value}" for label, value in figures) + "."
        drafts.append(Draft("host", text, sources))
    drafts.append(verdict_turn(art, zh=zh))
    drafts.append(intraday_turn(m.ticker, intraday, zh=zh))
    return drafts


__all__ = ["OFFLINE_EN", "OFFLINE_ZH", "Draft", "action_word", "artifact_sources", "closing",
           "honest_section", "intraday_turn", "mentions_action", "opening", "theme_intro",
           "theme_verdicts", "ticker_section", "verdict_turn"]
