"""Offline experts: with no language model, each expert scores the data deterministically and
the debate produces the same artifacts, labelled as such.

Fundamental: valuation and quality (P/E, P/B, ROE, margin, leverage; without financials, the
price's place in its range and against MA200). Risk: volatility, drawdown, beta. Growth:
revenue and earnings growth, or 12-1 month and 6-month price momentum. Sentiment: 1-month
return, RSI, distance to MA50 and the share of volume on up days. Each factor maps to a score
in [-1, 1]; an expert's score is their mean, its action follows fixed thresholds.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

from core.words import t
from debate.bull_bear import fallback_hypothesis
from debate.evidence import Evidence
from debate.experts import consensus, plurality, support
from debate.metrics import Fundamentals, PriceMetrics
from debate.models import (
    Action,
    Argument,
    BullBearOutput,
    Conclusion,
    DataRef,
    DebateRound,
    ExpertName,
    ExpertTurn,
    Side,
    Source,
    TickerDebateOutput,
    VerdictReply,
)


def offline_label(lang: str) -> str:
    """The notice under an offline debate's answer: no language model took part."""
    return t("report_pdf.offline_label", lang)

ACTION_THRESHOLD = 0.2
EXPERT_NAMES: tuple[ExpertName, ...] = ("fundamental", "risk", "growth", "sentiment")


def _clip(x: float) -> float:
    return max(-1.0, min(1.0, x))


@dataclass(frozen=True)
class Factor:
    """One measure an expert scores: `key` names it in the catalogue (`factors.*`), `label`
    and `display` are its name and figure in the reader's language."""
    key: str
    label: str
    display: str
    score: float


def _factor(key: str, display: str, score: float, lang: str, **values: object) -> Factor:
    return Factor(key, t(key, lang, **values), display, score)


def _pct(v: float) -> str:
    return f"{v * 100:+.1f}%"


def _times(v: float, lang: str) -> str:
    return t("factors.times", lang, value=f"{v:.1f}")


# the factors read from the financial statements (an expert citing one cites the statements)
STATEMENT_FACTORS = frozenset({"report_pdf.m_pe", "report_pdf.m_pb", "factors.roe",
                               "factors.net_margin", "offline.line_debt_ratio_pct",
                               "factors.revenue_yoy", "factors.profit_yoy"})


def fundamental_factors(pm: PriceMetrics, fund: Fundamentals | None, lang: str = "en"
                        ) -> list[Factor]:
    out: list[Factor] = []
    if fund is not None:
        if fund.pe is not None:
            out.append(_factor("report_pdf.m_pe", _times(fund.pe, lang),
                               _clip((25.0 - fund.pe) / 25.0), lang))
        if fund.pb is not None:
            out.append(_factor("report_pdf.m_pb", _times(fund.pb, lang),
                               _clip((3.0 - fund.pb) / 3.0), lang))
        if fund.roe_pct is not None:
            out.append(_factor("factors.roe", f"{fund.roe_pct:.1f}%",
                               _clip((fund.roe_pct - 10) / 10), lang))
        if fund.net_margin_pct is not None:
            out.append(_factor("factors.net_margin", f"{fund.net_margin_pct:.1f}%",
                               _clip((fund.net_margin_pct - 10) / 15), lang))
        if fund.debt_ratio_pct is not None:
            out.append(_factor("offline.line_debt_ratio_pct", f"{fund.debt_ratio_pct:.1f}%",
                               _clip((60 - fund.debt_ratio_pct) / 40), lang))
    if not out:  # valuation from the price alone: stretched above its range reads expensive
        if pm.pos_52w is not None:
            out.append(_factor("factors.range_52w", f"{pm.pos_52w * 100:.0f}%",
                               _clip((0.5 - pm.pos_52w) * 1.2), lang))
        if pm.dist_ma200 is not None:
            out.append(_factor("factors.vs_ma200", _pct(pm.dist_ma200),
                               _clip(-pm.dist_ma200 / 0.3), lang))
        if pm.vol_ann is not None:
            out.append(_factor("factors.stability",
                               t("factors.vol_of", lang, value=f"{pm.vol_ann * 100:.1f}"),
                               _clip((0.35 - pm.vol_ann) / 0.25), lang))
    return out


