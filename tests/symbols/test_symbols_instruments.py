"""Indices, crypto and FX pairs in the directory: resolve, extract, ambiguity with shares, what
is and is not stored, and the JSON the CLI prints for them."""

from __future__ import annotations

import argparse
import json

import pytest

import tools.symbols as symbols
from bot.cli.symbols import register
from tools.symbols import SymbolDirectory


def _codes(directory: SymbolDirectory, text: str) -> list[str]:
    return [m.code for m in directory.extract(text)]


@pytest.mark.parametrize(
    ("query", "code", "market", "kind", "symbol"),
    [
        ("沪深300", "000300", "cn", "index", "000300.SH"),
        ("CSI 300", "000300", "cn", "index", "000300.SH"),
        ("上证指数", "000001", "cn", "index", "000001.SH"),
        ("SSE Composite", "000001", "cn", "index", "000001.SH"),
        ("深证成指", "399001", "cn", "index", "399001.SZ"),
        ("创业板指", "399006", "cn", "index", "399006.SZ"),
        ("中证500", "000905", "cn", "index", "000905.SH"),
        ("上证50", "000016", "cn", "index", "000016.SH"),
        ("S&P 500", "^GSPC", "us", "index", "^GSPC"),
        ("标普500", "^GSPC", "us", "index", "^GSPC"),
        ("Nasdaq Composite", "^IXIC", "us", "index", "^IXIC"),
        ("Nasdaq-100", "^NDX", "us", "index", "^NDX"),
        ("Dow Jones", "^DJI", "us", "index", "^DJI"),
        ("bitcoin", "BTC-USD", "crypto", "crypto", "BTC-USD"),
        ("比特币", "BTC-USD", "crypto", "crypto", "BTC-USD"),
        ("比特幣", "BTC-USD", "crypto", "crypto", "BTC-USD"),
        ("ethereum", "ETH-USD", "crypto", "crypto", "ETH-USD"),
        ("以太坊", "ETH-USD", "crypto", "crypto", "ETH-USD"),
        ("EUR/USD", "EURUSD", "fx", "fx", "EURUSD"),
        ("欧元兑美元", "EURUSD", "fx", "fx", "EURUSD"),
        ("USDJPY", "USDJPY", "fx", "fx", "USDJPY"),
        ("GBP/USD", "GBPUSD", "fx", "fx", "GBPUSD"),
        ("美元兑人民币", "USDCNY", "fx", "fx", "USDCNY"),
    ],
)
def test_resolve_instruments(
    directory: SymbolDirectory, query: str, code: str, market: str, kind: str, symbol: str
) -> None:
    top = directory.resolve(query)[0]
    assert (top.code, top.market, top.kind, top.symbol) == (code, market, kind, symbol)
    assert not top.ambiguous


def test_spx_is_the_index_with_spx_technologies_as_candidate(directory: SymbolDirectory) -> None:
    matches = directory.resolve("SPX")
    assert matches[0].symbol == "^GSPC" and matches[0].ambiguous
    assert "SPXC" in [m.code for m in matches if m.ambiguous]


def test_nasdaq_is_the_index_with_the_company_as_candidate(directory: SymbolDirectory) -> None:
    for query in ("Nasdaq", "nasdaq", "纳斯达克"):
        matches = directory.resolve(query)
        assert [m.code for m in matches[:2]] == ["^IXIC", "NDAQ"], query
        assert matches[0].ambiguous and matches[1].ambiguous
    for query in ("Nasdaq Inc", "NDAQ", "纳斯达克公司"):
        top = directory.resolve(query)[0]
        assert (top.code, top.ambiguous) == ("NDAQ", False), query
    for text in ("How is the Nasdaq doing?", "纳斯达克今天跌了"):
        (m,) = directory.extract(text)
        assert (m.code, m.ambiguous, m.alternatives) == ("^IXIC", True, ["NDAQ"])
    (m,) = directory.extract("Nasdaq Inc earnings")
    assert (m.code, m.alternatives) == ("NDAQ", [])


def test_s_and_p_alone_is_the_sp500(directory: SymbolDirectory) -> None:
    assert directory.resolve("S&P")[0].code == "^GSPC"
    assert directory.resolve("s&p")[0].code == "^GSPC"
    assert directory.resolve("S&P Global")[0].code == "SPGI"


