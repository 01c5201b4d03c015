"""Verified generated tools, offered to the agent like `@tool` ones: the schema comes from the
function's signature, and every call runs in the sandbox (calculation only: no network, no file
writes at all) and is traced."""

from __future__ import annotations

import logging
import time
from typing import Any

from pydantic import BaseModel, Field

from core.errors import ToolError
from core.store.tool_artifacts import ToolArtifact, ToolArtifactsRepo
from core.tools import ToolRegistry, ToolSpec
from tools.bars import normalize_interval
from tools.data.prices import get_bars
from tools.evolve.shape import BARS, read_shape
from tools.market import source_from
from tools.models import DataSource
from tools.sandbox import Sandbox, ScriptFailed, default_sandbox
from tools.symbol_lookup import resolve_symbol

log = logging.getLogger(__name__)
MAX_BARS = 2000
TAG = "generated"


class GeneratedToolResult(BaseModel):
    """The answer of a tool the LLM wrote (verified by its own tests, run in the sandbox)."""

    tool: str
    version: str
    result: Any
    symbol: str | None = None
    bars: int | None = Field(default=None, description="bars handed to the tool")
    source: DataSource | None = None
    note: str = "computed by a generated tool, sandboxed (calculation only)"


async def run_generated(artifact: ToolArtifact, args: dict[str, Any], *,
                        repo: ToolArtifactsRepo | None,
                        sandbox: Sandbox | None = None) -> GeneratedToolResult:
    """Call a stored tool with validated `args` in the sandbox; traced when `repo` is given.
    Raises ScriptFailed with the sandbox's reason when it fails."""
    shape = read_shape(artifact.code)
    call_args = dict(args)
    frames = {}
    symbol: str | None = None
    source: DataSource | None = None
    if shape.takes_bars:
        sym = resolve_symbol(str(call_args.pop("symbol")))
        interval = normalize_interval(str(call_args.pop("interval", "1d")))
        df = (await get_bars(sym, interval)).iloc[-MAX_BARS:]
        frames[BARS] = df[["open", "high", "low", "close", "volume"]]
        symbol, source = sym.code, source_from(df)
    started = time.perf_counter()
    run = await (sandbox or default_sandbox()).run(
        artifact.code, mode="call", entry=shape.name, args=call_args, frames=frames,
        frame_args=(BARS,) if shape.takes_bars else (), writable=False)
    if repo is not None:
        await repo.trace(tool_id=artifact.id, kind="call", ok=run.ok, status=run.status,
                         input=args, output=run.result if run.ok else None,
                         error="" if run.ok else run.message(),
                         elapsed_ms=(time.perf_counter() - started) * 1000)
    if not run.ok:
        raise ScriptFailed(f"the generated tool {artifact.name} v{artifact.version} failed: "
                           f"{run.message()}", run)
    return GeneratedToolResult(tool=artifact.name, version=artifact.version, result=run.result,
                               symbol=symbol, bars=len(frames[BARS]) if frames else None,
                               source=source)


def generated_spec(artifact: ToolArtifact, *, repo: ToolArtifactsRepo | None,
                   sandbox: Sandbox | None = None) -> ToolSpec:
    """A ToolSpec for a stored tool: the agent sees its schema; calls go to the sandbox."""
    shape = read_shape(artifact.code)
    model = shape.args_model()

    async def call(**kwargs: Any) -> GeneratedToolResult:
        if repo is not None:  # revoked since it was offered: never run again
            current = await repo.get(artifact.id) if artifact.id is not None else None
            if current is None or current.status != "verified":
                raise ToolError(f"the generated tool {artifact.name} v{artifact.version} is "
                                f"{current.status if current else 'gone'} and is not run")
        return await run_generated(artifact, kwargs, repo=repo, sandbox=sandbox)

    return ToolSpec(name=artifact.name, description=f"{shape.description} (generated tool "
                                                    f"v{artifact.version}, sandboxed)",
                    func=call, args_model=model, result_type=GeneratedToolResult,
                    label=f"Running the generated tool {artifact.name}", tags=frozenset({TAG}))


async def offer_verified(registry: ToolRegistry, repo: ToolArtifactsRepo, *,
                         sandbox: Sandbox | None = None) -> list[str]:
    """Add the newest verified version of each generated tool to `registry` (a name that a
    built-in tool has is skipped); returns the names added."""
    added: list[str] = []
    for artifact in await repo.verified():
        if artifact.name in registry:
            if TAG not in registry.get(artifact.name).tags:
                log.warning("generated tool %s shadows a built-in tool; not offered",
                            artifact.name)
            continue
        try:
            registry.add(generated_spec(artifact, repo=repo, sandbox=sandbox))
        except ValueError as exc:  # a stored tool that no longer reads as one
            log.warning("generated tool %s v%s not offered: %s", artifact.name,
                        artifact.version, exc)
            continue
        added.append(artifact.name)
    return added
