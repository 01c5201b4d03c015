"""One way to find instruments in text (issue 29 item 4, everywhere): `find_symbols` (what the
debate, plan mode and the offline analyst are given) reads a sentence as
`analyst.understanding` does, so `/debate Nvidea` debates NVDA, 上证指数 is 000001.SH through
the debate and plan mode, and `/plan 上证指数 1d` plans the index, never 平安银行 (000001).
Real symbols directory, real data packs, no LLM except a scripted one for plan mode."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date

import pytest

from analyst.ict_answer import ict_answer
from analyst.offline import OfflineAnalyst
from analyst.plan_mode import PlanMode
from analyst.understanding import understand
from bot import commands
from bot.commands.questions import as_question
from bot.symbols_bridge import find_symbols
from core.agent.turn import Turn, TurnOptions
from core.events import Done, Event, ToolStarted
from core.testing import MemoryRecorder, ScriptedLLM, text
from debate.mode import DebateMode, parse_request
from tools import build_registry
from tools.data import DataConfig, configure


@pytest.fixture(autouse=True)
def _offline_data() -> Iterator[None]:
    configure(DataConfig())
    yield
    configure(DataConfig())


SENTENCES = [
    "Nvidea stock price", "how is nvidia and amd doing", "Apple's risk factors in its latest 10-K",
    "苹果怎么样", "上证指数和沪深300对比", "上证指数和平安银行", "000001 最近走势",
    "debate 上证指数",
    "腾讯控股股价", "I want to know how is the market", "I love my dji drone", "News about Apple",
    "特斯拉最近一年涨了多少", "compare AAPL and MSFT",
]


@pytest.mark.parametrize("sentence", SENTENCES)
def test_find_symbols_reads_a_sentence_as_the_understanding_does(sentence: str) -> None:
    assert find_symbols(sentence) == understand(sentence).symbols


@pytest.mark.parametrize(("sentence", "codes"), [
    ("Nvidea", ["NVDA"]),
    ("Nvidea is it a buy?", ["NVDA"]),
    ("how is nvidia and amd doing", ["NVDA", "AMD"]),
    ("苹果怎么样", ["AAPL"]),
    ("上证指数 1d", ["000001.SH"]),
    ("沪指和平安银行", ["000001.SH", "000001"]),
    ("I love my dji drone", []),
    ("News", []),
])
def test_sentences_in_every_mode_find_what_the_analyst_finds(sentence: str,
                                                              codes: list[str]) -> None:
    assert find_symbols(sentence) == codes


def _debate(find: object = find_symbols) -> DebateMode:
    return DebateMode(llm=None, registry=build_registry(), make_pdf=False,
                      today=lambda: date(2025, 6, 30), find_symbols=find)  # type: ignore[arg-type]


@pytest.mark.parametrize("finder", ["bridge", "default"])
def test_debate_nvidea_resolves_nvda(finder: str) -> None:
    """`/debate Nvidea` from the chat (the bridge) and from `bullpen debate` (the debate's own
    default finder): the misspelt name is NVIDIA."""
    q = as_question(commands.parse("/debate Nvidea"))
    assert q is not None and q.mode == "debate"
    mode = _debate(find_symbols if finder == "bridge" else None)
    symbol, question = mode.resolve(parse_request(q.text))
    assert symbol.code == "NVDA" and question == ""


def test_debate_on_the_index_word_inside_a_question_is_the_index() -> None:
    """"/debate 现在上证指数值得买吗": 上证指数 inside a sentence is the SSE Composite; the
    debate's ticker is 000001.SH (its own bars), never Ping An Bank."""
    from debate.evidence import qualified

    symbol, _ = _debate().resolve(parse_request("现在上证指数值得买吗"))
    assert (symbol.kind, symbol.exchange) == ("index", "SH")
    assert qualified(symbol).code == "000001.SH"


async def test_debate_nvidea_runs_on_nvda() -> None:
    rec = MemoryRecorder()
    turn = Turn(text="Nvidea", history=[], recorder=rec, lang="en")
    events: list[Event] = [e async for e in _debate().run(turn)]
    done = events[-1]
    assert isinstance(done, Done), done
    assert "NVDA" in done.text and "Unknown" not in done.text


def _plan_question(lang: str = "en") -> tuple[str, TurnOptions]:
    q = as_question(commands.parse("/plan 上证指数 1d"))
    assert q is not None and q.mode == "plan"
    return q.text, q.options


@pytest.mark.parametrize("lang", ["en", "zh"])
async def test_offline_plan_of_the_sse_composite_plans_the_index(lang: str) -> None:
    text_, options = _plan_question()
    analyst = OfflineAnalyst(registry=build_registry(), find_symbols=find_symbols,
                             ict_answer=ict_answer)
    rec = MemoryRecorder()
    events = [e async for e in analyst.run(Turn(text=text_, history=[], recorder=rec,
                                                 lang=lang, options=options))]
    done = events[-1]
    assert isinstance(done, Done)
    assert "上证指数 (000001.SH)" in done.text and "平安银行" not in done.text
    assert "2736.02" in done.text  # the index's last close (2024-09-19), not the bank's 9.81


async def test_plan_mode_asks_the_tool_for_the_index_not_the_bank() -> None:
    """Plan mode with a model: the command's argument goes through the finder, so the ICT tool
    is called on 000001.SH and the model sees the index's bars."""
    text_, options = _plan_question()
    llm = ScriptedLLM([text('{"wait": "no valid setup"}')])
    mode = PlanMode(llm=llm, registry=build_registry(), find_symbols=find_symbols,
                    default_interval="1d")
    rec = MemoryRecorder()
    events = [e async for e in mode.run(Turn(text=text_, history=[], recorder=rec, lang="en",
                                             options=options))]
    started = next(e for e in events if isinstance(e, ToolStarted))
    assert started.arguments["symbol"] == "000001.SH"
    tool = next(m for m in rec.messages if m.role == "tool")
    digest = json.loads(tool.content)
    assert digest["name"] == "上证指数" and digest["last_close"] > 1000
