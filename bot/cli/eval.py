"""`bullpen eval`: the evaluation question set, answered by the configured model (or the
offline analyst), scored by code; prints a Markdown table and the JSON of the run.

    bullpen eval                       # the configured model, else the offline analyst
    bullpen eval --offline             # the offline analyst even when a model is configured
    bullpen eval --local-model         # SmolLM2-135M on loopback (`make test-llm` installs it)
    bullpen eval --local-model 0.5b    # the pinned Qwen model `bullpen model install` put in
                                       # the data directory, as BULLPEN_LLM=local serves it
    bullpen eval --kinds quote,chat --limit 10 --timeout 120 --json eval.json

The data is always the offline snapshot, so every run sees the same figures; the expected
ones are computed from it at run time. For a model, the largest request sent (prompt counted
by the server, plus `max_tokens`) is reported against the profile's context window.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the questions, the scorer and the model client load when eval runs
    from bot.eval.questions import Question
    from bot.eval.score import Row
    from core.llm import LLMRouter


def register(sub: Any) -> None:
    p = sub.add_parser("eval", help="answer the evaluation questions and score them")
    p.add_argument("--offline", action="store_true", help="the offline analyst, not a model")
    p.add_argument("--local-model", nargs="?", const="smollm2", default=None,
                   choices=["smollm2", "0.5b", "1.5b"], dest="local_model",
                   help="start a model behind llama.cpp on loopback (the `llm` extra) and "
                        "evaluate it with an 8,192-token profile: SmolLM2-135M (default), or "
                        "the 0.5b/1.5b Qwen model `bullpen model install` installed")
    p.add_argument("--max-tokens", type=int, default=None, dest="max_tokens",
                   help="max_tokens of a model call that names none (the profile's default)")
    p.add_argument("--kinds", default="", help="comma-separated: quote, range, compare, "
                   "indicator, ict, unknown, chat, period, dates, metric, collision, sentence, "
                   "market, prediction, advice, unavailable, stale (default all)")
    p.add_argument("--lang", choices=["en", "zh"], default=None)
    p.add_argument("--limit", type=int, default=None, help="at most N questions")
    p.add_argument("--ids", default="", help="comma-separated question ids (of those chosen)")
    p.add_argument("--timeout", type=float, default=180.0, help="seconds per question")
    p.add_argument("--json", default=None, help="also write the JSON here")
    p.add_argument("--markdown", default=None, help="also write the Markdown table here")
    p.set_defaults(func=handler)


def select(args: argparse.Namespace) -> list[Question]:
    from bot.eval.questions import QUESTIONS

    kinds = {k.strip() for k in args.kinds.split(",") if k.strip()}
    unknown = kinds - {q.kind for q in QUESTIONS}
    if unknown:
        raise SystemExit(f"bullpen eval: unknown kind(s): {', '.join(sorted(unknown))}")
    ids = {i.strip() for i in getattr(args, "ids", "").split(",") if i.strip()}
    chosen = [q for q in QUESTIONS if (not kinds or q.kind in kinds)
              and (args.lang is None or q.lang == args.lang) and (not ids or q.id in ids)]
    return chosen[: args.limit] if args.limit else chosen


def handler(args: argparse.Namespace) -> int:
    return asyncio.run(_run(args))


def _progress(row: Row) -> None:
    mark = "ok " if row.correct else "MISS"
    english = f" english={','.join(row.english[:5])}" if row.english else ""
    print(f"{mark} {row.id:<16} {row.wall_s:6.1f}s tools={row.tool_calls} "
          f"unsupported={len(row.unsupported)}{english} {row.error[:80]}", file=sys.stderr,
          flush=True)


async def _run(args: argparse.Namespace) -> int:
    import tools
    from bot.app import build_llm
    from bot.cli.runtime import settings as load
    from bot.eval.local_model import MODEL_NAME
    from core.llm import LLMRouter, ModelProfile
    from tools.data.config import DataConfig, configure

    questions = select(args)
    settings = load()
    configure(DataConfig(mode="offline", packs_dir=settings.packs_dir))
    registry = tools.build_registry()
    logging.getLogger("core.llm").setLevel(logging.INFO)
    if args.local_model in ("0.5b", "1.5b"):
        from bot.local_llm import MODELS, LocalServer, gguf_path, installed

        pin = MODELS[args.local_model]
        if not installed(pin, settings.data_dir):
            raise SystemExit(f"bullpen eval: run `bullpen model install {pin.key}` first")
        async with LocalServer(gguf_path(pin, settings.data_dir), model=pin.model,
                               ctx=settings.llm_local_context_tokens,
                               threads=settings.llm_local_threads) as server:
            qwen = LLMRouter(default=server.profile(
                pin.key, timeout_s=settings.llm_timeout_s,
                max_output_tokens=args.max_tokens or settings.llm_max_tokens))
            return await _evaluate(args, questions, registry, qwen, settings, server=server)
    if args.local_model:
        from bot.eval.local_model import LocalModel

        async with LocalModel() as local:
            smol = LLMRouter(default=ModelProfile(
                name="smollm2", base_url=local.base_url, model=MODEL_NAME, timeout_s=180.0,
                max_retries=1, max_output_tokens=args.max_tokens or 320))
            return await _evaluate(args, questions, registry, smol, settings)
    llm = None if args.offline else build_llm(settings)
    if llm is not None and args.max_tokens:
        llm = LLMRouter(default=llm.chain("agent")[0].model_copy(
            update={"max_output_tokens": args.max_tokens}))
    return await _evaluate(args, questions, registry, llm, settings)


async def _evaluate(args: argparse.Namespace, questions: list[Question], registry: Any,
                    llm: LLMRouter | None, settings: Any, server: Any = None) -> int:
    """`server`: the local model's `LocalServer`, whose pace at start and memory after the
    run are reported beside the table (what the local profile costs on this machine)."""
    from analyst.offline import OfflineAnalyst
    from bot.eval.run import recording_ict, run_questions
    from bot.eval.score import markdown, to_json
    from bot.symbols_bridge import find_period, find_symbols
    from core.agent import NormalMode

    extra: dict[str, Any] = {}
    try:
        if llm is None:
            model = "offline analyst"

            def make(reg: Any, tool_log: Any) -> Any:
                return OfflineAnalyst(registry=reg, find_symbols=find_symbols,
                                      ict_answer=recording_ict(tool_log))
        else:
            profile = llm.chain("agent")[0]
            model = f"{profile.model} ({profile.base_url})"

            def make(reg: Any, tool_log: Any) -> Any:
                return NormalMode(llm=llm, registry=reg, plan=settings.llm_plan,
                                  small=profile.small, find_symbols=find_symbols,
                                  find_period=find_period)

        rows = await run_questions(questions, make, registry, timeout_s=args.timeout,
                                   progress=_progress)
        if llm is not None:
            extra = {"context_tokens": await llm.context_tokens("agent"),
                     "max_request_tokens": llm.peak_request_tokens()}
            print(f"largest request: {extra['max_request_tokens']:,} tokens of a "
                  f"{extra['context_tokens']:,}-token window", file=sys.stderr)
        if server is not None:
            extra |= _server_cost(server)
    finally:
        if llm is not None:
            await llm.aclose()
    _report(args, markdown(model, rows, extra), to_json(model, rows, extra))
    return 0


def _server_cost(server: Any) -> dict[str, Any]:
    """The local server's pace as measured at its start (tokens/s read and written) and its
    resident memory now, its process and children."""
    import psutil

    out: dict[str, Any] = {"prompt_tps_at_start": round(server.prompt_tps or 0.0, 1),
                           "gen_tps_at_start": round(server.gen_tps or 0.0, 1)}
    if server.pid is not None:
        try:
            top = psutil.Process(server.pid)
            rss = sum(p.memory_info().rss for p in [top, *top.children(recursive=True)])
            out["server_rss_mb"] = round(rss / 2**20)
        except psutil.Error:
            pass
    return out


def _report(args: argparse.Namespace, table: str, data: dict[str, Any]) -> None:
    print(table)
    print()
    print(json.dumps(data, ensure_ascii=False, indent=1))
    if args.json:
        Path(args.json).write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(table + "\n")
