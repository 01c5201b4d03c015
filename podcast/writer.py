"""The deterministic writer: every turn the code writes itself, in the listener's language.

The opening (the date and the index moves), the theme (what the tickers share, then where the
debates came out), the closing, the short honest section of a ticker with no debate, and,
offline or when a worker fails, a ticker's whole section from its debate artifact. Every
figure here is copied from the data or the artifact as it is displayed there; nothing is
recomputed into a new number. The words are the catalogue's (`podcast.*`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

from core.localize import listing, word
from core.words import LANGS, has, t
from debate.grounding import canonical_key
from debate.models import Action, DebateArtifact, ExpertName, ExpertTurn, Source
from podcast.models import IndexMove, IntradaySummary, Role, TickerProfile, TickerStatus
from tools.symbols.sources import reader_name

# the debate metrics a ticker's section quotes, each titled by "podcast.metric_<key>"
KEY_METRICS: tuple[str, ...] = ("close", "ret_1m", "ret_12m", "vol_ann", "max_drawdown_1y")
QUOTE_CHARS = 320


@dataclass
class Draft:
    """A turn before it has an id: who says it, what, and on which sources."""

    role: Role
    text: str
    sources: list[Source] = field(default_factory=list)


_NUMBERS = ("podcast.n_0", "podcast.n_1", "podcast.n_2", "podcast.n_3", "podcast.n_4",
            "podcast.n_5", "podcast.n_6", "podcast.n_7", "podcast.n_8", "podcast.n_9",
            "podcast.n_10")


def _n(n: int, lang: str) -> str:
    """Small counts as words ("three", "三"), larger ones as digits."""
    return t(_NUMBERS[n], lang) if 0 <= n < len(_NUMBERS) else str(n)


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


def action_word(action: Action | str, lang: str) -> str:
    """BUY, or 买入（BUY） for a Chinese listener."""
    return word("podcast.action_", str(action), lang)


def mentions_action(text: str, action: Action | str) -> bool:
    """Whether a text names the action (BUY/SELL/HOLD, or its word in either language)."""
    if re.search(rf"\b{action}\b", text, re.IGNORECASE):
        return True
    key = f"debate.action_{action}"
    return any(t(key, lang) in text for lang in LANGS) if key in _ACTIONS else False


_ACTIONS = ("debate.action_BUY", "debate.action_HOLD", "debate.action_SELL")


# --- opening and theme ---------------------------------------------------------------------


def opening(day: str, profiles: Sequence[TickerProfile], moves: Sequence[IndexMove], *,
            offline: bool, lang: str) -> list[Draft]:
    """Greeting with the date and the tickers, then the index moves (each with its date)."""
    named = [(reader_name(p.code, p.name, lang), p.code) for p in profiles]
    names = [f"{name} ({code})" if name else code for name, code in named] or ["—"]
    hello = t("podcast.hello", lang, day=day, names=listing(names, lang))
    if offline:
        hello = t("grammar.sentence_sep", lang).join((hello, t("podcast.offline", lang)))
    parts: list[str] = []
    sources: list[Source] = []
    for m in moves:
        if m.error:
            parts.append(t("podcast.index_no_data", lang, name=m.name,
                           error=_clip(m.error, 160)))
            continue
        move = t("podcast.index_change", lang, change=m.change_display) if m.change_display \
            else ""
        latest = t("podcast.index_latest", lang) if m.as_of != day else ""
        parts.append(t("podcast.index_move", lang, name=m.name, close=m.close_display,
                       day=m.as_of, move=move, latest=latest))
        if m.source is not None:
            sources.append(m.source)
    historical = any("offline snapshot" in m.data_label for m in moves if not m.error)
    markets = t("podcast.markets", lang, moves=t("grammar.clause_sep", lang).join(parts))
    if historical:
        markets = t("grammar.sentence_sep", lang).join((markets, t("podcast.historical", lang)))
    return [Draft("host", hello), Draft("analyst", markets, _unique(sources))]


# a kind of instrument -> its catalogue keys for one and for several
_KINDS = {"stock": ("podcast.kind_stock", "podcast.kinds_stock"),
          "index": ("podcast.kind_index", "podcast.kinds_index"),
          "crypto": ("podcast.kind_crypto", "podcast.kinds_crypto"),
          "fx": ("podcast.kind_fx", "podcast.kinds_fx"),
          "fund": ("podcast.kind_fund", "podcast.kinds_fund")}


def theme_intro(profiles: Sequence[TickerProfile], *, lang: str) -> Draft:
    """What the day's tickers have in common: market, exchange, sector, index membership."""
    n = len(profiles)
    if n == 0:
        return Draft("host", t("podcast.no_names", lang))
    facts: list[str] = []
    markets = Counter(p.market for p in profiles)
    kinds = Counter(p.kind for p in profiles)
    if len(markets) == 1:
        market = word("podcast.market_", next(iter(markets)), lang)
        kind = next(iter(kinds)) if len(kinds) == 1 else "stock"
        one, many = _KINDS.get(kind, ("", ""))
        if n > 1:
            facts.append(t("podcast.all_are", lang, n=_n(n, lang), market=market,
                           kinds=t(many, lang) if many else kind + "s"))
        else:
            facts.append(t("podcast.it_is", lang, market=market,
                           kind=t(one, lang) if one else kind))
    else:
        mix = [t("podcast.mix_item", lang, n=_n(c, lang), market=word("podcast.market_", m, lang))
               for m, c in markets.most_common()]
        facts.append(t("podcast.mix", lang, items=listing(mix, lang)))
    exchanges = {p.exchange for p in profiles}
    if len(exchanges) == 1 and "" not in exchanges:
        facts.append(t("podcast.listed_on", lang, exchange=next(iter(exchanges))))
    sectors = {p.sector for p in profiles}
    if len(sectors) == 1 and "" not in sectors:
        facts.append(t("podcast.same_sector", lang, sector=next(iter(sectors))))
    elif sectors - {""}:
        facts.append(t("podcast.sectors", lang, items=listing(
            [f"{p.code} {p.sector}" for p in profiles if p.sector], lang)))
    common = set(profiles[0].indices).intersection(*(set(p.indices) for p in profiles[1:]))
    if common:
        labels = [word("podcast.idx_", i, lang) for i in profiles[0].indices if i in common]
        facts.append(t("podcast.members_all" if n > 1 else "podcast.members_one", lang,
                       indexes=listing(labels, lang)))
    return Draft("host", t("podcast.common_many" if n > 1 else "podcast.common_one", lang,
                           facts=_facts_sep(lang).join(facts)))


