"""`bullpen bench podcast`: wall time of a five-ticker podcast when every model call takes
0.5 s, at production concurrency, next to its critical path and to the same pipeline run one
ticker at a time.

Each ticker's chain is its debate (round 1: a tool call then the answer; round 2; the
moderator = 4 calls) then its worker (1 call); the refiner (1 call) follows the last ticker.
The headline runs at the concurrency production uses: `produce_podcast`'s default, which the
scheduled podcast (`jobs.runner`) and the chat's podcast mode both use (read from its
signature here, not copied: 3 tickers in flight, so five tickers go in two waves, critical path
2 x 5 + 1 = 11 calls = 5.5 s); target: wall <= 1.3 x that. No outside library runs this
pipeline, so there is no outside peer: the reference, measured in the same run, is the same
pipeline with `concurrency=1` (tickers one after another, each debate's experts still in
parallel), and every ticker in flight is shown beside (6 calls = 3.0 s). The scripted model
answers every seat with valid JSON built from its input and reports estimated tokens, so
`tokens_per_run` is a size estimate, not a provider's count. Several rounds, interleaved:
median and spread.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import re
import statistics
import time
from collections.abc import Sequence
from typing import Any

from bot.benches.fairness import LoadWatch, spread
from core.testing import ScriptedLLM
from core.types import ChatMessage, LLMResponse, ToolCall, Usage

LATENCY_S = 0.5
TARGET_RATIO = 1.3
TICKERS = ("NVDA", "TSLA", "AAPL", "MSFT", "AMZN")
DEBATE_CHAIN = 4  # round 1 (tool round + answer), round 2, the moderator
TICKER_CHAIN = DEBATE_CHAIN + 1  # then the worker
CALLS_PER_DEBATE = 4 * 2 + 4 + 1
EXPECTED_CALLS = len(TICKERS) * (CALLS_PER_DEBATE + 1) + 1
_SEAT = re.compile(r"Panel seat: (\w+)")
_SECURITY = re.compile(r"Security: .*?\(([^()\s]+)\)")
EXPERTS = {"fundamental": "BUY", "risk": "SELL", "growth": "BUY", "sentiment": "HOLD"}
DIRECTION = ("ratio = wall / critical path (lower is better, 1.0 is the floor); "
             "speedup_vs_sequential = sequential reference / wall (higher is better)")


def production_concurrency() -> int:
    """Tickers in flight in production: `produce_podcast`'s default, which `jobs.runner` and
    the podcast mode rely on (neither passes its own)."""
    from podcast import produce_podcast

    default = inspect.signature(produce_podcast).parameters["concurrency"].default
    return int(default)


def critical_path_s(concurrency: int, tickers: int = len(TICKERS)) -> float:
    """Waves of tickers, each a ticker's chain, then the refiner."""
    return (math.ceil(tickers / concurrency) * TICKER_CHAIN + 1) * LATENCY_S


def _usage(messages: Sequence[ChatMessage], content: str) -> Usage:
    from debate.budget import estimate_messages, estimate_tokens

    return Usage(model="scripted", prompt_tokens=estimate_messages(messages),
                 completion_tokens=estimate_tokens(content))


def _reply(messages: Sequence[ChatMessage], content: str) -> LLMResponse:
    return LLMResponse(content=content, usage=_usage(messages, content))


def _worker(payload: dict[str, Any]) -> dict[str, Any]:
    """Three turns from the input alone: the intro, a metric as displayed, the conclusion."""
    host, analyst = payload["speakers"]["host"], payload["speakers"]["analyst"]
    debate = payload["debate"]
    close = next((m for m in debate["metrics"] if m["label"] == "Last close"), None)
    c = debate["conclusion"]
    pos = payload["position"]
    turns = [{"speaker": host, "text": f"Ticker {pos['index']} of {pos['total']}: "
                                       f"{payload['name']} ({payload['ticker']}).",
              "sources": []}]
    if close is not None:
        turns.append({"speaker": host, "text": f"It last closed at {close['value']}.",
                      "sources": ["S1"]})
    turns.append({"speaker": analyst, "text": f"The panel says {c['action']}: {c['text']}",
                  "sources": ["S1"]})
    return {"ticker": payload["ticker"], "scripts": turns}


def _refiner(payload: dict[str, Any]) -> dict[str, Any]:
    first = payload["ticker_sections"][0]["start_id"]
    row = next(r for r in payload["scripts"] if r["id"] == first)
    return {"edits": [{"id": first, "speaker": row["speaker"],
                       "text": "Let's get to today's names. " + row["text"]}]}


