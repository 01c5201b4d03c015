"""`bullpen bench debate`: wall time of an experts debate (4 experts, 2 rounds) and a bull/bear
debate when every model call takes 0.5 s, next to the critical path.

The critical path is the sum of the sequential phases: each phase costs its deepest chain of
model calls (a tool round then the answer counts two). Experts: round 1 (tool + answer),
round 2, the moderator = 4 calls. Bull/bear: hypothesis, openings (tool + answer), rebuttals,
judge, summary = 6 calls. Target: wall <= 1.25 x critical path.

The debate is built as production builds it (`bot.app.build_modes`): `DebateMode` with its
default limits and the token budget read from the settings (`debate_token_budget`); the
experts of a round run concurrently, as in production. No outside library runs this pipeline,
so there is no outside peer: the reference, measured in the same run, is the same debate with
sequential analysts (one model call at a time), which says what the concurrency buys. The
scripted model reports estimated tokens per call (`debate.budget` estimates), so
`tokens_per_run` is a size estimate of the prompts and answers, not a provider's count.
Several rounds: median and spread of the wall time. The report (Markdown + PDF) is timed
separately.
"""

from __future__ import annotations

import asyncio
import json
import re
import statistics
import time
from collections.abc import Sequence
from typing import Any

from bot.benches.fairness import LoadWatch, spread
from core.testing import ScriptedLLM, calls, text
from core.types import ChatMessage, LLMResponse, Usage

LATENCY_S = 0.5
TARGET_RATIO = 1.25
SYMBOL = "NVDA"
_SEAT = re.compile(r"Panel seat: (\w+)")
EXPERTS = {"fundamental": "BUY", "risk": "SELL", "growth": "BUY", "sentiment": "HOLD"}
CRITICAL_CALLS = {"experts": 4, "bull_bear": 6}
TOTAL_CALLS = {"experts": 4 * 2 + 4 + 1, "bull_bear": 1 + 4 * 2 + 4 + 1 + 1}
DIRECTION = ("ratio = wall / critical path (lower is better, 1.0 is the floor); "
             "speedup_vs_sequential = sequential reference / wall (higher is better)")


def _estimated(messages: Sequence[ChatMessage]) -> LLMResponse:
    """`_answer` with its usage estimated from the prompt and the answer's size."""
    from debate.budget import estimate_messages, estimate_tokens

    resp = _answer(messages)
    said = resp.content or " ".join(c.arguments for c in resp.tool_calls)
    return resp.model_copy(update={"usage": Usage(
        model="scripted", prompt_tokens=estimate_messages(messages),
        completion_tokens=estimate_tokens(said))})


def _answer(messages: Sequence[ChatMessage]) -> LLMResponse:
    """A scripted model for every seat: the first opening call of a debater asks a tool."""
    m = _SEAT.search(messages[0].content)
    seat = m.group(1) if m else ""
    ask = messages[-1].content if messages else ""
    used_tool = any(msg.role == "tool" for msg in messages)
    if seat in EXPERTS:
        if "Round 1 of" in ask and not used_tool:
            return calls(("get_quote", {"symbol": SYMBOL}))
        return text(json.dumps({"text": f"{seat} view.", "action": EXPERTS[seat],
                                "confidence": 0.6, "sources": ["S1"]}))
    if seat == "moderator":
        return text(json.dumps({"decision": "stop", "reason": "done", "text": "Mixed.",
                                "action": "HOLD"}))
    if seat == "hypothesis":
        return text(json.dumps({
            "hypothesis": f"{SYMBOL} beats the market over 12 months",
            "data_plan": [{"tool": "get_quote", "args": {"symbol": SYMBOL}},
                          {"tool": "get_ohlcv", "args": {"symbol": SYMBOL, "period": "6mo"}}],
            "verdict_options": ["supported", "rejected", "inconclusive"]}))
    if seat.startswith(("bull_", "bear_")):
        if "opening argument" in ask and not used_tool:
            return calls(("get_indicators", {"symbol": SYMBOL}))
        return text(json.dumps({"text": f"{seat} argues.", "key_points": ["a"],
                                "sources": ["S1"]}))
    if seat == "judge":
        return text(json.dumps({"verdict": "supported", "action": "BUY", "confidence": 6,
                                "reasons": ["momentum"]}))
    return text("## Summary\nThe bulls carried it.")


