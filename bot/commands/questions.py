"""Commands that become a question for the agent: /fast, /debate, /ict, /chart, /plan."""

from __future__ import annotations

from bot.commands import Command, Question, command
from bot.commands.context import CommandContext
from core.agent.turn import TurnOptions
from core.errors import InvalidArguments


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
                        options=TurnOptions(intent="ict", symbol=sym, interval=tf))
    if cmd.name == "plan" and cmd.args:
        sym, _, tf = cmd.args.partition(" ")
        tf = tf.strip() or "1d"
        return Question(f"Trade plan for {sym} on the {tf} chart", mode="plan",
                        options=TurnOptions(intent="plan", symbol=sym, interval=tf))
    if cmd.name == "chart" and cmd.args:
        sym, _, rng = cmd.args.partition(" ")
        rng = rng.strip() or "6mo"
        return Question(f"Chart {sym} over {rng}", mode="normal",
                        options=TurnOptions(intent="chart", symbol=sym, period=rng))
    return None


@command("fast", summary="chat.cmd_fast", usage="chat.use_fast")
@command("debate", summary="chat.cmd_debate", usage="chat.use_debate")
@command("ict", summary="chat.cmd_ict", usage="chat.use_ict")
@command("chart", summary="chat.cmd_chart", usage="chat.use_chart")
@command("plan", summary="chat.cmd_plan", usage="chat.use_plan")
async def question(ctx: CommandContext) -> None:
    q = as_question(ctx.cmd)
    tf = q.options.interval if q is not None else None
    if q is None:
        await ctx.say(ctx.usage())
    elif tf is not None and not timeframe_known(tf):
        await ctx.say(ctx.tr("chat.bad_timeframe", tf=tf))
    else:
        await ctx.enqueue(q)