def _answer(messages: Sequence[ChatMessage]) -> LLMResponse:
    system = messages[0].content
    if "Podcast step: ticker_worker" in system:
        return _reply(messages, json.dumps(_worker(json.loads(messages[-1].content))))
    if "Podcast step: refiner" in system:
        return _reply(messages, json.dumps(_refiner(json.loads(messages[-1].content))))
    seat = m.group(1) if (m := _SEAT.search(system)) else ""
    code = next((s.group(1) for msg in messages if (s := _SECURITY.search(msg.content))), "")
    if seat in EXPERTS:
        ask = messages[-1].content
        if "Round 1 of" in ask and not any(msg.role == "tool" for msg in messages):
            return LLMResponse(tool_calls=[ToolCall(
                id="call_0", name="get_quote", arguments=json.dumps({"symbol": code}))],
                usage=_usage(messages, "get_quote"))
        return _reply(messages, json.dumps({"text": f"{seat} view on {code}.",
                                            "action": EXPERTS[seat], "confidence": 0.6,
                                            "sources": ["S1"]}))
    if seat == "moderator":
        return _reply(messages, json.dumps({"decision": "stop", "reason": "done",
                                            "text": "Mixed views; the panel leans BUY.",
                                            "action": "BUY"}))
    raise AssertionError(f"unexpected request: {system[:80]!r}")


async def _episode(latency: float, registry: Any, concurrency: int
                   ) -> tuple[float, Any, int]:
    from podcast import produce_podcast

    llm = ScriptedLLM(latency_s=latency, default=_answer)
    start = time.perf_counter()
    result = await produce_podcast(TICKERS, llm=llm, registry=registry,
                                   concurrency=concurrency)
    return time.perf_counter() - start, result, len(llm.requests)


async def _run(repeat: int) -> dict[str, Any]:
    import tools

    watch = LoadWatch()
    registry = tools.build_registry()
    n = len(TICKERS)
    prod = production_concurrency()
    await _episode(0.0, registry, n)  # warm-up: symbols directory, data, imports
    walls: list[float] = []
    seq: list[float] = []
    all_in: list[float] = []
    result: Any = None
    calls = 0
    for _ in range(repeat):  # interleaved: every variant sees the same load
        wall, result, calls = await _episode(LATENCY_S, registry, prod)
        walls.append(wall)
        seq.append((await _episode(LATENCY_S, registry, 1))[0])
        all_in.append((await _episode(LATENCY_S, registry, n))[0])
    critical = critical_path_s(prod)
    wall = statistics.median(walls)
    ratio = wall / critical
    kinds: dict[str, int] = {}
    for note in result.notes:
        kinds[note.kind] = kinds.get(note.kind, 0) + 1
    return {
        "bench": "podcast", "tickers": list(TICKERS), "llm_latency_s": LATENCY_S,
        "rounds": repeat, "target_ratio": TARGET_RATIO, "direction": DIRECTION,
        "concurrency": prod,
        "concurrency_from": "produce_podcast's default (used by jobs.runner and the podcast "
                            "mode)",
        "peer": None,
        "reference": "the same pipeline, one ticker at a time (concurrency=1); each debate's "
                     "experts still in parallel: no outside library runs this pipeline",
        "llm_calls": calls, "expected_llm_calls": EXPECTED_CALLS,
        "llm_calls_reported": result.llm_calls,
        "tokens_per_run": result.budget.used,
        "debate_tokens": result.budget.debate_tokens,
        "script_tokens": result.budget.script_tokens,
        "turns": len(result.script.scripts),
        "sections_by_worker": sum(1 for t in result.tickers if t.writer == "llm"),
        "notes": kinds,
        "critical_path_s": round(critical, 3), "wall_s": round(wall, 3),
        "wall_spread_s": spread(walls), "ratio": round(ratio, 3),
        "within_target": ratio <= TARGET_RATIO,
        "sequential_s": spread(seq),
        "speedup_vs_sequential": round(statistics.median(seq) / wall, 2),
        "all_tickers_in_flight": {"concurrency": n,
                                  "critical_path_s": round(critical_path_s(n), 3),
                                  "wall_s": spread(all_in),
                                  "ratio": round(statistics.median(all_in) / critical_path_s(n),
                                                 3)},
        **watch.fields(),
    }


def run(*, repeat: int = 3) -> dict[str, Any]:
    """`repeat` interleaved rounds (after a warm-up) of an episode at production concurrency,
    one ticker at a time and every ticker in flight; returns the numbers."""
    return asyncio.run(_run(max(1, repeat)))
