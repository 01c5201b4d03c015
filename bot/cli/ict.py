"""`bullpen ict`: the ICT analysis of a symbol (through the data layer) or of an OHLCV CSV.

    bullpen ict NVDA --interval 1d                      human summary
    bullpen ict EURUSD --interval 1h --json --plan      the full analysis and a plan as JSON
    bullpen ict BTC-USD --interval 15m --stack --chart out.png
    bullpen ict --csv bars.csv --interval 1h --json

A SYMBOL is read like the chat reads it (offline: the snapshot of real historical prices, labelled
with its date); each timeframe is built from the source interval of the timeframe table.
The CSV needs columns open, high, low, close, volume (any case) and a timestamp column (named
timestamp/time/datetime/date/ts, or the first column). Naive timestamps are read in `--tz`.
Exit codes: 0 ok, 2 unusable input or no data.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pandas and ict load when the command runs, not for `bullpen --help`
    import pandas as pd

    from ict import ICTAnalysis, PlanProposal

_TIME_NAMES = ("timestamp", "time", "datetime", "date", "ts", "index")


def register(sub: Any) -> None:
    """Add the `ict` subcommand to an argparse subparsers object."""
    p = sub.add_parser("ict", help="ICT / smart-money analysis of a symbol or an OHLCV CSV",
                       description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("symbol", nargs="?", help="symbol to analyse, e.g. NVDA, EURUSD, BTC-USD")
    p.add_argument("--csv", type=Path, help="OHLCV CSV file")
    p.add_argument("--interval", default="1h", help="bar interval: 1m 5m 15m 30m 1h 4h 1d 1w 1mo")
    p.add_argument("--session", choices=["NY", "LDN"], default="NY")
    p.add_argument("--tz", default="UTC", help="timezone of naive CSV timestamps (default UTC)")
    p.add_argument("--time-column", help="name of the timestamp column")
    p.add_argument("--lookback", type=int, help="analyse only the last N bars (a symbol: "
                   "default from the timeframe table)")
    p.add_argument("--stack", action="store_true",
                   help="a symbol: add the Daily/4H/15m/5m/1m bias stack")
    p.add_argument("--include-current-bar", action="store_true",
                   help="a symbol: keep the still-forming last bar")
    p.add_argument("--fvg-mode", choices=["very_aggressive", "aggressive", "defensive",
                                          "very_defensive"])
    p.add_argument("--refinement", choices=["defensive", "aggressive"],
                   help="order-block zone: candle body (defensive) or wick (aggressive)")
    p.add_argument("--plan", action="store_true", help="add a deterministic trade plan")
    p.add_argument("--chart", type=Path, help="write the annotated chart PNG here")
    p.add_argument("--json", action="store_true", help="print JSON instead of a summary")
    p.set_defaults(func=handler)


def read_csv(path: Path, *, tz: str = "UTC", time_column: str | None = None) -> pd.DataFrame:
    """Bars from a CSV with a timezone-aware index (naive stamps are localised to `tz`)."""
    import pandas as pd

    from ict import ICTInputError

    raw = pd.read_csv(path)
    if raw.empty:
        raise ICTInputError(f"{path} has no rows")
    names = {str(c).strip().lower(): c for c in raw.columns}
    col = time_column if time_column is not None else next(
        (names[n] for n in _TIME_NAMES if n in names), raw.columns[0])
    if col not in raw.columns:
        raise ICTInputError(f"no column {col!r} in {path}")
    values = raw.pop(col)
    try:
        stamps = pd.to_datetime(values)
    except (ValueError, TypeError):
        try:  # mixed UTC offsets (daylight saving) parse as UTC instants
            stamps = pd.to_datetime(values, utc=True)
        except (ValueError, TypeError) as exc:
            raise ICTInputError(f"column {col!r} does not hold timestamps: {exc}") from exc
    index = pd.DatetimeIndex(stamps)
    if index.tz is None:
        try:
            index = index.tz_localize(tz)
        except Exception as exc:  # unknown zone names, nonexistent local times
            raise ICTInputError(f"cannot read timestamps in timezone {tz!r}: {exc}") from exc
    raw.index = index.rename("time")
    return raw


def _tuning(args: argparse.Namespace) -> dict[str, Any]:
    options: dict[str, Any] = {}
    if args.fvg_mode:
        options["fvg_mode"] = args.fvg_mode
    if args.refinement:
        options["ob_refinement"] = args.refinement
    return options


def symbol_handler(args: argparse.Namespace) -> int:
    """`bullpen ict SYMBOL`: bars from the data layer, as the chat tool reads them."""
    from core.errors import BullpenError
    from tools.ict_tool import run_ict

    try:
        run = asyncio.run(run_ict(args.symbol, args.interval, lookback=args.lookback,
                                  session=args.session, stack=args.stack,
                                  include_current_bar=args.include_current_bar,
                                  options=_tuning(args)))
    except BullpenError as exc:
        print(f"bullpen ict: {exc}", file=sys.stderr)
        return 2
    proposal = run.proposal() if args.plan else None
    if args.chart is not None:
        from tools.ict_chart import render_ict_chart

        label = f"{run.name} ({run.symbol})" if run.name else run.symbol
        args.chart.write_bytes(render_ict_chart(run.frame.bars, run.analysis,
                                                title=f"{label} · {run.timeframe.key} · ICT",
                                                market=run.market))
    stack = run.stack
    if args.json:
        out: dict[str, Any] = {"analysis": run.analysis.to_dict(),
                               "source": run.source.model_dump(mode="json"),
                               "source_interval": run.frame.source_interval, "notes": run.notes}
        if stack is not None:
            out["stack"] = stack.stack.to_dict()
            out["stack_missing"] = stack.missing
        if proposal is not None:
            out["plan"] = proposal.to_dict()
        print(json.dumps(out, ensure_ascii=False))
        return 0
    print(summary(run.analysis))
    if stack is not None:
        s = stack.stack
        print(f"Bias stack: {s.bias}, grade {s.grade} ({s.score}/100), {s.status}"
              + (f": {s.wait_reason}" if s.wait_reason else ""))
        for iv, why in stack.missing.items():
            print(f"  {iv}: left out ({why})")
    if proposal is not None:
        print(plan_summary(proposal))
    for note in run.notes:
        if note not in run.analysis.meta.warnings:
            print(f"Note: {note}")
    print(f"Source: {run.source.label()}" + (f" ({run.source.note})" if run.source.note else ""))
    if args.chart is not None:
        print(f"chart: {args.chart}")
    return 0


def handler(args: argparse.Namespace) -> int:
    import pandas as pd

    import ict
    from ict import ICTInputError

    if args.csv is None:
        if args.symbol:
            return symbol_handler(args)
        print("bullpen ict: give a SYMBOL or --csv FILE", file=sys.stderr)
        return 2
    options: dict[str, Any] = {"symbol": args.symbol or args.csv.stem, **_tuning(args)}
    if args.lookback is not None:
        options["lookback_bars"] = args.lookback
    try:
        bars = read_csv(args.csv, tz=args.tz, time_column=args.time_column)
        analysis = ict.analyze(bars, interval=args.interval, session=args.session,
                               options=options)
    except FileNotFoundError:
        print(f"bullpen ict: no such file {args.csv}", file=sys.stderr)
        return 2
    except (ICTInputError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError,
            OSError) as exc:
        print(f"bullpen ict: {exc}", file=sys.stderr)
        return 2
    proposal = ict.propose_plan(analysis) if args.plan else None
    if args.chart is not None:
        from tools.ict_chart import render_ict_chart

        args.chart.write_bytes(render_ict_chart(bars, analysis,
                                                title=str(options["symbol"])))
    if args.json:
        out: dict[str, Any] = analysis.to_dict()
        if proposal is not None:
            out = {"analysis": out, "plan": proposal.to_dict()}
        print(json.dumps(out, ensure_ascii=False))
    else:
        print(summary(analysis))
        if proposal is not None:
            print(plan_summary(proposal))
        if args.chart is not None:
            print(f"chart: {args.chart}")
    return 0


def _t(value: Any) -> str:
    import pandas as pd

    return f"{pd.Timestamp(value):%Y-%m-%d %H:%M}"


def summary(a: ICTAnalysis) -> str:
    """A short human reading of an analysis (latest closed bar first)."""
    m = a.meta
    lines = [f"{m.symbol or '?'} · {m.interval} · {m.bars} bars {_t(m.start)} → {_t(m.end)} "
             f"({m.timezone}); last close {m.last_bar.close:g}"]
    s = a.structure
    parts = [f"bias {s.bias}"]
    for label, ev in (("last BOS", s.last_bos), ("last ChoCH", s.last_choch)):
        if ev is not None:
            parts.append(f"{label} {ev.direction} through {ev.level:g} at {_t(ev.confirmed_at)}"
                         + (f" (displaced {ev.displacement:.1f}x)" if ev.displaced else ""))
    lines.append("Structure: " + "; ".join(parts) + f"; internal {a.internal_structure.bias}")
    dr = a.dealing_range
    if dr is not None:
        lines.append(f"Dealing range: {dr.low:g} – {dr.high:g}, EQ {dr.equilibrium:g}, "
                     f"{dr.zone} {dr.pd_percent:.0f}%")
    live = sorted((b for b in a.order_blocks if b.state != "broken"),
                  key=lambda b: -b.score)[:3]
    if live:
        lines.append("Order blocks (best by score):")
        lines += [f"  {b.side} {b.zone_type} {b.bottom:g}–{b.top:g} from {b.event_kind} at "
                  f"{_t(b.confirmed_at)}, {b.state}, score {b.score:.0f}" for b in live]
    open_gaps = [g for g in a.fvgs if g.state != "filled"]
    if open_gaps:
        g = open_gaps[-1]
        lines.append(f"FVGs not filled: {len(open_gaps)} of {len(a.fvgs)}; latest {g.side} "
                     f"{g.bottom:g}–{g.top:g} (CE {g.ce:g}) at {_t(g.time)}, {g.state}")
    liq = a.liquidity
    eqh = [p for p in liq.equal_highs if p.swept_index is None]
    eql = [p for p in liq.equal_lows if p.swept_index is None]
    ext = []
    if liq.external_high is not None:
        ext.append(f"external high {liq.external_high.price:g}")
    if liq.external_low is not None:
        ext.append(f"external low {liq.external_low.price:g}")
    lines.append(f"Liquidity: {len(eqh)} unswept equal-high and {len(eql)} equal-low pools"
                 + (f"; {', '.join(ext)}" if ext else ""))
    lv = [f"{k.name} {k.price:g}{' (swept)' if k.swept_index is not None else ''}"
          for k in a.levels.all()]
    if lv:
        lines.append("Levels: " + ", ".join(lv))
    ss = a.sessions
    if ss.applicable:
        lines.append(f"Session ({ss.template}): last bar "
                     f"{ss.last_bar_time_ny:%H:%M} New York, kill zone "
                     f"{ss.current_kill_zone or 'none'} ({ss.session_fit})")
    for w in m.warnings:
        lines.append(f"Warning: {w}")
    return "\n".join(lines)


def plan_summary(p: PlanProposal) -> str:
    if p.plan is None:
        return f"Plan: none ({p.reason})"
    t = p.plan
    return (f"Plan ({t.timeframe}, {t.horizon}): {t.direction} {t.strategy}; entry {t.entry:g}, "
            f"stop {t.stop:g}, targets {', '.join(f'{x:g}' for x in t.targets)}; "
            f"R:R {t.risk.reward_risk:g}")
