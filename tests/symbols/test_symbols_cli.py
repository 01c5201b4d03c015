"""`bullpen symbols ...` through the real argparse parser, and the pickle cache."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

import tools.symbols as symbols
from bot.cli.symbols import register
from tools.symbols import SymbolDirectory


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="bullpen")
    register(parser.add_subparsers(dest="command", required=True))
    return parser


@pytest.fixture(autouse=True)
def _shared_directory(directory: SymbolDirectory, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(symbols, "_default", directory)


def test_resolve_json(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parser().parse_args(["symbols", "resolve", "寧德時代", "--json"])
    assert args.func(args) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["code"] == "300750" and rows[0]["market"] == "cn"
    assert {"code", "name", "market", "score"} <= set(rows[0])


def test_resolve_market_and_miss(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parser().parse_args(["symbols", "resolve", "byd", "--market", "us", "--json"])
    assert args.func(args) == 0
    assert all(r["market"] == "us" for r in json.loads(capsys.readouterr().out))
    args = _parser().parse_args(["symbols", "resolve", "😀"])
    assert args.func(args) == 1
    assert "no match" in capsys.readouterr().out


def test_extract_json(capsys: pytest.CaptureFixture[str]) -> None:
    text = "I want to buy low, and $NVDA"
    args = _parser().parse_args(["symbols", "extract", text, "--json"])
    assert args.func(args) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["code"] for r in rows] == ["NVDA"]
    start = text.index("$NVDA")
    assert rows[0]["span"] == [start, start + 5]


def test_extract_table(capsys: pytest.CaptureFixture[str]) -> None:
    args = _parser().parse_args(["symbols", "extract", "茅台和AAPL"])
    assert args.func(args) == 0
    out = capsys.readouterr().out
    assert "600519.SH" in out and "AAPL" in out


def test_pickle_cache_round_trip(directory: SymbolDirectory, tmp_path: Path) -> None:
    symbols._save_cached(tmp_path, directory.entries)
    loaded = symbols._load_cached(tmp_path)
    assert loaded is not None and len(loaded) == len(directory)
    assert loaded[0].model_dump() == directory.entries[0].model_dump()
    (next(tmp_path.glob("symbols-*.pickle"))).write_bytes(b"not a pickle")
    assert symbols._load_cached(tmp_path) is None


def test_refresh_rebuilds_and_saves_to_postgres(pg_server, tmp_path, monkeypatch, capsys):
    import asyncio

    import asyncpg

    from bot.cli import main

    monkeypatch.setenv("DATABASE_URL", pg_server)
    monkeypatch.setenv("BULLPEN_DATA_DIR", str(tmp_path))
    assert main(["symbols", "refresh", "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["saved_rows"] == report["entries"] >= 15_000

    async def count() -> int:
        conn = await asyncpg.connect(pg_server)
        try:
            return int(await conn.fetchval("SELECT count(*) FROM stocknames"))
        finally:
            await conn.close()

    assert asyncio.run(count()) == report["entries"]
