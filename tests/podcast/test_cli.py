"""`bullpen podcast`: offline when no model is configured, JSON and files out."""

from __future__ import annotations

import json

import pytest

from bot.cli import main
from podcast import PodcastScript


@pytest.fixture
def offline_env(monkeypatch, tmp_path):
    for name in ("BULLPEN_LLM_BASE_URL", "BULLPEN_LLM_MODEL", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("BULLPEN_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.chdir(tmp_path)  # no .env from the checkout
    return tmp_path


def test_cli_json_and_files(offline_env, capsys):
    out = offline_env / "episode"
    assert main(["podcast", "NVDA", "TSLA", "AAPL", "--json", "--out", str(out)]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert set(data) >= {"script", "notes", "budget", "tickers", "llm_calls", "markets"}
    assert "debates" not in data and data["offline"] and data["llm_calls"] == 0
    script = PodcastScript.model_validate(data["script"])
    assert [c.name for c in script.chapter] == [
        "opening", "theme", "ticker:NVDA", "ticker:TSLA", "ticker:AAPL", "closing"]
    assert [t["state"] for t in data["tickers"]] == ["debated"] * 3
    assert "... [NVDA] debating..." in captured.err and "note [offline]" in captured.err
    written = PodcastScript.model_validate_json((out / "script.json").read_text("utf-8"))
    assert written == script
    assert (out / "script.md").read_text("utf-8").startswith("# Bullpen daily podcast: ")


def test_cli_markdown_in_chinese_and_bad_input(offline_env, capsys):
    assert main(["podcast", "NVDA", "--lang", "zh", "--date", "2024-06-28"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# Bullpen 每日播客：2024-06-28") and "**主持人**：" in out
    assert main(["podcast", "--lang", "zh"]) == 2
    assert "请至少提供一个股票代码" in capsys.readouterr().err
    assert main(["podcast"]) == 2
    assert "Name at least one ticker" in capsys.readouterr().err
    assert main(["podcast", "ORCL"]) == 1  # known, but no data offline: said, exit 1
    captured = capsys.readouterr()
    assert "No debate for ORACLE CORP (ORCL) today" in captured.out
    assert "no ticker could be debated" in captured.err
