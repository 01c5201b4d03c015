"""The tools offered per message are compacted once per registry schema, not per message (the
issue 34 profile: 29% of the gateway's message path was picking and deep-copying schemas), and
the reuse never changes what a request carries."""

from __future__ import annotations

from typing import Any

from core.agent.toolpick import compact, fingerprint, pick_schemas, schema_tokens
from core.tools import ToolRegistry, tool


def registry(description: str = "Latest close of a symbol, with its change and date.") -> Any:
    reg = ToolRegistry()

    async def get_quote(symbol: str, period: str = "1d") -> dict[str, Any]:
        return {"symbol": symbol}

    get_quote.__doc__ = description + "\n\n        Args:\n            symbol: ticker\n"
    tool(registry=reg, tags=("market", "quote"))(get_quote)

    @tool(registry=reg, tags=("market", "history"))
    async def get_ohlcv(symbol: str, period: str = "1mo") -> dict[str, Any]:
        """Daily bars of a symbol over a period.

        Args:
            symbol: ticker
            period: how far back
        """
        return {"symbol": symbol}

    return reg


def test_a_second_message_reuses_the_compacted_schemas_byte_for_byte() -> None:
    reg = registry()
    first = pick_schemas("NVDA price", reg)
    again = pick_schemas("AAPL price", reg)
    assert fingerprint(first) == fingerprint(again)
    assert all(a is b for a, b in zip(first, again, strict=True))  # no copy per message
    # what a fresh compact() of each offered tool gives
    offered = {s["function"]["name"] for s in first}
    assert {fingerprint([s]) for s in first} == {
        fingerprint([compact(s)]) for s in reg.schemas() if s["function"]["name"] in offered}


def test_the_budget_counts_the_same_tokens_as_the_request_does() -> None:
    reg = registry()
    both = pick_schemas("NVDA price history", reg)
    need = schema_tokens(both)
    assert len(pick_schemas("NVDA price history", reg, budget_tokens=need)) == 2
    assert len(pick_schemas("NVDA price history", reg, budget_tokens=need - 1)) == 1


def test_another_registry_gets_its_own_schemas() -> None:
    one = pick_schemas("NVDA price", registry())
    other = pick_schemas("NVDA price", registry("Quote of a symbol from another source."))
    names = {s["function"]["name"]: s["function"]["description"] for s in other}
    assert names["get_quote"] == "Quote of a symbol from another source."
    assert fingerprint(one) != fingerprint(other)


def test_a_tool_added_after_a_pick_is_offered_to_the_next_question() -> None:
    reg = registry()
    before = {s["function"]["name"] for s in pick_schemas("NVDA price", reg)}

    @tool(registry=reg, tags=("market", "quote"))
    async def get_quote_hk(symbol: str) -> dict[str, Any]:
        """A Hong Kong quote.

        Args:
            symbol: ticker
        """
        return {"symbol": symbol}

    after = {s["function"]["name"] for s in pick_schemas("NVDA price", reg)}
    assert "get_quote_hk" not in before and after == before | {"get_quote_hk"}


def test_the_needles_only_skip_families_whose_pattern_cannot_match() -> None:
    from core.agent.toolpick import _WORDS, FAMILIES, wanted_families

    questions = ["NVDA P/E and 52-week HIGH", "茅台最近一个月走势和均线", "Why did TSLA fall? NEWS",
                 "Netflix ETF holdings", "fair value gap on the 15m ICT chart", "sEc 10-K filing",
                 "北向资金和主力", "DCF valuation of AAPL", "Good morning, desk", "pe of 600519"]
    questions += [w.replace("\\b", "").replace("?", "").upper()
                  for words in _WORDS.values() for w in words.split("|")]
    for question in questions:
        assert wanted_families(question) == {
            tag for tag, pattern in FAMILIES.items() if pattern.search(question)}, question