def risk_factors(pm: PriceMetrics, lang: str = "en") -> list[Factor]:
    out: list[Factor] = []
    if pm.vol_ann is not None:
        out.append(_factor("factors.vol_ann", f"{pm.vol_ann * 100:.1f}%",
                           _clip((0.30 - pm.vol_ann) / 0.20), lang))
    if pm.max_drawdown_1y is not None:
        out.append(_factor("factors.max_drawdown", _pct(pm.max_drawdown_1y),
                           _clip((pm.max_drawdown_1y + 0.25) / 0.20), lang))
    if pm.beta_1y is not None:
        out.append(_factor("factors.beta", f"{pm.beta_1y:.2f}",
                           _clip((1.2 - pm.beta_1y) / 0.6), lang, bench=pm.benchmark))
    return out


def growth_factors(pm: PriceMetrics, fund: Fundamentals | None, lang: str = "en"
                   ) -> list[Factor]:
    out: list[Factor] = []
    if fund is not None:
        if fund.revenue_yoy_pct is not None:
            out.append(_factor("factors.revenue_yoy", f"{fund.revenue_yoy_pct:+.1f}%",
                               _clip(fund.revenue_yoy_pct / 20), lang))
        if fund.net_profit_yoy_pct is not None:
            out.append(_factor("factors.profit_yoy", f"{fund.net_profit_yoy_pct:+.1f}%",
                               _clip(fund.net_profit_yoy_pct / 25), lang))
    if not out:
        if pm.momentum_12_1 is not None:
            out.append(_factor("factors.momentum_12_1", _pct(pm.momentum_12_1),
                               _clip(pm.momentum_12_1 / 0.3), lang))
        if pm.ret_6m is not None:
            out.append(_factor("factors.ret_6m", _pct(pm.ret_6m), _clip(pm.ret_6m / 0.2), lang))
    return out


def sentiment_factors(pm: PriceMetrics, lang: str = "en") -> list[Factor]:
    out: list[Factor] = []
    if pm.ret_1m is not None:
        out.append(_factor("factors.ret_1m", _pct(pm.ret_1m), _clip(pm.ret_1m / 0.10), lang))
    if pm.rsi14 is not None:
        r = pm.rsi14
        out.append(_factor("report_pdf.m_rsi14", f"{r:.1f}",
                           _clip((r - 50) / 20) if r <= 70 else _clip((80 - r) / 10), lang))
    if pm.dist_ma50 is not None:
        out.append(_factor("factors.vs_ma50", _pct(pm.dist_ma50), _clip(pm.dist_ma50 / 0.10),
                           lang))
    if pm.up_volume_share_20 is not None:
        boost = 1.0 if (pm.volume_ratio_20_60 or 1.0) >= 1.0 else 0.6
        out.append(_factor("factors.up_volume", f"{pm.up_volume_share_20 * 100:.0f}%",
                           _clip((pm.up_volume_share_20 - 0.5) * 4 * boost), lang))
    return out


def expert_factors(name: ExpertName, pm: PriceMetrics, fund: Fundamentals | None,
                   lang: str = "en") -> list[Factor]:
    if name == "fundamental":
        return fundamental_factors(pm, fund, lang)
    if name == "risk":
        return risk_factors(pm, lang)
    if name == "growth":
        return growth_factors(pm, fund, lang)
    return sentiment_factors(pm, lang)


def score_of(factors: list[Factor]) -> float:
    return sum(f.score for f in factors) / len(factors) if factors else 0.0


def action_for(score: float) -> tuple[Action, float]:
    """Fixed thresholds: BUY/SELL beyond ±0.2, HOLD between; confidence from the distance."""
    if score >= ACTION_THRESHOLD:
        return "BUY", round(0.5 + 0.45 * min(1.0, abs(score)), 2)
    if score <= -ACTION_THRESHOLD:
        return "SELL", round(0.5 + 0.45 * min(1.0, abs(score)), 2)
    return "HOLD", round(0.5 + 0.25 * (1.0 - abs(score) / ACTION_THRESHOLD), 2)


def _factor_text(factors: list[Factor], lang: str) -> str:
    return t("grammar.clause_sep", lang).join(
        t("factors.item", lang, label=f.label, display=f.display, score=f"{f.score:+.2f}")
        for f in factors)


