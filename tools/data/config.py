"""How the data layer reaches its providers: set once by `bot` through `configure(...)`.

Only `bot/settings.py` reads the environment (house rule 7); everything here is passed in.
Never configured means offline: the snapshot of real historical prices shipped by pip packages.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

DataMode = Literal["offline", "live", "record", "replay"]


@dataclass(frozen=True, kw_only=True)
class DataConfig:
    """Data-layer settings.

    mode: `offline` serves the snapshot only; `live` asks providers (cache first, then the
        fallback chain down to the snapshot); `record` asks providers and stores every raw
        response; `replay` serves stored responses only.
    pool: an asyncpg pool for the cache and record/replay tables (None: no cache).
    """

    mode: DataMode = "offline"
    pool: Any = None  # asyncpg.Pool; typed loosely so importing tools never needs a database
    sec_user_agent: str = ""
    tavily_api_key: str = ""
    timeout_s: float = 15.0
    sec_page_chars: int = 20_000
    # The scrape tool refuses private/loopback addresses unless this is explicitly set.
    allow_private_urls: bool = False
    # Base URLs, overridable so tests point real clients at loopback servers.
    base_urls: tuple[tuple[str, str], ...] = ()
    # Where `bullpen data install` unpacked the data packs (None: <repo>/data/packs, the
    # default data directory's, which a fresh clone's `make test` fills once).
    packs_dir: Path | None = None

    def base_url(self, name: str, default: str) -> str:
        return dict(self.base_urls).get(name, default)

    def packs(self) -> Path:
        return self.packs_dir or DEFAULT_PACKS_DIR


DEFAULT_PACKS_DIR = Path(__file__).resolve().parents[2] / "data" / "packs"


_config = DataConfig()


def configure(config: DataConfig) -> None:
    """Install the data-layer settings (called once by `bot` at startup, or by tests)."""
    global _config
    _config = config


def get_config() -> DataConfig:
    return _config
