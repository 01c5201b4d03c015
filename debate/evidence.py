"""The context every debater starts from, gathered by code with no model involved.

Daily bars (and a benchmark for beta, loaded up to the stock's last bar so that the two
overlap wherever their histories do) become `PriceMetrics`; a financials tool, when the
registry has one and it answers, adds `Fundamentals`. Each piece registers its source in the
debate's `SourceCatalog`, and `block()` renders it all as the deterministic context text.

What the debate could not use is said in the user's language (the catalogue's `debate`
words), never as a provider's error text: `notes` holds those sentences, `causes` the raw
errors (logged). A debate with neither prices nor financials does not run (`require_data`);
fundamentals much older than the price lower the confidence, past `STALE_LIMIT_MONTHS` the
verdict is withheld (`input_limits`, applied by the mode to whatever panel ran).
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from datetime import date
from typing import Protocol

import pandas as pd
from pydantic import BaseModel

from core.errors import BullpenError, DataUnavailable, UnknownSymbol
from core.localize import localize, word
from core.tools import ToolRegistry
from core.words import t
from debate.grounding import SourceCatalog, canonical_args
from debate.metrics import (
    TRADING_DAYS,
    Fundamentals,
    PriceMetrics,
    fundamentals_from,
    metric_rows,
    price_metrics,
)
from debate.models import ChartSource, DataRef, Metric
from tools.symbol_lookup import ResolvedSymbol, resolve_symbol
from tools.symbols.sources import reader_name

log = logging.getLogger(__name__)


class BarsLoader(Protocol):
    """Daily bars of `symbol`, oldest first, ending at `end` (at the newest bar when None)."""

    async def __call__(self, symbol: str, *, end: date | None = None) -> pd.DataFrame: ...


HISTORY_BARS = 520  # two years of daily bars: 12-month returns plus MA200
RECENT_BARS = 20
BENCHMARKS = {"cn": "000300", "us": "^GSPC"}
FINANCIALS_ARGS: dict[str, object] = {"periods": 8}
CURRENCIES = {"cn": "CNY", "hk": "HKD", "us": "USD"}
# fundamentals this much older than the price (months from the period's end to the last
# close) lower the confidence; past the limit the debate gives no BUY/SELL verdict. A report
# is normally at most ~7 months old (a quarter, plus up to four months to publish an annual)
STALE_LOWER_MONTHS = 9
STALE_LIMIT_MONTHS = 18
STALE_CONFIDENCE_FACTOR = 0.7
DAYS_PER_MONTH = 30.44


def qualified(symbol: ResolvedSymbol) -> ResolvedSymbol:
    """The symbol with an exchange-qualified code where its bare code names another instrument
    (000001 is Ping An Bank, 000001.SZ; the SSE Composite is 000001.SH), so that the bars
    loaded, the report's ticker and the stored report's key are the instrument meant."""
    if symbol.market != "cn" or not symbol.exchange or "." in symbol.code:
        return symbol
    try:
        bare: ResolvedSymbol | None = resolve_symbol(symbol.code)
    except UnknownSymbol:
        bare = None
    if bare is not None and (bare.exchange, bare.kind) == (symbol.exchange, symbol.kind):
        return symbol
    return symbol.model_copy(update={"code": f"{symbol.code}.{symbol.exchange}"})


async def default_bars(symbol: str, *, end: date | None = None) -> pd.DataFrame:
    """Two years of daily bars from the tools' data layer (ending at `end` when given)."""
    from tools.market import load_bars

    return await load_bars(symbol, "1d", HISTORY_BARS, end=end)


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
    causes: list[str] = field(default_factory=list)  # raw errors behind the notes (logged)
    one_day: str = ""  # the single day of prices the offline data has, when that is all
    prices_offline: bool = False  # the offline snapshot (not a live provider) had no prices

    @property
    def fundamentals_age_months(self) -> float | None:
        """Months from the latest report's period end to the last close (None without both)."""
        fund = self.fundamentals
        if fund is None or not fund.period_end or not self.price.as_of:
            return None
        gap = date.fromisoformat(self.price.as_of) - date.fromisoformat(fund.period_end)
        return gap.days / DAYS_PER_MONTH

    @property
    def currency(self) -> str:
        """The prices' currency; none for an index (its levels are points)."""
        return "" if self.symbol.kind == "index" else CURRENCIES.get(self.symbol.market, "")

    @property
    def title(self) -> str:
        return f"{self.symbol.name} ({self.symbol.code})" if self.symbol.name else (
            self.symbol.code)

    def reader_title(self, lang: str) -> str:
        """`title` with the name the reader knows (英伟达 (NVDA) for a Chinese reader)."""
        name = reader_name(self.symbol.code, self.symbol.name, lang)
        return f"{name} ({self.symbol.code})" if name else self.symbol.code

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


