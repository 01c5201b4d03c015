"""Normal mode: a tool-free planning turn, then the tool loop (parallel calls), streamed.

What a model says is checked before it is shown as an answer: template markup never passes
(also not live, `MarkupGate`), tool calls written as text are parsed and run like API ones, an
answer cut at the length limit is continued once and labelled when still cut, and an answer
whose figures no tool returned (or a data question answered without a tool) is sent back once
with a request to use a tool, then labelled unverified.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import AsyncIterator, Callable, Sequence
from datetime import date
from typing import Any

from core import context
from core.agent import prompts
from core.agent.checks import check_answer
from core.agent.grounding import unsupported_figures, wants_data
from core.agent.labels import join, label
from core.agent.language import question_lang
from core.agent.toolpick import pick_schemas, small_call
from core.agent.turn import Turn
from core.errors import LLMError
from core.events import Done, Event, File, Status, TextDelta, Thinking, ToolFinished, ToolStarted
from core.llm.base import Final, TextChunk, ThinkingChunk
from core.llm.fit import TOOLS_SHARE
from core.llm.markup import MarkupGate, strip_markup
from core.llm.textcalls import parse_text_calls, remap_symbol_calls, symbol_tools
from core.localize import tool_label
from core.ports import LLMProvider
from core.tools import ToolOutcome, ToolRegistry
from core.types import ChatMessage, LLMResponse, OutgoingFile, ToolCall
from core.words import t

MAX_TURNS = 30
PLAN_MAX_TOKENS = 256
PLAN_MAX_CHARS = 800
# the tool schemas a small model is offered, in estimated tokens (its whole first request for
# a quote question stays under 1,500 prompt tokens)
SMALL_TOOL_BUDGET = 700
# the calls of one response a small model's answer runs (the 0.5B wrote dozens for one
# follow-up question; their results did not fit 8,192 tokens)
SMALL_CALLS = 3


def _join_parts(first: str, second: str) -> str:
    if not first:
        return second
    return first + ("" if first.endswith((" ", "\n")) or not second else " ") + second


# one dated row of a table, recited: "2025-12-25: 4629.32", "- 2025-02-10 138.85 139.2",
# "2022年1月31日：401.97元，427.7元，398.2元"
_ROW_LINE = re.compile(r"\s*(?:[-*|]\s*)?(?:\d{4}-\d{2}-\d{2}|\d{4}年\d{1,2}月\d{1,2}日)"
                       r"[\s:：|,，、;；\d.%$元-]*")
_ROW_NUMBER = re.compile(r"\d+(?:\.\d+)?")
ROW_NUMBERS = 5  # a date and four numbers or more: a bar (open, high, low, close ...)


def _only_data(text: str) -> bool:
    """Whether `text` is nothing but a JSON object or list (fenced or not), or nothing but
    dated rows (three or more, or bars of a date and four numbers): a small model's echo of a
    tool result, not an answer (the 1.5B answered 沪深300 近一年表现 with the five bars it
    was sent, one "date: open" a line, and again with one whole bar of eight numbers)."""
    body = text.strip().removeprefix("```json").removeprefix("```").removesuffix("```").strip()
    lines = [line for line in body.splitlines() if line.strip()]
    if lines and all(_ROW_LINE.fullmatch(line) for line in lines) and (
            len(lines) >= 3
            or all(len(_ROW_NUMBER.findall(line)) >= ROW_NUMBERS for line in lines)):
        return True
    if not body.startswith(("{", "[")):
        return False
    try:
        json.loads(body)
    except json.JSONDecodeError:
        return body.startswith("{\"")  # an echo cut off at the length limit
    return True


_FENCED = re.compile(r"```[a-z]*\s*(.*?)```", re.DOTALL)


def _not_an_answer(text: str, messages: Sequence[ChatMessage]) -> bool:
    """Whether a small model's `text` is something it was sent, not an answer: a line of its
    instructions or of a send-back, or its question or the hint beside it (the 0.5B answered
    "The figures and the tool results above hold them, but your answer states none.",
    "每个数字都写上工具结果给出的日期。", "比特币价格", "NVDA, MSFT"), or calls written as text
    that name no tool ("```json {"name": "compare NVDA and MSFT", ...}```")."""
    body = " ".join(text.split())
    if not body:
        return False
    if "```" in text and not _FENCED.sub("", text).strip("` \n") \
            and all('"name"' in block for block in _FENCED.findall(text)):
        return True
    if len(body) < 4:
        return False
    return any(body in " ".join(m.content.split()) for m in messages
               if m.role in ("system", "user") and m.content)


def _call_key(call: ToolCall) -> str:
    """A call as compared for repeats: its name and its arguments in one order."""
    return call.name + json.dumps(_args_dict(call), sort_keys=True, ensure_ascii=False)


def _args_dict(call: ToolCall) -> dict[str, Any]:
    try:
        data = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return {}
    return data if isinstance(data, dict) else {}


class NormalMode:
    """`small`: a small local model (profile setting): no planning call, fewer and compact
    tools, the instruments the question names and the period it asks about spelt out for it
    (`find_symbols`: a model of 0.5B parameters does not know that 英伟达 is NVDA;
    `find_period`: the 1.5B read 近一年 as the whole history), a table tool's rows cut to
    `SMALL_ARGS` (its summary covers the range), a call it repeats answered with the result
    it has instead of a loop, and the answer held back until its checks pass (a draft is
    never shown and then retracted)."""

    name = "normal"

    def __init__(self, *, llm: LLMProvider, registry: ToolRegistry, max_turns: int = MAX_TURNS,
                 plan: bool = True, today: Callable[[], date] = date.today,
                 extra_system: str = "", small: bool = False,
                 tool_budget_tokens: int | None = None,
                 find_symbols: Callable[[str], Sequence[str]] | None = None,
                 find_period: Callable[[str], str | None] | None = None) -> None:
        self._llm = llm
        self._registry = registry
        self._max_turns = max_turns
        self._plan = plan and not small
        self._small = small
        self._tool_budget = tool_budget_tokens or (SMALL_TOOL_BUDGET if small else None)
        self._today = today
        self._extra = extra_system
        self._find_symbols = find_symbols
        self._find_period = find_period

    async def _symbols(self, text: str) -> list[str]:
        """The instruments `text` names (none without `find_symbols`); the directory may load
        on the first call, so off the event loop."""
        if self._find_symbols is None:
            return []
        return list(await asyncio.to_thread(self._find_symbols, text))

    def _messages(self, turn: Turn, lang: str, symbols: Sequence[str] = (),
                  period: str | None = None) -> list[ChatMessage]:
        msgs = [ChatMessage(role="system", content=prompts.system_prompt(
            prompts.system_for(lang, small=self._small), self._today(), self._extra))]
        if turn.summary:
            msgs.append(ChatMessage(role="system",
                                    content="Summary of the earlier conversation:\n"
                                    + turn.summary))
        msgs.extend(turn.history)
        msgs.append(ChatMessage(role="user", content=turn.text
                                + prompts.question_hint(symbols, lang, period)))
        return msgs

    async def schemas_for(self, question: str, role: str = "agent") -> list[dict[str, Any]]:
        """The tools offered for `question` (compact, in the stable order), chosen by
        relevance within the share of the window tools may take, so that the fitting of the
        request never has to drop a relevant tool from the end of the stable order."""
        budget = self._tool_budget
        window = getattr(self._llm, "context_tokens", None)
        if callable(window):
            try:
                share = int(await window(role) * TOOLS_SHARE * 0.8)
            except LLMError:
                share = 0
            if share:
                budget = share if budget is None else min(budget, share)
        return pick_schemas(question, self._registry, budget_tokens=budget, small=self._small)

    async def run(self, turn: Turn) -> AsyncIterator[Event]:
        # the answer is written in the question's language; notices are in the person's
        # (`turn.lang`: their /lang, else the language of this message)
        lang = question_lang(turn.text, turn.lang)
        symbols = await self._symbols(turn.text) if self._small else []
        period = (self._find_period(turn.text) if self._small and self._find_period is not None
                  else None)
        messages = self._messages(turn, lang, symbols, period)
        # a run degraded by the usage gate (core.usage_gate): fewer turns, one cheaper role
        max_turns = min(turn.options.max_turns or self._max_turns, self._max_turns)
        cheap = turn.options.profile_role
        schemas = await self.schemas_for(turn.text, cheap or "agent")
        if self._plan:
            yield Status(text=t("answer.status_planning", turn.lang))
            plan = await self._llm.complete(
                [*messages, ChatMessage(role="system", content=prompts.planning(schemas))],
                role=cheap or "planner", max_tokens=PLAN_MAX_TOKENS)
            await turn.recorder.usage(plan.usage)
            if plan.thinking:
                yield Thinking(source="planner", text=plan.thinking)
            head = strip_markup(plan.content)
            if head.upper().startswith("ANSWER:"):
                answer = head[len("ANSWER:"):].strip()
                # a direct answer only for small talk: a data question, figures or a cut
                # answer go to the tool loop
                if answer and plan.finish_reason != "length" and not wants_data(turn.text) \
                        and not unsupported_figures(answer, [], also=[turn.text]):
                    await turn.recorder.message(ChatMessage(role="assistant", content=answer))
                    yield TextDelta(text=answer)
                    yield Done(text=answer)
                    return
                head = ""
            if head:
                body = head[len("PLAN:"):].strip() if head.upper().startswith("PLAN:") else head
                body = body[:PLAN_MAX_CHARS]
                yield Thinking(source="planner", text=body)
                messages.append(ChatMessage(role="system", content="Your plan:\n" + body))

        run_start = len(messages)
        names = self._registry.name_set()
        by_symbol = symbol_tools(schemas)
        ran: set[str] = set()  # the calls run in this turn (a repeat is not run again)
        tools_off = False  # set after a repeated call: the model answers from what it has
        tools_used = 0
        made_files = False  # a tool sent a chart or a file: that is the answer's figure
        sent_back: set[str] = set()  # each check sends an answer back at most once
        checked: tuple[str, Any] | None = None  # the answer last sent back, and its check
        continued = False
        # a small model that answered a data question without a call (twice it refused, once
        # it wrote a plan of calls as prose) must call one of the offered tools next
        must_call = False
        prefix = ""  # an answer cut at the length limit, being continued
        for n in range(max_turns):
            final_turn = n == max_turns - 1
            offer = None if final_turn or continued or tools_off or not schemas else schemas
            response: LLMResponse | None = None
            gate = MarkupGate()
            held = False
            try:
                async for item in self._llm.stream(messages, role=cheap or "agent", tools=offer,
                                                   require_tool=must_call and bool(offer)):
                    if isinstance(item, TextChunk):
                        if self._small:
                            if not held:
                                held = True
                                yield Status(text=label("checking", turn.lang))
                        elif shown := gate.feed(item.text):
                            yield TextDelta(text=shown)
                    elif isinstance(item, ThinkingChunk):
                        yield Thinking(source="agent", text=item.text)
                    elif isinstance(item, Final):
                        response = item.response
            except LLMError:
                if checked is None:
                    raise
                # the model failed on a send-back: the answer it gave stands, labelled as
                # its check found it, rather than a complete answer turning into an error
                first, first_check = checked
                answer = first_check.dated(first) if first else label("empty", turn.lang)
                await turn.recorder.message(ChatMessage(role="assistant", content=answer))
                if self._small:
                    yield TextDelta(text=answer)
                yield Done(text=answer, label=join(*first_check.labels(
                    turn.lang, offered=bool(schemas))))
                return
            if not self._small and (rest := gate.flush()):
                yield TextDelta(text=rest)
            assert response is not None
            await turn.recorder.usage(response.usage)
            calls, content = response.tool_calls, response.content
            if calls:
                calls = remap_symbol_calls(calls, names, by_symbol=by_symbol, symbols=symbols)
            elif offer or tools_off:
                calls, content = parse_text_calls(content, names, by_symbol=by_symbol,
                                                  symbols=symbols)
                if not offer:  # a call written once more after the tools were withdrawn
                    calls = []
            content = strip_markup(content)
            if calls and tools_used and all(_call_key(c) in ran for c in calls):
                # the same call again (a small model loops on it, often after writing its
                # answer): not run; the text beside it is the answer, else the model is told
                # to answer from the result it has, with no tools offered
                calls = []
                if not content.strip():
                    tools_off = True
                    messages.append(ChatMessage(role="user", content=prompts.answer_now(lang)))
                    continue
            if not calls and self._small and _not_an_answer(content, messages):
                content = ""  # never shown: checked below as no answer at all
            if not calls and tools_used and self._small and _only_data(content):
                # the tool's result echoed back as JSON is not an answer: not kept; asked
                # once more, without tools, for the answer in words
                if not tools_off:
                    tools_off = True
                    messages.append(ChatMessage(role="user", content=prompts.answer_now(lang)))
                    continue
                content = ""
            if calls:
                must_call = False
                if self._small:  # a small model's burst of calls would overflow its window
                    calls = [small_call(c, self._registry, period, turn.text)
                             for c in calls[:SMALL_CALLS]]
                ran.update(_call_key(c) for c in calls)
                tools_used += len(calls)
                assistant = ChatMessage(role="assistant", content=content, tool_calls=calls)
                messages.append(assistant)
                await turn.recorder.message(assistant)
                async for event in self._run_tools(calls, messages, turn):
                    made_files = made_files or isinstance(event, File)
                    yield event
                continue
            if response.finish_reason == "length" and not continued and not final_turn:
                continued, prefix = True, _join_parts(prefix, content)
                messages += [ChatMessage(role="assistant", content=content),
                             ChatMessage(role="user", content=prompts.CONTINUE)]
                yield Status(text=t("answer.status_continuing", turn.lang))
                continue
            answer = _join_parts(prefix, content)
            tool_texts = [m.content for m in messages[run_start:] if m.role == "tool"]
            check = check_answer(answer, question=turn.text, lang=lang, tool_texts=tool_texts,
                                 also=[turn.summary, *(m.content for m in turn.history)],
                                 tools_used=tools_used, made_files=made_files)
            again = check.send_back(sent_back, can_use_tools=bool(offer))
            if again is not None and not final_turn:
                sent_back.add(again.kind)
                must_call = self._small and again.kind == "figures" and not tools_used
                checked = (answer, check)
                prefix = ""
                messages += [ChatMessage(role="assistant", content=answer),
                             ChatMessage(role="user", content=again.prompt)]
                yield Status(text=t("answer.status_checking", turn.lang))
                continue
            notes = [label("cut_off", turn.lang, tokens=response.usage.completion_tokens)
                     if response.finish_reason == "length" else "",
                     *check.labels(turn.lang, offered=bool(schemas))]
            answer = check.dated(answer) if answer else label("empty", turn.lang)
            await turn.recorder.message(ChatMessage(role="assistant", content=answer))
            if self._small:  # held until now: shown once, checked
                yield TextDelta(text=answer)
            yield Done(text=answer, label=join(*notes))
            return
        yield Done(text=label("turn_limit", turn.lang))

    async def _run_tools(self, calls: list[ToolCall], messages: list[ChatMessage],
                         turn: Turn) -> AsyncIterator[Event]:
        files: list[OutgoingFile] = []
        statuses: list[str] = []
        ctx = context.RunContext(user_id=str(turn.user_id) if turn.user_id else None,
                                 conversation_id=str(turn.conversation_id)
                                 if turn.conversation_id else None,
                                 lang=turn.lang, on_status=statuses.append,
                                 on_file=files.append, interval=turn.options.interval)
        for call in calls:
            args = _args_dict(call)
            english = (self._registry.get(call.name).render_label(args)
                       if call.name in self._registry
                       else t("answer.status_tool", turn.lang, name=call.name))
            label = tool_label(call.name, args, turn.lang, english)
            yield ToolStarted(call_id=call.id, name=call.name, arguments=args, label=label)
            yield Status(text=label)

        async def one(call: ToolCall) -> ToolOutcome:
            token = context.use(ctx)
            try:
                return await self._registry.call(call.name, call.arguments)
            finally:
                context.reset(token)

        outcomes = await asyncio.gather(*(one(c) for c in calls))
        for call, outcome in zip(calls, outcomes, strict=True):
            yield ToolFinished(call_id=call.id, name=call.name, ok=outcome.ok,
                               summary=outcome.content[:200], elapsed_s=outcome.elapsed_s)
            tool_msg = ChatMessage(role="tool", content=outcome.content, tool_call_id=call.id,
                                   name=call.name)
            messages.append(tool_msg)
            await turn.recorder.message(tool_msg)
        for text in statuses:
            yield Status(text=text)
        for f in files:
            yield File(file=f)
