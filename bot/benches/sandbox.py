"""`bullpen bench sandbox`: what isolation costs per run.

Ours: `Sandbox.run` (AST check, child process with limits, namespaces and the runtime guard,
JSON files in and out). Cases: start-up (`result = 1`: the child, its interpreter and the
guard, nothing imported); a cold round trip of a real function (RSI(14) with pandas-ta over 500
NVDA daily bars, which needs pandas and pandas-ta imported in the child); and the same round
trip warm (forked from a zygote that has them imported, as the app runs it). The peer, measured
in the same run: an in-process call of the same compiled code over the same frame. The ratios
are ours / peer (medians).
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


async def run(*, repeat: int = 10) -> dict[str, Any]:
    from tools import snapshot
    from tools.sandbox import Sandbox

    sandbox = Sandbox()
    df = snapshot.load("NVDA").iloc[-500:][["open", "high", "low", "close", "volume"]]
    startup: list[float] = []
    trips: list[float] = []
    isolation: dict[str, Any] = {}
    sandboxed_value: Any = None
    await sandbox.run("result = 1")  # warm the page cache for the interpreter
    for _ in range(repeat):
        t0 = time.perf_counter()
        first = await sandbox.run("result = 1")
        startup.append((time.perf_counter() - t0) * 1000)
        t0 = time.perf_counter()
        out = await sandbox.run(RSI_CODE, frames={"df": df})
        trips.append((time.perf_counter() - t0) * 1000)
        if not (first.ok and out.ok):
            raise RuntimeError(f"sandbox run failed: {first.message()} / {out.message()}")
        isolation, sandboxed_value = out.isolation, out.result

    warm = Sandbox(warm=True)
    warm_trips: list[float] = []
    try:
        t0 = time.perf_counter()
        await warm.run("result = 1")  # starts the zygote
        zygote_start_ms = (time.perf_counter() - t0) * 1000
        for _ in range(max(repeat, 20)):
            t0 = time.perf_counter()
            out = await warm.run(RSI_CODE, frames={"df": df})
            warm_trips.append((time.perf_counter() - t0) * 1000)
            if not out.ok or out.result != sandboxed_value:
                raise RuntimeError(f"warm sandbox run failed: {out.message()}")
    finally:
        await warm.aclose()

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
    ours, theirs, hot = _stats(trips), _stats(peer), _stats(warm_trips)
    return {
        "bench": "sandbox",
        "repeat": repeat,
        "startup": _stats(startup),
        "round_trip": ours,
        "warm_round_trip": hot,
        "warm_zygote_start_ms": round(zygote_start_ms, 1),
        "peer": "in-process exec of the same code over the same frame (modules already "
                "imported)",
        "peer_round_trip": theirs,
        "ratio_median": round(ours["median_ms"] / max(theirs["median_ms"], 1e-6), 1),
        "warm_ratio_median": round(hot["median_ms"] / max(theirs["median_ms"], 1e-6), 1),
        "same_answer": bool(abs(sandboxed_value["last"] - peer_value["last"]) < 1e-9),
        "isolation": isolation,
    }