@dataclass
class _Missing:
    """Why an input is missing: the raw error and the provider that raised it."""

    what: str
    error: str
    provider: str = ""


async def _bars_or_missing(loader: BarsLoader, symbol: str, what: str, missing: list[_Missing],
                           end: date | None = None) -> pd.DataFrame | None:
    try:
        df = await loader(symbol, end=end) if end is not None else await loader(symbol)
    except BullpenError as exc:
        missing.append(_Missing(what, str(exc), getattr(exc, "provider", "")))
        return None
    if not len(df):
        missing.append(_Missing(what, "no bars"))
        return None
    return df


def _data_label(attrs: dict[str, object], as_of: str | None, lang: str) -> str:
    """Where the prices came from and their date, in the reader's language (the same words as
    a tool result's source line: `src.*`)."""
    provider = word("src.provider_", str(attrs.get("provider", "unknown")), lang)
    when = t("src.as_of", lang, day=as_of) if as_of else ""
    dataset = str(attrs.get("dataset") or "")
    label = (t("src.label", lang, provider=provider, dataset=localize(dataset, lang), when=when)
             if dataset else provider + when)
    if note := attrs.get("note"):
        label += t("grammar.clause_sep", lang) + localize(str(note), lang)
    return label


async def gather_evidence(symbol: ResolvedSymbol, *, bars_loader: BarsLoader = default_bars,
                          registry: ToolRegistry | None = None, lang: str = "en") -> Evidence:
    """Load bars and financials in parallel (the benchmark after the bars, up to their last
    day) and register their sources; what is missing becomes a note in `lang`."""
    missing: list[_Missing] = []
    bench_code = BENCHMARKS.get(symbol.market) if symbol.code != BENCHMARKS.get(
        symbol.market) else None

    async def prices() -> tuple[pd.DataFrame | None, pd.DataFrame | None]:
        bars = await _bars_or_missing(bars_loader, symbol.code, "prices", missing)
        if bars is None or not bench_code:
            return bars, None
        last = pd.Timestamp(bars.index[-1]).date()
        return bars, await _bars_or_missing(bars_loader, bench_code, "benchmark", missing,
                                            end=last)

    (bars, bench), report = await asyncio.gather(prices(), _financials(symbol, registry,
                                                                        missing))
    catalog = SourceCatalog()
    ids: list[str] = []
    notes: list[str] = []
    price = PriceMetrics()
    label, offline = "", False
    if bars is not None:
        price = price_metrics(bars, bench, bench_code or "")
        if bench_code:
            notes.append(_beta_note(price, bars, bench, bench_code, lang))
        attrs = bars.attrs
        label = _data_label(attrs, price.as_of, lang)
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
    ev = Evidence(symbol=symbol, bars=bars, price=price, fundamentals=fund, catalog=catalog,
                  context_ids=ids, notes=notes, data_label=label, offline_data=offline,
                  causes=[f"{m.what}: {m.error}" for m in missing])
    price_gap = next((m for m in missing if m.what == "prices"), None)
    if price_gap is not None:
        ev.prices_offline = price_gap.provider == "snapshot"
        ev.one_day = _one_day(symbol)
    if ev.has_data:
        if bars is None:
            notes.append(t("debate.no_prices", lang))
        elif any(m.what == "financials" for m in missing):
            notes.append(t("debate.no_financials", lang))
        if (stale := stale_sentence(ev, lang)) is not None:
            notes.append(stale[1])
    for cause in ev.causes:
        log.info("debate %s: %s", symbol.code, cause)
    return ev


