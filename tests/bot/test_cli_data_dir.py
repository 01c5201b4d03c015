"""Every CLI command reads the data packs from BULLPEN_DATA_DIR (issue 29): `bullpen
transcribe`, `debate` and `podcast` used to read the repository's data/packs whatever the
setting said, so a data directory elsewhere was "not installed"."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot.cli import main, runtime
from bot.voice.backends import WHISPER_BASE_PACK, base_model_path
from tools.data import DataConfig, configure, packs
from tools.data.config import DEFAULT_PACKS_DIR

AUDIO = Path(__file__).resolve().parents[1] / "fixtures" / "audio" / "latest_nvda_aapl.wav"


@pytest.fixture(autouse=True)
def _data_layer(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.delenv("DATABASE_URL", raising=False)  # debate: no report reuse
    configure(DataConfig())
    yield
    configure(DataConfig())


def _data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, *linked: str) -> Path:
    """A data directory elsewhere whose packs/ holds `linked` packs (links to the installed
    ones), as BULLPEN_DATA_DIR."""
    data = tmp_path / "elsewhere"
    (data / "packs").mkdir(parents=True)
    for name in linked:
        if not (DEFAULT_PACKS_DIR / name).is_dir():
            pytest.fail(f"data pack {name} is not installed in {DEFAULT_PACKS_DIR}")
        (data / "packs" / name).symlink_to(DEFAULT_PACKS_DIR / name)
    monkeypatch.setenv("BULLPEN_DATA_DIR", str(data))
    return data / "packs"


def test_transcribe_looks_for_the_whisper_model_in_the_data_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    where = _data_dir(tmp_path, monkeypatch)
    monkeypatch.setenv("BULLPEN_WHISPER_MODEL", "base")
    assert main(["transcribe", str(AUDIO)]) == 2
    err = capsys.readouterr().err
    assert f"'{WHISPER_BASE_PACK}' is not installed" in err and str(where.resolve()) in err


def test_transcribe_finds_the_whisper_model_in_the_data_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    where = _data_dir(tmp_path, monkeypatch, WHISPER_BASE_PACK)
    runtime.use_data_dir()  # what `bullpen` does before any command
    assert packs.packs_dir() == where.resolve()
    assert base_model_path().is_relative_to(where.resolve())


def test_debate_reads_its_bars_from_the_data_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    where = _data_dir(tmp_path, monkeypatch)  # nothing there: said, naming where it looked
    assert main(["debate", "000001"]) == 1
    err = capsys.readouterr().err
    assert "data pack 'hqchart' is not installed" in err and str(where.resolve()) in err


def test_debate_answers_from_packs_in_the_data_dir(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
        capsys: pytest.CaptureFixture[str]) -> None:
    _data_dir(tmp_path, monkeypatch, "hqchart")
    monkeypatch.chdir(tmp_path)  # not the repository: its data/packs is out of reach
    assert main(["debate", "000001", "--json"]) == 0
    out = capsys.readouterr().out
    assert '"ticker": "000001"' in out and "hqchart" in out  # the bars it read
