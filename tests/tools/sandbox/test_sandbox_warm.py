"""The warm start: runs forked from a zygote give what cold runs give, survive the zygote's
death, and leave no process behind once the sandbox is closed."""

from __future__ import annotations

import os
import signal

import psutil

from tools import snapshot
from tools.sandbox import Sandbox

RSI = ("import pandas_ta as ta\nrsi = ta.rsi(df['close'], length=14)\n"
       "result = {'rsi': float(rsi.iloc[-1]), 'bars': len(df)}")


async def test_warm_runs_answer_like_cold_ones_and_end_cleanly() -> None:
    df = snapshot.load("NVDA").iloc[-300:]
    cold = await Sandbox().run(RSI, frames={"df": df})
    warm = Sandbox(warm=True)
    try:
        first = await warm.run(RSI, frames={"df": df})
        second = await warm.run(RSI, frames={"df": df})
        assert warm._zygote is not None and warm._zygote.alive
        assert cold.ok and first.ok and second.ok
        assert first.result == second.result == cold.result
        assert first.isolation["net_namespace"] == cold.isolation["net_namespace"]

        # the zygote dies: the next run starts a new one and still answers
        old = warm._zygote.proc.pid
        os.kill(old, signal.SIGKILL)
        await warm._zygote.proc.wait()
        third = await warm.run(RSI, frames={"df": df})
        assert third.ok and third.result == cold.result
        assert warm._zygote is not None and warm._zygote.proc.pid != old
    finally:
        await warm.aclose()
    assert psutil.Process().children(recursive=True) == []


async def test_a_warm_run_starts_from_a_clean_state() -> None:
    """What one run changes in pandas does not reach the next: each is a fresh fork."""
    warm = Sandbox(warm=True)
    try:
        patched = await warm.run("import pandas as pd\npd.set_option('display.max_rows', 3)\n"
                                 "result = pd.get_option('display.max_rows')")
        fresh = await warm.run("import pandas as pd\nresult = pd.get_option('display.max_rows')")
    finally:
        await warm.aclose()
    assert patched.result == 3 and fresh.result == 60


async def test_too_large_results_and_files_are_errors_not_crashes() -> None:
    sandbox = Sandbox()
    big = await sandbox.run("result = [[i] * 1000 for i in range(2000)]")
    assert big.status == "error" and "the result is too large" in big.error
    huge = await sandbox.run("with open('big.bin', 'wb') as f:\n"
                             "    f.write(b'x' * (64 * 1024 * 1024))\nresult = 1")
    assert huge.status == "error" and huge.error_type == "OSError"
    assert "File too large" in huge.error
