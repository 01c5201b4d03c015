"""Tool evolution (seed 004): when no tool fits a task, the LLM writes one.

synthesise(task): the LLM writes a typed, documented function with its own tests -> the shape
is read (AST) -> the AST security check -> the tests run in the sandbox on frozen snapshot bars
-> the version is registered (semantic version, content hash, status). On failure the error is
classified and reported, and the refiner asks the LLM for a patch, up to `max_attempts`
versions in all; the last failure marks the tool failed. Every check and run is traced. The
same code twice is stored once (content hash).
"""

from __future__ import annotations

import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import pandas as pd

from core.errors import ConfigError
from core.ports import LLMProvider
from core.store.tool_artifacts import ToolArtifact, ToolArtifactsRepo, content_hash
from core.types import ChatMessage
from tools.evolve.shape import ShapeError, ToolShape, extract_code, read_shape
from tools.sandbox import Sandbox, SandboxRun, default_sandbox
from tools.sandbox.ast_check import describe
from tools.sandbox.policy import ALLOWED_TEXT

MAX_ATTEMPTS = 3
TEST_SYMBOL = "NVDA"
TEST_BARS = 500

SYSTEM = f"""You write one Python tool for a financial research agent. Reply with one ```python
code block and nothing else. The code defines:
- exactly one tool function with typed parameters (int, float, str, bool, list[float],
  list[int], list[str]) and a docstring: first line says what it computes, then an Args:
  section. If it works on price bars its FIRST parameter is `bars: pd.DataFrame` (indexed by
  date; columns open, high, low, close, volume); the caller supplies the bars. It returns JSON
  values: numbers, strings, lists, dicts.
- at least one test function named test_..., with plain asserts, that calls the tool on the
  global `bars` (frozen {TEST_SYMBOL} daily bars) and checks the result is right.
Allowed imports: {ALLOWED_TEXT}. Not allowed: files, network, processes, eval/exec, getattr,
any __dunder__ attribute."""

REFINE = """The tool failed ({category}): {error}
Fix it. Reply with the whole corrected code in one ```python block."""

# error text -> category (the refiner tells the model which kind of mistake it made)
ERROR_PATTERNS: tuple[tuple[str, str], ...] = (
    (r"syntax error|SyntaxError|IndentationError", "syntax"),
    (r"refused before running|sandbox:", "security"),
    (r"ImportError|ModuleNotFoundError", "import"),
    (r"AssertionError", "test_failed"),
    (r"NameError|UnboundLocalError", "name"),
    (r"TypeError", "type"),
    (r"KeyError|IndexError", "key"),
    (r"ZeroDivisionError|FloatingPointError", "zero_division"),
    (r"ValueError", "value"),
    (r"timeout|did not finish|CPU time", "timeout"),
    (r"MemoryError|memory limit", "memory"),
)


def classify(error: str) -> str:
    for pattern, category in ERROR_PATTERNS:
        if re.search(pattern, error):
            return category
    return "other"


class SynthesisNeedsModel(ConfigError):
    """Tool synthesis asks an LLM to write code; offline (no model configured) it cannot."""


@dataclass
class Attempt:
    number: int
    artifact_id: int | None
    version: str
    ok: bool
    category: str = ""
    error: str = ""


@dataclass
class SynthesisOutcome:
    task: str
    status: Literal["verified", "failed", "deduplicated"]
    artifact: ToolArtifact | None
    attempts: list[Attempt] = field(default_factory=list)

    @property
    def message(self) -> str:
        a = self.artifact
        if self.status == "verified" and a is not None:
            return (f"{a.name} v{a.version} is verified ({len(self.attempts)} attempt"
                    f"{'s' if len(self.attempts) != 1 else ''}) and offered to the agent")
        if self.status == "deduplicated" and a is not None:
            return f"the same code is already stored as {a.name} v{a.version} ({a.status})"
        last = self.attempts[-1] if self.attempts else None
        return (f"no working tool after {len(self.attempts)} attempts; last error "
                f"({last.category if last else '?'}): {last.error if last else ''}")[:1200]


