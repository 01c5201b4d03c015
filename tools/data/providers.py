"""Import every provider module so their fetchers register (call `load()` before `run`)."""

from __future__ import annotations

import functools


@functools.cache
def load() -> None:
    from tools.data import (
        akshare_provider,
        dartlab_provider,
        sec_provider,
        web_provider,
        yahoo_provider,
        zvt_provider,
    )

    del akshare_provider, dartlab_provider, sec_provider, web_provider, yahoo_provider
    del zvt_provider
