"""The daily ticker podcast script (seed 001 §7; issue 15).

`produce_podcast(tickers, ...)` runs a four-expert debate per ticker in parallel (today's
stored reports reused), writes each ticker's turns with a tool-less worker whose figures and
sources are checked in code, merges the sections in the user's order, lets a refiner rewrite
transitions only, and returns a `PodcastResult`: the `PodcastScript` (`script.json`: date,
user_tickers, chapter, scripts), notes, the budget report, model calls and each ticker's
status. Offline (no model) a deterministic writer builds the same structure, labelled.

- `models`: the script and result types, `PodcastError`, `MAX_TICKERS`, speakers.
- `pipeline`: the run; `worker`, `refiner`, `writer`: who writes what; `figures`: the
  number check; `market`: index moves, intraday summaries, profiles; `budget`: levels;
  `render`: Markdown and JSON.
"""

from podcast.models import (
    MAX_TICKERS,
    BudgetReport,
    Chapter,
    Note,
    PodcastError,
    PodcastResult,
    PodcastScript,
    ScriptTurn,
    TickerStatus,
    role_of,
)
from podcast.pipeline import produce_podcast
from podcast.render import render_markdown, script_json

__all__ = ["MAX_TICKERS", "BudgetReport", "Chapter", "Note", "PodcastError", "PodcastResult",
           "PodcastScript", "ScriptTurn", "TickerStatus", "produce_podcast", "render_markdown",
           "role_of", "script_json"]
