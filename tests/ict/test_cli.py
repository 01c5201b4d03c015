"""`bullpen ict` on any OHLCV CSV."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from bot.cli.ict import register
from tests.ict.data import btc_15m_raw, eurusd_hourly


def _run(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="bullpen")
    register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


@pytest.fixture()
def csv(tmp_path: Path) -> Path:
    path = tmp_path / "eurusd.csv"
    eurusd_hourly().iloc[-800:].rename_axis("timestamp").to_csv(path)
    return path


def test_json(csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["ict", "--csv", str(csv), "--interval", "1h", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["meta"]["bars"] == 800 and out["meta"]["interval"] == "60min"
    assert out["meta"]["symbol"] == "eurusd" and out["meta"]["timezone"] == "UTC"
    assert out["structure"]["bias"] in ("bullish", "bearish", "neutral")
    assert out["fvgs"] and out["order_blocks"]


def test_summary_plan_and_chart(csv: Path, tmp_path: Path,
                                capsys: pytest.CaptureFixture[str]) -> None:
    chart = tmp_path / "chart.png"
    code = _run(["ict", "--csv", str(csv), "--interval", "1h", "--plan", "--chart", str(chart)])
    assert code == 0
    text = capsys.readouterr().out
    assert text.startswith("eurusd · 60min · 800 bars")
    assert "Structure: bias" in text and "Dealing range" in text and "Plan" in text
    assert chart.read_bytes()[:4] == b"\x89PNG"


def test_naive_timestamps_use_tz(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "naive.csv"
    bars = eurusd_hourly().iloc[:300]
    bars.index = bars.index.tz_localize(None)
    bars.rename_axis("Date").to_csv(path)
    assert _run(["ict", "--csv", str(path), "--interval", "1h", "--tz", "Europe/London",
                 "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["meta"]["timezone"] == "Europe/London"


def test_bad_csv_is_exit_code_two(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "btc.csv"
    btc_15m_raw().to_csv(path)  # the real file: duplicated, unsorted timestamps
    assert _run(["ict", "--csv", str(path), "--interval", "15m"]) == 2
    assert "not sorted" in capsys.readouterr().err
    assert _run(["ict", "--csv", str(tmp_path / "missing.csv")]) == 2
    assert "no such file" in capsys.readouterr().err
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    assert _run(["ict", "--csv", str(empty)]) == 2
    assert "bullpen ict:" in capsys.readouterr().err


def test_neither_symbol_nor_csv_is_a_usage_error(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["ict"]) == 2


def test_registered_in_the_bullpen_cli(csv: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli import main

    assert main(["ict", "--csv", str(csv), "--interval", "1h", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["meta"]["bars"] == 800
