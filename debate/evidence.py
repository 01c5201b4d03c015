"""The context every debater starts from, gathered by code with no model involved.

Daily bars (and a benchmark for beta) become `PriceMetrics`; a financials tool, when the
registry has one and it answers, adds `Fundamentals`. Each piece registers its source in the
debate's `SourceCatalog`, and `block()` renders it all as the deterministic context text.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

import pandas as pd
from pydantic import BaseModel

from core.errors import BullpenError, DataUnavailable
from core.tools import ToolRegistry
from debate.grounding import SourceCatalog, canonical_args
from debate.metrics import Fundamentals, PriceMetrics, fundamentals_from, metric_rows, price_metrics
from debate.models import ChartSource, DataRef, Metric
from tools.symbol_lookup import ResolvedSymbol

BarsLoader = Callable[[str], Awaitable[pd.DataFrame]]
HISTORY_BARS = 520  # two years of daily bars: 12-month returns plus MA200
RECENT_BARS = 20
BENCHMARKS = {"cn": "000300", "us": "^GSPC"}
FINANCIALS_ARGS: dict[str, object] = {"periods": 8}
CURRENCIES = {"cn": "CNY", "hk": "HKD", "us": "USD"}


async def default_bars(symbol: str) -> pd.DataFrame:
    """Two years of daily bars from the tools' data layer."""
    from tools.market import load_bars

    return await load_bars(symbol, "1d", HISTORY_BARS)


@dataclass
class Evidence:
    symbol: ResolvedSymbol
    bars: pd.DataFrame | None
    price: PriceMetrics
    fundamentals: Fundamentals | None
    catalog: SourceCatalog
    context_ids: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    data_label: str = ""
    offline_data: bool = False

    @property
    def currency(self) -> str:
        return CURRENCIES.get(self.symbol.market, "")

    @property
    def title(self) -> str:
        return f"{self.symbol.name} ({self.symbol.code})" if self.symbol.name else (
            self.symbol.code)

    @property
    def has_data(self) -> bool:
        return self.bars is not None or self.fundamentals is not None

    def metrics(self) -> list[Metric]:
        return metric_rows(self.price, self.fundamentals, self.currency)

    def block(self, *, recent: bool = True) -> str:
        """The context as text: security, provenance, metrics, recent bars, citable sources."""
        lines = [f"Security: {self.title}, {self.symbol.market} {self.symbol.kind}"
                 + (f", prices in {self.currency}" if self.currency else "")]
        if self.data_label:
            lines.append(f"Data: {self.data_label}")
        lines.append("Metrics (computed in code; quote them exactly):")
        lines += [f"- {m.label}: {m.display}" for m in self.metrics() if m.value is not None]
        if recent and self.bars is not None and len(self.bars):
            lines.append(f"Last {min(RECENT_BARS, len(self.bars))} daily bars "
                         "(date open high low close volume):")
            for ts, row in self.bars.iloc[-RECENT_BARS:].iterrows():
                assert isinstance(ts, pd.Timestamp)
                lines.append(f"{ts.date()} {row['open']:.4g} {row['high']:.4g} "
                             f"{row['low']:.4g} {row['close']:.4g} {row['volume']:.0f}")
        if self.notes:
            lines.append("Notes: " + "; ".join(self.notes))
        lines.append("Sources you may cite:")
        lines.append(self.catalog.listing(self.context_ids))
        return "\n".join(lines)


async def _bars_or_note(loader: BarsLoader, symbol: str,
                        notes: list[str], what: str) -> pd.DataFrame | None:
    try:
        df = await loader(symbol)
    except BullpenError as exc:
        notes.append(f"{what} unavailable: {exc}")
        return None
    return df if len(df) else None


async def gather_evidence(symbol: ResolvedSymbol, *, bars_loader: BarsLoader = default_bars,
                          registry: ToolRegistry | None = None) -> Evidence:
    """Load bars, benchmark and financials in parallel and register their sources."""
    notes: list[str] = []
    bench_code = BENCHMARKS.get(symbol.market) if symbol.code != BENCHMARKS.get(
        symbol.market) else None

    async def nothing() -> None:
        return None

    bars, bench, report = await asyncio.gather(
        _bars_or_note(bars_loader, symbol.code, notes, "price history"),
        _bars_or_note(bars_loader, bench_code, notes, f"benchmark {bench_code}")
        if bench_code else nothing(),
        _financials(symbol, registry, notes))
    catalog = SourceCatalog()
    ids: list[str] = []
    price = PriceMetrics()
    label, offline = "", False
    if bars is not None:
        price = price_metrics(bars, bench, bench_code or "")
        if bench is not None and price.beta_1y is None:
            notes.append(f"beta unavailable: the {bench_code} history does not overlap the "
                         "last year")
        attrs = bars.attrs
        label = f"{attrs.get('provider', 'unknown')}"
        if attrs.get("dataset"):
            label += f" ({attrs['dataset']})"
        label += f", as of {price.as_of}"
        if attrs.get("note"):
            label += f"; {attrs['note']}"
        offline = bool(attrs.get("offline", False))
        year = bars.iloc[-252:]
        ids.append(catalog.add(ChartSource(ticker=symbol.code, start_date=str(
            year.index[0].date()), end_date=price.as_of)))
        month = bars.iloc[-RECENT_BARS:]
        ids.append(catalog.add(ChartSource(ticker=symbol.code, start_date=str(
            month.index[0].date()), end_date=price.as_of)))
    fund = fundamentals_from(report, price.close) if report is not None else None
    if fund is not None:
        ids.append(catalog.add(DataRef(tool="get_financials", ref=canonical_args(
            FINANCIALS_ARGS | {"symbol": symbol.code}), title=f"get_financials {symbol.code} "
            f"({fund.period})")))
    return Evidence(symbol=symbol, bars=bars, price=price, fundamentals=fund, catalog=catalog,
                    context_ids=ids, notes=notes, data_label=label, offline_data=offline)


async def _financials(symbol: ResolvedSymbol, registry: ToolRegistry | None,
                      notes: list[str]) -> BaseModel | None:
    """The `get_financials` result when the registry has the tool and it answers."""
    if registry is None or "get_financials" not in registry or symbol.kind != "stock":
        return None
    outcome = await registry.call("get_financials", FINANCIALS_ARGS | {"symbol": symbol.code})
    if not outcome.ok:
        notes.append(f"financials unavailable: {outcome.content.removeprefix('Error: ')[:200]}")
        return None
    return outcome.result


def require_data(evidence: Evidence) -> None:
    """Raise DataUnavailable when neither prices nor financials could be loaded."""
    if not evidence.has_data:
        raise DataUnavailable("; ".join(evidence.notes) or f"no data for {evidence.title}")
