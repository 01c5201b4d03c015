"""`run_ta_script`: a technical-analysis script the model (or `/ta`) wrote, run in the sandbox
over a symbol's bars. Numbers come back as a typed result, charts (at most three) as files."""

from __future__ import annotations

from datetime import date
from typing import Annotated, Any

import pandas as pd
from pydantic import BaseModel, Field

from core.context import current, emit_file, emit_status
from core.errors import DataUnavailable
from core.localize import word
from core.types import OutgoingFile
from core.words import t
from tools.bars import normalize_interval
from tools.data.prices import get_bars
from tools.market import source_from
from tools.models import DataSource, tool
from tools.sandbox import ScriptFailed, default_sandbox
from tools.sandbox.host import SandboxRun
from tools.sandbox.policy import ALLOWED_TEXT
from tools.symbol_lookup import resolve_symbol

MAX_CODE_CHARS = 20_000
CONTRACT = ("The script gets `df` (a DataFrame indexed by date with open, high, low, close, "
            "volume), `pd`, `np`, and `ta` when it imports pandas_ta; it must assign its answer "
            "to `result` (numbers, strings, lists, dicts; Series and DataFrames are turned into "
            f"dicts and records). Allowed imports: {ALLOWED_TEXT}. No files outside its work "
            "directory, no network, no processes. Charts: matplotlib "
            "`fig.savefig('name.png')`, at most 3.")


class TaScriptResult(BaseModel):
    """What the script computed over the bars, with the bars' source."""

    symbol: str
    name: str = ""
    interval: str
    bars: int = Field(description="bars handed to the script")
    first: str
    last: str
    result: Any = Field(description="the script's `result`, as JSON values")
    charts: list[str] = Field(default_factory=list, description="chart files sent to the chat")
    charts_dropped: int = 0
    printed: str = Field(default="", description="what the script printed (first 4000 chars)")
    source: DataSource
    note: str = ""


def failure_text(run: SandboxRun) -> str:
    """The failure as text the model can fix its script from."""
    text = f"the TA script did not give a result: {run.message()}"
    if run.status == "blocked":
        text += ". Rewrite it within the rules: " + CONTRACT
    elif run.error_type == "ValueError" and "`result`" in run.error:
        text += ". " + CONTRACT
    return text


def _last_bars(df: pd.DataFrame, end: date | None, bars: int) -> pd.DataFrame:
    if end is not None:
        df = df[df.index < pd.Timestamp(end).tz_localize(df.index.tz) + pd.Timedelta(days=1)]
    return df.iloc[-bars:]


async def execute_script(symbol: str, code: str, *, interval: str = "1d", bars: int = 500,
                         end: date | None = None) -> tuple[TaScriptResult, list[OutgoingFile]]:
    """Run `code` over `symbol`'s bars; the result and the chart files (not yet sent).

    Raises ScriptFailed (with the sandbox's run) when the code is refused or fails.
    """
    if not code.strip():
        raise ScriptFailed("the script is empty. " + CONTRACT, SandboxRun(status="error"))
    if len(code) > MAX_CODE_CHARS:
        raise ScriptFailed(f"the script is {len(code)} characters; the limit is "
                           f"{MAX_CODE_CHARS}", SandboxRun(status="error"))
    interval = normalize_interval(interval)
    sym = resolve_symbol(symbol)
    df = _last_bars(await get_bars(sym, interval), end, bars)
    if df.empty:
        raise DataUnavailable(f"no {interval} bars for {sym.code} in that range",
                              provider=str(df.attrs.get("provider", "")))
    lang = current().lang
    emit_status(t("ta.status_script", lang, n=len(df), code=sym.code,
                  interval=word("ta.interval_", interval, lang)))
    run = await default_sandbox().run(code, frames={"df": df[["open", "high", "low", "close",
                                                               "volume"]]})
    if not run.ok:
        raise ScriptFailed(failure_text(run), run)
    fmt = "%Y-%m-%d" if interval in ("1d", "1w", "1mo") else "%Y-%m-%d %H:%M"
    last = df.index[-1].strftime(fmt)
    files = [OutgoingFile(kind="image", filename=f"{sym.code}_{name}".replace("^", ""),
                          data=data, mime_type="image/png",
                          caption=f"{sym.code} {interval} · TA script · {name}")
             for name, data in zip(run.chart_names, run.charts, strict=True)]
    source = source_from(df)
    result = TaScriptResult(
        symbol=sym.code, name=sym.name, interval=interval, bars=len(df),
        first=df.index[0].strftime(fmt), last=last, result=run.result,
        charts=[f.filename for f in files], charts_dropped=run.charts_dropped,
        printed=run.stdout, source=source,
        note="offline snapshot data (historical, not live)" if source.offline else "")
    return result, files


@tool(label="Running a TA script on {symbol}", tags=["market", "indicators", "sandbox"])
async def run_ta_script(
    symbol: str,
    code: str,
    interval: str = "1d",
    bars: Annotated[int, Field(ge=20, le=5000)] = 500,
    end: date | None = None,
) -> TaScriptResult:
    """Run a short Python technical-analysis script over a symbol's OHLCV bars in a sandbox and
    return the numbers it computes (and up to 3 charts). Use it for scans and indicators that
    get_indicators does not offer, e.g. divergences, custom crossovers, backtests of a rule.

    Args:
        symbol: code, ticker or name, e.g. "NVDA", "600519".
        code: the script. It gets `df` (DataFrame indexed by date: open, high, low, close,
            volume), `pd`, `np` and `ta` (import pandas_ta as ta); it must assign `result`
            (numbers, lists, dicts). Allowed imports: pandas, pandas_ta, numpy, math,
            statistics, datetime, json, matplotlib (charts: fig.savefig("x.png")). No files,
            network or processes.
        interval: bar size: 1d, 1w, 1mo, or intraday where the source has it.
        bars: how many of the latest bars to hand in.
        end: last date (YYYY-MM-DD); default the latest bar.
    """
    result, files = await execute_script(symbol, code, interval=interval, bars=bars, end=end)
    for file in files:
        emit_file(file)
    return result
