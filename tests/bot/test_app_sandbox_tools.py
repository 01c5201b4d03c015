"""The app wires the sandboxed tools in: run_ta_script and the strategies tools are offered,
runs take a warm spare in the OS jail, and closing the app ends it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests import warm_bullpen
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
    assert [p for p in warm_bullpen.descendants()
            if "--spare" in " ".join(p.cmdline())] == []


async def test_without_the_jail_the_app_says_so_and_runs_no_code(
        make_app: Callable[..., Any], monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
        caplog: pytest.LogCaptureFixture) -> None:
    """A host without bubblewrap: start-up says the sandboxed tools are off and why, and a
    script that reaches the sandbox anyway (a registry from before) is refused, not run."""
    from tools.sandbox import jail

    monkeypatch.setenv("PATH", str(tmp_path))
    jail.forget_probe()
    try:
        with caplog.at_level(logging.ERROR, logger="bot.app"):
            async with make_app() as app:
                assert any("run_ta_script and generated tools are OFF" in r.getMessage()
                           and "bubblewrap" in r.getMessage() for r in caplog.records)
                run = await default_sandbox().run("result = 1")
                assert run.status == "blocked" and run.refused_by == "os jail"
                assert app.registry is not None
    finally:
        monkeypatch.undo()
        jail.forget_probe()