def test_bare_000001_stays_the_share_and_lists_the_index(directory: SymbolDirectory) -> None:
    matches = directory.resolve("000001")
    assert [(m.symbol, m.name) for m in matches[:2]] == [
        ("000001.SZ", "平安银行"),
        ("000001.SH", "上证指数"),
    ]
    assert matches[0].ambiguous and matches[1].ambiguous
    assert matches[0].kind == "stock" and matches[1].kind == "index"
    # qualified forms are not ambiguous
    assert [m.symbol for m in directory.resolve("000001.SH")] == ["000001.SH"]
    assert [m.symbol for m in directory.resolve("sh000001")] == ["000001.SH"]
    assert directory.resolve("000001.SZ")[0].name == "平安银行"
    # get() keeps today's answer for the bare code
    entry = directory.get("000001", "cn")
    assert entry is not None and entry.name == "平安银行"


def test_extract_000001_reports_the_index_as_an_alternative(directory: SymbolDirectory) -> None:
    (m,) = directory.extract("000001 最近走势")
    assert (m.symbol, m.ambiguous, m.alternatives) == ("000001.SZ", True, ["000001.SH"])
    (idx,) = directory.extract("上证指数最近走势")
    assert (idx.symbol, idx.ambiguous, idx.kind) == ("000001.SH", False, "index")
    both = directory.extract("上证指数和平安银行")
    assert [m.symbol for m in both] == ["000001.SH", "000001.SZ"]


def test_btc_and_eth_are_crypto_first_with_the_listed_fund_as_candidate(
    directory: SymbolDirectory,
) -> None:
    for sym, pair in (("BTC", "BTC-USD"), ("ETH", "ETH-USD")):
        matches = directory.resolve(sym)
        assert [m.code for m in matches[:2]] == [pair, sym]
        assert matches[0].ambiguous
        (m,) = directory.extract(f"{sym} 15m ICT")
        assert (m.code, m.alternatives) == (pair, [sym])


@pytest.mark.parametrize(
    ("text", "expect"),
    [
        ("how is bitcoin doing", ["BTC-USD"]),
        ("比特币最近怎么样", ["BTC-USD"]),
        ("S&P 500 last month", ["^GSPC"]),
        ("s & p 500 and the s&p500", ["^GSPC"]),
        ("EURUSD ICT 1h", ["EURUSD"]),
        ("BTC-USD 15m", ["BTC-USD"]),
        ("btc 15m", ["BTC-USD"]),
        ("spx price today", ["^GSPC"]),
        ("$SPX", ["^GSPC"]),
        ("How is the CSI 300 doing?", ["000300"]),
        ("csi300 and CSI-300", ["000300"]),
        ("沪深 300 走势", ["000300"]),
        ("滬深300和上證指數", ["000300", "000001"]),
        ("The Dow fell 2%", ["^DJI"]),
        ("Nasdaq-100 vs Nasdaq Composite", ["^NDX", "^IXIC"]),
        ("今天道指和纳指都涨了", ["^DJI", "^IXIC"]),
        ("EUR / USD and GBP/USD", ["EURUSD", "GBPUSD"]),
        ("000300.SH and 399006", ["000300", "399006"]),
        ("比特币和NVDA", ["BTC-USD", "NVDA"]),
        ("^DJI and ^ndx today", ["^DJI", "^NDX"]),  # a caret form counts in any case
        ("ETH price", ["ETH-USD"]),
        ("$ETH", ["ETH-USD"]),
        ("ETH is up 5%", ["ETH-USD"]),
        ("BTC ETH and NVDA", ["BTC-USD", "ETH-USD", "NVDA"]),
        ("ETH USDT ICT 15m", ["ETH-USD"]),
        ("Is the S&P up today?", ["^GSPC"]),
        ("S&P", ["^GSPC"]),
        ("S&P Global earnings", ["SPGI"]),
        ("How is the Nasdaq doing?", ["^IXIC"]),
        ("nasdaq fell 2% today", ["^IXIC"]),
        ("Nasdaq Inc earnings", ["NDAQ"]),
        ("AAPL is listed on the Nasdaq", ["AAPL"]),
        ("Nasdaq-listed shares of NVDA", ["NVDA"]),
        ("纳斯达克今天跌了", ["^IXIC"]),
        ("纳斯达克公司的股价", ["NDAQ"]),
        ("关于道指的看法", ["^DJI"]),
        ("对道指的看法", ["^DJI"]),
    ],
)
def test_extract_finds_instruments(
    directory: SymbolDirectory, text: str, expect: list[str]
) -> None:
    assert list(dict.fromkeys(_codes(directory, text))) == expect


