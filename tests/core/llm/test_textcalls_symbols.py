"""A small model's call named after the instrument instead of the tool (Qwen2.5-Coder-0.5B
writes `{"name": "NVDA", "arguments": {}}`): run as the offered tool that takes a symbol, the
one that takes every argument it gave; anything not shaped like a symbol stays unknown."""

from __future__ import annotations

import json

import pytest

from core.llm.textcalls import (
    looks_like_symbol,
    parse_text_calls,
    remap_symbol_calls,
    symbol_tools,
)
from core.types import ToolCall

NAMES = {"get_quote", "get_ohlcv", "get_quotes"}


def schema(name: str, required: list[str], props: list[str]) -> dict:  # type: ignore[type-arg]
    return {"type": "function", "function": {"name": name, "parameters": {
        "type": "object", "properties": {p: {"type": "string"} for p in props},
        "required": required}}}


OFFERED = [schema("get_quote", ["symbol"], ["symbol"]),
           schema("get_ohlcv", ["symbol"], ["symbol", "period", "interval"]),
           schema("get_quotes", ["symbols"], ["symbols"])]
BY_SYMBOL = symbol_tools(OFFERED)


def test_the_tools_a_symbol_may_mean_are_those_taking_one_symbol_in_offer_order():
    assert list(BY_SYMBOL) == ["get_quote", "get_ohlcv"]
    assert BY_SYMBOL["get_ohlcv"] == {"symbol", "period", "interval"}


@pytest.mark.parametrize(("text", "tool", "args"), [
    ('{"name": "NVDA", "arguments": {}}', "get_quote", {"symbol": "NVDA"}),
    ('<tool_call>\n{"name": "AAPL"}\n</tool_call>', "get_quote", {"symbol": "AAPL"}),
    ('```json\n{"name": "600519", "arguments": {"period": "1y"}}\n```', "get_ohlcv",
     {"symbol": "600519", "period": "1y"}),
    ('{"name": "BTC-USD", "parameters": {"symbol": "BTC-USD", "interval": "1w"}}',
     "get_ohlcv", {"symbol": "BTC-USD", "interval": "1w"}),
    ('{"name": "英伟达", "arguments": {}}', "get_quote", {"symbol": "英伟达"}),
    ('<function=000001.SH>{}</function>', "get_quote", {"symbol": "000001.SH"}),
    # the symbol the model gave wins over the name it wrote
    ('{"name": "NVDA", "arguments": {"symbol": "AMD"}}', "get_quote", {"symbol": "AMD"}),
])
def test_a_call_named_after_an_instrument_runs_the_symbol_tool(text, tool, args):
    calls, rest = parse_text_calls(text, NAMES, by_symbol=BY_SYMBOL)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [(tool, args)]
    assert rest == ""


def test_a_lower_case_name_is_a_symbol_only_when_the_question_named_it():
    text = '{"name": "nvda", "arguments": {}}'
    assert parse_text_calls(text, NAMES, by_symbol=BY_SYMBOL)[0] == []
    calls, _ = parse_text_calls(text, NAMES, by_symbol=BY_SYMBOL, symbols=["NVDA"])
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_quote",
                                                                   {"symbol": "nvda"})]


@pytest.mark.parametrize("name", ["rm_rf", "get_price", "search_web", "Quote", "hello world"])
def test_names_that_are_no_symbol_stay_unknown(name):
    text = json.dumps({"name": name, "arguments": {}})
    assert not looks_like_symbol(name)
    assert parse_text_calls(text, NAMES, by_symbol=BY_SYMBOL) == ([], text)


def test_without_a_symbol_tool_offered_nothing_is_mapped():
    text = '{"name": "NVDA", "arguments": {}}'
    assert parse_text_calls(text, NAMES, by_symbol={})[0] == []
    assert parse_text_calls(text, NAMES)[0] == []


def test_api_calls_named_after_an_instrument_are_remapped_and_real_ones_kept():
    calls = [ToolCall(id="a", name="TSLA", arguments="{}"),
             ToolCall(id="b", name="get_quotes", arguments='{"symbols": ["AAPL"]}'),
             ToolCall(id="c", name="delete_all", arguments="{}")]
    out = remap_symbol_calls(calls, NAMES, by_symbol=BY_SYMBOL)
    assert [(c.id, c.name, json.loads(c.arguments)) for c in out] == [
        ("a", "get_quote", {"symbol": "TSLA"}), ("b", "get_quotes", {"symbols": ["AAPL"]}),
        ("c", "delete_all", {})]


def test_the_same_call_written_again_and_again_is_one_call():
    one = '```json\n{"name": "get_quote", "arguments": {"symbol": "NVDA"}}\n```\n'
    calls, rest = parse_text_calls(one * 5, NAMES, by_symbol=BY_SYMBOL)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("get_quote",
                                                                   {"symbol": "NVDA"})]
    assert rest == ""


@pytest.mark.parametrize("tail", ['{"name": "get_quote", "arguments":',
                                  '```json\n{"name": "get_q',
                                  '{"name": "NVDA", "arguments": {"sym'])
def test_a_call_cut_off_at_the_length_limit_is_never_shown(tail):
    calls, rest = parse_text_calls("NVDA closed at 138.85 USD on 2025-02-14.\n" + tail, NAMES,
                                   by_symbol=BY_SYMBOL)
    assert calls == [] and rest == "NVDA closed at 138.85 USD on 2025-02-14."
