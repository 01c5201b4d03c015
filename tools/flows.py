"""A-share money flows: dragon-tiger list, capital flow by order size, northbound, rankings."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Annotated, Literal

from pydantic import BaseModel, Field

from core.errors import DataUnavailable, InvalidArguments
from tools.data import fetcher as fx
from tools.data import providers
from tools.data.models import (
    CapitalFlow,
    DateRangeQuery,
    DragonTiger,
    EmptyQuery,
    FlowRanking,
    Northbound,
    RankingQuery,
    SymbolQuery,
)
from tools.fundamentals import today
from tools.models import tool
from tools.symbol_lookup import resolve_symbol


@tool(label="Fetching the dragon-tiger list", tags=["flows"])
async def get_dragon_tiger(
    symbol: str | None = None,
    start: date | None = None,
    end: date | None = None,
    limit: Annotated[int, Field(ge=1, le=100)] = 30,
) -> DragonTiger:
    """The dragon-tiger list (龙虎榜): stocks with unusual moves and the net buying of the top
    brokers' seats, in 亿元; optionally for one stock.

    Args:
        symbol: an A-share to filter on; default the whole list.
        start: first date (YYYY-MM-DD); default 5 days before end.
        end: last date; default today.
        limit: most entries returned, largest net buying first.
    """
    providers.load()
    end = end or today()
    start = start or end - timedelta(days=5)
    if start > end:
        raise InvalidArguments(f"start {start} is after end {end}")
    if (end - start).days > 92:
        raise InvalidArguments("ask for at most three months of the dragon-tiger list")
    result: DragonTiger = await fx.run("cn.dragon_tiger", DateRangeQuery(start=start, end=end))
    entries = result.entries
    if symbol:
        code = resolve_symbol(symbol).code
        entries = [e for e in entries if e.code == code]
    entries.sort(key=lambda e: -(e.net_buy_yi or 0.0))
    result.entries = entries[:limit]
    return result


class CapitalFlowReport(BaseModel):
    """Net inflow by order size in 亿元 (main = super-large + large orders), oldest first."""

    flow: CapitalFlow
    name: str = ""
    main_net_sum_yi: float | None = Field(default=None, description="over the days shown")
    main_inflow_days: int = 0


@tool(label="Fetching capital flow of {symbol}", tags=["flows"])
async def get_capital_flow(
    symbol: str,
    days: Annotated[int, Field(ge=1, le=120)] = 10,
) -> CapitalFlowReport:
    """Daily capital flow of an A-share by order size (super-large, large, medium, small) in
    亿元, with the main-force net sum over the period.

    Args:
        symbol: A-share code or name.
        days: how many recent trading days.
    """
    providers.load()
    sym = resolve_symbol(symbol)
    if sym.market != "cn":
        raise InvalidArguments("capital flow by order size is available for A-shares")
    flow: CapitalFlow = await fx.run("cn.capital_flow", SymbolQuery(
        code=sym.code, market="cn", exchange=sym.exchange))
    flow.days = flow.days[-days:]
    mains = [d.main_net_yi for d in flow.days if d.main_net_yi is not None]
    return CapitalFlowReport(flow=flow, name=sym.name,
                             main_net_sum_yi=round(sum(mains), 3) if mains else None,
                             main_inflow_days=sum(1 for m in mains if m > 0))


@tool(label="Fetching northbound flows", tags=["flows"])
async def get_northbound_flow(
    top: Annotated[int, Field(ge=0, le=50)] = 10,
) -> Northbound:
    """Stock Connect flows (沪深港通): today's net buying per board in 亿元, and the northbound
    holdings with the largest estimated additions.

    Args:
        top: how many top northbound holdings to include (0 for none).
    """
    providers.load()
    result: Northbound = await fx.run("cn.northbound", EmptyQuery())
    if top and not result.source.offline:  # the offline data has no holdings (its note says)
        try:
            holdings: Northbound = await fx.run("cn.northbound_holdings", EmptyQuery())
            result.top_holdings = holdings.top_holdings[:top]
        except DataUnavailable as exc:
            note = f"top holdings unavailable: {exc}"
            result.source.note = f"{result.source.note}; {note}" if result.source.note else note
    return result


@tool(label="Fetching the capital-flow ranking", tags=["flows"])
async def get_flow_ranking(
    horizon: Literal["today", "5d", "10d"] = "today",
    direction: Literal["inflow", "outflow"] = "inflow",
    limit: Annotated[int, Field(ge=1, le=100)] = 20,
) -> FlowRanking:
    """A-shares ranked by main-force net inflow as a percent of turnover (主力净占比).

    Args:
        horizon: today, 5d or 10d.
        direction: inflow for the largest net buying, outflow for the largest net selling.
        limit: how many stocks.
    """
    providers.load()
    result: FlowRanking = await fx.run("cn.flow_ranking", RankingQuery())
    field = {"today": "main_net_pct_today", "5d": "main_net_pct_5d",
             "10d": "main_net_pct_10d"}[horizon]
    items = [i for i in result.items if getattr(i, field) is not None]
    items.sort(key=lambda i: getattr(i, field), reverse=direction == "inflow")
    result.items = items[:limit]
    return result
