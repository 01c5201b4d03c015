"""The checks an answer passes before it is shown (house rules 5, 12, 16, 17).

- figures: every figure comes from this run's tool results (or the question, or the history);
- a data question was answered with a tool;
- units: a percentage is not a price move in currency that a tool gave as an amount;
- language: the answer is in the question's language;
- dates: an answer with figures says the date of its data (else the tools' date is added
  to it).

The first failed check sends the answer back to the model once, with what to fix; what still
fails after that is labelled, never dressed as a result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.agent import prompts
from core.agent.grounding import (
    figures,
    states_a_date,
    tool_dates,
    unit_mismatches,
    unsupported_figures,
    wants_data,
)
from core.agent.labels import label
from core.agent.language import written_in


@dataclass(frozen=True)
class SendBack:
    kind: str
    prompt: str


@dataclass
class Check:
    lang: str
    unsupported: list[str] = field(default_factory=list)
    no_tool: bool = False
    units: list[tuple[str, str]] = field(default_factory=list)
    wrong_language: bool = False
    dates: list[str] = field(default_factory=list)  # the data's dates, when the answer has none

    def send_back(self, done: set[str], *, can_use_tools: bool) -> SendBack | None:
        """What to ask the model to fix next (each kind once), or None."""
        if (self.unsupported or self.no_tool) and can_use_tools and "figures" not in done:
            return SendBack("figures", prompts.use_tools(self.unsupported))
        if self.units and "units" not in done:
            return SendBack("units", prompts.units([f for f, _ in self.units],
                                                   [k for _, k in self.units]))
        if self.wrong_language and "language" not in done:
            return SendBack("language", prompts.LANGUAGE[self.lang])
        return None

    def labels(self, lang: str, *, offered: bool) -> list[str]:
        """The notices the answer is shown with (in the person's language)."""
        return [
            label("unverified", lang, figures=", ".join(self.unsupported[:6]))
            if self.unsupported else label("no_tool", lang) if self.no_tool and offered
            else "",
            label("units", lang, figures=", ".join(f for f, _ in self.units[:4]))
            if self.units else "",
            label("wrong_language", lang) if self.wrong_language else "",
        ]

    def dated(self, answer: str) -> str:
        """`answer` with the date of its data added when it stated none (in the answer's
        language: the line is part of the answer, stored and copied with it)."""
        if not self.dates:
            return answer
        return answer.rstrip() + "\n\n" + label("as_of", self.lang,
                                                dates=", ".join(self.dates[:2]))


def check_answer(answer: str, *, question: str, lang: str, tool_texts: list[str],
                 also: Iterable[str] = (), tools_used: int = 0) -> Check:
    """Run every check on a final answer."""
    bad = unsupported_figures(answer, tool_texts, also=[question, *also])
    has_figures = bool(figures(answer))
    dates = tool_dates(tool_texts) if has_figures and not states_a_date(answer) else []
    return Check(
        lang=lang,
        unsupported=bad,
        no_tool=tools_used == 0 and wants_data(question),
        units=unit_mismatches(answer, tool_texts),
        wrong_language=bool(answer.strip()) and not written_in(answer, lang),
        dates=dates,
    )