def _facts_sep(lang: str) -> str:
    """Between the theme's facts: "; " in English, "，" in Chinese."""
    return t("podcast.facts_sep", lang)


def theme_verdicts(statuses: Sequence[TickerStatus], *, lang: str) -> Draft:
    """Where the debates came out, and which way the panels lean on balance."""
    by_action: dict[str, list[str]] = {}
    missing: list[str] = []
    for s in statuses:
        if s.action is not None and s.state in ("debated", "reused"):
            by_action.setdefault(s.action, []).append(s.code or s.ticker)
        else:
            missing.append(s.code or s.ticker)
    parts = [t("podcast.verdict_item", lang, action=action_word(a, lang),
               codes=listing(codes, lang))
             for a in ("BUY", "HOLD", "SELL") if (codes := by_action.get(a))]
    buys, sells = len(by_action.get("BUY", [])), len(by_action.get("SELL", []))
    if not parts:
        lean = ""
    elif buys > sells:
        lean = t("podcast.lean_bullish", lang)
    elif sells > buys:
        lean = t("podcast.lean_bearish", lang)
    elif buys:
        lean = t("podcast.lean_split", lang)
    else:
        lean = t("podcast.lean_wait", lang)
    said = [t("podcast.verdicts", lang, items=t("grammar.clause_sep", lang).join(parts))
            if parts else t("podcast.no_verdicts", lang)]
    if missing:
        said.append(t("podcast.no_verdict_for", lang, codes=listing(missing, lang)))
    if lean:
        said.append(lean)
    return Draft("analyst", t("grammar.sentence_sep", lang).join(said))


def closing(day: str, statuses: Sequence[TickerStatus], *, offline: bool, lang: str
            ) -> list[Draft]:
    recap = [f"{s.code or s.ticker} {action_word(s.action, lang)}" for s in statuses
             if s.action is not None and s.state in ("debated", "reused")]
    missing = [s.code or s.ticker for s in statuses
               if not (s.action is not None and s.state in ("debated", "reused"))]
    said = [t("podcast.recap", lang, items=_facts_sep(lang).join(recap)) if recap
            else t("podcast.no_verdicts", lang)]
    if missing:
        said.append(t("podcast.no_debate_for", lang, codes=listing(missing, lang)))
    bye = [t("podcast.bye", lang, day=day)]
    if offline:
        bye.append(t("podcast.bye_offline", lang))
    sep = t("grammar.sentence_sep", lang)
    return [Draft("analyst", sep.join(said)), Draft("host", sep.join(bye))]


# --- ticker sections -----------------------------------------------------------------------

# a ticker's state -> why it has no debate ("podcast.reason_failed" for any other)
REASONS: dict[str, str] = {
    "unknown": "podcast.reason_unknown", "no_data": "podcast.reason_no_data",
    "no_verdict": "podcast.reason_no_verdict", "over_budget": "podcast.reason_over_budget",
    "failed": "podcast.reason_failed",
}


def _who(name: str, code: str, lang: str) -> str:
    """"Name (CODE)" with the name the listener knows, or the code alone."""
    name = reader_name(code, name, lang)
    return t("podcast.who", lang, name=name, code=code) if name else code