@dataclass
class _Check:
    ok: bool
    category: str = ""
    error: str = ""
    artifact: ToolArtifact | None = None
    duplicate: bool = False
    report_id: int | None = None


BarsLoader = Callable[[], Awaitable[pd.DataFrame]]


async def snapshot_test_bars() -> pd.DataFrame:
    """Frozen bars the tests run on: the offline snapshot's NVDA daily bars."""
    from tools import snapshot

    return snapshot.load(TEST_SYMBOL).iloc[-TEST_BARS:][["open", "high", "low", "close",
                                                        "volume"]]


class Synthesizer:
    def __init__(self, *, llm: LLMProvider | None, repo: ToolArtifactsRepo,
                 sandbox: Sandbox | None = None, max_attempts: int = MAX_ATTEMPTS,
                 test_bars: BarsLoader = snapshot_test_bars, role: str = "agent") -> None:
        self.llm = llm
        self.repo = repo
        self.sandbox = sandbox
        self.max_attempts = max_attempts
        self.test_bars = test_bars
        self.role = role

    async def _ask(self, messages: list[ChatMessage]) -> str:
        assert self.llm is not None
        resp = await self.llm.complete(messages, role=self.role)
        return extract_code(resp.content)

    async def synthesise(self, task: str) -> SynthesisOutcome:
        if self.llm is None:
            raise SynthesisNeedsModel(
                "writing a new tool needs a language model, and none is configured (set "
                "BULLPEN_LLM_BASE_URL, BULLPEN_LLM_MODEL and BULLPEN_LLM_API_KEY); the sandbox, "
                "run_ta_script and the strategies work without one")
        messages = [ChatMessage(role="system", content=SYSTEM),
                    ChatMessage(role="user", content=f"Task: {task}")]
        code = await self._ask(messages)
        outcome = SynthesisOutcome(task=task, status="failed", artifact=None)
        parent: _Check | None = None
        for number in range(1, self.max_attempts + 1):
            check = await self.verify(code, task=task, attempt=number, parent=parent)
            artifact = check.artifact
            outcome.attempts.append(Attempt(
                number=number, artifact_id=artifact.id if artifact else None,
                version=artifact.version if artifact else "", ok=check.ok,
                category=check.category, error=check.error))
            outcome.artifact = artifact
            if check.duplicate and number == 1 and artifact is not None:
                outcome.status = "deduplicated"
                return outcome
            if check.ok:
                outcome.status = "verified"
                return outcome
            parent = check
            if number == self.max_attempts:
                break
            messages += [ChatMessage(role="assistant", content=f"```python\n{code}```"),
                         ChatMessage(role="user", content=REFINE.format(
                             category=check.category, error=check.error))]
            code = await self._ask(messages)
        return outcome

    async def verify(self, code: str, *, task: str = "", attempt: int = 1,
                     parent: _Check | None = None) -> _Check:
        """Shape, AST check and tests of one version; registered whatever the verdict."""
        existing = await self.repo.by_hash(content_hash(code))
        if existing is not None:
            ok = existing.status == "verified"
            reports = await self.repo.error_reports(existing.id)
            last = reports[-1] if reports else {}
            return _Check(ok=ok, artifact=existing, duplicate=True,
                          category=str(last.get("category", "")),
                          error=str(last.get("message", "")) or (
                              "" if ok else f"this exact code was already tried "
                                            f"({existing.status})"))
        try:
            shape: ToolShape | None = read_shape(code)
            problem: tuple[str, str] | None = None
        except ShapeError as exc:
            shape, problem = None, (exc.category, str(exc))
        name = shape.name if shape else _fallback_name(parent)
        parent_art = parent.artifact if parent else None
        if parent_art is not None and parent_art.name == name:
            version = await self.repo.next_version(name, "patch")
        else:
            version = await self.repo.next_version(name, "minor")
        artifact, _ = await self.repo.register(
            name=name, version=version, code=code, task=task,
            description=shape.description if shape else "",
            parameters=shape.args_model().model_json_schema() if shape else {},
            attempts=attempt, parent_id=parent_art.id if parent_art else None)
        sandbox = self.sandbox or default_sandbox()
        started = time.perf_counter()
        run: SandboxRun | None = None
        if problem is None:
            violations = sandbox.check(code)
            if violations:
                problem = ("security", describe(violations))
        if problem is not None:
            trace_id = await self.repo.trace(
                tool_id=artifact.id, kind="check", ok=False, status="blocked",
                input={"attempt": attempt}, error=problem[1],
                elapsed_ms=(time.perf_counter() - started) * 1000)
            return await self._failed(artifact, trace_id, problem[0], problem[1], parent)
        bars = await self.test_bars()
        run = await sandbox.run(code, mode="test", frames={"bars": bars}, writable=False)
        passed = run.ok and bool(run.tests) and all(t.ok for t in run.tests)
        error = "" if passed else _test_error(run)
        if passed and (reason := _not_contained(run)):  # its own tests are not enough
            passed, error = False, reason
        trace_id = await self.repo.trace(
            tool_id=artifact.id, kind="test", ok=passed, status=run.status,
            input={"attempt": attempt, "tests": shape.tests if shape else [],
                   "data": f"{TEST_SYMBOL} 1d x{len(bars)} (snapshot)"},
            output=[t.model_dump() for t in run.tests], error=error,
            elapsed_ms=run.elapsed_s * 1000)
        if not passed:
            return await self._failed(artifact, trace_id, classify(error), error, parent)
        await self.repo.set_status(artifact.id, "verified")
        await self._patched(parent, artifact, attempt)
        verified = await self.repo.get(artifact.id)
        return _Check(ok=True, artifact=verified)

    async def _failed(self, artifact: ToolArtifact, trace_id: int, category: str, error: str,
                      parent: _Check | None) -> _Check:
        report_id = await self.repo.report_error(tool_id=artifact.id, trace_id=trace_id,
                                                 category=category, message=error)
        await self.repo.set_status(artifact.id, "failed")
        await self._patched(parent, artifact, artifact.attempts)
        return _Check(ok=False, category=category, error=error,
                      artifact=await self.repo.get(artifact.id), report_id=report_id)

    async def _patched(self, parent: _Check | None, artifact: ToolArtifact, attempt: int) -> None:
        if parent is not None and parent.artifact is not None:
            await self.repo.record_patch(from_id=parent.artifact.id, to_id=artifact.id,
                                         report_id=parent.report_id, attempt=attempt)


