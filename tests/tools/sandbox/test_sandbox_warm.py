"""The warm start: runs taken by a spare (started ahead, modules imported) give what cold runs
give, survive the spare's death, and leave no process behind once the sandbox is closed."""

from __future__ import annotations

import os
import signal

from tests import warm_bullpen
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
        spare = await warm.pending_spare()
        assert spare is not None and spare.alive  # the next one waits, modules imported
        second = await warm.run(RSI, frames={"df": df})
        assert cold.ok and first.ok and second.ok
        assert first.result == second.result == cold.result
        same = {k for k in cold.isolation if k not in ("RLIMIT_CPU", "RLIMIT_NPROC")}
        assert {k: first.isolation[k] for k in same} == {k: cold.isolation[k] for k in same}
        assert first.isolation["jail"] == "bubblewrap" and first.isolation["seccomp"]

        # the waiting spare dies: the next run still answers (cold) and a new spare follows
        dead = await warm.pending_spare()
        assert dead is not None
        os.killpg(dead.proc.pid, signal.SIGKILL)
        await dead.proc.wait()
        third = await warm.run(RSI, frames={"df": df})
        assert third.ok and third.result == cold.result
        fresh = await warm.pending_spare()
        assert fresh is not None and fresh.alive and fresh.proc.pid != dead.proc.pid
    finally:
        await warm.aclose()
    assert warm_bullpen.descendants() == []


async def test_a_warm_run_starts_from_a_clean_state() -> None:
    """What one run changes in pandas does not reach the next: each is a fresh process."""
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
