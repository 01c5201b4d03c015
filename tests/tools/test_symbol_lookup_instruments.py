"""resolve_symbol routes indices, crypto and FX pairs to the codes the tools and the snapshot
use, and tells A-share index codes from shares by exchange."""

from __future__ import annotations

import pytest

from tools.symbol_lookup import resolve_symbol


@pytest.mark.parametrize(("text", "code", "market", "kind", "exchange"), [
    # snapshot series, by name in either language
    ("bitcoin", "BTC-USD", "crypto", "crypto", ""),
    ("BTC", "BTC-USD", "crypto", "crypto", ""),
    ("S&P 500", "^GSPC", "us", "index", ""),
    ("标普500", "^GSPC", "us", "index", ""),
    ("CSI 300", "000300", "cn", "index", "SH"),
    ("沪深300", "000300", "cn", "index", "SH"),
    ("000300.SH", "000300", "cn", "index", "SH"),
    ("欧元兑美元", "EURUSD", "fx", "fx", ""),
    # known to the directory, not in the snapshot
    ("ETH", "ETH-USD", "crypto", "crypto", ""),  # not the listed Grayscale fund ETH
    ("以太坊", "ETH-USD", "crypto", "crypto", ""),
    ("USD/JPY", "USDJPY", "fx", "fx", ""),
    ("Dow Jones", "^DJI", "us", "index", ""),
    ("DJI", "^DJI", "us", "index", ""),
    ("纳斯达克指数", "^IXIC", "us", "index", ""),
    ("上证指数", "000001", "cn", "index", "SH"),
    ("000001.SH", "000001", "cn", "index", "SH"),
    ("SH000001", "000001", "cn", "index", "SH"),
    ("399001", "399001", "cn", "index", "SZ"),
    ("创业板指", "399006", "cn", "index", "SZ"),
    ("中证500", "000905", "cn", "index", "SH"),
    # bare codes of shares keep today's answer
    ("000001", "000001", "cn", "stock", "SZ"),
    ("000905", "000905", "cn", "stock", "SZ"),
    ("000001.SZ", "000001", "cn", "stock", "SZ"),
    ("600519", "600519", "cn", "stock", "SH"),
    ("NVDA", "NVDA", "us", "stock", ""),
])
def test_instruments_route_to_tool_codes(text: str, code: str, market: str, kind: str,
                                         exchange: str) -> None:
    sym = resolve_symbol(text)
    assert (sym.code, sym.market, sym.kind, sym.exchange) == (code, market, kind, exchange)
    assert sym.name


def test_index_yahoo_tickers() -> None:
    assert resolve_symbol("上证指数").yahoo == "000001.SS"
    assert resolve_symbol("399001").yahoo == "399001.SZ"
    assert resolve_symbol("USDJPY").yahoo == "USDJPY=X"
    assert resolve_symbol("000001").yahoo == "000001.SZ"