def _fallback_name(parent: _Check | None) -> str:
    return parent.artifact.name if parent and parent.artifact else "unnamed_tool"


def _not_contained(run: SandboxRun) -> str:
    """Why passing tests do not verify this tool: they did not run in the OS jail with its
    filter and the guard, or the code reached for something outside its inputs (even if it
    caught the refusal). Empty when the run counts."""
    iso = run.isolation
    if iso.get("jail") != "bubblewrap" or not iso.get("seccomp") or not iso.get("guard"):
        return ("sandbox: the tests did not run inside the full OS sandbox (jail, seccomp and "
                "guard), so the tool cannot be verified on this host")
    if run.refusals:
        return "sandbox: the tool reached outside its inputs: " + "; ".join(run.refusals[:3])
    return ""


def _test_error(run: SandboxRun) -> str:
    if not run.ok:
        return run.message()
    if not run.tests:
        return "no test_ functions ran"
    failed = [t for t in run.tests if not t.ok]
    return "; ".join(f"{t.name} failed: {t.error}" for t in failed)[:2000]


def describe_outcome(outcome: SynthesisOutcome) -> dict[str, Any]:
    """JSON-ready summary for the CLI."""
    a = outcome.artifact
    return {"task": outcome.task, "status": outcome.status, "message": outcome.message,
            "tool": a.name if a else None, "version": a.version if a else None,
            "hash": a.content_hash[:12] if a else None,
            "attempts": [vars(x) for x in outcome.attempts]}
