"""Tool calls written as text, template markup, the figure check (units, dates, codes)."""

from __future__ import annotations

import json

import pytest

from core.agent.grounding import figures, unsupported_figures, wants_data
from core.llm.markup import MarkupGate, strip_markup
from core.llm.textcalls import parse_text_calls

NAMES = {"get_quote", "get_ohlcv"}


@pytest.mark.parametrize("text", [
    '<tool_call>\n{"name": "get_quote", "arguments": {"symbol": "NVDA"}}\n</tool_call>',
    '<tool_call>{"name": "get_quote", "arguments": {"symbol": "NVDA"}}',  # never closed
    '{"name": "get_quote", "parameters": {"symbol": "NVDA"}}',
    '<|python_tag|>{"name": "get_quote", "parameters": {"symbol": "NVDA"}}<|eom_id|>',
    '[TOOL_CALLS] [{"name": "get_quote", "arguments": {"symbol": "NVDA"}}]',
    '<function=get_quote>{"symbol": "NVDA"}</function>',
    '[get_quote(symbol="NVDA")]',
    '```json\n{"type": "function", "function": {"name": "get_quote", '
    '"arguments": "{\\"symbol\\": \\"NVDA\\"}"}}\n```',
])
def test_each_common_text_format_becomes_one_call(text: str) -> None:
    calls, rest = parse_text_calls(text, NAMES)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_quote",
                                                                   {"symbol": "NVDA"})]
    assert rest == ""


def test_prose_and_unknown_names_are_left_alone() -> None:
    text = 'Use {"name": "rm_rf", "arguments": {}} carefully; get_quote is a tool.'
    assert parse_text_calls(text, NAMES) == ([], text)
    calls, rest = parse_text_calls('Checking. <tool_call>{"name": "get_ohlcv", '
                                   '"arguments": {"symbol": "AAPL"}}</tool_call>', NAMES)
    assert [c.name for c in calls] == ["get_ohlcv"] and rest == "Checking."


def test_markup_is_stripped_and_held_back_while_streaming() -> None:
    assert strip_markup("Answer.<|im_end|>\n<|im_start|>assistant\nmore") == "Answer.\n\nmore"
    assert strip_markup("<tool_response>{}</tool_response>ok") == "ok"
    gate = MarkupGate()
    shown = "".join(gate.feed(c) for c in ["The close ", "was 1.08. <to", "ol_response>{", "}"])
    assert shown + gate.flush() == "The close was 1.08. "


def test_a_streamed_code_fence_or_json_shows_nothing_and_the_gate_holds_little() -> None:
    # a fence arriving a backtick at a time was shown up to its third backtick
    for chunks in (["`", "``json\n{", "}"], ["  ", "[", "{\"name\": 1}]"], [" {", "}"]):
        gate = MarkupGate()
        assert "".join(gate.feed(c) for c in chunks) + gate.flush() == "", chunks
    gate = MarkupGate()
    assert gate.feed("`x` is a code span") == "`x` is a code span"
    # a long answer streamed a token at a time: what the gate keeps stays a few characters
    # (an opener's start), whatever streamed before, and all of it is shown
    gate = MarkupGate()
    tokens = ["Close ", "1.08 ", "[a] ", "x<", "b ", "<|"[:1]] * 2_000
    shown = "".join(gate.feed(t) for t in tokens) + gate.flush()
    assert shown == "".join(tokens)
    assert len(gate._held) == 0 and len(gate._lead) <= 3


def test_figures_units_dates_and_codes() -> None:
    found = [f[0] for f in figures("On 2024-05-31 600519 (沪深300, 15m bars) closed at 1,724.50, "
                                   "up 2.1%; revenue 123.4亿; 3 steps")]
    assert found == ["1,724.50", "2.1%", "123.4亿"]
    tool = '{"close": 1724.5, "change_pct": 2.1, "revenue": 12340000000}'
    assert unsupported_figures("closed at 1,724.50, up 2.1%; revenue 123.4亿", [tool]) == []
    assert unsupported_figures("closed at 1,725.50", [tool]) == ["1,725.50"]
    assert wants_data("EURUSD rate") and wants_data("沪深300 近一年表现")
    assert not wants_data("hello there") and not wants_data("explain diversification")
