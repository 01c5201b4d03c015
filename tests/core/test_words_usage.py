"""The catalogue against the product's source: every key is used, every key used exists, and no
module outside the catalogue branches on the language again."""

from __future__ import annotations

import ast
import contextlib
import io
import re
import tokenize
from collections.abc import Iterator, Mapping
from functools import cache
from pathlib import Path

from core.words import NAMESPACES, catalogue

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "tools", "ict", "analyst", "debate", "podcast", "jobs", "bot", "adapters")
# the catalogue, its run-time helpers, and the one module that owns number and date conventions
OWNERS = ("core/words/", "core/localize.py", "core/numbers.py")

# Keys built at run time as prefix + name, with the place that builds them. The name comes from
# data (an interval, a column, a provider, a budget's reason), so each key's name must be written
# somewhere in the product as a literal ("1d", "volume", "daily_tokens") for the key to count as
# used. Localized prefixes are not in this list: see LOCALIZED.
DYNAMIC: dict[str, str] = {
    "chat.budget_": "bot/budget_gateway.py (the budget a refusal names: decision.reason)",
    "chat.rate_": "bot/budget_gateway.py (the rate a refusal names: its kind)",
    "chat.subscribe_": "bot/commands/subscriptions.py (why a subscription was refused)",
    "chat.metric_": "analyst/offline.py, analyst/offline_data.py (a multiple the data cannot give)",
    "chat.currency_": "analyst/offline_data.py (the currency of a P/E's price and EPS)",
    "labels.": "core/agent/labels.py (a notice a mode attaches to its answer)",
    "src.provider_": "core/localize.py source_label (a DataSource's provider)",
    "ta.interval_": "analyst/format.py (a bar interval)",
    "ta.col_": "analyst/format.py (a bars table's column)",
    "ta.ind_": "analyst/format.py (an indicator's field)",
    "ict.iv_": "analyst/ict_answer.py (an ICT interval)",
    "ict.a_": "analyst/ict_answer.py (words_of: t[name] for the ICT answer's lines)",
    "ict.check_": "analyst/ict_answer.py (a checklist item's key from ict.stack)",
    "offline.iv_": "analyst/offline.py (a snapshot series' interval)",
    "offline.market_": "analyst/offline.py (a market the coverage lists)",
    "startup.market_": "bot/cli/startup.py (a market the data line spans)",
    "errors.": "core/agent/runner.py (_WHY: the kind of a model failure)",
    "voice.": "bot/voice/decode.py message_for (an AudioError subclass's `key`)",
    "offline.t_": "analyst/offline.py (words_of: w[name] for the coverage table)",
    "offline.line_": "analyst/offline_data.py (a statement line: _LINES)",
    "offline.dcf_": "analyst/offline_data.py (a DCF input)",
    "debate.action_": "podcast/items.py (a debate's verdict: BUY, HOLD, SELL)",
    "debate.expert_": "debate/offline.py (an expert of the panel)",
    "debate.phase_": "debate/bull_bear.py (a bull/bear argument's phase: opening, rebuttal)",
    "debate.analyst_": "debate/bull_bear.py (a bull/bear analyst's side: bull_1, bear_2)",
    "podcast.action_": "podcast/writer.py (a verdict as the podcast says it)",
    "podcast.market_": "podcast/writer.py (the market the day's tickers trade in)",
    "podcast.idx_": "podcast/writer.py (an index the day's tickers belong to)",
    "podcast.expert_": "podcast/writer.py (an expert of the panel)",
    "podcast.metric_": "podcast/writer.py (a debate metric the section quotes)",
    "podcast.index_": "podcast/market.py (an index the opening names)",
    "plan.": "analyst/plan_mode.py (words_of: s[name] for the plan's lines)",
    "report.": "jobs/report.py (words_of: w[name] for the report's many lines)",
    "subs.error_": "jobs/schedule.py (ScheduleError's key)",
    "subs.days_": "jobs/schedule.py (a weekly schedule's day: its recurrence)",
    "subs.calendar_": "jobs/schedule.py (a trading-day schedule's exchange calendar)",
    "web.tool_": "core/localize.py tool_label (a tool call's progress line, by the tool's name)",
}
# Prefixes `core.localize.localize` replaces in English text the tools write: a key is used when
# the fixed part of its English appears in the product's source (the tool that writes it).
LOCALIZED: dict[str, str] = {
    "phrase.": "core/localize.py localize's default: the data layer's phrases",
    "ta.sig_": "analyst/format.py: the signals tools.indicators writes",
    "ta.ind_name_": "analyst/format.py: an indicator's name",
    "ict.h_": "analyst/ict_answer.py: an ICT horizon",
    "ict.d_": "analyst/ict_answer.py: the checklist's details and sessions ict writes",
}

# Files whose language branches other changes of issue 30 are moving into the catalogue (PDF
# rendering, voice, model errors, start-up, the web page): the lead removes each from this list
# once that change is merged.
MOVED_ELSEWHERE: tuple[str, ...] = ()
# Language tags as data, not as a branch: the tag a value is stored or checked under.
NOT_A_BRANCH: dict[str, str] = {
    "bot/eval/": "the eval's questions are tagged with their language, scored by it, and carry "
                 "the phrases expected in each: an oracle kept apart from the catalogue",
    "bot/benches/stt.py": "the speech benchmark groups its notes by the language spoken",
    "bot/benches/stt_zh.py": "the Mandarin speech benchmark counts notes by the language heard",
    "bot/benches/stt_speed.py": "the speech speed benchmark picks its English notes by language",
    "core/agent/prompts.py": "what the model is told, in the language it must answer in: "
                             "instructions to a model, not words to a person",
    "core/agent/language.py": "which language a text is written in (a check, not words)",
    "core/testing.py": "the in-memory twin's coverage table, one per language, as data",
    "adapters/discord.py": "Discord's own locale codes for each catalogue language (the menu's "
                           "localizations): a mapping of tags, not words",
    "bot/voice/": "a note is decoded by the language spoken (which model, prompt and matching it "
                  "gets); what voice says to a person is the catalogue's voice.*",
}


