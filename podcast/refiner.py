"""The refiner (seed 001 §7.3): one model call, no tools, smooths the transitions.

A transition is the first or the last turn of a chapter (where the talk passes from the
opening to the theme, from one ticker to the next, to the closing). The refiner sees the
whole script in its minimal form (id, speaker, text) with the chapters and returns edits
`{id, speaker, text}`. The code applies an edit only when it rewrites a transition's text:
an edit that names an id the script does not have (adds one), removes a turn's text, edits
an id twice, changes the speaker, touches a turn that is not a transition, or brings a
figure the turn did not hold is rejected and noted. A whole script sent back instead of
edits is accepted only with the same ids in the same order.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from core.ports import LLMProvider
from core.types import ChatMessage
from core.words import t
from debate.budget import Budget, estimate_messages
from debate.engine import extract_json
from podcast.figures import FigureSet
from podcast.models import Note, PodcastScript, ScriptTurn, role_of

ROLE = "script_writer"
MAX_TOKENS = 1_500
STEP = "Podcast step: refiner"

RULES = """\
You polish the transitions of a two-voice daily markets podcast script (a host and an
analyst). You may rewrite only the turns whose ids are listed in "transitions" (the first and
last turn of each chapter) so that one part leads into the next; leave everything else alone.

Rules (strict; code checks every edit):
- Keep each edited turn's id and speaker. Never add, remove or reorder turns.
- Add no fact and no number: an edit may only use the figures its turn already has.
- Write in {language}. Change as little as needed; an empty list is a fine answer.

Answer with exactly one JSON object and nothing else:
{{"edits": [{{"id": <id>, "speaker": "<the turn's speaker>", "text": "..."}}]}}
""" + STEP


def messages(script: PodcastScript, lang: str) -> list[ChatMessage]:
    payload = {
        "tickers": script.user_tickers,
        "chapters": [c.model_dump() for c in script.chapter],
        "ticker_sections": [{"ticker": c.name.removeprefix("ticker:"), "start_id": c.start_id,
                             "end_id": c.end_id} for c in script.chapter
                            if c.name.startswith("ticker:")],
        "transitions": script.transitions(),
        "scripts": [{"id": t.id, "speaker": t.speaker, "text": t.text} for t in script.scripts],
    }
    return [ChatMessage(role="system", content=RULES.format(
                language=t("podcast.language", lang))),
            ChatMessage(role="user", content=json.dumps(payload, ensure_ascii=False, indent=1))]


def _edits_from(data: Any, script: PodcastScript) -> tuple[list[Any], list[Note]]:
    """The edits a reply proposes (a whole script is turned into the edits it makes)."""
    if isinstance(data, dict) and isinstance(data.get("edits"), list):
        return data["edits"], []
    if isinstance(data, dict) and isinstance(data.get("scripts"), list):
        rows = data["scripts"]
        ids = [r.get("id") if isinstance(r, dict) else None for r in rows]
        if ids != [t.id for t in script.scripts]:
            return [], [Note(kind="rejected_edit", text=(
                "the refiner sent the script back with ids added, removed or reordered "
                f"({len(rows)} turns for {len(script.scripts)}); every change rejected"))]
        changed = [r for r, t in zip(rows, script.scripts, strict=True)
                   if r.get("text") != t.text or r.get("speaker") != t.speaker]
        return changed, []
    return [], [Note(kind="refiner", text="the refiner's answer has no edits; script unchanged")]


def apply(script: PodcastScript, data: Any) -> tuple[PodcastScript, list[Note]]:
    """`script` with the acceptable edits of a refiner reply applied, and a note for each
    edit applied or rejected."""
    edits, notes = _edits_from(data, script)
    turns = list(script.scripts)
    transitions = set(script.transitions())
    seen: set[int] = set()
    for raw in edits:
        if not isinstance(raw, dict):
            notes.append(Note(kind="rejected_edit", text=f"not an edit: {str(raw)[:80]}"))
            continue
        tid, who, text = raw.get("id"), raw.get("speaker"), raw.get("text")
        if isinstance(tid, str) and tid.strip().isdigit():
            tid = int(tid)
        if not isinstance(tid, int) or isinstance(tid, bool) or not 0 <= tid < len(turns):
            notes.append(Note(kind="rejected_edit", text=(
                f"edit for id {tid!r}: the script has no such turn (an edit may not add one)")))
            continue

        def reject(why: str, tid: int = tid) -> None:
            notes.append(Note(kind="rejected_edit", turn_id=tid, text=why))

        old = turns[tid]
        if tid in seen:
            reject("a second edit of the same turn")
            continue
        seen.add(tid)
        if tid not in transitions:
            reject("not a transition (only the first and last turn of a chapter may change)")
            continue
        if not isinstance(text, str) or not text.strip():
            reject("an empty text would remove the turn")
            continue
        if not isinstance(who, str) or role_of(who) != role_of(old.speaker):
            reject(f"changes the speaker from {old.speaker!r} to {who!r}")
            continue
        text = " ".join(text.split())
        checked = FigureSet.of([old.text]).check(text, repair=False)
        if not checked.ok:
            reject("brings figures the turn did not have: " + ", ".join(checked.unverified))
            continue
        if text != old.text:
            turns[tid] = ScriptTurn(id=old.id, speaker=old.speaker, text=text,
                                    sources=old.sources)
            notes.append(Note(kind="edit", turn_id=tid, text="transition rewritten"))
    return script.model_copy(update={"scripts": turns}), notes


async def run(llm: LLMProvider, script: PodcastScript, *, lang: str, budget: Budget,
              timeout_s: float, json_mode: bool = False) -> tuple[PodcastScript, list[Note]]:
    """One refiner call; on any failure the script comes back unchanged, with a note.
    Raises `BudgetExhausted` when the call does not fit (nothing spent)."""
    msgs = messages(script, lang)
    with budget.reserve(estimate_messages(msgs) + MAX_TOKENS):
        async with asyncio.timeout(timeout_s):
            resp = await llm.complete(msgs, role=ROLE, max_tokens=MAX_TOKENS,
                                      json_mode=json_mode)
    budget.charge("refiner", ROLE, resp.usage)
    try:
        data = extract_json(resp.content)
    except ValueError as exc:
        return script, [Note(kind="refiner", text=f"the refiner's answer is not JSON ({exc}); "
                                                   "script unchanged")]
    return apply(script, data)


__all__ = ["ROLE", "STEP", "apply", "messages", "run"]
