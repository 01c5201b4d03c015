"""Per-run context that tools deep in a call stack can reach without explicit passing.

A tool that produces a chart calls `emit_file(...)`; the agent loop turns it into a `File`
event. Outside a run (CLI, tests, jobs) the calls are collected on a default context.
"""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from dataclasses import dataclass, field

from core.types import OutgoingFile


@dataclass
class RunContext:
    user_id: str | None = None
    conversation_id: str | None = None
    lang: str = "en"
    on_status: Callable[[str], None] | None = None
    files: list[OutgoingFile] = field(default_factory=list)
    on_file: Callable[[OutgoingFile], None] | None = None
    # the chat's timeframe for this turn (`/ict SYMBOL TF`): tools honour it over the
    # model's arguments
    interval: str | None = None


_current: ContextVar[RunContext | None] = ContextVar("bullpen_run_context", default=None)


def current() -> RunContext:
    ctx = _current.get()
    if ctx is None:
        ctx = RunContext()
        _current.set(ctx)
    return ctx


def use(ctx: RunContext) -> object:
    """Make `ctx` current; returns a token for `reset`."""
    return _current.set(ctx)


def reset(token: object) -> None:
    _current.reset(token)  # type: ignore[arg-type]


def emit_status(text: str) -> None:
    ctx = current()
    if ctx.on_status is not None:
        ctx.on_status(text)


def emit_file(file: OutgoingFile) -> None:
    ctx = current()
    ctx.files.append(file)
    if ctx.on_file is not None:
        ctx.on_file(file)