def _action(action: str, lang: str) -> str:
    return t("debate.action_" + action, lang)


def _expert(name: str, lang: str) -> str:
    return t("debate.expert_" + name, lang)


def _opening(name: ExpertName, factors: list[Factor], score: float, action: Action,
             lang: str) -> str:
    if not factors:
        return t("debate.no_score", lang)
    return t("debate.opening", lang, name=_expert(name, lang), score=f"{score:+.2f}",
             action=_action(action, lang), factors=_factor_text(factors, lang))


def _react(name: ExpertName, own: ExpertTurn, others: dict[ExpertName, ExpertTurn],
           lang: str) -> tuple[float, str]:
    """Round 2: conviction moves with the panel; the action stays what the data says."""
    against = [n for n, t in others.items() if t.action != own.action]
    conf = own.confidence
    if len(against) >= 2:
        conf = max(0.3, round(conf - 0.1, 2))
    elif not against:
        conf = min(0.95, round(conf + 0.05, 2))
    views = t("grammar.list_sep", lang).join(
        t("factors.view", lang, name=_expert(n, lang), action=_action(x.action, lang),
          confidence=f"{x.confidence:.2f}") for n, x in others.items())
    stance = t("debate.disagree", lang,
               names=t("grammar.list_sep", lang).join(_expert(n, lang) for n in against),
               action=_action(own.action, lang)) if len(against) >= 2 else t("debate.agree",
                                                                             lang)
    note = t("debate.others", lang, views=views, stance=stance)
    return conf, note


def _sources(evidence: Evidence) -> tuple[list[Source], Source | None]:
    """The context's price sources, and its financials source when there is one."""
    prices: list[Source] = []
    fund: Source | None = None
    for sid in evidence.context_ids:
        src = evidence.catalog.get(sid)
        if isinstance(src, DataRef):
            fund = src
        else:
            prices.append(src)
    return prices, fund


def run_experts(evidence: Evidence, *, lang: str, today: date, rounds: int = 2,
                threshold: float = 0.7) -> TickerDebateOutput:
    """The experts debate, scored from data: an opening round, then reactions."""
    pm, fund = evidence.price, evidence.fundamentals
    sources, fund_source = _sources(evidence)
    first: dict[ExpertName, ExpertTurn] = {}
    for name in EXPERT_NAMES:
        factors = expert_factors(name, pm, fund, lang)
        score = score_of(factors)
        action, conf = action_for(score)
        used_fund = fund_source is not None and any(f.key in STATEMENT_FACTORS for f in factors)
        cited = list(sources) + ([fund_source] if used_fund and fund_source else [])
        first[name] = ExpertTurn(text=_opening(name, factors, score, action, lang),
                                 action=action, confidence=conf if factors else 0.3,
                                 sources=cited)
    out = [DebateRound(round=1, **first)]
    for r in range(2, max(2, rounds) + 1):
        prev = out[-1].turns()
        nxt: dict[ExpertName, ExpertTurn] = {}
        for name, turn in prev.items():
            conf, note = _react(name, turn, {n: t for n, t in prev.items() if n != name}, lang)
            nxt[name] = turn.model_copy(update={"confidence": conf, "text": note})
        out.append(DebateRound(round=r, **nxt))
    last = out[-1]
    agreed = consensus(last, threshold, len(EXPERT_NAMES))
    action = agreed or plurality(last)
    votes: dict[str, int] = {}
    for turn in last.turns().values():
        votes[turn.action] = votes.get(turn.action, 0) + 1
    tally = " · ".join(f"{_action(a, lang)} {n}"
                       for a, n in sorted(votes.items(), key=lambda v: (-v[1], v[0])))
    verdict = t("debate.consensus_on" if agreed else "debate.plurality" if action in votes
                else "debate.split", lang, action=_action(action, lang))
    text = t("debate.final_votes", lang, tally=tally, verdict=verdict)
    return TickerDebateOutput(
        ticker=evidence.symbol.code, date=today.strftime("%Y%m%d"), rounds=out,
        conclusion=Conclusion(text=text, action=action, confidence=support(last, action),
                              consensus=agreed is not None))


