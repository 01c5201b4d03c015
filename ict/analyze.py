"""`analyze`: the whole deterministic ICT reading of one series of bars."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import numpy as np
import numpy.typing as npt
import pandas as pd

from ict._arrays import BarArrays
from ict._validate import validated_arrays
from ict.dealing_range import build_dealing_range
from ict.errors import ICTInputError
from ict.fvg import build_fvgs
from ict.levels import build_levels
from ict.liquidity import build_liquidity
from ict.order_blocks import build_order_blocks
from ict.sessions import build_sessions
from ict.structure import build_structure, detect_structure
from ict.swings import build_swings, detect_swings
from ict.timeframes import INTERVAL_MINUTES, bar_end, normalize_interval
from ict.types import BarSummary, ICTAnalysis, ICTOptions, Meta, SessionTemplate, Swings

# A bar-to-bar step longer than this counts as a gap (weekends and holidays included).
_GAP_SECONDS: Final[dict[str, float]] = {
    "daily": 4 * 86400.0, "weekly": 10 * 86400.0, "monthly": 35 * 86400.0,
}
# Plausible median bar spacing, in seconds, per interval (for the spacing warning).
_SPACING: Final[dict[str, tuple[float, float]]] = {
    "daily": (0.5 * 86400, 4 * 86400), "weekly": (5 * 86400, 9 * 86400),
    "monthly": (27 * 86400, 32 * 86400),
}


def _slice(
    index: pd.DatetimeIndex, data: dict[str, npt.NDArray[Any]], start: int, stop: int
) -> tuple[pd.DatetimeIndex, dict[str, npt.NDArray[Any]]]:
    return index[start:stop], {k: v[start:stop] for k, v in data.items()}


def analyze(
    bars: pd.DataFrame,
    *,
    interval: str,
    session: SessionTemplate = "NY",
    options: ICTOptions | Mapping[str, Any] | None = None,
) -> ICTAnalysis:
    """Analyse OHLCV `bars` (timezone-aware index of bar open times) at `interval`.

    Pure and causal: the same bars and options give the same result, and every event is
    reported with the bar whose close made it knowable, so analysing `bars[:k]` reports exactly
    the events of the full analysis confirmed before bar k (see `ict.causality`).

    Raises ICTInputError for unusable input (see `ict._validate`). Fewer bars than a pivot
    window is not an error: the result is empty where swings are needed and says so in
    `meta.warnings`.
    """
    opts = ICTOptions.from_value(options)
    iv = normalize_interval(interval)
    if session not in ("NY", "LDN", "CN"):
        raise ICTInputError(f"session must be 'NY', 'LDN' or 'CN', not {session!r}")
    index, data = validated_arrays(bars)
    warnings: list[str] = []

    current_bar: BarSummary | None = None
    includes_current = False
    if opts.as_of is not None:
        as_of = pd.Timestamp(opts.as_of)
        if index[-1] > as_of:
            raise ICTInputError(f"bars run past as_of ({index[-1]} > {as_of})")
        if bar_end(index[-1], iv) > as_of:
            current_bar = BarArrays(index[-1:], {k: v[-1:] for k, v in data.items()}).summary(0)
            if opts.include_current_bar:
                includes_current = True
            else:
                index, data = _slice(index, data, 0, len(index) - 1)
                if len(index) == 0:
                    raise ICTInputError("the only bar is still forming; nothing closed to "
                                        "analyse (set include_current_bar to use it)")
    if opts.lookback_bars is not None and len(index) > opts.lookback_bars:
        index, data = _slice(index, data, len(index) - opts.lookback_bars, len(index))

    ba = BarArrays(index, data)
    n = ba.n
    need_minor = 2 * opts.minor_window + 1
    need_major = 2 * opts.major_window + 1
    if n < need_minor:
        warnings.append(f"only {n} bar(s): a minor pivot needs {need_minor}, so there are no "
                        "swings, structure, order blocks, liquidity pools or dealing range")
    elif n < need_major:
        warnings.append(f"only {n} bar(s): a major pivot needs {need_major}, so there is no "
                        "major structure and no order blocks")

    ns = np.asarray(index.as_unit("ns").asi8, dtype=np.int64)
    step_s = np.diff(ns) / 1e9
    nominal = INTERVAL_MINUTES[iv] * 60.0
    gap_limit = _GAP_SECONDS.get(iv, 1.5 * nominal)
    gaps = int((step_s > gap_limit).sum())
    largest_gap = float(step_s.max()) if len(step_s) else 0.0
    if len(step_s) >= 3:
        median = float(np.median(step_s))
        lo, hi = _SPACING.get(iv, (0.9 * nominal, 1.1 * nominal))
        if not lo <= median <= hi:
            warnings.append(f"bars are spaced {median:g}s apart (median) but interval {iv} "
                            f"means {nominal:g}s; check the interval")
    zero_volume = int((ba.volume == 0).sum())
    if zero_volume == n:
        warnings.append("volume is zero on every bar (volume is not used by the detectors)")

    major = detect_swings(ba, opts.major_window)
    minor = detect_swings(ba, opts.minor_window)
    major_ev = detect_structure(ba, major, range_window=opts.range_window,
                                displacement_factor=opts.displacement_factor)
    minor_ev = detect_structure(ba, minor, range_window=opts.range_window,
                                displacement_factor=opts.displacement_factor)
    last_end = bar_end(index[-1], iv).to_pydatetime()
    analysis = ICTAnalysis(
        meta=Meta(
            symbol=opts.symbol,
            interval=iv,
            timezone=str(index.tz),
            bars=n,
            start=ba.time(0),
            end=ba.time(n - 1),
            last_bar=ba.summary(n - 1),
            last_closed_bar_time=ba.time(n - 2) if includes_current and n > 1 else (
                None if includes_current else ba.time(n - 1)),
            includes_current_bar=includes_current,
            current_bar=current_bar,
            gaps=gaps,
            largest_gap_seconds=largest_gap,
            zero_volume_bars=zero_volume,
            average_range=float(ba.mean_range(opts.range_window)[-1]),
            warnings=tuple(warnings),
            options=opts.to_dict(),
        ),
        swings=Swings(build_swings(ba, major), build_swings(ba, minor)),
        structure=build_structure(ba, major_ev, swings="major", window=opts.major_window),
        internal_structure=build_structure(ba, minor_ev, swings="minor",
                                           window=opts.minor_window),
        order_blocks=build_order_blocks(ba, major_ev, refinement=opts.ob_refinement,
                                        validity_period=opts.validity_period,
                                        range_window=opts.range_window),
        fvgs=build_fvgs(ba, mode=opts.fvg_mode, range_window=opts.range_window),
        liquidity=build_liquidity(ba, minor, major, mode=opts.liquidity_mode,
                                  tolerance=opts.equal_tolerance,
                                  range_window=opts.range_window),
        dealing_range=build_dealing_range(ba, major, minor),
        sessions=build_sessions(ba, interval_minutes=INTERVAL_MINUTES[iv], template=session,
                                max_windows=opts.max_session_windows, last_bar_end=last_end),
        levels=build_levels(ba, interval_minutes=INTERVAL_MINUTES[iv],
                            includes_current_bar=includes_current),
    )
    return analysis
