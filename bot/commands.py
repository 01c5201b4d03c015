"""Slash commands shared by every platform. Everything that is not a command goes to the
conversation's mode; some commands (/fast, /debate, /ict, /chart, /plan) are questions with a
mode or an intent attached."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from core.errors import InvalidArguments
from core.types import MODES
from core.words import t

COMMANDS: tuple[tuple[str, str], ...] = (
    ("start", "Start and show help"),
    ("help", "What I can do"),
    ("mode", "Answer mode: normal, debate or fast"),
    ("new", "Start a new conversation"),
    ("stop", "Stop the current answer"),
    ("fast", "One quick answer"),
    ("debate", "Analysts debate a question"),
    ("ict", "ICT analysis: /ict SYMBOL [TF]"),
    ("chart", "Price chart: /chart SYMBOL [RANGE]"),
    ("plan", "Trade plan: /plan SYMBOL [TF]"),
    ("link", "Link accounts across platforms"),
    ("unlink", "Undo a link"),
    ("usage", "Spend, budget and reset times"),
    ("admin", "Admins: usage, allow, block, budget"),
    ("lang", "Language: en or zh"),
    ("watchlist", "Your watchlist: /watchlist [add|remove SYMBOLS]"),
    ("subscribe", "Scheduled report: /subscribe [SYMBOLS] [at HH:MM] [tradingdays] [pdf]"),
    ("subscriptions", "This chat's subscriptions"),
    ("unsubscribe", "Stop a subscription: /unsubscribe ID|all"),
    ("tz", "Your time zone: /tz Asia/Shanghai"),
    ("report", "The report now: /report [SYMBOLS]"),
    ("podcast", "The daily podcast now: /podcast [SYMBOLS] [pdf]"),
    ("ta", "Run a TA script: /ta SYMBOL, then a python block"),
    ("tools", "Tools the model wrote for itself"),
    ("web", "A sign-in link to the web page; /web logout"),
    ("share", "Publish this conversation as a read-only link"),
    ("unshare", "Revoke this chat's share links"),
)
KNOWN = {name for name, _ in COMMANDS}

_COMMAND = re.compile(r"^/([A-Za-z_]+)(?:@\w+)?(?:\s+(.*))?$", re.S)


@dataclass(frozen=True)
class Command:
    name: str
    args: str = ""

    @property
    def known(self) -> bool:
        return self.name in KNOWN


def parse(text: str) -> Command | None:
    m = _COMMAND.match(text.strip())
    if not m:
        return None
    return Command(m.group(1).lower(), (m.group(2) or "").strip())


def help_text(lang: str) -> str:
    return t("chat.help", lang)


@dataclass(frozen=True)
class Question:
    """A command that becomes a question for the agent. /ict and /chart name a tool's job, so
    they run in normal mode (the tool loop, or the offline analyst) whatever the chat's mode."""

    text: str
    mode: str | None = None
    options: dict[str, str] = field(default_factory=dict)


def timeframe_known(tf: str) -> bool:
    """Whether `tf` (from /ict or /plan) is a timeframe or interval the ICT analyzer knows."""
    from tools.ict_tool import chat_timeframe  # pandas and the analyzer: only when asked

    try:
        chat_timeframe(tf)
    except InvalidArguments:
        return False
    return True


def as_question(cmd: Command) -> Question | None:
    """The question a command stands for, or None when it needs arguments it lacks."""
    if cmd.name in ("fast", "debate"):
        return Question(cmd.args, mode=cmd.name) if cmd.args else None
    if cmd.name == "ict" and cmd.args:
        sym, _, tf = cmd.args.partition(" ")
        tf = tf.strip() or "1d"
        return Question(f"ICT analysis of {sym} on the {tf} chart", mode="normal",
                        options={"intent": "ict", "symbol": sym, "interval": tf})
    if cmd.name == "plan" and cmd.args:
        sym, _, tf = cmd.args.partition(" ")
        tf = tf.strip() or "1d"
        return Question(f"Trade plan for {sym} on the {tf} chart", mode="plan",
                        options={"intent": "plan", "plan": "1", "symbol": sym, "interval": tf})
    if cmd.name == "chart" and cmd.args:
        sym, _, rng = cmd.args.partition(" ")
        rng = rng.strip() or "6mo"
        return Question(f"Chart {sym} over {rng}", mode="normal",
                        options={"intent": "chart", "symbol": sym, "period": rng})
    return None


USAGE = {
    "fast": "/fast QUESTION", "debate": "/debate QUESTION", "ict": "/ict SYMBOL [TF]",
    "plan": "/plan SYMBOL [TF]", "chart": "/chart SYMBOL [RANGE]",
}
MODE_CHOICES = ", ".join(MODES)
