"""The app wires the sandboxed tools in: run_ta_script and the strategies tools are offered,
runs take a warm spare in the OS jail, and closing the app ends it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import psutil

from tools.sandbox import default_sandbox


async def test_app_offers_sandbox_tools_and_closes_the_spare(make_app: Callable[..., Any],
                                                              ) -> None:
    async with make_app() as app:
        for name in ("run_ta_script", "lookup_ta_strategy", "save_ta_strategy",
                     "update_ta_strategy"):
            assert name in app.registry
        sandbox = default_sandbox()
        assert sandbox.warm
        outcome = await app.registry.call("run_ta_script", {
            "symbol": "NVDA", "code": "result = round(float(df['close'].iloc[-1]), 2)"})
        assert outcome.ok, outcome.content
        assert '"result":' in outcome.content and '"last":"2025-02-14"' in outcome.content
        turtle = await app.registry.call("lookup_ta_strategy", {"query": "海龟"})
        assert turtle.ok and "Turtle breakout" in turtle.content
        spare = await sandbox.pending_spare()
        assert spare is not None and spare.alive
    assert not default_sandbox().warm  # reset to the plain default
    assert [p for p in psutil.Process().children(recursive=True)
            if "--spare" in " ".join(p.cmdline())] == []
