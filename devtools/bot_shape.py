"""Issue 31's must-show numbers for `bot/`, measured from the source (prints JSON):

- lines by job (a module group per job),
- the largest class (methods, attributes assigned on self),
- `bot` modules that import each other in a circle (grimp, the graph import-linter builds;
  imports inside functions count; reported with and without those under TYPE_CHECKING),
- direct adapter calls (`.send(`, `.edit(`, `.send_file(` on something named like an adapter)
  outside the delivery seam (`bot/sender.py`; `tests/bot/test_delivery_seam.py` holds it at 0).

    .venv/bin/python devtools/bot_shape.py
"""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import grimp

ROOT = Path(__file__).resolve().parents[1]
BOT = ROOT / "bot"
JOBS = {  # first match wins
    "benches": ("bot/benches/",),
    "eval": ("bot/eval/",),
    "voice": ("bot/voice/",),
    "cli": ("bot/cli/",),
    "commands": ("bot/commands/", "bot/chat_admins.py",  # and their names before issue 31:
                 "bot/commands.py", "bot/command_table.py", "bot/admin_commands.py",
                 "bot/subscription_commands.py", "bot/ta_commands.py", "bot/web_commands.py"),
    "modes (offline analyst, plan, podcast, ICT answer)": (
        "bot/offline.py", "bot/offline_data.py", "bot/plan_mode.py", "bot/podcast_mode.py",
        "bot/ict_answer.py"),
    "message path (gateway, pipeline stages, budgets, spool, states)": (
        "bot/gateway.py", "bot/pipeline/", "bot/budget_gateway.py", "bot/spool.py",
        "bot/state_marks.py"),
    "delivery (sender, renderer, outbox, markup, format)": (
        "bot/sender.py", "bot/renderer.py", "bot/outbox.py", "bot/markup.py", "bot/format.py"),
    "web page support": ("bot/web_", ),
    "settings": ("bot/settings", ),
    "wiring (app, platforms, migrations, logs, models, symbols)": ("bot/",),
}
SEAM = ("bot/sender.py",)
_CALL = re.compile(r"\b(\w*adapter\w*|_adapter)\.(send|edit|send_file)\(")


def lines_by_job() -> dict[str, int]:
    out = dict.fromkeys(JOBS, 0)
    for path in sorted(BOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        job = next(j for j, prefixes in JOBS.items() if rel.startswith(prefixes))
        out[job] += len(path.read_text(encoding="utf-8").splitlines())
    return out


def largest_class() -> dict[str, object]:
    best: dict[str, object] = {"methods": -1}
    for path in sorted(BOT.rglob("*.py")):
        if "benches" in path.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ClassDef):
                continue
            methods = [n for n in node.body
                       if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
            attrs = {t.attr for m in methods for n in ast.walk(m)
                     if isinstance(n, ast.Assign | ast.AnnAssign)
                     for t in (n.targets if isinstance(n, ast.Assign) else [n.target])
                     if isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
                     and t.value.id == "self"}
            if len(methods) > int(best["methods"]):  # type: ignore[call-overload]
                best = {"class": f"{path.relative_to(ROOT).as_posix()}:{node.name}",
                        "methods": len(methods), "attributes": len(attrs)}
    return best


def import_circles(*, type_checking: bool) -> list[list[str]]:
    """The `bot` modules that import each other in a circle: each strongly connected group of
    the import graph with more than one module (benches left out). With `type_checking`
    False, imports under `if TYPE_CHECKING:` do not count (they never run)."""
    graph = grimp.build_graph("bot", exclude_type_checking_imports=not type_checking,
                              cache_dir=None)
    mods = sorted(m for m in graph.modules if not m.startswith("bot.benches"))
    edges = {m: sorted(i for i in graph.find_modules_directly_imported_by(m) if i in mods)
             for m in mods}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    groups: list[list[str]] = []

    def visit(m: str) -> None:  # Tarjan
        index[m] = low[m] = len(index)
        stack.append(m)
        for n in edges[m]:
            if n not in index:
                visit(n)
                low[m] = min(low[m], low[n])
            elif n in stack:
                low[m] = min(low[m], index[n])
        if low[m] == index[m]:
            group = []
            while True:
                n = stack.pop()
                group.append(n)
                if n == m:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for m in mods:
        if m not in index:
            visit(m)
    return sorted(groups)


def adapter_calls_outside_the_seam() -> list[str]:
    out = []
    for path in sorted(BOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel in SEAM or rel.startswith("bot/benches/"):
            continue
        text = path.read_text(encoding="utf-8")
        for i, line in enumerate(text.splitlines(), 1):
            if _CALL.search(line):
                out.append(f"{rel}:{i}: {line.strip()}")
    return out


if __name__ == "__main__":
    print(json.dumps({"bot_lines_by_job": lines_by_job(),
                      "bot_lines": sum(lines_by_job().values()),
                      "largest_class": largest_class(),
                      "import_circles": import_circles(type_checking=True),
                      "import_circles_at_run_time": import_circles(type_checking=False),
                      "adapter_calls_outside_the_seam": adapter_calls_outside_the_seam()},
                     indent=1, ensure_ascii=False))
