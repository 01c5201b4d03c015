"""Prompts. Static parts first so provider prompt caches hit; the date goes last.

The system prompt is written in the question's language (`SYSTEM_BY_LANG`): a small model
answers in the language it is instructed in far more often than in the one it is asked to use.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

from core.words import norm

UNIT_RULE = (
    "Units: 1 billion = 10亿 (not 1亿); 1亿 = 100 million. Raw yuan figures divided by 1e8 "
    "give 亿. Always state the unit and the data's date."
)

SYSTEM = f"""You are Bullpen, a financial research analyst for Chinese A-shares and US stocks.
Answer in the user's language. Every number you state must come from a tool result in this
conversation; never compute or invent figures yourself - call a tool. Cite the source and
date a tool reports for each figure. Be concise: short paragraphs, a small table when it helps.
{UNIT_RULE}
Not investment advice: say so once when you give a view on buying or selling."""

SYSTEM_ZH = """你是 Bullpen，一名研究 A 股和美股的金融分析师。请用简体中文回答。
你说的每个数字都必须来自本次对话中的工具结果；不要自己计算或编造数字，需要数据就调用工具。
每个数字都要写明工具给出的日期和来源。单位要准确：涨跌额是货币金额（元、美元），涨跌幅才是百分比（%）。
1 billion = 10亿（不是 1亿）；1亿 = 1 亿元 = 100 million。回答要简洁：短段落，必要时用小表格。
对买卖给出看法时，说明一次：不构成投资建议。"""

SYSTEM_BY_LANG = {"en": SYSTEM, "zh": SYSTEM_ZH}

# a small model's extra rules: it copied tool results back as its answer (about 225 tokens),
# and gave today's date (the last line of the prompt) as the date of the data
SMALL_RULES = {
    "en": "Answer in one or two plain sentences: each figure with the date the tool result "
          "gives it. Never copy a tool result or JSON into your answer. The date of the data "
          "is the date in the tool result, not today's date. For a period, give its first and "
          "last close, the change in percent, and its high and low, from the summary.",
    "zh": "用一两句简体中文回答：每个数字都写上工具结果给出的日期。不要把工具结果或 JSON 抄进回答。"
          "数据的日期是工具结果里的日期，不是今天的日期。问一段时间时，写出摘要里的起止收盘价、涨跌幅、"
          "最高价和最低价。",
}

PLANNING = """Before any tools run, decide how to answer the user's latest message.
If it is small talk or needs no market data, reply exactly `ANSWER:` followed by your reply.
Otherwise reply `PLAN:` followed by at most five short steps naming the tools you will call.
Only these tools exist: {tools}
Do not call tools now."""

CONTINUE = """Your answer was cut off at the length limit. Continue exactly where it stopped,
without repeating anything, and finish briefly."""

USE_TOOLS = """Your answer states figures ({figures}) that no tool returned in this conversation.
Call the tool that gives them now, then answer with the tool's figures and date; or answer
without figures."""

NO_TOOL = """This question needs market data and you called no tool. Call the tool that gives
the data now, then answer with its figures and date."""

FAST = """You are Bullpen in fast mode: answer in one short reply from what you know and the
conversation so far. Say plainly when a figure may be out of date. Answer in the user's
language."""

SUMMARIZE = """Summarise the conversation below for your own future reference: the user's
goals, the symbols discussed, figures already found (with dates), and open questions.
At most 250 words. Keep any earlier summary's facts that still matter."""


LANGUAGE = {
    "zh": "你的回答不是中文。请用简体中文重新回答同样的内容，数字和日期保持不变。",
    "en": "Your answer is not in English. Write the same answer again in English, with the "
          "same figures and dates.",
}

UNITS = """Your answer writes {figures} as a percentage, but in the tool results that number is
a price move in currency ({fields}), not a percent. Write the answer again with the right
units: the change in currency, and the percent change from the field that holds percent."""

UNITS_PCT = """Your answer writes {figures} as an amount of money, but in the tool results that
number is a percent change ({fields}). Write the answer again with the right units: the
percent change with a % sign, and the change in currency from the field that holds it."""

WRONG_INSTRUMENT = """Your answer gives {pairs}. In the tool results those figures belong to
another instrument. Write the answer again with each instrument's own figures."""
CURRENCY = """Your answer writes {figures} in another currency than the tool results give it in
({currency}). Write the answer again with the currency the tool results give."""

DATES = """Your answer gives figures without their date. Write it again and state the date the
tool results give for each figure ({dates})."""

