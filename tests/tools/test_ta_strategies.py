"""The strategies knowledge base on real Postgres: Chinese and English search over names and
aliases, save and update through the tools, and the in-memory fallback without a database."""

from __future__ import annotations

from collections.abc import AsyncIterator

import asyncpg
import pytest

from core.store.strategies import StrategiesRepo
from core.tools import ToolRegistry
from tools.data import DataConfig, configure
from tools.strategies import lookup_ta_strategy, save_ta_strategy, update_ta_strategy
from tools.strategy_book import STARTING_SET


@pytest.fixture
async def kb(pg_pool: asyncpg.Pool) -> AsyncIterator[asyncpg.Pool]:
    configure(DataConfig(pool=pg_pool))
    yield pg_pool
    configure(DataConfig())


def _registry() -> ToolRegistry:
    return ToolRegistry(f.__tool_spec__ for f in (  # type: ignore[attr-defined]
        lookup_ta_strategy, save_ta_strategy, update_ta_strategy))


def test_starting_set_has_parameters_and_both_languages() -> None:
    names = {s.name for s in STARTING_SET}
    assert {"Moving average crossover", "RSI divergence", "MACD signal crossover",
            "Bollinger squeeze", "Turtle breakout"} <= names
    for s in STARTING_SET:
        assert s.parameters and s.indicators and s.rules, s.name
        assert any(any("\u4e00" <= ch <= "\u9fff" for ch in a) for a in s.aliases), s.name


@pytest.mark.parametrize(("query", "expected"), [
    ("海龟", "Turtle breakout"),
    ("海龟交易法", "Turtle breakout"),
    ("海龟策略", "Turtle breakout"),  # the alias "海龟" inside a longer query
    ("turtle", "Turtle breakout"),
    ("Donchian channel breakout", "Turtle breakout"),
    ("MACD金叉", "MACD signal crossover"),
    ("布林带收口", "Bollinger squeeze"),
    ("golden cross", "Moving average crossover"),
    ("均线", "Moving average crossover"),
    ("RSI背离", "RSI divergence"),
    ("squeeze breakout volatility", "Bollinger squeeze"),
])
async def test_lookup_finds_in_chinese_and_english(kb: asyncpg.Pool, query: str,
                                                   expected: str) -> None:
    found = await lookup_ta_strategy(query=query)
    assert found.matches, query
    assert found.matches[0].name == expected
    assert found.note == ""


async def test_turtle_comes_with_its_parameters(kb: asyncpg.Pool) -> None:
    turtle = (await lookup_ta_strategy(query="海龟")).matches[0]
    assert turtle.parameters["system1_entry"] == 20 and turtle.parameters["system2_entry"] == 55
    assert turtle.parameters["stop_atr"] == 2.0 and "ATR" in turtle.indicators
    assert turtle.origin == "builtin"


async def test_nothing_found_is_said(kb: asyncpg.Pool) -> None:
    found = await lookup_ta_strategy(query="zzzz qqqq")
    assert found.matches == [] and "save_ta_strategy" in found.note


async def test_save_then_find_then_update(kb: asyncpg.Pool) -> None:
    reg = _registry()
    saved = await reg.call("save_ta_strategy", {
        "name": "Keltner channel breakout", "aliases": ["肯特纳通道突破"],
        "description": "Buy a close above the upper Keltner channel in a rising market.",
        "indicators": ["KC", "ATR"], "parameters": {"length": 20, "atr_mult": 2.0}})
    assert saved.ok, saved.content
    again = await reg.call("save_ta_strategy", {
        "name": "keltner channel BREAKOUT", "description": "the same name, other case"})
    assert not again.ok and "exists; update it instead" in again.content
    found = await lookup_ta_strategy(query="肯特纳")
    assert found.matches[0].name == "Keltner channel breakout"
    assert found.matches[0].origin == "agent"
    updated = await update_ta_strategy(name="Keltner channel breakout",
                                       parameters={"atr_mult": 2.5, "trend_sma": 50})
    assert updated.parameters == {"length": 20, "atr_mult": 2.5, "trend_sma": 50}
    assert updated.aliases == ["肯特纳通道突破"]


async def test_bad_updates_are_refused_and_change_nothing(kb: asyncpg.Pool) -> None:
    reg = _registry()
    missing = await reg.call("update_ta_strategy", {"name": "no such", "rules": "x"})
    assert not missing.ok and "no strategy named 'no such'" in missing.content
    empty = await reg.call("update_ta_strategy", {"name": "Turtle breakout"})
    assert not empty.ok and "nothing to change" in empty.content
    short = await reg.call("save_ta_strategy", {"name": "X", "description": "too short"})
    assert not short.ok and "invalid arguments" in short.content
    turtle = await StrategiesRepo(kb).get("turtle breakout")
    assert turtle is not None and turtle.parameters["system1_entry"] == 20


async def test_seeding_keeps_edits(kb: asyncpg.Pool) -> None:
    await lookup_ta_strategy(query="turtle")
    await update_ta_strategy(name="Turtle breakout", parameters={"stop_atr": 3.0})
    assert await StrategiesRepo(kb).seed(STARTING_SET) == 0
    turtle = await StrategiesRepo(kb).get("Turtle breakout")
    assert turtle is not None and turtle.parameters["stop_atr"] == 3.0


async def test_without_a_database_lookup_searches_the_starting_set() -> None:
    configure(DataConfig())
    found = await lookup_ta_strategy(query="海龟")
    assert found.matches[0].name == "Turtle breakout" and "starting set" in found.note
    reg = _registry()
    out = await reg.call("save_ta_strategy", {"name": "Something", "description":
                                              "a strategy that cannot be stored"})
    assert not out.ok and "needs the database" in out.content
