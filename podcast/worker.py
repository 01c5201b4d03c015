"""The ticker worker (seed 001 §7.2): one model call, no tools, writes one ticker's turns.

Its input is one JSON document: the script so far (opening and theme), the ticker's debate
(every round, the metrics as displayed, the conclusion), the intraday summary or why there is
none, the ticker's place among the day's tickers, and the sources it may cite by id. Its
answer is checked in code, turn by turn: a speaker that is neither voice drops the turn; every
number and date must be in the input (a rounding of exactly one input figure is repaired to
that figure, anything else drops the turn); a source must be one the input listed (others are
removed). Each repair, drop and removal becomes a note.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field

from core import words
from core.ports import LLMProvider
from core.types import ChatMessage, Usage
from debate.budget import Budget, estimate_messages
from debate.engine import parse_reply
from debate.grounding import SourceCatalog
from debate.models import DebateArtifact
from podcast.figures import FigureSet
from podcast.models import IntradaySummary, Note, ScriptTurn, role_of, speaker
from podcast.writer import Draft, artifact_sources

ROLE = "script_writer"
MAX_TOKENS = 1_400
STEP = "Podcast step: ticker_worker"

RULES = """\
You write one ticker's segment of a daily markets podcast with two voices, a host and an
analyst. The input JSON holds the script so far, the ticker's four-expert debate, its
intraday summary and the sources you may cite.

Rules (strict; code checks every turn):
- Use only facts and numbers from the input. Copy every number exactly as it is written
  there; never compute, round, convert or invent one. A turn with a number the input does not
  hold is dropped.
