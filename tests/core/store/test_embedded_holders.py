"""A Bullpen process killed with -9 stays in the embedded server's list of holders, so the
server was never stopped: the next start forgets the dead ones."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from core.store.database import _forget_dead_holders


def test_dead_holders_are_forgotten_and_live_ones_kept(tmp_path: Path) -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # exited and reaped: its pid is dead
    holders = tmp_path / ".handle_pids.json"
    holders.write_text(json.dumps([os.getpid(), child.pid]))
    assert _forget_dead_holders(holders) == [child.pid]
    assert json.loads(holders.read_text()) == [os.getpid()]
    assert _forget_dead_holders(holders) == []  # nothing more to forget


def test_a_missing_or_broken_list_is_left_alone(tmp_path: Path) -> None:
    assert _forget_dead_holders(tmp_path / "missing.json") == []
    broken = tmp_path / "broken.json"
    broken.write_text("{not json")
    assert _forget_dead_holders(broken) == [] and broken.read_text() == "{not json"
