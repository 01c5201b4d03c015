"""Bad input gives a clear ICTInputError or a documented result, never a crash."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import ict
from ict import ICTInputError
from tests.ict.data import btc_15m_raw, eurusd_hourly, nvda_daily


def _bars(n: int = 50) -> pd.DataFrame:
    return eurusd_hourly().iloc[:n].copy()


def test_error_is_a_value_error_in_one_hierarchy() -> None:
    assert issubclass(ICTInputError, ValueError)
    assert issubclass(ICTInputError, ict.ICTError)
    assert issubclass(ict.PlanValidationError, ICTInputError)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 10])
def test_fewer_bars_than_a_pivot_window_is_a_documented_empty_result(n: int) -> None:
    a = ict.analyze(_bars(n), interval="1h")
    assert a.meta.bars == n
    if n < 5:  # 2 * minor_window + 1
        assert a.swings.minor == () and a.structure.events == () and a.order_blocks == ()
        assert a.dealing_range is None
        assert any("minor pivot needs 5" in w for w in a.meta.warnings)
    elif n < 11:
        assert a.swings.major == () and a.structure.events == ()
        assert any("major pivot needs 11" in w for w in a.meta.warnings)
    a.to_dict()  # still serialisable


def test_no_bars() -> None:
    with pytest.raises(ICTInputError, match="no bars"):
        ict.analyze(_bars().iloc[:0], interval="1h")


def test_naive_index() -> None:
    bars = _bars()
    bars.index = bars.index.tz_localize(None)
    with pytest.raises(ICTInputError, match="naive"):
        ict.analyze(bars, interval="1h")


def test_index_that_is_not_datetime() -> None:
    with pytest.raises(ICTInputError, match="DatetimeIndex"):
        ict.analyze(_bars().reset_index(drop=True), interval="1h")


def test_real_duplicated_and_unsorted_timestamps() -> None:
    raw = btc_15m_raw()  # the shipped file really has both
    with pytest.raises(ICTInputError, match=r"not sorted|duplicated"):
        ict.analyze(raw, interval="15m")
    with pytest.raises(ICTInputError, match="duplicated timestamps"):
        ict.analyze(raw.sort_index(kind="stable"), interval="15m")


def test_unsorted_timestamps() -> None:
    bars = _bars()
    swapped = pd.concat([bars.iloc[:10], bars.iloc[11:12], bars.iloc[10:11], bars.iloc[12:]])
    with pytest.raises(ICTInputError, match=r"not sorted.*position 11"):
        ict.analyze(swapped, interval="1h")


@pytest.mark.parametrize("column", ["open", "high", "low", "close"])
def test_nan_prices(column: str) -> None:
    bars = _bars()
    bars.iloc[7, bars.columns.get_loc(column)] = np.nan
    with pytest.raises(ICTInputError, match=rf"'{column}' has NaN.*position 7"):
        ict.analyze(bars, interval="1h")


def test_infinite_price_and_nan_volume() -> None:
    bars = _bars()
    bars.iloc[3, bars.columns.get_loc("high")] = np.inf
    with pytest.raises(ICTInputError, match="infinite"):
        ict.analyze(bars, interval="1h")
    bars = _bars()
    bars.iloc[3, bars.columns.get_loc("volume")] = np.nan
    with pytest.raises(ICTInputError, match="volume"):
        ict.analyze(bars, interval="1h")


def test_inconsistent_ohlc() -> None:
    bars = _bars()
    bars.iloc[5, bars.columns.get_loc("high")] = bars["low"].iloc[5] - 0.01
    with pytest.raises(ICTInputError, match="inconsistent OHLC"):
        ict.analyze(bars, interval="1h")


def test_missing_and_non_numeric_columns() -> None:
    with pytest.raises(ICTInputError, match=r"missing column.*volume"):
        ict.analyze(_bars().drop(columns=["volume"]), interval="1h")
    bars = _bars().astype({"close": object})
    bars.iloc[2, bars.columns.get_loc("close")] = "n/a"
    with pytest.raises(ICTInputError, match="not numeric"):
        ict.analyze(bars, interval="1h")
    with pytest.raises(ICTInputError, match="DataFrame"):
        ict.analyze([1, 2, 3], interval="1h")  # type: ignore[arg-type]


def test_capitalised_columns_are_accepted() -> None:
    bars = _bars().rename(columns=str.capitalize)
    assert ict.analyze(bars, interval="1h").meta.bars == 50


def test_zero_volume_is_documented_not_an_error() -> None:
    bars = _bars(300)
    bars["volume"] = 0.0
    a = ict.analyze(bars, interval="1h")
    b = ict.analyze(_bars(300), interval="1h")
    assert a.meta.zero_volume_bars == 300
    assert any("volume is zero" in w for w in a.meta.warnings)
    # volume feeds no detector: the reading is the same
    assert ict.knowable(a, 300) == ict.knowable(b, 300)


def test_gaps_are_counted_and_bars_analysed_in_sequence() -> None:
    bars = eurusd_hourly().iloc[:600]  # weekends are real gaps in FX data
    a = ict.analyze(bars, interval="1h")
    assert a.meta.gaps >= 3
    assert a.meta.largest_gap_seconds >= 48 * 3600
    holed = bars.drop(bars.index[30:60])  # a hole in the middle of the week
    h = ict.analyze(holed, interval="1h")
    assert h.meta.gaps == a.meta.gaps + 1
    assert h.meta.bars == 570


def test_wrong_interval_for_the_spacing_warns() -> None:
    a = ict.analyze(nvda_daily().iloc[-100:], interval="1h")
    assert any("check the interval" in w for w in a.meta.warnings)


def test_bad_interval_session_and_options() -> None:
    bars = _bars()
    with pytest.raises(ICTInputError, match="unknown interval"):
        ict.analyze(bars, interval="7h")
    with pytest.raises(ICTInputError, match="session"):
        ict.analyze(bars, interval="1h", session="TOKYO")  # type: ignore[arg-type]
    with pytest.raises(ICTInputError, match="unknown ICT option"):
        ict.analyze(bars, interval="1h", options={"window": 3})
    with pytest.raises(ICTInputError, match="minor_window"):
        ict.analyze(bars, interval="1h", options={"minor_window": 0})
    with pytest.raises(ICTInputError, match="fvg_mode"):
        ict.analyze(bars, interval="1h", options={"fvg_mode": "wild"})
    with pytest.raises(ICTInputError, match="as_of"):
        ict.analyze(bars, interval="1h", options={"as_of": "yesterday"})
    with pytest.raises(ICTInputError, match="run past as_of"):
        ict.analyze(bars, interval="1h", options={"as_of": bars.index[10].isoformat()})


def test_lookback_keeps_the_last_bars() -> None:
    a = ict.analyze(_bars(300), interval="1h", options={"lookback_bars": 100})
    assert a.meta.bars == 100
    assert a.meta.start == _bars(300).index[200]


def test_flat_prices_do_not_crash() -> None:
    idx = pd.date_range("2024-01-02 14:30", periods=60, freq="1min", tz="UTC")
    flat = pd.DataFrame({"open": 1.0, "high": 1.0, "low": 1.0, "close": 1.0, "volume": 0.0},
                        index=idx)
    a = ict.analyze(flat, interval="1m")
    assert a.fvgs == () and a.structure.events == ()
    a.to_dict()