def _read(rel: str) -> str:
    return (ROOT / rel).read_text(encoding="utf-8")


@cache
def sources() -> dict[str, str]:
    """The product's modules, the catalogue's own left out."""
    return {rel: _read(rel) for package in PACKAGES
            for rel in sorted(p.relative_to(ROOT).as_posix()
                              for p in (ROOT / package).rglob("*.py"))
            if not rel.startswith("core/words/")}


def _strings(text: str) -> Iterator[str]:
    """The string constants of a module and the literal parts of its f-strings."""
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        if tok.type == tokenize.STRING:
            with contextlib.suppress(ValueError, SyntaxError):
                value = ast.literal_eval(tok.string)
                if isinstance(value, str):
                    yield value
        elif tok.type == tokenize.FSTRING_MIDDLE:
            yield tok.string


@cache
def literals() -> frozenset[str]:
    return frozenset(s for text in sources().values() for s in _strings(text))


def _chunks(template: str) -> list[str]:
    """A template's stretches with no {field} in them."""
    return [c.strip() for c in re.split(r"\{[^}]*\}", template) if len(c.strip()) >= 2]


def _written(template: str) -> bool:
    """Whether the product writes this English: one of its fixed stretches is a whole literal
    or word sequence in the source, or a literal of six characters or more lies inside one."""
    for chunk in _chunks(template):
        inside = re.compile(r"(?<![A-Za-z])" + re.escape(chunk) + r"(?![A-Za-z])")
        if any(inside.search(lit) or (len(lit.strip()) >= 6 and lit.strip() in chunk)
               for lit in literals()):
            return True
    return False


# Namespaces whose words are said outside the Python source, with the test that checks them.
ELSEWHERE: dict[str, str] = {
    "web.": "tests/adapters/test_web_page_words.py (the page's scripts ask for them by name; "
            "every tool has its label)",
}
# Literals shaped like a key that are not one.
NOT_KEYS: dict[str, str] = {
    "web.page": "tools/data/web_provider.py, tools/research.py (the page fetcher's dataset)",
}


def _unused(words: Mapping[str, Mapping[str, str]]) -> list[str]:
    unused = []
    for key, entry in words.items():
        if key in literals() or key.startswith(tuple(ELSEWHERE)):
            continue
        dynamic = next((p for p in DYNAMIC if key.startswith(p)), None)
        if dynamic and key.removeprefix(dynamic) in literals():
            continue
        localized = next((p for p in LOCALIZED if key.startswith(p)), None)
        if localized and _written(entry["en"]):
            continue
        unused.append(key)
    return sorted(unused)


def test_every_key_is_used() -> None:
    unused = _unused(catalogue())
    assert not unused, "keys nothing says: " + ", ".join(unused)


def test_the_usage_check_sees_an_unused_key() -> None:
    made_up = {"chat.never_said": {"en": "x", "zh": "x"},
               "ta.interval_7y": {"en": "7y", "zh": "7年"},
               "phrase.never_written": {"en": "a phrase no tool writes", "zh": "x"}}
    assert _unused(made_up) == sorted(made_up)


def test_the_dynamic_prefixes_are_built_where_the_list_says() -> None:
    for prefix, where in {**DYNAMIC, **LOCALIZED}.items():
        files = re.findall(r"[\w/]+\.py", where)
        assert any(prefix in _read(f) for f in files), (prefix, where)


_KEY = re.compile(r"(?:{})\.\w+".format("|".join(NAMESPACES)))


def test_every_key_the_source_names_exists() -> None:
    """Every literal shaped like a key (adapters left out: they say nothing themselves and
    call their SDK's `chat.update`)."""
    prefixes = (*DYNAMIC, *LOCALIZED)
    missing = sorted({f"{path}: {key}" for path, text in sources().items()
                      if not path.startswith("adapters/")
                      for key in set(_strings(text)) if _KEY.fullmatch(key)
                      if key not in catalogue() and key not in prefixes
                      and key not in NOT_KEYS})
    assert not missing, "\n".join(missing)


_BRANCH = re.compile(r"""[=!]=\s*["'](?:zh|en)["']|startswith\(\s*["']zh["']\)|["']zh["']\s*:"""
                     r"""|\bis_zh\(|\blang_key\(""")


# A line may choose by language something that is not words (which name of a company a reader
# knows) when it says so in a comment starting with this.
NOT_WORDS = "# not words:"


def test_no_module_branches_on_the_language() -> None:
    allowed = (*OWNERS, *MOVED_ELSEWHERE, *NOT_A_BRANCH)
    found = [f"{path}:{n}: {line.strip()}"
             for path, text in sources().items() if not path.startswith(allowed)
             for n, line in enumerate(text.splitlines(), 1)
             if _BRANCH.search(line) and NOT_WORDS not in line]
    assert not found, "say it through core.words instead:\n" + "\n".join(found)


def test_the_guard_sees_a_branch() -> None:
    for line in ('zh = lang == "zh"', "if lang.startswith('zh'):", 'X = {"en": "a", "zh": "b"}',
                 "sep = '' if is_zh(lang) else ' '"):
        assert _BRANCH.search(line), line
