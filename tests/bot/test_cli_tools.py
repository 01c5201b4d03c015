"""`bullpen tools` as a user runs it: offline synthesis says it needs a model; a stored,
verified tool runs in the sandbox; bad arguments are told."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import asyncpg

from core.store.tool_artifacts import ToolArtifactsRepo
from tests import warm_bullpen

CODE = '''
import pandas as pd


def last_close_change(bars: pd.DataFrame, days: int = 5) -> float:
    """Percent change of the close over the last `days` bars.

    Args:
        days: how many bars back.
    """
    close = bars["close"]
    return round(float(close.iloc[-1] / close.iloc[-1 - days] * 100 - 100), 4)


def test_change():
    assert abs(last_close_change(bars, 1)) < 50
'''


def run(args: list[str], tmp_path: Path, dsn: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("BULLPEN_", "DATABASE_URL", "TELEGRAM_"))}
    env.update({"BULLPEN_DATA_DIR": str(tmp_path / "data"), "DATABASE_URL": dsn})
    return warm_bullpen.run(["tools", *args], cwd=tmp_path, env=env, timeout=600)


def test_synth_offline_says_it_needs_a_model(pg_dsn: str, tmp_path: Path) -> None:
    out = run(["synth", "ATR as a percent of price"], tmp_path, pg_dsn)
    assert out.returncode == 2
    assert "needs a language model" in out.stderr and "run_ta_script" in out.stderr


async def test_run_list_and_bad_arguments(pg_dsn: str, tmp_path: Path) -> None:
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=1)
    try:
        await ToolArtifactsRepo(pool).register(name="last_close_change", version="0.1.0",
                                               code=CODE, status="verified")
    finally:
        await pool.close()
    out = run(["run", "last_close_change", "--args", '{"symbol": "NVDA", "days": 1}'],
              tmp_path, pg_dsn)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["tool"] == "last_close_change" and answer["symbol"] == "NVDA"
    assert isinstance(answer["result"], float) and answer["source"]["offline"]

    bad = run(["run", "last_close_change", "--args", '{"symbol": "NVDA", "days": "x"}'],
              tmp_path, pg_dsn)
    assert bad.returncode == 1 and "invalid arguments" in bad.stderr and "days" in bad.stderr
    listed = run(["list"], tmp_path, pg_dsn)
    assert listed.returncode == 0
    [row] = [json.loads(line) for line in listed.stdout.splitlines()]
    assert row["name"] == "last_close_change" and row["status"] == "verified"
    assert row["permissions"] == ["calc_only"]
    shown = run(["show", "last_close_change"], tmp_path, pg_dsn)
    [version] = [json.loads(line) for line in shown.stdout.splitlines()]
    assert version["code"].strip() == CODE.strip()
    # one traced call: the bad arguments were refused before anything ran
    assert [(t["kind"], t["ok"]) for t in version["traces"]] == [("call", True)]


async def test_revoke_takes_every_version_away(pg_dsn: str, tmp_path: Path) -> None:
    pool = await asyncpg.create_pool(pg_dsn, min_size=1, max_size=1)
    try:
        repo = ToolArtifactsRepo(pool)
        for version in ("0.1.0", "0.1.1"):
            await repo.register(name="last_close_change", version=version,
                                code=CODE + f"\n# {version}\n", status="verified")
    finally:
        await pool.close()
    out = run(["revoke", "last_close_change"], tmp_path, pg_dsn)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"name": "last_close_change", "revoked_versions": 2}
    listed = [json.loads(line) for line in run(["list"], tmp_path, pg_dsn).stdout.splitlines()]
    assert {row["status"] for row in listed} == {"revoked"}
    refused = run(["run", "last_close_change", "--args", '{"symbol": "NVDA"}'], tmp_path,
                  pg_dsn)
    assert refused.returncode != 0 and "no verified tool" in refused.stderr
    missing = run(["revoke", "no_such_tool"], tmp_path, pg_dsn)
    assert missing.returncode != 0 and "no tool named" in missing.stderr
