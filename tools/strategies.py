"""The strategies knowledge base as tools: `lookup_ta_strategy`, `save_ta_strategy`,
`update_ta_strategy` over `ta_strategies` (seeded with `strategy_book.STARTING_SET` on first
use). Without a database (a bare CLI call) lookup searches the starting set in memory."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, Field

from core.errors import DataUnavailable, InvalidArguments
from core.store.strategies import StrategiesRepo, Strategy, search_text
from tools.data.config import get_config
from tools.models import tool
from tools.strategy_book import STARTING_SET

ParamValue = float | int | str | bool | list[float] | list[int]
# pools already seeded (held, so a new pool never reuses a seeded one's id)
_seeded: dict[int, Any] = {}


class StrategyInfo(BaseModel):
    name: str
    aliases: list[str]
    description: str
    indicators: list[str]
    parameters: dict[str, Any]
    rules: str = ""
    source_url: str = ""
    origin: str = Field(description="builtin (the starting set), agent or user")


class StrategyLookup(BaseModel):
    query: str
    matches: list[StrategyInfo]
    note: str = ""


def _info(s: Strategy) -> StrategyInfo:
    return StrategyInfo(name=s.name, aliases=s.aliases, description=s.description,
                        indicators=s.indicators, parameters=s.parameters, rules=s.rules,
                        source_url=s.source_url, origin=s.origin)


async def repo() -> StrategiesRepo | None:
    """The repository on the data layer's pool (seeded once per pool), or None without one."""
    pool = get_config().pool
    if pool is None:
        return None
    strategies = StrategiesRepo(pool)
    if _seeded.get(id(pool)) is not pool:
        await strategies.seed(STARTING_SET)
        _seeded[id(pool)] = pool
    return strategies


def search_starting_set(query: str, limit: int) -> list[Strategy]:
    """The same matching as the database (exact, substring both ways, any word), in memory."""
    text = query.strip().lower()
    words = {w for w in text.replace("/", " ").split() if len(w) > 1}
    scored: list[tuple[float, str, Strategy]] = []
    for s in STARTING_SET:
        names = [n.lower() for n in [s.name, *s.aliases]]
        hay = search_text(s.name, s.aliases)
        score = (4.0 if text in names else 0.0) + (2.0 if text and text in hay else 0.0)
        score += 1.0 if text and any(n.startswith(text) for n in names) else 0.0
        score += 1.5 if any(len(n) >= 2 and n in text for n in names) else 0.0
        score += 0.1 * sum(w in hay or w in s.description.lower() for w in words)
        if score > 0:
            scored.append((score, s.name, s))
    scored.sort(key=lambda t: (-t[0], t[1]))
    return [s for _, _, s in scored[:limit]]


@tool(label="Looking up the strategy {query}", tags=["strategies"])
async def lookup_ta_strategy(
    query: str, limit: Annotated[int, Field(ge=1, le=10)] = 3,
) -> StrategyLookup:
    """Find technical-analysis strategies in the knowledge base by name or alias, in English or
    Chinese (e.g. "turtle", "海龟", "MACD金叉", "Bollinger squeeze"): rules, indicators and
    parameters to use in run_ta_script.

    Args:
        query: a strategy name, alias or a few words describing it.
        limit: how many matches to return.
    """
    if not query.strip():
        raise InvalidArguments("say which strategy to look up, e.g. 'turtle' or '海龟'")
    strategies = await repo()
    if strategies is None:
        found = search_starting_set(query, limit)
        note = "no database: searched the built-in starting set only"
    else:
        found = await strategies.search(query, limit=limit)
        note = ""
    if not found:
        note = (note + "; " if note else "") + "no strategy matches; save_ta_strategy adds one"
    return StrategyLookup(query=query, matches=[_info(s) for s in found], note=note)


async def _need_repo() -> StrategiesRepo:
    strategies = await repo()
    if strategies is None:
        raise DataUnavailable("the strategies knowledge base needs the database",
                              provider="postgres")
    return strategies


@tool(label="Saving the strategy {name}", tags=["strategies", "write"])
async def save_ta_strategy(
    name: Annotated[str, Field(min_length=2, max_length=120)],
    description: Annotated[str, Field(min_length=10, max_length=2000)],
    aliases: Annotated[list[str], Field(max_length=20)] | None = None,
    indicators: Annotated[list[str], Field(max_length=20)] | None = None,
    parameters: dict[str, ParamValue] | None = None,
    rules: Annotated[str, Field(max_length=4000)] = "",
    source_url: str = "",
) -> StrategyInfo:
    """Add a new technical-analysis strategy to the knowledge base (refused if the name exists:
    use update_ta_strategy).

    Args:
        name: the strategy's name, e.g. "Keltner channel breakout".
        description: what it does, in a sentence or two.
        aliases: other names, in English and Chinese, e.g. ["肯特纳通道突破"].
        indicators: indicators it uses, e.g. ["KC", "ATR"].
        parameters: its parameters with usual values, e.g. {"length": 20, "atr_mult": 2}.
        rules: entry, exit and stop rules.
        source_url: where it is described.
    """
    strategies = await _need_repo()
    saved = await strategies.save(Strategy(
        name=name, aliases=[a.strip() for a in aliases or [] if a.strip()],
        description=description, indicators=indicators or [], parameters=parameters or {},
        rules=rules, source_url=source_url, origin="agent"))
    return _info(saved)


@tool(label="Updating the strategy {name}", tags=["strategies", "write"])
async def update_ta_strategy(
    name: str,
    description: str | None = None,
    aliases: list[str] | None = None,
    indicators: list[str] | None = None,
    parameters: dict[str, ParamValue] | None = None,
    rules: str | None = None,
    source_url: str | None = None,
) -> StrategyInfo:
    """Change a strategy in the knowledge base; only the fields given change, and `parameters`
    are merged into the existing ones.

    Args:
        name: the strategy's exact name (lookup_ta_strategy finds it).
        description: new description.
        aliases: the full new list of aliases.
        indicators: the full new list of indicators.
        parameters: parameters to add or change, e.g. {"stop_atr": 2.5}.
        rules: new rules text.
        source_url: new source.
    """
    changes = {k: v for k, v in {
        "description": description, "aliases": aliases, "indicators": indicators,
        "parameters": parameters, "rules": rules, "source_url": source_url,
    }.items() if v is not None}
    if not changes:
        raise InvalidArguments("nothing to change: give at least one field")
    strategies = await _need_repo()
    return _info(await strategies.update(name, changes))
