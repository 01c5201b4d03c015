"""CPU per test, for the suite's time budget (issue 31).

With `BULLPEN_TEST_CPU=<file>` each pytest process appends one JSON line per test: its node
id, its xdist worker and start time (a timeline of the run), wall seconds, its own CPU seconds
and its children's over setup, call and teardown: the `bullpen`, CLI and sandbox subprocesses
a test waits for, and the processes `tests/warm_bullpen.py` forks for it (counted as their
exits are reported, so a process killed at a test's end may land on the next test). The
embedded Postgres is not a child (pg_ctl detaches it) and is not counted.
`python tests/cpu_ledger.py <file>` sums the lines by file, most CPU first: on 2 cores the
suite can take no less than half its CPU.
"""

from __future__ import annotations

import json
import os
import resource
import sys
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager

ENV = "BULLPEN_TEST_CPU"


def _cpu(who: int) -> float:
    use = resource.getrusage(who)
    spent = use.ru_utime + use.ru_stime
    if who == resource.RUSAGE_CHILDREN:  # and the processes forked for this one, as they exit
        from tests.warm_bullpen import children_cpu_s

        spent += children_cpu_s()
    return spent


@contextmanager
def ledger(nodeid: str) -> Iterator[None]:
    """Write `nodeid`'s CPU to the ledger when `BULLPEN_TEST_CPU` names one."""
    path = os.environ.get(ENV)
    if not path:
        yield
        return
    began = time.time()
    wall, own, kids = time.perf_counter(), _cpu(resource.RUSAGE_SELF), \
        _cpu(resource.RUSAGE_CHILDREN)
    try:
        yield
    finally:
        line = {"test": nodeid, "worker": os.environ.get("PYTEST_XDIST_WORKER", ""),
                "start": round(began, 3), "wall": round(time.perf_counter() - wall, 3),
                "self": round(_cpu(resource.RUSAGE_SELF) - own, 3),
                "children": round(_cpu(resource.RUSAGE_CHILDREN) - kids, 3)}
        with open(path, "a", encoding="utf-8") as out:
            out.write(json.dumps(line) + "\n")


def summary(path: str, top: int = 30) -> str:
    by_file: dict[str, list[float]] = defaultdict(lambda: [0.0, 0.0, 0.0, 0.0])
    for raw in open(path, encoding="utf-8"):
        row = json.loads(raw)
        acc = by_file[row["test"].split("::", 1)[0]]
        acc[0] += row["self"]
        acc[1] += row["children"]
        acc[2] += row["wall"]
        acc[3] += 1
    total = sum(a[0] + a[1] for a in by_file.values())
    lines = [f"CPU in tests: {total:.0f} s over {len(by_file)} files "
             f"(a 2-core floor of {total / 2 / 60:.1f} min)",
             f"{'cpu s':>8} {'self':>7} {'kids':>7} {'wall s':>7} {'tests':>5}  file"]
    for name, (own, kids, wall, n) in sorted(by_file.items(), key=lambda kv: -sum(kv[1][:2]))[
            :top]:
        lines.append(f"{own + kids:8.1f} {own:7.1f} {kids:7.1f} {wall:7.1f} {int(n):5d}  {name}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(summary(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 30))