- Cite sources only by the ids in "sources" (e.g. "S1"); others are removed.
- Say the panel's conclusion (its action: BUY, HOLD or SELL) and why, from the debate.
- Write 3 to 6 turns, alternating, host first. Continue naturally from the script so far:
  the first turn introduces the ticker (its place among the day's tickers), the last hands
  over to what comes next. Research, not personal advice.
- Write in {language}. Each speaker is exactly "{host}" or "{analyst}".

Answer with exactly one JSON object and nothing else:
{{"ticker": "<code>", "scripts": [{{"speaker": "{host}", "text": "...", "sources": ["S1"]}}]}}
""" + STEP


class WorkerTurn(BaseModel):
    speaker: str = ""
    text: str = ""
    sources: list[Any] = Field(default_factory=list)


class WorkerReply(BaseModel):
    ticker: str = ""
    scripts: list[WorkerTurn] = Field(min_length=1)


@dataclass
class WorkerInput:
    code: str
    payload: str
    figures: FigureSet
    catalog: SourceCatalog


@dataclass
class WorkerResult:
    drafts: list[Draft] = field(default_factory=list)
    notes: list[Note] = field(default_factory=list)
    repaired: int = 0
    dropped: int = 0
    usage: Usage | None = None


def _confidence(x: float) -> str:
    return f"{x:.2f}"


def debate_brief(art: DebateArtifact, catalog: SourceCatalog) -> dict[str, Any]:
    """The debate as the worker reads it: figures as displayed, sources as ids."""
    m = art.meta
    rounds: list[dict[str, Any]] = []
    seated = 0
    if art.experts is not None:
        for rnd in art.experts.rounds:
            turns: list[dict[str, Any]] = []
            for name, t in rnd.turns().items():
                if t.failed:
                    turns.append({"expert": name, "failed": True, "error": t.error})
                    continue
                turns.append({"expert": name, "action": t.action,
                              "confidence": _confidence(t.confidence), "text": t.text,
                              "sources": [sid for s in t.sources
                                          if (sid := catalog.id_for(s)) is not None]})
            seated = max(seated, len(turns))
            rounds.append({"round": rnd.round, "turns": turns})
    c = art.conclusion
    return {
        "ticker": m.ticker, "name": m.name, "market": m.market, "currency": m.currency,
        "data_as_of": m.data_as_of, "data_source": m.data_source, "label": m.label,
        "experts_seated": seated, "rounds_run": len(rounds),
        "metrics": [{"label": x.label, "value": x.display} for x in art.metrics
                    if x.value is not None],
        "rounds": rounds,
        "conclusion": {"action": c.action, "confidence": _confidence(c.confidence),
                       "consensus": c.consensus, "text": c.text},
        "notes": list(m.notes) + list(m.degradations),
    }


def build_input(art: DebateArtifact, *, day: str, lang: str, index: int, codes: Sequence[str],
                script_so_far: Sequence[ScriptTurn], intraday: IntradaySummary | None,
                intraday_note: str) -> WorkerInput:
    catalog = SourceCatalog()
    for s in artifact_sources(art):
        catalog.add(s)
    if intraday is not None:
        catalog.add(intraday.source)
    for t in script_so_far:
        for s in t.sources:
            catalog.add(s)
    payload: dict[str, Any] = {
        "date": day, "ticker": art.meta.ticker, "name": art.meta.name,
        "position": {"index": index + 1, "total": len(codes)}, "all_tickers": list(codes),
        "speakers": {"host": speaker("host", lang), "analyst": speaker("analyst", lang)},
        "script_so_far": [{"id": t.id, "speaker": t.speaker, "text": t.text}
                          for t in script_so_far],
        "debate": debate_brief(art, catalog),
        "intraday": (intraday.model_dump(exclude={"source"}) | {
            "source": catalog.id_for(intraday.source)}) if intraday is not None
        else {"none": intraday_note or "no intraday bars in the data"},
        "sources": [{"id": sid} | catalog.get(sid).model_dump() for sid in catalog.ids()],
    }
    text = json.dumps(payload, ensure_ascii=False, indent=1)
    return WorkerInput(code=art.meta.ticker, payload=text, figures=FigureSet.of([text]),
                       catalog=catalog)


def messages(inp: WorkerInput, lang: str) -> list[ChatMessage]:
    system = RULES.format(language=words.t("podcast.language", lang),
                          host=speaker("host", lang), analyst=speaker("analyst", lang))
    return [ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=inp.payload)]


def check(reply: WorkerReply, inp: WorkerInput, lang: str) -> WorkerResult:
    """The reply's turns that survive the checks, repaired where they could be; notes."""
    out = WorkerResult()
    code = inp.code
    allowed = set(inp.catalog.ids())
    for i, turn in enumerate(reply.scripts, start=1):
        role = role_of(turn.speaker)
        text = " ".join(turn.text.split())
        if role is None or not text:
            out.dropped += 1
            why = f"speaker {turn.speaker!r} is neither voice" if role is None else "no text"
            out.notes.append(Note(kind="drop", ticker=code, text=f"worker turn {i} dropped: {why}"))
            continue
        checked = inp.figures.check(text)
        if not checked.ok:
            out.dropped += 1
            out.notes.append(Note(kind="drop", ticker=code, text=(
                f"worker turn {i} dropped: figures not in its input: "
                f"{', '.join(checked.unverified)} (\"{_short(text)}\")")))
            continue
        if checked.repairs:
            out.repaired += 1
            fixes = ", ".join(f"{a!r} -> {b!r}" for a, b in checked.repairs)
            out.notes.append(Note(kind="repair", ticker=code, text=(
                f"worker turn {i}: {fixes} (the input's figure)")))
        kept, dropped = inp.catalog.recheck(turn.sources, allowed)
        if dropped:
            out.notes.append(Note(kind="source", ticker=code, text=(
                f"worker turn {i}: removed {len(dropped)} source(s) not in its input: "
                + "; ".join(f"{d.raw} ({d.reason})" for d in dropped))))
        out.drafts.append(Draft(role, checked.text, list(kept)))
    return out


def _short(text: str, limit: int = 120) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


async def run(llm: LLMProvider, inp: WorkerInput, *, lang: str, budget: Budget,
              timeout_s: float, json_mode: bool = False) -> tuple[WorkerResult | None, str]:
    """Call the worker once and check its answer: (result, "") or (None, why it failed).
    Raises `BudgetExhausted` when the call does not fit the budget (nothing was spent)."""
    msgs = messages(inp, lang)
    with budget.reserve(estimate_messages(msgs) + MAX_TOKENS):
        async with asyncio.timeout(timeout_s):
            resp = await llm.complete(msgs, role=ROLE, max_tokens=MAX_TOKENS,
                                      json_mode=json_mode)
    budget.charge(f"worker:{inp.code}", ROLE, resp.usage)
    reply, error = parse_reply(resp.content, WorkerReply)
    if reply is None:
        return None, f"no usable JSON ({error})"
    result = check(reply, inp, lang)
    result.usage = resp.usage
    return result, ""

__all__ = ["ROLE", "STEP", "WorkerInput", "WorkerReply", "WorkerResult", "build_input",
           "check", "debate_brief", "messages", "run"]