WRONG_DATES = """Your answer gives the date {wrong} for its data, but the tool results are dated
{dates}. Today's date is not the date of the data. Write the answer again with the date the
tool results give for each figure."""

NO_FIGURE = """The question asks for figures and the tool results above hold them, but your
answer states none. Answer again in one or two plain sentences with the figures the tool
results give, and their date."""
FACTS = "\nThe tool results say:\n{facts}"


def no_figure(facts: Sequence[str]) -> str:
    """The send-back for an answer without figures, with the tool results' own figures
    spelt out (the 1.5B apologised after a good call: the table above was too long for it to
    find the summary in)."""
    return NO_FIGURE + (FACTS.format(facts="\n".join(f"- {f}" for f in facts[:3]))
                        if facts else "")


# a small model is told which instruments the question names (it may not know 英伟达 is NVDA)
# and which period it asks about, as the tools' `period` takes it (it read "the last 3 months"
# as no period and "近一年" as the whole history)
SYMBOLS_HINT = {"en": "Symbols in this question: {symbols}", "zh": "问题中的代码：{symbols}"}
PERIOD_HINT = {"en": "period asked: {period}", "zh": "问的时段：{period}"}
HINT = {"en": "\n\n({parts})", "zh": "\n\n（{parts}）"}
HINT_JOIN = {"en": "; ", "zh": "；"}

# after a small model repeated a tool call: its result is already above
ANSWER_NOW = {
    "en": "The tool result you need is above. Answer the question now in one or two plain "
          "sentences, not JSON: the figures and the date it gives. Do not call a tool again.",
    "zh": "你需要的工具结果就在上面。现在用一两句简体中文回答问题，不要写 JSON："
          "写出它给出的数字和日期。不要再调用工具。",
}


def question_hint(symbols: Sequence[str], lang: str, period: str | None = None) -> str:
    """The line appended to a small model's question: the instruments it names and the
    period it asks about ("" when it names neither)."""
    lang = norm(lang)
    parts = [*([SYMBOLS_HINT[lang].format(symbols=", ".join(symbols[:6]))] if symbols else []),
             *([PERIOD_HINT[lang].format(period=period)] if period else [])]
    return HINT[lang].format(parts=HINT_JOIN[lang].join(parts)) if parts else ""


def answer_now(lang: str) -> str:
    return ANSWER_NOW[norm(lang)]


def system_for(lang: str, *, small: bool = False) -> str:
    base = SYSTEM_BY_LANG[norm(lang)]
    return base + "\n" + SMALL_RULES[norm(lang)] if small else base


def tool_signature(schema: dict[str, Any]) -> str:
    """`name(arg, optional?)`: how the planner sees an offered tool."""
    fn = schema["function"]
    params = fn.get("parameters", {})
    required = set(params.get("required", []))
    args = ", ".join(a if a in required else a + "?" for a in params.get("properties", {}))
    return f"{fn['name']}({args})"


def planning(schemas: Sequence[dict[str, Any]]) -> str:
    """The planning instruction with the tools that will be offered, names and arguments."""
    listed = "; ".join(tool_signature(s) for s in schemas) or "none"
    return PLANNING.format(tools=listed)


def units(figures: list[str], fields: list[str]) -> str:
    return UNITS.format(figures=", ".join(figures[:4]), fields=", ".join(fields[:4]))


def units_pct(figures: list[str], fields: list[str]) -> str:
    return UNITS_PCT.format(figures=", ".join(figures[:4]), fields=", ".join(fields[:4]))


def wrong_instrument(found: list[tuple[str, str, str]]) -> str:
    return WRONG_INSTRUMENT.format(pairs="; ".join(
        f"{figure} for {said}, but {figure} is {holder}'s" for figure, said, holder in found[:3]))


def currency(figures: list[str], codes: list[str]) -> str:
    return CURRENCY.format(figures=", ".join(figures[:4]),
                           currency=", ".join(dict.fromkeys(codes)))


def dates(found: list[str]) -> str:
    return DATES.format(dates=", ".join(found[:3]))


def wrong_dates(wrong: list[str], found: list[str]) -> str:
    return WRONG_DATES.format(wrong=", ".join(wrong[:3]),
                              dates=", ".join(found[:3]) or "different")


def use_tools(figures: list[str]) -> str:
    return USE_TOOLS.format(figures=", ".join(figures[:6])) if figures else NO_TOOL


def system_prompt(base: str, today: date, extra: str = "") -> str:
    tail = f"\nToday's date: {today.isoformat()}."
    return base + ("\n" + extra if extra else "") + tail
