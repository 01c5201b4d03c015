"""`bullpen bench sandbox`: what isolation costs per run.

Ours: `Sandbox.run` (AST check, child process with limits, namespaces and the runtime guard,
JSON files in and out). Cases: start-up (`result = 1`: the child, its interpreter and the
guard, nothing imported); a cold round trip of a real function (RSI(14) with pandas-ta over 500
NVDA daily bars, which needs pandas and pandas-ta imported in the child); the same round trip
warm (a spare with them imported, ready and waiting, as the app runs it between questions);
and warm back to back (the next spare is still importing when the run comes). Each case is
measured with the OS jail (bubblewrap + seccomp, as shipped) and without it (limits and
namespaces only: what isolation cost before the jail), alternating in the same run. The peer:
an in-process call of the same compiled code over the same frame. Ratios are ours / peer
(medians): lower is better; `jail_cost` is jailed / unjailed: the price of the wall.
"""

from __future__ import annotations

import asyncio
import statistics
import time
import warnings
from typing import Any

import numpy as np

RSI_CODE = ("import pandas_ta as ta\n"
            "rsi = ta.rsi(df['close'], length=14)\n"
            "result = {'last': float(rsi.iloc[-1]), 'mean': float(rsi.mean())}\n")


def _stats(samples_ms: list[float]) -> dict[str, float]:
    arr = np.asarray(samples_ms, dtype=float)
    return {"median_ms": round(float(statistics.median(samples_ms)), 2),
            "p99_ms": round(float(np.percentile(arr, 99)), 2),
            "min_ms": round(float(arr.min()), 2), "n": len(samples_ms)}


def _in_process(code: Any, df: Any) -> Any:
    import pandas as pd
    import pandas_ta

    ns: dict[str, Any] = {"df": df, "pd": pd, "np": np, "ta": pandas_ta}
    exec(code, ns)  # the peer: the same code, no isolation
    return ns["result"]


async def _measure(policy: Any, df: Any, repeat: int) -> dict[str, Any]:
    from tools.sandbox import Sandbox

    sandbox = Sandbox(policy=policy)
    startup: list[float] = []
    trips: list[float] = []
    await sandbox.run("result = 1")  # warm the page cache for the interpreter
    out: Any = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        first = await sandbox.run("result = 1")
        startup.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        out = await sandbox.run(RSI_CODE, frames={"df": df})
        trips.append((time.perf_counter() - t0) * 1000)
        if not (first.ok and out.ok):
            raise RuntimeError(f"sandbox run failed: {first.message()} / {out.message()}")
    warm = Sandbox(policy=policy, warm=True)
    ready: list[float] = []
    back_to_back: list[float] = []
    try:
        t0 = time.perf_counter()
        await warm.run("result = 1")  # the first spare
        first_ms = (time.perf_counter() - t0) * 1000
        for _ in range(repeat):
            await warm.pending_spare()  # between questions: the spare is waiting
            t0 = time.perf_counter()
            got = await warm.run(RSI_CODE, frames={"df": df})
            ready.append((time.perf_counter() - t0) * 1000)
            t0 = time.perf_counter()
            again = await warm.run(RSI_CODE, frames={"df": df})
            back_to_back.append((time.perf_counter() - t0) * 1000)
            if not (got.ok and again.ok) or got.result != out.result:
                raise RuntimeError(f"warm sandbox run failed: {got.message()}")
    finally:
        await warm.aclose()
    return {"startup": _stats(startup), "round_trip": _stats(trips),
            "warm_round_trip": _stats(ready), "warm_back_to_back": _stats(back_to_back),
            "warm_first_run_ms": round(first_ms, 1), "isolation": out.isolation,
            "value": out.result}


async def run(*, repeat: int = 10) -> dict[str, Any]:
    from tools import snapshot
    from tools.sandbox import SandboxPolicy

    df = snapshot.load("NVDA").iloc[-500:][["open", "high", "low", "close", "volume"]]
    jailed = await _measure(SandboxPolicy(), df, repeat)
    unjailed = await _measure(SandboxPolicy(os_jail=False), df, repeat)
    sandboxed_value = jailed.pop("value")
    unjailed.pop("value")
    code = compile(RSI_CODE, "<peer>", "exec")
    local = df.copy()
    local.index = local.index.tz_localize(None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        peer_value = await asyncio.to_thread(_in_process, code, local)  # imports, warm-up
    peer: list[float] = []
    for _ in range(max(repeat, 20)):
        t0 = time.perf_counter()
        peer_value = _in_process(code, local)
        peer.append((time.perf_counter() - t0) * 1000)
    theirs = _stats(peer)

    def ratio(case: dict[str, Any]) -> float:
        return round(float(case["median_ms"]) / max(theirs["median_ms"], 1e-6), 1)

    cases = ("startup", "round_trip", "warm_round_trip", "warm_back_to_back")
    import os

    return {
        "bench": "sandbox",
        "repeat": repeat,
        "load_average_1m": round(os.getloadavg()[0], 2),
        "direction": "ratios are ours / peer and jailed / unjailed medians: lower is better",
        "jailed": jailed,
        "unjailed": unjailed,
        "peer": "in-process exec of the same code over the same frame (modules already "
                "imported)",
        "peer_round_trip": theirs,
        "ratio_median": {c: ratio(jailed[c]) for c in cases if c != "startup"},
        "jail_cost": {c: round(jailed[c]["median_ms"] / max(unjailed[c]["median_ms"], 1e-6), 2)
                      for c in cases},
        "same_answer": bool(abs(sandboxed_value["last"] - peer_value["last"]) < 1e-9),
    }
