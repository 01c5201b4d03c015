"""The offline analyst's ICT answer: runs the `ict_analyze` tool and writes a templated Markdown
reading (English or Chinese) with the annotated chart and, for a plan, the deterministic
proposal or the reason to wait. Every number comes from the tool's result."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from analyst.format import display_name
from core import context
from core.localize import localize, source_label, word, words_of
from core.types import OutgoingFile
from core.words import has
from core.words import t as catalogue
from tools.ict_tool import ICTResult, ICTStack, PlanOut, ict_analyze, ict_interval
from tools.ticks import tick_text


def _words(lang: str) -> Mapping[str, str]:
    """The answer's lines (`ict.a_*`) and the analyzer's words (`ict.d_*`: bullish, premium,
    up ...), by name: one catalogue entry for each word, whichever line says it."""
    return {**words_of("ict.d_", lang), **words_of("ict.a_", lang)}


def _w(t: Mapping[str, str], word: str) -> str:
    """An analyzer word (up, main, valid ...) in the answer's language when it has one."""
    return t.get(word, word)


def _p(value: Any) -> str:
    """A price as the tool rounded it (six significant digits)."""
    return f"{value:g}" if isinstance(value, (int, float)) else str(value)


def _when(value: Any, intraday: bool) -> str:
    if not value:
        return "n/a"
    ts = pd.Timestamp(value)
    return f"{ts:%Y-%m-%d %H:%M}" if intraday else f"{ts:%Y-%m-%d}"


def plan_markdown(plan: PlanOut, lang: str = "en", *, currency: str = "",
                  tick: float | None = None) -> str:
    """A validated plan as Markdown bullets (numbers as computed and validated in code);
    prices with the decimals of the instrument's `tick` (on which the tools put them)."""
    t = _words(lang)
    unit = f" {currency}" if currency else ""

    def p(value: float) -> str:
        return tick_text(value, tick)

    risk = t["rr"].format(rr=f"{plan.reward_risk:g}", risk=p(plan.risk_per_unit))
    if plan.risk_percent is not None:
        risk += t["risk_pct"].format(pct=plan.risk_percent)
    lines = [
        f"**{t[plan.direction]}** · {plan.strategy} · {plan.timeframe} · {plan.horizon}",
        f"- {t['entry']}: {p(plan.entry)}{unit}",
        f"- {t['stop']}: {p(plan.stop)}{unit}",
        f"- {t['targets']}: {', '.join(p(x) for x in plan.targets)}{unit}",
        f"- {risk}",
    ]
    if plan.confluence:
        lines.append(f"- {t['confluence']}: " + "; ".join(plan.confluence))
    return "\n".join(lines)


def _event(ev: dict[str, Any] | None, t: Mapping[str, str], intraday: bool) -> str | None:
    if not ev:
        return None
    text = t["event"].format(kind=ev["kind"], direction=_w(t, ev["direction"]),
                             level=_p(ev["level"]),
                             time=_when(ev.get("confirmed_at"), intraday))
    if ev.get("displaced"):
        text += t["displaced"].format(x=f"{ev['displacement']:.1f}")
    return text


def _liquidity(liq: dict[str, Any], t: Mapping[str, str]) -> str:
    items = []
    for key, name in (("equal_highs_unswept", "eqh"), ("equal_lows_unswept", "eql")):
        levels = [_p(p["level"]) for p in liq.get(key) or []]
        if levels:
            items.append(t[name].format(levels=", ".join(levels)))
    for key, name in (("external_high", "ext_high"), ("external_low", "ext_low")):
        ext = liq.get(key)
        if ext:
            items.append(t[name].format(price=_p(ext["price"]))
                         + (t["swept"] if ext.get("swept_at") else ""))
    return t["liquidity"].format(items="; ".join(items) or t["none"])


def _stack_lines(stack: ICTStack, t: Mapping[str, str], lang: str) -> list[str]:
    status = t["wait_s"] if stack.status == "wait" else t["ready"]
    if stack.wait_reason:
        status += f": {stack.wait_reason}"
    lines = [t["stack"].format(bias=t[stack.bias], grade=stack.grade, score=stack.score,
                               status=status)]
    for item in stack.detail.get("checklist") or []:
        key = "ict.check_" + item["key"]
        label = catalogue(key, lang) if has(key) else item["label"]
        detail = localize(str(item["detail"]), lang, "ict.d_")
        if item["key"] == "session_fit":  # the zone by its name, as the session line says it
            zone = stack.detail.get("kill_zone")
            detail = t["fit"].format(zone=_w(t, zone) if zone else t["no_kill_zone"],
                                     fit=_w(t, stack.session_fit))
        lines.append(f"  - {'✅' if item['passed'] else '❌'} {label} – {detail}")
    missing = [tf.interval for tf in stack.timeframes if not tf.available]
    if missing:
        tfs = catalogue("grammar.list_sep", lang).join(word("ict.iv_", m, lang) for m in missing)
        lines.append("  " + t["no_data"].format(tfs=tfs))
    return lines


