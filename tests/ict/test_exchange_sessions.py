"""A Shanghai/Shenzhen stock is analysed on its exchange's own sessions (09:30-11:30 and
13:00-15:00 Shanghai time), never on London or New York kill zones; US and FX keep New York's."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import pandas as pd
import pytest
from matplotlib.figure import Figure

import ict
from tools.ict_chart import _kill_zones
from tools.ict_tool import run_ict

SH = "Asia/Shanghai"


def a_share_15m(days: int = 12, seed: int = 3) -> pd.DataFrame:
    """15-minute A-share bars: 09:30-11:30 and 13:00-15:00 Shanghai time on weekdays."""
    opens = []
    for day in pd.bdate_range("2025-06-02", periods=days):
        for start, end in (("09:30", "11:15"), ("13:00", "14:45")):
            opens += list(pd.date_range(f"{day.date()} {start}", f"{day.date()} {end}",
                                        freq="15min", tz=SH))
    index = pd.DatetimeIndex(opens)
    rng = np.random.default_rng(seed)
    close = 10.0 * np.exp(np.cumsum(rng.normal(0, 0.004, len(index))))
    open_ = np.r_[close[0], close[:-1]]
    spread = np.abs(rng.normal(0, 0.002, len(index))) * close
    return pd.DataFrame({"open": open_, "high": np.maximum(open_, close) + spread,
                         "low": np.minimum(open_, close) - spread, "close": close,
                         "volume": rng.integers(1_000, 5_000, len(index)).astype(float)},
                        index=index)


def test_the_market_decides_the_template() -> None:
    assert ict.template_for("cn") == "CN" and ict.template_for("cn", "LDN") == "CN"
    assert ict.template_for("us") == "NY" and ict.template_for("us", "LDN") == "LDN"
    assert ict.template_for("crypto") == "NY" and ict.template_for("fx", "LDN") == "LDN"


@pytest.mark.parametrize(("utc", "zone"), [
    (datetime(2025, 6, 3, 1, 30, tzinfo=UTC), "cn_am"),   # 09:30 Shanghai
    (datetime(2025, 6, 3, 3, 29, tzinfo=UTC), "cn_am"),   # 11:29
    (datetime(2025, 6, 3, 3, 30, tzinfo=UTC), None),      # 11:30: lunch
    (datetime(2025, 6, 3, 4, 59, tzinfo=UTC), None),      # 12:59
    (datetime(2025, 6, 3, 5, 0, tzinfo=UTC), "cn_pm"),    # 13:00
    (datetime(2025, 6, 3, 6, 59, tzinfo=UTC), "cn_pm"),   # 14:59
    (datetime(2025, 6, 3, 7, 0, tzinfo=UTC), None),       # 15:00: closed
    (datetime(2025, 6, 3, 14, 30, tzinfo=UTC), None),     # 10:30 New York: nothing in Shanghai
])
def test_shanghai_sessions_on_the_shanghai_clock(utc: datetime, zone: str | None) -> None:
    assert ict.kill_zone_at(utc, "CN") == zone
    assert ict.session_fit(zone, "CN") == ("preferred" if zone else "off")


def test_an_a_share_analysis_marks_its_exchange_sessions_only() -> None:
    bars = a_share_15m()
    a = ict.analyze(bars, interval="15m", session="CN", options={"max_session_windows": 40})
    s = a.sessions
    assert s.template == "CN" and s.timezone == SH and s.applicable
    assert s.windows and {w.name for w in s.windows} == {"cn_am", "cn_pm"}
    for w in s.windows:
        start = w.start.astimezone(ict.sessions.SHANGHAI)
        end = w.end.astimezone(ict.sessions.SHANGHAI)
        assert (start.strftime("%H:%M"), end.strftime("%H:%M")) in (
            ("09:30", "11:30"), ("13:00", "15:00"))
        seg = bars.iloc[w.start_index:w.end_index + 1]
        assert w.high == seg["high"].max() and w.low == seg["low"].min()
    assert s.current_kill_zone == "cn_pm" and s.session_fit == "preferred"
    # the same bars on New York's clock land in its "asia" zone: what the chart used to shade
    ny = ict.analyze(bars, interval="15m", options={"max_session_windows": 40}).sessions
    assert {w.name for w in ny.windows} & {"asia", "london"}


def test_the_chart_shades_and_labels_the_exchange_sessions() -> None:
    bars = a_share_15m()
    a = ict.analyze(bars, interval="15m", session="CN")
    ax = Figure().add_subplot()
    _kill_zones(ax, bars.iloc[-len(bars):], a)
    labels = ax.get_legend_handles_labels()[1]
    assert labels == ["09:30-11:30", "13:00-15:00"] or labels == ["13:00-15:00", "09:30-11:30"]
    assert not any(n in " ".join(labels) for n in ("london", "ny_am", "ny_pm", "asia"))


async def test_the_tool_gives_a_shanghai_stock_its_sessions_and_a_us_symbol_new_yorks() -> None:
    run = await run_ict("浦发银行", "15m")
    assert run.market == "cn" and run.analysis.sessions.template == "CN"
    assert all(w.name in ("cn_am", "cn_pm") for w in run.analysis.sessions.windows)
    btc = await run_ict("BTC-USD", "15m", session="LDN")
    assert btc.analysis.sessions.template == "LDN" and btc.market != "cn"
