"""/ta (run a TA script over a symbol's bars in the sandbox) and /tools (the generated tools).

    /ta NVDA 1d
    ```python
    import pandas_ta as ta
    result = {"rsi": ta.rsi(df["close"]).iloc[-1]}
    ```
"""

from __future__ import annotations

import json
import re

from bot.commands import command
from bot.commands.context import CommandContext
from core.errors import BullpenError
from tools.evolve.shape import extract_code

MAX_REPLY_JSON = 3000
_BARS = re.compile(r"^(?:bars=)?(\d{2,4})$")

def parse_ta(args: str) -> tuple[str, str, int, str] | None:
    """(symbol, interval, bars, code) from /ta's arguments, or None when something is missing."""
    head, _, rest = args.partition("\n")
    if "```" in head:  # the code started on the first line
        head, fence, tail = head.partition("```")
        rest = fence + tail + "\n" + rest
    words = head.split()
    if not words or not rest.strip():
        return None
    symbol, interval, bars = words[0], "1d", 500
    for word in words[1:]:
        m = _BARS.match(word)
        if m:
            bars = int(m.group(1))
        else:
            interval = word
    code = extract_code(rest)
    return (symbol, interval, bars, code) if code.strip() else None


@command("ta", summary="chat.cmd_ta", usage="chat.use_ta")
async def ta(ctx: CommandContext) -> None:
    from tools.ta_script import execute_script

    parsed = parse_ta(ctx.args)
    if parsed is None:
        await ctx.say(ctx.tr("scripting.usage"))
        return
    symbol, interval, bars, code = parsed
    # one sandbox at a time per person, counted with the person's questions (one person in
    # six group chats does not get six sandboxes)
    release = await ctx.person_turn()
    try:
        out, files = await execute_script(symbol, code, interval=interval,
                                          bars=max(20, min(bars, 5000)))
    except BullpenError as exc:
        await ctx.say(f"⚠️ {exc}")
        return
    finally:
        await release()
    body = json.dumps(out.result, ensure_ascii=False, indent=1)
    if len(body) > MAX_REPLY_JSON:
        body = body[:MAX_REPLY_JSON] + ctx.tr("scripting.cut")
    lines = [f"{out.symbol} {out.interval} · {out.bars} bars {out.first}..{out.last} · "
             f"{out.source.label()}", f"```json\n{body}\n```"]
    if out.printed:
        lines.append(ctx.tr("scripting.printed") + f"\n```\n{out.printed[:1000]}\n```")
    if out.charts_dropped:
        lines.append(ctx.tr("scripting.charts_dropped", n=out.charts_dropped))
    if out.note:
        lines.append(f"_{out.note}_")
    await ctx.say("\n".join(lines))
    for file in files:  # through the gateway: a refused chart goes to the outbox
        await ctx.send_file(file)


@command("tools", summary="chat.cmd_tools")
async def tools_(ctx: CommandContext) -> None:
    artifacts = await ctx.store.tool_artifacts.listing()
    verified = {}
    others: dict[str, int] = {}
    for a in artifacts:  # newest version of each name first
        if a.status == "verified" and a.name not in verified:
            verified[a.name] = a
        elif a.status != "verified":
            others[a.status] = others.get(a.status, 0) + 1
    if not verified:
        lines = [ctx.tr("scripting.no_tools")]
    else:
        lines = [ctx.tr("scripting.tools_head")]
        lines += [f"• {a.name} v{a.version}: {a.description}" for a in verified.values()]
    if others:
        lines.append(ctx.tr("scripting.other_versions", items=", ".join(
            f"{n} {status}" for status, n in sorted(others.items()))))
    await ctx.say("\n".join(lines))
