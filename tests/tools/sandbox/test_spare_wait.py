"""A spare's exit is seen when it exits, whatever its pipes: CPython 3.12's `Process.wait()`
also waits for the stdout pipe to close, and a process the run left holding it (or a full,
unread pipe) would hold the run, and the shutdown, for as long as it lives."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

from tools.sandbox.spare import Spare

# ready, then at `go` a grandchild keeps stdout open for a minute while the spare itself exits
SCRIPT = """
import os, sys, time
os.write(1, b"ready\\n")
sys.stdin.readline()
if os.fork() == 0:
    time.sleep(60)
    os._exit(0)
os._exit(0)
"""


async def test_a_spare_that_exits_is_seen_to_exit_while_a_child_holds_its_stdout(
        tmp_path: Path) -> None:
    spare = await Spare.start([sys.executable, "-c", SCRIPT], env=dict(os.environ),
                              workdir=tmp_path)
    try:
        await spare.go()
        code = await asyncio.wait_for(spare.proc.wait(), 20)
        assert code == 0
    finally:
        spare.kill()  # the grandchild is in the spare's process group
