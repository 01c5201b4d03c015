"""The `bullpen` command as a user runs it: a process with nothing configured (forked warm by
`tests/warm_bullpen.py`; the first test starts it cold, as a user does)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from tests import warm_bullpen

ROOT = Path(__file__).resolve().parents[2]
BULLPEN = [sys.executable, "-m", "bot.cli"]


def _env(tmp_path: Path, env: dict[str, str]) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("BULLPEN_", "DATABASE_URL", "TELEGRAM_"))}
    base.update({"BULLPEN_DATA_DIR": str(tmp_path / "data"), **env})
    return base


def run(args: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return warm_bullpen.run(args, cwd=tmp_path, env=_env(tmp_path, env), timeout=180)


def test_ask_offline_answers_with_a_number_and_the_data_date(pg_server, tmp_path):
    dsn = pg_server  # reuse the session server so the test needs no second initdb
    out = subprocess.run([*BULLPEN, "ask", "What is NVDA's latest close?"], cwd=tmp_path,
                         env=_env(tmp_path, {"DATABASE_URL": dsn}), capture_output=True,
                         text=True, timeout=180)  # cold, as a user starts it
    assert out.returncode == 0, out.stderr
    assert re.search(r"\$\d+\.\d\d", out.stdout)
    assert re.search(r"\d{4}-\d{2}-\d{2}", out.stdout)
    assert "offline analyst" in out.stdout


def test_ask_json_prints_the_event_stream_ending_in_done(pg_server, tmp_path):
    out = run(["ask", "--json", "RSI and MACD of AAPL"], tmp_path, DATABASE_URL=pg_server)
    assert out.returncode == 0, out.stderr
    events = [json.loads(line) for line in out.stdout.splitlines() if line.strip()]
    assert events[-1]["type"] == "done"
    assert {"tool_started", "tool_finished"} <= {e["type"] for e in events}
    assert "RSI" in events[-1]["text"]


def test_ask_with_embedded_postgres_when_database_url_is_unset(tmp_path):
    out = run(["ask", "AAPL quote"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "AAPL" in out.stdout
    assert (tmp_path / "data" / "pgdata" / "PG_VERSION").exists()


def test_unreachable_database_is_one_clear_line_and_exit_2(tmp_path):
    out = run(["ask", "hi"], tmp_path,
              DATABASE_URL="postgresql://bullpen:hunter2@127.0.0.1:1/bullpen")
    assert out.returncode == 2
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "cannot reach the database" in lines[0]
    assert "hunter2" not in out.stderr


def test_db_status_lists_applied_migrations(pg_server, tmp_path):
    out = run(["db", "migrate"], tmp_path, DATABASE_URL=pg_server)
    assert out.returncode == 0, out.stderr
    out = run(["db", "status"], tmp_path, DATABASE_URL=pg_server)
    assert "applied  0001_init" in out.stdout


def test_lint_imports_fails_when_an_adapter_imports_tools(tmp_path):
    probe = ROOT / "adapters" / "_probe_forbidden.py"
    probe.write_text("import tools.market  # noqa: F401\n")
    try:
        out = subprocess.run([str(Path(sys.executable).parent / "lint-imports"), "--no-cache"],
                             cwd=ROOT, capture_output=True, text=True, timeout=300)
    finally:
        probe.unlink()
    assert out.returncode != 0
    assert "adapters only translate" in out.stdout and "BROKEN" in out.stdout


def test_serve_shuts_down_cleanly_on_sigterm(pg_server, tmp_path):
    import signal
    import time

    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("BULLPEN_", "DATABASE_URL", "TELEGRAM_"))}
    base.update({"BULLPEN_DATA_DIR": str(tmp_path / "data"), "DATABASE_URL": pg_server})
    proc = subprocess.Popen([*BULLPEN, "serve"], cwd=tmp_path, env=base, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        assert proc.stdout is not None
        line = ""
        while time.monotonic() < deadline and "console" not in line:
            line = proc.stdout.readline()
        assert "console" in line  # the console chat started: nothing else is configured
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