def honest_section(status: TickerStatus, *, lang: str) -> list[Draft]:
    """The short section of a ticker with no debate: what is missing and why."""
    who = _who(status.name, status.code, lang) if status.name else (status.code or status.ticker)
    reason = t(REASONS.get(status.state, "podcast.reason_failed"), lang)
    detail = t("podcast.detail", lang, detail=_clip(status.detail, 240)) if status.detail \
        else ""
    return [Draft("host", t("podcast.honest", lang, who=who, reason=reason, detail=detail))]


def _intro_word(index: int, total: int, lang: str) -> str:
    if total == 1:
        return t("podcast.intro_only", lang)
    if index == 0:
        return t("podcast.intro_first", lang)
    if index == total - 1:
        return t("podcast.intro_last", lang)
    return t("podcast.intro_next", lang)


def _expert(name: str, lang: str) -> str:
    return word("podcast.expert_", name, lang)


def _positions(turns: dict[ExpertName, ExpertTurn], lang: str) -> str:
    out = []
    for name, turn in turns.items():
        if turn.failed:
            out.append(t("podcast.no_answer", lang, expert=_expert(name, lang)))
        else:
            out.append(t("factors.view", lang, name=_expert(name, lang),
                         action=t("debate.action_" + turn.action, lang),
                         confidence=f"{turn.confidence:.2f}"))
    return t("grammar.comma", lang).join(out)


def artifact_sources(art: DebateArtifact) -> list[Source]:
    """Every source the debate's turns cite, once each, in order."""
    out: list[Source] = []
    if art.experts is not None:
        for rnd in art.experts.rounds:
            for turn in rnd.turns().values():
                out += turn.sources
    return _unique(out)


def verdict_turn(art: DebateArtifact, *, lang: str) -> Draft:
    """The panel's conclusion, quoted."""
    c = art.conclusion
    text = t("podcast.conclusion", lang, action=action_word(c.action, lang), text=c.text)
    text += t("podcast.consensus", lang) if c.consensus else ""
    return Draft("analyst", text, artifact_sources(art))


def intraday_turn(code: str, summary: IntradaySummary | None, *, lang: str) -> Draft:
    if summary is None:
        return Draft("host", t("podcast.no_intraday", lang, code=code))
    s = summary
    interval = t("ta.interval_" + s.interval, lang) if has("ta.interval_" + s.interval) \
        else s.interval
    return Draft("host", t("podcast.intraday", lang, day=s.day, interval=interval,
                           first=s.first_time, last=s.last_time, open=s.open, high=s.high,
                           low=s.low, close=s.last, change=s.change_pct), [s.source])


_CASES = (("BUY", "podcast.bull_case", "podcast.nobody_buy"),
          ("SELL", "podcast.bear_case", "podcast.nobody_sell"))


def ticker_section(art: DebateArtifact, intraday: IntradaySummary | None, *, index: int,
                   total: int, lang: str) -> list[Draft]:
    """A ticker's section written from its debate artifact alone (offline, or when the
    worker's answer could not be used)."""
    m = art.meta
    debated = t("podcast.debated_on", lang, day=m.data_as_of) if m.data_as_of \
        else t("podcast.debated", lang)
    drafts = [Draft("host", t("podcast.ticker_hello", lang, intro=_intro_word(index, total, lang),
                              who=_who(m.name, m.ticker, lang), debated=debated))]
    sources = artifact_sources(art)
    sep = t("grammar.sentence_sep", lang)
    out = art.experts
    if out is not None and out.rounds:
        first, last = out.rounds[0].turns(), out.rounds[-1].turns()
        said = [t("podcast.opening_positions", lang, positions=_positions(first, lang))]
        if len(out.rounds) > 1:
            said.append(t("podcast.final_positions", lang, positions=_positions(last, lang)))
        drafts.append(Draft("analyst", sep.join(said), sources))
        cases: list[str] = []
        cited: list[Source] = []
        for side, case, nobody in _CASES:
            backers = sorted(((n, turn) for n, turn in first.items()
                              if not turn.failed and turn.action == side and turn.text.strip()),
                             key=lambda nt: -nt[1].confidence)
            if backers:
                name, turn = backers[0]
                cited += turn.sources
                cases.append(t(case, lang, expert=_expert(name, lang), text=_clip(turn.text)))
            else:
                cases.append(t(nobody, lang))
        drafts.append(Draft("analyst", sep.join(cases).strip(), _unique(cited)))
    figures = [t("podcast.figure", lang, label=t("podcast.metric_" + x.key, lang),
                 value=x.display)
               for x in art.metrics if x.key in KEY_METRICS and x.value is not None]
    if figures:
        drafts.append(Draft("host", t("podcast.key_figures", lang,
                                      items=t("grammar.clause_sep", lang).join(figures)),
                            sources))
    drafts.append(verdict_turn(art, lang=lang))
    drafts.append(intraday_turn(m.ticker, intraday, lang=lang))
    return drafts


__all__ = ["Draft", "action_word", "artifact_sources", "closing", "honest_section",
           "intraday_turn", "mentions_action", "opening", "theme_intro", "theme_verdicts",
           "ticker_section", "verdict_turn"]