class _Serial:
    """The peer: the same model, but one call at a time (sequential analysts)."""

    def __init__(self, llm: ScriptedLLM) -> None:
        self._llm = llm
        self._lock = asyncio.Lock()

    async def complete(self, messages: Sequence[ChatMessage], **kw: Any) -> LLMResponse:
        async with self._lock:
            return await self._llm.complete(messages, **kw)

    def stream(self, messages: Sequence[ChatMessage], **kw: Any) -> Any:
        return self._llm.stream(messages, **kw)


def production_budget() -> int | None:
    """The token budget production gives a debate (`bot.app.build_modes` reads it here)."""
    from bot.settings import load_settings

    return load_settings().debate_token_budget


async def _debate(panel: str, latency: float, registry: Any, *, serial: bool = False
                  ) -> tuple[float, int, Any]:
    from debate.mode import DebateMode, DebateRequest

    llm = ScriptedLLM(latency_s=latency, default=_estimated)
    mode = DebateMode(llm=_Serial(llm) if serial else llm, registry=registry,
                      panel=panel, budget_tokens=production_budget(),  # type: ignore[arg-type]
                      make_pdf=False)
    start = time.perf_counter()
    outcome = await mode.produce(DebateRequest(symbol=SYMBOL, question="Is it a buy?"))
    return time.perf_counter() - start, len(llm.requests), outcome


async def _run(repeat: int) -> dict[str, Any]:
    import tools
    from debate.evidence import default_bars
    from debate.report import render_chart, render_markdown, render_pdf

    watch = LoadWatch()
    registry = tools.build_registry()
    await _debate("experts", 0.0, registry)  # warm-up: symbols directory, data, imports
    await _debate("bull_bear", 0.0, registry)
    out: dict[str, Any] = {"bench": "debate", "llm_latency_s": LATENCY_S, "rounds": repeat,
                           "target_ratio": TARGET_RATIO, "direction": DIRECTION,
                           "settings": {"debate_token_budget": production_budget(),
                                        "built_as": "bot.app.build_modes: DebateMode defaults"},
                           "peer": None,
                           "reference": "the same debate, sequential analysts (one call at a "
                                        "time): no outside library runs this pipeline"}
    ok = True
    last: Any = None
    for panel in ("experts", "bull_bear"):
        walls: list[float] = []
        n_calls = 0
        peers: list[float] = []
        for _ in range(repeat):  # interleaved: both see the same load
            wall, n_calls, last = await _debate(panel, LATENCY_S, registry)
            walls.append(wall)
            peers.append((await _debate(panel, LATENCY_S, registry, serial=True))[0])
        peer = statistics.median(peers)
        critical = CRITICAL_CALLS[panel] * LATENCY_S
        wall = statistics.median(walls)
        ratio = wall / critical
        ok = ok and ratio <= TARGET_RATIO
        row: dict[str, Any] = {
            "llm_calls": n_calls, "expected_llm_calls": TOTAL_CALLS[panel],
            "critical_path_s": round(critical, 3), "wall_s": round(wall, 3),
            "wall_spread_s": spread(walls), "ratio": round(ratio, 3),
            "within_target": ratio <= TARGET_RATIO,
            "sequential_s": spread(peers),
            "speedup_vs_sequential": round(peer / wall, 2),
            "tokens_per_run": last.artifact.meta.tokens_used,
            "rounds_run": last.artifact.meta.rounds_run,
        }
        if panel == "experts":
            row.update(experts=4, rounds=len(last.artifact.experts.rounds))
        out[panel] = row
    bars = await default_bars(SYMBOL)
    start = time.perf_counter()
    art = last.artifact
    render_markdown(art)
    await asyncio.to_thread(lambda: render_pdf(art, render_chart(bars, SYMBOL, "us")))
    out["report_s"] = round(time.perf_counter() - start, 3)
    out["within_target"] = ok
    out.update(watch.fields())
    return out


def run(*, repeat: int = 3) -> dict[str, Any]:
    """Time both panels `repeat` times each (after a warm-up) and return the numbers."""
    return asyncio.run(_run(max(1, repeat)))
