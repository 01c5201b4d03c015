"""`bullpen transcribe FILE [--json]`."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from bot.cli import transcribe
from tests.voice.conftest import AUDIO


@pytest.fixture(autouse=True)
def unhurried(monkeypatch: pytest.MonkeyPatch) -> None:
    """What is printed is under test, not how fast: a loaded machine must not turn a note into
    "too slow" (a run at load 20 took over the 21 s default; speed is `bullpen bench stt`'s)."""
    monkeypatch.setenv("BULLPEN_VOICE_DEADLINE_S", "600")
    monkeypatch.setenv("BULLPEN_VOICE_DEADLINE_MAX_S", "600")


def _run(*argv: str) -> int:
    parser = argparse.ArgumentParser(prog="bullpen")
    transcribe.register(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(["transcribe", *argv])
    code: int = args.func(args)
    return code


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(str(AUDIO / "latest_nvda_aapl.wav"), "--json") == 0
    out = json.loads(capsys.readouterr().out)
    assert {"text", "language", "duration_s", "elapsed_s", "query", "symbols"} <= set(out)
    assert out["language"] == "en" and 2.5 < out["duration_s"] < 3.5 and out["elapsed_s"] > 0
    assert [s["code"] for s in out["symbols"]] == ["NVDA", "AAPL"]
    first = out["symbols"][0]
    assert {"code", "name", "market", "score", "span"} <= set(first)
    assert first["market"] == "us" and len(first["span"]) == 2
    assert "NVIDIA (NVDA)" in out["query"]


def test_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(str(AUDIO / "boeing_slow.amr")) == 0
    out = capsys.readouterr().out
    assert "query:      Give me" in out and "Boeing (BA)" in out and "\n  BA " in out


def test_unusable_and_missing_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "note.ogg"
    bad.write_bytes(b"\x00garbage" * 100)
    assert _run(str(bad), "--json") == 1
    assert json.loads(capsys.readouterr().out)["error"] == "AudioUndecodable"
    assert _run(str(tmp_path / "missing.ogg")) == 2
    assert "no such file" in capsys.readouterr().err


def test_lang_accepts_only_mandarin_or_english(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _run(str(AUDIO / "zh_moutai_catl.amr"), "--lang", "yue")
    assert "invalid choice: 'yue'" in capsys.readouterr().err
