"""Debate test helpers: a seat-routed OpenAI-compatible fake, synthetic bars, a mode runner.

`SeatFake` is the local FakeOpenAI server with one script per debate seat: each request is
routed by the `Panel seat: X` line of its system prompt, so parallel experts get their own
scripted turns whatever order their requests arrive in. The real `openai` client and the
real `LLMRouter` talk to it over loopback.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from collections.abc import Sequence
from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from core.agent.turn import Turn as AgentTurn
from core.agent.turn import TurnOptions
from core.errors import DataUnavailable
from core.events import Event
from core.llm import LLMRouter, ModelProfile
from core.testing import MemoryRecorder
from debate.mode import DebateMode
from tests.fakes.openai_server import FakeOpenAI, Turn

TODAY = date(2025, 7, 1)
_SEAT = re.compile(r"Panel seat: (\w+)")


def seat_of(body: dict[str, Any]) -> str:
    for msg in body.get("messages", []):
        if msg.get("role") == "system" and (m := _SEAT.search(msg.get("content") or "")):
            return m.group(1)
    return "?"


class SeatFake(FakeOpenAI):
    """FakeOpenAI whose scripted turns are kept per seat (fundamental, risk, judge, ...)."""

    def __init__(self, scripts: dict[str, list[Turn]] | None = None, *,
                 defaults: dict[str, Turn] | None = None) -> None:
        super().__init__()
        self.scripts = {k: list(v) for k, v in (scripts or {}).items()}
        self.defaults = dict(defaults or {})
        self.by_seat: dict[str, list[dict[str, Any]]] = defaultdict(list)

    def _next(self) -> Turn:
        body = self.requests[-1]  # appended just before _next, with no await in between
        seat = seat_of(body)
        self.by_seat[seat].append(body)
        queue = self.scripts.get(seat)
        if queue:
            return queue.pop(0)
        return self.defaults.get(seat, Turn(fault="500"))


def reply(action: str = "HOLD", confidence: float = 0.5, sources: Sequence[Any] = ("S1",),
          text: str = "The data is mixed.", **extra: Any) -> Turn:
    """A scripted expert answer."""
    body = {"text": text, "action": action, "confidence": confidence,
            "sources": list(sources), **extra}
    return Turn(text=json.dumps(body, ensure_ascii=False))


def moderator(decision: str = "stop", action: str = "HOLD", text: str = "Mixed views.",
              reason: str = "converged") -> Turn:
    return Turn(text=json.dumps({"decision": decision, "reason": reason, "text": text,
                                 "action": action}))


def router(fake: FakeOpenAI, *, roles: dict[str, str] | None = None,
           timeout_s: float = 5.0) -> LLMRouter:
    """The real router on the fake: the default profile is `main-model`; `roles` maps a role
    to another model name on the same server (e.g. the cheap moderator)."""
    default = ModelProfile(name="main", base_url=fake.base_url, model="main-model",
                           timeout_s=timeout_s, max_retries=0)
    profiles = {role: ModelProfile(name=f"p-{model}", base_url=fake.base_url, model=model,
                                   timeout_s=timeout_s, max_retries=0)
                for role, model in (roles or {}).items()}
    return LLMRouter(default=default, roles=profiles)


def synthetic_bars(seed: int, start: float, n: int = 520, drift: float = 0.0006,
                   tz: str = "Asia/Shanghai") -> pd.DataFrame:
    """Deterministic daily bars ending on 2025-06-30 (a random walk)."""
    rng = np.random.default_rng(seed)
    idx = pd.bdate_range(end="2025-06-30", periods=n, tz=tz, name="ts")
    rets = rng.normal(drift, 0.018, n)
    close = start * np.exp(np.cumsum(rets))
    open_ = close * (1 + rng.normal(0, 0.004, n))
    high = np.maximum(open_, close) * (1 + np.abs(rng.normal(0, 0.006, n)))
    low = np.minimum(open_, close) * (1 - np.abs(rng.normal(0, 0.006, n)))
    vol = rng.integers(2_000_000, 6_000_000, n).astype(float)
    df = pd.DataFrame({"open": open_, "high": high, "low": low, "close": close, "volume": vol},
                      index=idx)
    df.attrs.update(provider="test", dataset="synthetic bars", offline=False)
    return df


_BARS = {"600519": (1, 1500.0), "000300": (2, 3800.0), "NVDA": (3, 120.0),
         "^GSPC": (4, 5000.0)}


async def fake_bars(symbol: str, *, end: date | None = None) -> pd.DataFrame:
    if symbol not in _BARS:
        raise DataUnavailable(f"no synthetic bars for {symbol}", provider="test")
    seed, start = _BARS[symbol]
    df = synthetic_bars(seed, start, tz="Asia/Shanghai" if symbol[0].isdigit()
                        else "America/New_York")
    return df if end is None else df[df.index.date <= end]


def make_mode(llm: Any, registry: Any, **kw: Any) -> DebateMode:
    kw.setdefault("bars_loader", fake_bars)
    kw.setdefault("today", lambda: TODAY)
    kw.setdefault("seed", 7)
    return DebateMode(llm=llm, registry=registry, **kw)


async def run_mode(mode: DebateMode, text: str, *, options: TurnOptions | None = None,
                   lang: str = "en") -> tuple[list[Event], MemoryRecorder]:
    rec = MemoryRecorder()
    turn = AgentTurn(text=text, history=[], recorder=rec, lang=lang,
                     options=options or TurnOptions())
    return [e async for e in mode.run(turn)], rec


def texts(events: list[Event], kind: str = "status") -> list[str]:
    return [str(getattr(e, "text", "")) for e in events if e.type == kind]


async def produce(mode: DebateMode, symbol: str, *, question: str = "", panel: str | None = None,
                  lang: str = "en", max_rounds: int | None = None,
                  fresh: bool = False) -> tuple[Any, list[Event], MemoryRecorder]:
    """Run `DebateMode.produce` directly: (outcome, events emitted, usage recorder)."""
    from debate.mode import DebateRequest

    events: list[Event] = []
    rec = MemoryRecorder()
    outcome = await mode.produce(
        DebateRequest(symbol=symbol, question=question, panel=panel,  # type: ignore[arg-type]
                      fresh=fresh, max_rounds=max_rounds),
        lang=lang, emit=events.append, on_usage=rec.usage)
    return outcome, events, rec
