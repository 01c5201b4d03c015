"""`bullpen tools synth "TASK"|list|run NAME --args JSON|show NAME|revoke NAME`: tools the LLM
writes.

`synth` has the configured model write a tool for the task, verifies it with its own tests in
the sandbox on snapshot data and stores it (at most 3 versions; offline it says it needs a
model). `run` calls the newest verified version in the sandbox. `revoke` takes every version of
a tool away from the agent at once (a running serve refuses it at its next call). Prints JSON
lines.
"""

from __future__ import annotations

import argparse
import asyncio
import json
from typing import Any

from bot.cli.runtime import CLIError, running_app


def register(sub: Any) -> None:
    p = sub.add_parser("tools", help="tools the model writes for itself (sandboxed)")
    tools = p.add_subparsers(dest="tools_command", required=True)
    s = tools.add_parser("synth", help="have the model write and verify a tool for a task")
    s.add_argument("task")
    lst = tools.add_parser("list", help="stored tools and versions, newest first")
    lst.add_argument("--status", choices=["provisional", "verified", "deprecated", "failed",
                                          "revoked"])
    r = tools.add_parser("run", help="run the newest verified version of a tool")
    r.add_argument("name")
    r.add_argument("--args", default="{}", help='JSON object, e.g. \'{"symbol": "NVDA"}\'')
    w = tools.add_parser("show", help="one tool's code, traces and error reports")
    w.add_argument("name")
    v = tools.add_parser("revoke", help="take every version of a tool away from the agent")
    v.add_argument("name")
    p.set_defaults(func=lambda a: asyncio.run(handle(a)))


def _print(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        print(json.dumps(row, ensure_ascii=False, default=str))


def _args(text: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise CLIError(f"--args is not JSON: {exc.msg}") from None
    if not isinstance(value, dict):
        raise CLIError("--args must be a JSON object")
    return value


async def handle(args: argparse.Namespace) -> int:
    from core.errors import BullpenError
    from tools.evolve import (
        SynthesisNeedsModel,
        Synthesizer,
        describe_outcome,
        generated_spec,
        run_generated,
    )

    parsed_args = _args(args.args) if args.tools_command == "run" else {}
    async with running_app() as app:
        repo = app.store.tool_artifacts
        if args.tools_command == "synth":
            try:
                outcome = await Synthesizer(llm=app.llm, repo=repo).synthesise(args.task)
            except SynthesisNeedsModel as exc:
                raise CLIError(str(exc)) from None
            _print([describe_outcome(outcome)])
            return 0 if outcome.status != "failed" else 1
        if args.tools_command == "list":
            _print([{"name": a.name, "version": a.version, "status": a.status,
                     "hash": a.content_hash[:12], "attempts": a.attempts,
                     "permissions": a.permissions, "description": a.description,
                     "created_at": a.created_at} for a in await repo.listing(status=args.status)])
            return 0
        if args.tools_command == "revoke":
            count = await repo.revoke(args.name)
            if not count and not any(a.name == args.name for a in await repo.listing()):
                raise CLIError(f"no tool named {args.name!r}")
            _print([{"name": args.name, "revoked_versions": count}])
            return 0
        if args.tools_command == "show":
            versions = [a for a in await repo.listing() if a.name == args.name]
            if not versions:
                raise CLIError(f"no tool named {args.name!r}")
            for a in versions:
                _print([{"name": a.name, "version": a.version, "status": a.status,
                         "hash": a.content_hash, "parent_id": a.parent_id, "code": a.code,
                         "traces": [vars(t) for t in await repo.traces(a.id)],
                         "errors": await repo.error_reports(a.id)}])
            return 0
        artifact = await repo.latest(args.name, status="verified")
        if artifact is None:
            raise CLIError(f"no verified tool named {args.name!r} (bullpen tools list)")
        spec = generated_spec(artifact, repo=repo)
        try:
            valid = spec.validate(parsed_args)
            result = await run_generated(artifact, valid.model_dump(), repo=repo)
        except BullpenError as exc:
            raise CLIError(str(exc), code=1) from None
        _print([result.model_dump(mode="json")])
    return 0
