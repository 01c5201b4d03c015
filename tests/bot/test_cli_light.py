"""`bullpen --help` builds its parser from light modules (issue 33), and a subcommand that
cannot be imported fails the CLI loudly instead of vanishing from it (issue 31).

Import weight is checked through `sys.modules` in a fresh interpreter, which holds on any
machine; the time itself is `bullpen bench cli`'s job, never asserted here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bot.benches.cli import HEAVY

ROOT = Path(__file__).resolve().parents[2]
# what the small commands never import (they may open a database and read the settings)
SMALL = ("bot.app", "bot.gateway", "bot.commands.context", "pandas", "matplotlib",
         "exchange_calendars", "ict", "debate", "openai", "telegram", "discord")


def _modules_after(code: str) -> set[str]:
    out = subprocess.run([sys.executable, "-c", code + "\nimport json, sys; "
                          "print(json.dumps(sorted(sys.modules)))"],
                         cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return set(json.loads(out.stdout.splitlines()[-1]))


def _heavy(loaded: set[str]) -> list[str]:
    return sorted(m for m in loaded if m in HEAVY or m.split(".")[0] in HEAVY)


def test_building_the_parser_imports_nothing_heavy() -> None:
    loaded = _modules_after("from bot.cli import build_parser; build_parser()")
    assert _heavy(loaded) == []
    assert "openai" not in loaded and "bot.gateway" not in loaded
    assert {"bot.cli.ict", "bot.cli.debate", "bot.cli.symbols"} <= loaded  # they registered


def test_help_runs_and_imports_nothing_heavy() -> None:
    code = ("import contextlib, io; from bot.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), "
            "contextlib.suppress(SystemExit):\n    main(['--help'])")
    assert _heavy(_modules_after(code)) == []


@pytest.mark.parametrize("command", ["ict", "debate", "symbols", "eval", "podcast", "data",
                                     "status", "web", "settings", "db"])
def test_a_subcommands_help_imports_nothing_heavy(command: str) -> None:
    code = ("import contextlib, io; from bot.cli import main\n"
            "with contextlib.redirect_stdout(io.StringIO()), "
            f"contextlib.suppress(SystemExit):\n    main([{command!r}, '--help'])")
    assert _heavy(_modules_after(code)) == []


def test_the_small_commands_import_what_they_need_not_the_app() -> None:
    """`status`, `web login`, `db`, `settings doc`, `data status|list`: a database and the
    settings at most, never the app, the command table (and its calendars) or pandas."""
    loaded = _modules_after(
        "import bot.cli.status, bot.cli.web, bot.cli.runtime, bot.cli.settings\n"
        "import bot.cli.data, bot.migrations, bot.web_links, bot.settings_doc\n"
        "import tools.data.packs, core.store, core.store.migrate")
    assert sorted(m for m in loaded if m in SMALL or m.split(".")[0] in SMALL) == []


def test_reading_the_settings_does_not_load_the_model_client() -> None:
    """Every command reads the settings first (the data directory): no `openai` for that."""
    loaded = _modules_after("from bot.settings import load_settings; load_settings()")
    assert "openai" not in loaded and _heavy(loaded) == []


def test_a_subcommand_that_cannot_import_fails_loudly(monkeypatch: pytest.MonkeyPatch) -> None:
    import bot.cli

    monkeypatch.setattr(bot.cli, "FEATURE_MODULES",
                        (*bot.cli.FEATURE_MODULES, "bot.cli.no_such_command"))
    with pytest.raises(ModuleNotFoundError, match=r"bot\.cli\.no_such_command"):
        bot.cli.build_parser()


def test_a_broken_subcommand_module_breaks_the_command_line_visibly(tmp_path: Path) -> None:
    """Before, `except ImportError: continue` dropped `bullpen jobs` from the CLI silently."""
    code = ("import sys; sys.modules['bot.cli.jobs'] = None\n"
            "from bot.cli import main; sys.exit(main(['--help']))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BULLPEN_")}
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode != 0
    assert "bot.cli.jobs" in out.stderr and "usage:" not in out.stdout


def test_bench_cli_reports_help_against_python_c_pass() -> None:
    from bot.benches.cli import run

    out = run(repeat=1, reference_rounds=1)
    json.dumps(out)
    assert out["bench"] == "cli" and out["command"].endswith("--help")
    for key in ("help_wall", "help_cpu", "peer_wall", "peer_cpu", "reference_wall"):
        assert out[key]["median_s"] > 0 and out[key]["spread_s"] >= 0
    assert out["ratio_vs_peer_wall"] > 0 and "lower is better" in out["direction"]
    assert out["heavy_modules_loaded_by_parser"] == []


def test_bench_without_a_checkout_says_so_in_one_line(tmp_path: Path) -> None:
    """An installed bullpen has no tests/fakes: `bullpen bench gateway` says what it needs
    (one line, exit code 2 like every usage error), not a traceback. Simulated by pointing
    the checkout's fakes and the bench's fake at a directory that does not exist."""
    missing = tmp_path / "tests" / "fakes"
    code = ("import sys; from pathlib import Path\n"
            "import bot.cli.runtime as rt, bot.benches.gateway as g\n"
            f"rt.CHECKOUT_FAKES = Path({str(missing)!r})\n"
            f"g.FAKE = Path({str(missing / 'telegram_server.py')!r})\n"
            "from bot.cli import main; sys.exit(main(['bench', 'gateway', '--chats', '1']))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("BULLPEN_")}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 2, out.stderr
    assert out.stderr.strip().splitlines() == [
        "bullpen: `bullpen bench gateway` needs a checkout of the repository: it runs against "
        "the loopback fakes in tests/fakes/, which an installed bullpen does not ship"]
