"""Podcast test helpers: a scripted model that answers every call the podcast makes.

`PodcastLLM` routes each request by what its system prompt says it is: a debate seat
(`Panel seat: fundamental`, ...), the ticker worker (`Podcast step: ticker_worker`) or the
refiner (`Podcast step: refiner`). Workers and the refiner get the JSON input the podcast sent
and answer through callables a test supplies; per-ticker delays make workers finish in any
order (`worker_order`: each answers only after the ones before it); the experts of chosen
tickers fail (LLMError) so their debates have no verdict.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Callable, Sequence
from decimal import Decimal
from typing import Any

from core.errors import LLMError
from core.types import ChatMessage, LLMResponse, Usage

_SEAT = re.compile(r"Panel seat: (\w+)")
_SECURITY = re.compile(r"Security: .*?\(([^()\s]+)\)")
EXPERTS = {"fundamental": "BUY", "risk": "SELL", "growth": "BUY", "sentiment": "BUY"}

Answer = Callable[[dict[str, Any]], dict[str, Any]]


def default_worker(payload: dict[str, Any]) -> dict[str, Any]:
    """Two turns built from the input alone: the intro and the panel's conclusion."""
    host, analyst = payload["speakers"]["host"], payload["speakers"]["analyst"]
    c = payload["debate"]["conclusion"]
    return {"ticker": payload["ticker"], "scripts": [
        {"speaker": host, "text": f"Now {payload['name']} ({payload['ticker']}).",
         "sources": []},
        {"speaker": analyst, "text": f"The panel says {c['action']}: {c['text']}",
         "sources": ["S1"]},
    ]}


class PodcastLLM:
    """An `LLMProvider` for the podcast's tests (see the module docstring)."""

    def __init__(self, *, worker: Answer = default_worker, refiner: Answer | None = None,
                 fail_experts: Sequence[str] = (), worker_delay: dict[str, float] | None = None,
                 worker_raw: dict[str, str] | None = None,
                 worker_order: Sequence[str] = ()) -> None:
        self.worker = worker
        self.refiner = refiner or (lambda payload: {"edits": []})
        self.fail_experts = set(fail_experts)
        self.worker_delay = worker_delay or {}
        self.worker_raw = worker_raw or {}
        self.worker_order = list(worker_order)
        self.requests: list[dict[str, Any]] = []
        self._events: dict[str, asyncio.Event] = {}
        self.finished: list[str] = []  # worker tickers, in the order their answers went out

    async def complete(self, messages: Sequence[ChatMessage], *, role: str = "agent",
                       tools: Sequence[dict[str, Any]] | None = None,
                       max_tokens: int | None = None, json_mode: bool = False) -> LLMResponse:
        system = messages[0].content
        self.requests.append({"role": role, "system": system, "messages": list(messages)})
        if "Podcast step: ticker_worker" in system:
            payload = json.loads(messages[-1].content)
            ticker = payload["ticker"]
            await asyncio.sleep(self.worker_delay.get(ticker, 0.0))
            if ticker in self.worker_order:  # answer only after the ones before it did
                before = self.worker_order[:self.worker_order.index(ticker)]
                async with asyncio.timeout(10):
                    for other in before:
                        await self._answered(other).wait()
            self.finished.append(ticker)
            self._answered(ticker).set()
            raw = self.worker_raw.get(ticker)
            return _resp(raw if raw is not None else json.dumps(self.worker(payload),
                                                                ensure_ascii=False), role)
        if "Podcast step: refiner" in system:
            payload = json.loads(messages[-1].content)
            return _resp(json.dumps(self.refiner(payload), ensure_ascii=False), role)
        seat = m.group(1) if (m := _SEAT.search(system)) else ""
        ticker = ""
        for msg in messages:
            if (s := _SECURITY.search(msg.content)) is not None:
                ticker = s.group(1)
                break
        if seat in EXPERTS:
            if ticker in self.fail_experts:
                raise LLMError(f"scripted outage for {ticker}")
            return _resp(json.dumps({"text": f"The {seat} view on {ticker}.",
                                     "action": EXPERTS[seat], "confidence": 0.6,
                                     "sources": ["S1"]}), role)
        if seat == "moderator":
            return _resp(json.dumps({"decision": "stop", "reason": "done",
                                     "text": f"The panel leans BUY on {ticker}.",
                                     "action": "BUY"}), role)
        raise AssertionError(f"unexpected request: {system[:120]!r}")

    def _answered(self, ticker: str) -> asyncio.Event:
        return self._events.setdefault(ticker, asyncio.Event())

    def stream(self, messages: Sequence[ChatMessage], **kw: Any) -> Any:
        raise NotImplementedError

    def calls(self, marker: str) -> list[dict[str, Any]]:
        return [r for r in self.requests if marker in r["system"]]


def _resp(content: str, role: str) -> LLMResponse:
    return LLMResponse(content=content, usage=Usage(model="scripted", role=role,
                                                    prompt_tokens=100, completion_tokens=20))


_NUM = re.compile(r"\d+(?:[.,]\d+)*")


def numbers(text: str) -> set[Decimal]:
    """Every digit run in a text as a value (thousands commas dropped): a plain check that
    owes nothing to the podcast's own figure parser."""
    return {Decimal(n.replace(",", "")) for n in _NUM.findall(text)}
