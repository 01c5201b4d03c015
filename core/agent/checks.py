"""The checks an answer passes before it is shown (house rules 5, 12, 16, 17).

- figures: every figure comes from this run's tool results (or the question, or the history);
- a data question was answered with a tool;
- instruments: a figure is given to the instrument whose tool result holds it (not NVDA's
  close written as MSFT's);
- units: a percentage is not a price move in currency that a tool gave as an amount, nor is
  an amount of money a change a tool gave in percent, nor written in another currency than
  the tool's;
- language: the answer is in the question's language;
- dates: an answer with figures says the date of its data (else the tools' date is added
  to it), and a date it states is one the tool results carry (not, say, today's date given
  to data that is as of an earlier close);
- a figure: a question that asks for one, answered after a data tool ran, gives at least one
  (a small model may answer "here is the data" and nothing else, or nothing at all).

The first failed check sends the answer back to the model once, with what to fix; what still
fails after that is labelled, never dressed as a result.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from core.agent import prompts
from core.agent.grounding import (
    figures,
    key_facts,
    percent_as_money,
    states_a_date,
    tool_dates,
    unit_mismatches,
    unsupported_figures,
    wants_data,
    wants_figure,
    wrong_currency,
    wrong_dates,
    wrong_instrument,
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
    # (figure, the instrument the answer gives it to, the one whose result holds it)
    instruments: list[tuple[str, str, str]] = field(default_factory=list)
    units: list[tuple[str, str]] = field(default_factory=list)
    units_pct: list[tuple[str, str]] = field(default_factory=list)  # a percent as money
    currency: list[tuple[str, str]] = field(default_factory=list)  # (figure, tools' currency)
    wrong_language: bool = False
    dates: list[str] = field(default_factory=list)  # the data's dates, when the answer has none
    wrong_dates: list[str] = field(default_factory=list)  # dates stated that no tool gave
    data_dates: list[str] = field(default_factory=list)  # what the tools gave instead
    no_figure: bool = False
    empty_after_tools: bool = False  # nothing at all, with the tools' figures above
    facts: list[str] = field(default_factory=list)  # the tools' figures, for a no-figure answer

    def send_back(self, done: set[str], *, can_use_tools: bool) -> SendBack | None:
        """What to ask the model to fix next (each kind once), or None."""
        if (self.unsupported or self.no_tool) and can_use_tools and "figures" not in done:
            return SendBack("figures", prompts.use_tools(self.unsupported))
        if self.instruments and "instruments" not in done:
            return SendBack("instruments", prompts.wrong_instrument(self.instruments))
        if (self.units or self.units_pct or self.currency) and "units" not in done:
            return SendBack("units", "\n".join(
                [prompts.units([f for f, _ in self.units], [k for _, k in self.units])
                 if self.units else "",
                 prompts.units_pct([f for f, _ in self.units_pct],
                                   [k for _, k in self.units_pct])
                 if self.units_pct else "",
                 prompts.currency([f for f, _ in self.currency], [c for _, c in self.currency])
                 if self.currency else ""]).strip())
        if self.wrong_language and "language" not in done:
            return SendBack("language", prompts.LANGUAGE[self.lang])
        if self.wrong_dates and "dates" not in done:
            return SendBack("dates", prompts.wrong_dates(self.wrong_dates, self.data_dates))
        if (self.no_figure or self.empty_after_tools) and "figure" not in done:
            return SendBack("figure", prompts.no_figure(self.facts))
        return None

    def labels(self, lang: str, *, offered: bool) -> list[str]:
        """The notices the answer is shown with (in the person's language)."""
        return [
            label("unverified", lang, figures=", ".join(self.unsupported[:6]))
            if self.unsupported else label("no_tool", lang) if self.no_tool and offered
            else "",
            label("wrong_instrument", lang, figures="; ".join(
                f"{f} ({said} → {holder})" for f, said, holder in self.instruments[:3]))
            if self.instruments else "",
            label("units", lang, figures=", ".join(f for f, _ in self.units[:4]))
            if self.units else "",
            label("units_pct", lang, figures=", ".join(f for f, _ in self.units_pct[:4]))
            if self.units_pct else "",
            label("currency", lang, figures=", ".join(f for f, _ in self.currency[:4]),
                  currency=", ".join(dict.fromkeys(c for _, c in self.currency)))
            if self.currency else "",
            label("wrong_language", lang) if self.wrong_language else "",
            label("wrong_date", lang, wrong=", ".join(self.wrong_dates[:2]),
                  dates=", ".join(self.data_dates[:2]))
            if self.wrong_dates and self.data_dates else "",
            label("no_figure", lang) if self.no_figure else "",
        ]

    def dated(self, answer: str) -> str:
        """`answer` with the date of its data added when it stated none (in the answer's
        language: the line is part of the answer, stored and copied with it)."""
        if not self.dates:
            return answer
        return answer.rstrip() + "\n\n" + label("as_of", self.lang,
                                                dates=", ".join(self.dates[:2]))


def check_answer(answer: str, *, question: str, lang: str, tool_texts: list[str],
                 also: Iterable[str] = (), tools_used: int = 0, made_files: bool = False
                 ) -> Check:
    """Run every check on a final answer (`made_files`: the tools sent a chart or a file,
    which is then the answer a figure would otherwise be)."""
    also = [question, *also]
    bad = unsupported_figures(answer, tool_texts, also=also)
    has_figures = bool(figures(answer))
    dates = tool_dates(tool_texts) if has_figures and not states_a_date(answer) else []
    wrong = wrong_dates(answer, tool_texts, also=also)
    empty = not answer.strip()  # the 1.5B's answer after a good call was sometimes nothing
    no_figure = (tools_used > 0 and not has_figures and not made_files and bool(tool_texts)
                 and (empty or wants_figure(question)) and bool(figures(" ".join(tool_texts))))
    return Check(
        lang=lang,
        unsupported=bad,
        no_tool=tools_used == 0 and wants_data(question),
        instruments=wrong_instrument(answer, tool_texts, also=also),
        units=unit_mismatches(answer, tool_texts),
        units_pct=percent_as_money(answer, tool_texts),
        currency=wrong_currency(answer, tool_texts),
        wrong_language=bool(answer.strip()) and not written_in(answer, lang),
        dates=dates,
        wrong_dates=wrong,
        data_dates=tool_dates(tool_texts) if wrong else [],
        no_figure=no_figure and not empty,
        empty_after_tools=no_figure and empty,
        facts=key_facts(tool_texts) if no_figure else [],
    )