def render(result: ICTResult, lang: str = "en") -> str:
    """The Markdown reading of an `ict_analyze` result."""
    t = _words(lang)
    a = result.analysis
    meta, s = a["meta"], a["structure"]
    intraday = result.interval not in ("daily", "weekly", "monthly")
    label = display_name(result.symbol, result.name, lang)
    out = [t["title"].format(label=label, tf=localize(result.timeframe, lang, "ict.d_"),
                             horizon=localize(result.horizon, lang, "ict.h_")),
           t["span"].format(bars=result.bars, interval=word("ict.iv_", result.interval, lang),
                            last=_when(meta.get("last_closed_bar_time") or meta["end"],
                                       intraday),
                            close=f"{_p(result.last_close)} {result.currency}".strip()),
           ""]
    parts = [t["structure"].format(bias=t[s["bias"]])]
    parts += [e for e in (_event(s.get("last_bos"), t, intraday),
                          _event(s.get("last_choch"), t, intraday)) if e]
    bullets = ["; ".join(parts)]
    dr = a.get("dealing_range")
    if dr:
        bullets.append(t["range"].format(low=_p(dr["low"]), high=_p(dr["high"]),
                                         eq=_p(dr["equilibrium"]), zone=t[dr["zone"]],
                                         pct=f"{dr['pd_percent']:.0f}"))
    obs = (a.get("order_blocks") or {}).get("live_by_score") or []
    if obs:
        bullets.append(t["obs"] + "\n" + "\n".join(
            "  - " + t["ob"].format(side=t[b["side"]], zone_type=_w(t, b["zone_type"]),
                                    bottom=_p(b["bottom"]), top=_p(b["top"]),
                                    kind=b["event_kind"], score=f"{b['score']:.0f}",
                                    state=_w(t, b["state"])) for b in obs[:3]))
    fv = a.get("fvgs") or {}
    if fv.get("total"):
        text = t["fvgs"].format(open=fv["unfilled_total"], total=fv["total"])
        latest = (fv.get("unfilled_latest") or [])[-1:]
        for g in latest:
            text += t["fvg_last"].format(side=t[g["side"]], bottom=_p(g["bottom"]),
                                         top=_p(g["top"]), ce=_p(g["ce"]))
        bullets.append(text)
    bullets.append(_liquidity(a.get("liquidity") or {}, t))
    levels = [f"{lv['name']} {_p(lv['price'])}" + (t["swept"] if lv.get("swept_at") else "")
              for lv in (a.get("levels") or {}).values() if lv]
    if levels:
        bullets.append(t["levels"].format(items=", ".join(levels)))
    ss = a.get("sessions") or {}
    if ss.get("applicable"):
        own_clock = ss.get("template") == "CN"  # an A-share: its exchange's own hours
        last = ss.get("last_bar_time_ny")
        if own_clock and last:
            last = pd.Timestamp(last).tz_convert("Asia/Shanghai")
        bullets.append(t["session_cn" if own_clock else "session"].format(
            template=ss["template"], time=_when(last, True)[-5:],
            zone=(catalogue(f"ict.d_{ss['current_kill_zone']}", lang)
                  if own_clock and ss.get("current_kill_zone")
                  else localize(ss.get("current_kill_zone") or "–", lang, "ict.d_")),
            fit=_w(t, ss["session_fit"])))
    out += [f"- {b}" for b in bullets]
    if result.stack is not None:
        out += ["", *_stack_lines(result.stack, t, lang)]
    if result.proposal is not None:
        out.append("")
        if result.proposal.plan is not None:
            out += [t["plan_head"],
                    plan_markdown(result.proposal.plan, lang, currency=result.currency,
                                  tick=result.tick_size)]
        else:
            out.append(t["wait"].format(reason=result.proposal.reason or "no setup"))
    out.append("")
    if result.chart:
        out.append(t["chart"])
    if result.notes:
        out.append(t["notes"].format(notes="; ".join(result.notes)))
    src = result.source
    date = src.as_of.isoformat() if src.as_of else "n/a"
    note = f" · {localize(src.note, lang)}" if src.note else ""
    out.append(f"_{source_label(src, lang)}{note}_")
    out.append(t["footer"].format(date=date))
    return "\n".join(out)


async def ict_answer(symbol: str, interval: str, plan: bool, *,
                     lang: str = "en") -> tuple[str, list[OutgoingFile]]:
    """Markdown answer and chart for `/ict` and `/plan` without an LLM.

    Intraday timeframes (4H and below) also get the bias stack. Raises the tool's errors
    (`UnknownSymbol`, `DataUnavailable`, `InvalidArguments`) for the caller to word.
    """
    result, files = await ict_result(symbol, interval, plan, lang=lang)
    if "." in symbol and symbol.split(".")[0] == result.symbol:  # the index asked for keeps
        result = result.model_copy(update={"symbol": symbol})  # its exchange: 000001.SH
    return render(result, lang), files


async def ict_result(symbol: str, interval: str, plan: bool, *,
                     lang: str = "en") -> tuple[ICTResult, list[OutgoingFile]]:
    """The ICT tool's result for `ict_answer` (and the eval, which logs it), with its chart."""
    stack = ict_interval(interval) not in ("daily", "weekly", "monthly")
    files: list[OutgoingFile] = []
    token = context.use(context.RunContext(lang=lang, on_file=files.append))
    try:
        result = await ict_analyze(symbol, interval, stack=stack, chart=True, plan=plan)
    finally:
        context.reset(token)
    return result, files
