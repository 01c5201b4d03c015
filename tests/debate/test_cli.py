"""`bullpen debate SYMBOL`: offline experts when no model is configured."""

from __future__ import annotations

import argparse
import json

import pytest

from bot.cli import debate as cli
from debate.offline import offline_label


@pytest.fixture
def offline_env(monkeypatch, tmp_path):
    for name in ("BULLPEN_LLM_BASE_URL", "BULLPEN_LLM_MODEL", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BULLPEN_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no .env from the checkout
    return tmp_path


def _parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="bullpen")
    cli.register(parser.add_subparsers(dest="command", required=True))
    return parser.parse_args(argv)


def test_cli_prints_the_offline_artifact_as_json(offline_env, capsys):
    args = _parse(["debate", "NVDA", "--json", "--max-rounds", "1"])
    assert args.func is cli.handler and args.max_rounds == 1
    assert args.func(args) == 0
    captured = capsys.readouterr()
    art = json.loads(captured.out)
    assert art["meta"]["offline"] and art["meta"]["label"] == offline_label("en")
    assert art["experts"]["ticker"] == "NVDA" and len(art["experts"]["rounds"]) == 2
    assert art["experts"]["conclusion"]["action"] in ("BUY", "HOLD", "SELL")
    assert "Round 1 - Risk:" in captured.err and "[pdf: " in captured.err
    pdfs = list((offline_env / "data" / "files" / "debate").glob("*.pdf"))
    assert len(pdfs) == 1 and pdfs[0].read_bytes().startswith(b"%PDF")


def test_cli_markdown_bull_bear_and_unknown_symbol(offline_env, capsys):
    assert cli.handler(_parse(["debate", "AAPL", "--panel", "bull_bear"])) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Debate report: Apple Inc (AAPL)") and "## Verdict" in out
    assert cli.handler(_parse(["debate", "ZZZQQX"])) == 2
    assert "unknown security 'ZZZQQX'" in capsys.readouterr().err
