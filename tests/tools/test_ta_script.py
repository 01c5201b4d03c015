"""`run_ta_script` over snapshot bars: an RSI divergence scan on NVDA, charts as files, and
failures returned to the model as text it can act on."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from core import context
from core.tools import ToolRegistry
from tools import snapshot
from tools.ta_script import run_ta_script

DIVERGENCE_SCAN = '''
import pandas_ta as ta

rsi = ta.rsi(df["close"], length=14)
w = 5
low, high = df["low"], df["high"]
is_low = low == low.rolling(2 * w + 1, center=True).min()
is_high = high == high.rolling(2 * w + 1, center=True).max()
found = []
for kind, pivots, series in (("bullish", low[is_low], low), ("bearish", high[is_high], high)):
    dates = list(pivots.index)
    for a, b in zip(dates, dates[1:]):
        pa, pb, ra, rb = series[a], series[b], rsi[a], rsi[b]
        if pd.isna(ra) or pd.isna(rb):
            continue
        if kind == "bullish" and pb < pa and rb > ra:
            found.append({"kind": kind, "from": str(a.date()), "to": str(b.date()),
                          "price": [pa, pb], "rsi": [ra, rb]})
        if kind == "bearish" and pb > pa and rb < ra:
            found.append({"kind": kind, "from": str(a.date()), "to": str(b.date()),
                          "price": [pa, pb], "rsi": [ra, rb]})
result = {"last_rsi": rsi.iloc[-1], "divergences": found}
'''


def _rsi(close: pd.Series) -> pd.Series:
    """RSI(14) by hand (Wilder's smoothing), to check the sandbox's numbers."""
    delta = close.diff()
    gain = delta.clip(lower=0).ewm(alpha=1 / 14, adjust=False).mean()
    loss = (-delta.clip(upper=0)).ewm(alpha=1 / 14, adjust=False).mean()
    return 100 - 100 / (1 + gain / loss)


async def test_rsi_divergence_scan_over_nvda_daily_bars() -> None:
    out = await run_ta_script(symbol="NVDA", code=DIVERGENCE_SCAN, bars=750)
    assert out.symbol == "NVDA" and out.interval == "1d" and out.bars == 750
    assert out.source.offline and out.last == "2025-02-14"
    bars = snapshot.load("NVDA").iloc[-750:]
    rsi = _rsi(bars["close"])
    rsi.index = rsi.index.date
    scan = out.result
    assert scan["last_rsi"] == pytest.approx(float(rsi.iloc[-1]), abs=0.1)
    divergences = scan["divergences"]
    assert {d["kind"] for d in divergences} == {"bullish", "bearish"}
    for d in divergences:
        (pa, pb), (ra, rb) = d["price"], d["rsi"]
        assert (pb < pa and rb > ra) if d["kind"] == "bullish" else (pb > pa and rb < ra)
        # the RSI values are the real ones at those dates, not made up
        assert ra == pytest.approx(float(rsi[pd.Timestamp(d["from"]).date()]), abs=0.1)
        assert rb == pytest.approx(float(rsi[pd.Timestamp(d["to"]).date()]), abs=0.1)


async def test_charts_are_sent_as_files_and_capped_at_three() -> None:
    code = ("from matplotlib.figure import Figure\n"
            "for i in range(4):\n"
            "    fig = Figure()\n"
            "    fig.add_subplot().plot(df['close'].to_numpy())\n"
            "    fig.savefig(f'c{i}.png')\n"
            "result = {'closes': len(df)}\n")
    ctx = context.RunContext()
    token = context.use(ctx)
    try:
        out = await run_ta_script(symbol="AAPL", code=code, bars=60)
    finally:
        context.reset(token)
    assert out.result == {"closes": 60}
    assert len(out.charts) == 3 and out.charts_dropped == 1
    assert [f.filename for f in ctx.files] == out.charts
    assert all(f.data.startswith(b"\x89PNG") and f.kind == "image" for f in ctx.files)


@pytest.mark.parametrize(("code", "says"), [
    ("import os\nresult = os.getcwd()", "import of 'os' is not allowed"),
    ("x = df['close'].mean()", "must assign its output to a variable named `result`"),
    ("result = df['no_such_column'].mean()", "KeyError"),
    ("result = (", "syntax error"),
    ("", "the script is empty"),
])
async def test_failures_reach_the_model_as_text(code: str, says: str) -> None:
    registry = ToolRegistry([run_ta_script.__tool_spec__])  # type: ignore[attr-defined]
    outcome = await registry.call("run_ta_script", json.dumps({"symbol": "NVDA", "code": code}))
    assert not outcome.ok
    assert outcome.content.startswith("Error: ") and says in outcome.content


async def test_unknown_symbol_is_said() -> None:
    registry = ToolRegistry([run_ta_script.__tool_spec__])  # type: ignore[attr-defined]
    outcome = await registry.call("run_ta_script", {"symbol": "ZZZZQQ", "code": "result = 1"})
    assert not outcome.ok and "ZZZZQQ" in outcome.content