def _beta_note(pm: PriceMetrics, bars: pd.DataFrame, bench: pd.DataFrame | None,
               bench_code: str, lang: str) -> str:
    """Which window beta was measured over, or why it could not be."""
    if bench is None:
        return t("debate.beta_no_bench", lang, bench=bench_code)
    if pm.beta_1y is not None:
        return t("debate.beta_window", lang, bench=bench_code, start=pm.beta_start,
                   end=pm.beta_end, days=pm.beta_days)
    year = bars.index[-(TRADING_DAYS + 1):]
    return t("debate.beta_none", lang, bench=bench_code, days=pm.beta_days,
               start=str(year[0].date()), end=str(year[-1].date()),
               bench_start=str(bench.index[0].date()), bench_end=str(bench.index[-1].date()))


def _one_day(symbol: ResolvedSymbol) -> str:
    """The one day of prices the offline A-share table has for the symbol ('' when none)."""
    if symbol.market != "cn" or not symbol.exchange:
        return ""
    from tools.data import cn_packs

    try:
        row = cn_packs.one_day(symbol.code, symbol.exchange)
    except BullpenError:
        return ""
    return row.day.isoformat() if row is not None else ""


def _age(months: float, lang: str) -> str:
    """'4.4 years' / '4.4 年' from 18 months up, else '11 months' / '11 个月'."""
    if months >= 18:
        years = round(months / 12, 1)
        return t("age.year" if years == 1 else "age.years", lang, n=f"{years:g}")
    n = max(1, round(months))
    return t("age.month" if n == 1 else "age.months", lang, n=n)


def stale_sentence(evidence: Evidence, lang: str) -> tuple[bool, str] | None:
    """(withheld, sentence) when the fundamentals are at least `STALE_LOWER_MONTHS` older than
    the price: `withheld` past `STALE_LIMIT_MONTHS` (no BUY/SELL verdict), else the confidence
    is lowered. None when they are recent enough or there are none."""
    age = evidence.fundamentals_age_months
    fund = evidence.fundamentals
    if age is None or fund is None or age < STALE_LOWER_MONTHS:
        return None
    withheld = age > STALE_LIMIT_MONTHS
    values = {"period": fund.period, "end": fund.period_end, "as_of": evidence.price.as_of,
              "age": _age(age, lang), "limit": STALE_LIMIT_MONTHS}
    key = "debate.stale_withheld" if withheld else "debate.stale_lowered"
    return withheld, t(key, lang, **values)


async def _financials(symbol: ResolvedSymbol, registry: ToolRegistry | None,
                      missing: list[_Missing]) -> BaseModel | None:
    """The `get_financials` result when the registry has the tool and it answers."""
    if registry is None or "get_financials" not in registry or symbol.kind != "stock":
        return None
    outcome = await registry.call("get_financials", FINANCIALS_ARGS | {"symbol": symbol.code})
    if not outcome.ok:
        missing.append(_Missing("financials", outcome.content.removeprefix("Error: ")[:300]))
        return None
    return outcome.result


def require_data(evidence: Evidence, lang: str = "en") -> None:
    """Raise DataUnavailable, its message one sentence in `lang`, when neither prices nor
    financials could be loaded (the raw errors are in `evidence.causes`, and logged)."""
    if evidence.has_data:
        return
    if evidence.one_day:
        why = t("debate.why_one_day", lang, day=evidence.one_day)
    elif evidence.prices_offline:
        why = t("debate.why_nothing", lang)
    else:
        why = t("debate.why_nothing_live", lang)
    raise DataUnavailable(t("debate.no_data", lang, title=evidence.title, why=why),
                          causes=evidence.causes)