def run_bull_bear(evidence: Evidence, *, question: str, lang: str, today: date
                  ) -> BullBearOutput:
    """The bull/bear record, scored from data: bulls list the positive factors, bears the
    negative ones, and the 'judge' is the sign of the average score."""
    pm, fund = evidence.price, evidence.fundamentals
    prices, fund_source = _sources(evidence)
    sources = prices + ([fund_source] if fund_source else [])
    hyp = fallback_hypothesis(evidence, question, lang)
    groups: dict[str, list[Factor]] = {
        "1": fundamental_factors(pm, fund, lang) + growth_factors(pm, fund, lang),
        "2": risk_factors(pm, lang) + sentiment_factors(pm, lang),
    }
    every = groups["1"] + groups["2"]
    clauses = t("grammar.clause_sep", lang)

    def said(f: Factor) -> str:
        return f"{f.label} {f.display}"

    def argue(side: Side, slot: str) -> Argument:
        picked = [f for f in groups[slot] if (f.score > 0) == (side == "bull") and f.score != 0]
        picked.sort(key=lambda f: -abs(f.score))
        if picked:
            text = clauses.join(
                t("debate.factor", lang, label=f.label, display=f.display, score=f"{f.score:+.2f}")
                for f in picked)
        else:
            text = t("debate.no_support", lang)
        return Argument(analyst=f"{side}_{slot}", side=side, phase="opening",
                        profile="offline", text=text,
                        key_points=[t("factors.point", lang, label=f.label, display=f.display)
                                    for f in picked[:3]],
                        sources=list(sources))

    openings = [argue("bull", "1"), argue("bull", "2"), argue("bear", "1"), argue("bear", "2")]
    pos = sorted((f for f in every if f.score > 0), key=lambda f: -f.score)
    neg = sorted((f for f in every if f.score < 0), key=lambda f: f.score)
    rebuttals = []
    for a in openings:
        group = groups[a.analyst[-1]]
        mine = sorted((f for f in group if (f.score > 0) == (a.side == "bull") and f.score),
                      key=lambda f: -abs(f.score))[:1]
        theirs = sorted((f for f in group if (f.score > 0) != (a.side == "bull") and f.score),
                        key=lambda f: -abs(f.score))[:1]
        if theirs and mine:
            text = t("debate.rebut", lang, theirs=said(theirs[0]),
                     their_weight=f"{abs(theirs[0].score):.2f}", ours=said(mine[0]),
                     our_weight=f"{abs(mine[0].score):.2f}")
        else:
            text = t("debate.nothing_to_rebut" if not theirs else "debate.nothing_to_answer",
                     lang)
        rebuttals.append(a.model_copy(update={"phase": "rebuttal", "text": text,
                                              "key_points": []}))
    agg = score_of(every)
    action: Action = "BUY" if agg > 0.15 else ("SELL" if agg < -0.15 else "HOLD")
    idx = {"BUY": 0, "SELL": 1, "HOLD": 2}[action]
    conf = max(1, min(10, round(4 + 10 * abs(agg))))
    support_f = pos if action == "BUY" else (neg if action == "SELL" else every)
    against = neg if action == "BUY" else (pos if action == "SELL" else [])
    verdict = VerdictReply(
        verdict=hyp.verdict_options[idx], action=action, confidence=conf,
        reasons=[t("debate.average_score", lang, score=f"{agg:+.2f}", n=len(every))]
        + [said(f) for f in support_f[:3]],
        key_risks=[said(f) for f in against[:2]],
        strongest_opposing_data_point=said(against[0]) if against else "",
        time_horizon=t("debate.horizon", lang))
    summary = t("debate.bb_summary", lang, hypothesis=hyp.hypothesis, verdict=verdict.verdict,
                action=_action(action, lang), confidence=conf)
    return BullBearOutput(
        ticker=evidence.symbol.code, date=today.strftime("%Y%m%d"), question=question,
        hypothesis=hyp,
        openings=openings, rebuttals=rebuttals,
        judge_order=[f"{a.analyst}:{a.phase}" for a in openings + rebuttals], verdict=verdict,
        summary=summary,
        conclusion=Conclusion(text=t("factors.verdict_because", lang, verdict=verdict.verdict,
                                     reasons=clauses.join(verdict.reasons[:3])),
                              action=action, confidence=round(conf / 10, 2)))
