"""Running the question set through a mode: the offline analyst or the configured model.

Every tool result of an answer is recorded (a registry whose functions log what they
return), so "unsupported numbers" are checked the way the agent checks them: against what
the tools said in that run. Each question has its own deadline; a question that runs over it
counts as failed, and the run goes on.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from pydantic import BaseModel

from bot.eval.questions import Expected, Question
from bot.eval.score import Row, english_words, has_date, has_figure, markup_leaked
from core.agent.grounding import unsupported_figures
from core.agent.turn import Turn
from core.errors import BullpenError
from core.events import Done, Failed, ToolStarted
from core.ports import Mode
from core.tools import ToolRegistry, ToolSpec
from core.types import ChatMessage, OutgoingFile, Usage

log = logging.getLogger(__name__)

UNVERIFIED_WORDS = ("Unverified", "未经核实", "Cut off", "回答不完整", "Fast mode", "快速模式")


class _Recorder:
    """What one answer said and spent (nothing is stored: the eval needs no database)."""

    def __init__(self) -> None:
        self.messages: list[ChatMessage] = []
        self.usages: list[Usage] = []

    async def message(self, message: ChatMessage) -> None:
        self.messages.append(message)

    async def usage(self, usage: Usage) -> None:
        self.usages.append(usage)


class ToolLog:
    """What the tools returned during one answer, as JSON text."""

    def __init__(self) -> None:
        self.texts: list[str] = []

    def add(self, result: BaseModel) -> None:
        self.texts.append(result.model_dump_json(exclude_none=True))


def recording_registry(registry: ToolRegistry, tool_log: ToolLog) -> ToolRegistry:
    def wrap(spec: ToolSpec) -> ToolSpec:
        async def func(**kwargs: Any) -> BaseModel:
            result = await spec.func(**kwargs)
            tool_log.add(result)
            return result
        return replace(spec, func=func)

    return ToolRegistry(wrap(s) for s in registry.specs())


def recording_ict(tool_log: ToolLog) -> Callable[..., Any]:
    """`analyst.ict_answer.ict_answer`, logging the analysis it renders."""
    from analyst.ict_answer import ict_result, render

    async def answer(symbol: str, interval: str, plan: bool, *,
                     lang: str = "en") -> tuple[str, list[OutgoingFile]]:
        result, files = await ict_result(symbol, interval, plan, lang=lang)
        tool_log.add(result)
        return render(result, lang), files

    return answer


ModeFactory = Callable[[ToolRegistry, ToolLog], Mode]


async def expectation(q: Question) -> tuple[bool, Expected, str]:
    if q.expect is None:
        return False, Expected(), ""
    try:
        got = await q.expect()
    except (BullpenError, LookupError, ValueError) as exc:
        return False, Expected(), f"expectation not computable: {exc}"
    return True, got, ""


async def ask(q: Question, make_mode: ModeFactory, registry: ToolRegistry,
              timeout_s: float) -> Row:
    covered, want, why = await expectation(q)
    figs, dates = want.figures, want.dates
    row = Row(id=q.id, lang=q.lang, kind=q.kind, question=q.text, covered=covered,
              expected=figs, dates=dates, error="" if covered or q.expect is None else why,
              phrases=list(want.phrases))
    tool_log = ToolLog()
    mode = make_mode(recording_registry(registry, tool_log), tool_log)
    recorder = _Recorder()
    turn = Turn(text=q.text, history=[], recorder=recorder, lang=q.lang)
    started = time.perf_counter()
    answer = failure = ""
    try:
        async with asyncio.timeout(timeout_s):
            async for event in mode.run(turn):
                if isinstance(event, ToolStarted):
                    row.tool_calls += 1
                elif isinstance(event, Done):
                    answer, row.label = event.text, event.label
                elif isinstance(event, Failed):
                    failure = event.error
                    row.error = event.error[:300]
    except TimeoutError:
        row.error = f"no answer within {timeout_s:g} s"
    except BullpenError as exc:
        row.error = f"{type(exc).__name__}: {exc}"[:300]
    row.wall_s = round(time.perf_counter() - started, 2)
    row.prompt_tokens = sum(u.prompt_tokens for u in recorder.usages)
    row.completion_tokens = sum(u.completion_tokens for u in recorder.usages)
    row.first_prompt_tokens = recorder.usages[0].prompt_tokens if recorder.usages else 0
    row.answer = answer[:600]
    row.markup_leak = markup_leaked(answer)
    if q.lang == "zh":  # all the person reads: the whole answer, its label, a failure
        row.english = english_words("\n".join((answer, row.label, failure)))
    tool_texts = tool_log.texts + [m.content for m in recorder.messages if m.role == "tool"]
    row.unsupported = unsupported_figures(answer, tool_texts, also=[q.text])
    row.labelled = bool(row.error) or any(w in row.label for w in UNVERIFIED_WORDS)
    if covered and answer:
        row.figure_found = all(has_figure(answer, v) for _, v in figs)
        row.date_found = all(has_date(answer, d) for d in dates)
        row.phrase_found = all(p in answer for p in want.phrases)
        row.wrong = [w for w in want.forbidden if w in answer]
    elif covered:
        row.phrase_found = False
    return row


async def run_questions(questions: Sequence[Question], make_mode: ModeFactory,
                        registry: ToolRegistry, *, timeout_s: float,
                        progress: Callable[[Row], None] | None = None) -> list[Row]:
    rows = []
    for q in questions:  # one at a time: wall times are per answer, not shared
        row = await ask(q, make_mode, registry, timeout_s)
        rows.append(row)
        if progress is not None:
            progress(row)
    return rows