@pytest.mark.parametrize(
    "text",
    [
        "the dow fell, said nobody",  # "the Dow" only with its capital
        "dow",
        "spx",  # lower case, no finance word near it
        "I studied at ETH Zurich",
        "The price of gold is rising",
        "我想知道指数基金是什么",  # 知道 + 指数, not 道指
        "据报道指出，今年雨水偏多",
        "这个建议被采纳指日可待",
        "欧元区的通胀",
        "CSI 3000 is not an index we know",
        "中证5000",
        # lower-case index tickers keep their own rule (the caret form's is looser)
        "I love my dji drone",
        "ndx is up",
        "gspc",
        "ixic for the win",
        # a finance word nearby is a whole word: no "ict" in "district", "predict", "strict"
        "the district near eth campus",
        "I predict eth zurich wins",
        "strict rules for spx",
        # the university, in any script or case
        "ETH Zürich",
        "ETH ZURICH IS GREAT",
        "I work at ETH.",
        "She is a professor at ETH",
        "我想知道指数是什么意思",
        "难道指望他吗",
        "S&P downgraded the bonds",
        "S&P 400 midcaps",
        "NYSE and Nasdaq are exchanges",
        "某公司在纳斯达克上市",
    ],
)
def test_no_false_instruments(directory: SymbolDirectory, text: str) -> None:
    assert [m.symbol for m in directory.extract(text)] == []


def test_spans_cover_the_written_form(directory: SymbolDirectory) -> None:
    text = "Compare S & P 500, 比特币 and EUR/USD"
    spans = [text[m.span[0] : m.span[1]] for m in directory.extract(text) if m.span]
    assert spans == ["S & P 500", "比特币", "EUR/USD"]
    text = "what about the Dow Jones and the Dow"
    spans = [text[m.span[0] : m.span[1]] for m in directory.extract(text) if m.span]
    assert spans == ["Dow Jones"]  # one index, named by the longer form


def test_spoken_name_comes_first_among_the_aliases(directory: SymbolDirectory) -> None:
    """Consumers that name a security by its first Latin alias (the voice rewrite) say
    "Bitcoin" and "S&P 500", not "BTC-USD" and "GSPC"."""
    for code, first in (("BTC-USD", "Bitcoin"), ("^GSPC", "S&P 500"), ("EURUSD", "EUR/USD")):
        entry = directory.get(code)
        assert entry is not None and entry.aliases[0] == first


def test_instruments_are_built_in_not_listed(directory: SymbolDirectory) -> None:
    listed = directory.entries
    assert all(e.kind == "stock" for e in listed)
    assert len(directory) == len(listed)
    assert set(directory.counts()) == {"cn", "us", "hk"}
    codes = {e.code for e in directory.instruments}
    assert {"000300", "000001", "^GSPC", "BTC-USD", "ETH-USD", "EURUSD", "USDCNY"} <= codes
    btc = directory.get("BTC-USD")
    assert btc is not None and (btc.market, btc.kind) == ("crypto", "crypto")
    gspc = directory.get("^gspc", "us")
    assert gspc is not None and gspc.kind == "index"
    # rebuilt from the listed entries alone (as loaded from Postgres), it still knows them
    again = SymbolDirectory.from_entries(listed[:50])
    assert again.resolve("比特币")[0].code == "BTC-USD"
    assert len(again) == 50
    # stale instrument rows handed back in are not duplicated
    mixed = SymbolDirectory.from_entries([*listed[:50], *directory.instruments])
    assert len(mixed) == 50 and len(mixed.instruments) == len(directory.instruments)


def test_instrument_lookup_is_exact(directory: SymbolDirectory) -> None:
    def code(text: str) -> str | None:
        entry = directory.instrument(text)
        return None if entry is None else entry.symbol

    assert code("ETH") == "ETH-USD"
    assert code("eur/usd") == "EURUSD"
    assert code("上证指数") == "000001.SH"
    assert code("000001.SH") == "000001.SH"
    assert code("399001") == "399001.SZ"
    assert code("000001") is None  # the share's bare code
    assert code("bitcon") is None  # no fuzzy match
    assert code("NVDA") is None
    assert code("") is None


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bullpen")
    register(parser.add_subparsers(dest="command", required=True))
    return parser


def test_cli_json_keeps_its_keys_for_instruments(
    directory: SymbolDirectory, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(symbols, "_default", directory)
    args = _parser().parse_args(["symbols", "resolve", "贵州茅台", "--json"])
    assert args.func(args) == 0
    stock_keys = set(json.loads(capsys.readouterr().out)[0])
    args = _parser().parse_args(["symbols", "resolve", "bitcoin", "--json"])
    assert args.func(args) == 0
    row = json.loads(capsys.readouterr().out)[0]
    assert (row["code"], row["market"], row["symbol"]) == ("BTC-USD", "crypto", "BTC-USD")
    assert set(row) <= stock_keys | {"exchange"}
    args = _parser().parse_args(["symbols", "extract", "EURUSD ICT 1h", "--json"])
    assert args.func(args) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["code"], r["market"], r["span"]) for r in rows] == [("EURUSD", "fx", [0, 6])]
    assert set(rows[0]) == {"code", "name", "market", "symbol", "score", "why", "span",
                            "ambiguous", "alternatives"}
