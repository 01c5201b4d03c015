"""`bot.malloc.limit_arenas` (issue 28 item 8): set from inside the process, it bounds the malloc
arenas of the threads started after it, which is what kept `serve`'s RSS flat under the soak.
Checked in fresh interpreters by glibc's own count (`malloc_stats` prints one "Arena N:" per
arena): eight threads that each malloc make eight more arenas without it, two at most with it."""

from __future__ import annotations

import platform
import re
import subprocess
import sys

import pytest

from bot.malloc import limit_arenas

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="glibc only")

_CHILD = r"""
import ctypes, sys, threading
from bot.malloc import limit_arenas
limited = limit_arenas(int(sys.argv[1]))
libc = ctypes.CDLL(None)
libc.malloc.restype = ctypes.c_void_p
start = threading.Barrier(8)
held = []
def work():
    start.wait()  # all alive at once: no thread can inherit a finished one's arena
    held.append(libc.malloc(4096))  # glibc's malloc (Python's small objects bypass it)
    start.wait()
threads = [threading.Thread(target=work) for _ in range(8)]
for t in threads: t.start()
for t in threads: t.join()
print(limited, flush=True)
libc.malloc_stats()  # to stderr
"""


def _arenas(limit: int) -> tuple[bool, int]:
    out = subprocess.run([sys.executable, "-c", _CHILD, str(limit)], capture_output=True,
                         text=True, timeout=120, check=True)
    return out.stdout.strip() == "True", len(re.findall(r"^Arena \d+:", out.stderr, re.M))


def test_without_a_limit_every_thread_gets_its_own_arena() -> None:
    limited, arenas = _arenas(0)
    assert not limited
    assert arenas >= 8  # the main one and one per thread (up to 8 per core)


def test_with_a_limit_of_two_the_threads_share_two_arenas() -> None:
    limited, arenas = _arenas(2)
    assert limited
    assert arenas <= 2


def test_zero_is_glibcs_default() -> None:
    assert limit_arenas(0) is False


_TRIM_CHILD = r"""
import threading
from bot.malloc import trim

def rss():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
kept = []

def work():  # what a start-up thread does: many mid-sized chunks, most freed, a few kept
    chunks = [bytearray(4000) for _ in range(40_000)]
    kept.extend(chunks[::200])
    del chunks

t = threading.Thread(target=work)
t.start(); t.join()
before = rss()
print(trim(), before - rss())
"""


def test_trim_gives_a_threads_freed_chunks_back() -> None:
    """Serve trims once its start-up is done (bot.malloc.trim): what a thread allocated and
    freed (~150 MB here, 1 in 200 chunks kept) goes back to the system."""
    out = subprocess.run([sys.executable, "-c", _TRIM_CHILD], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert out[0] == "True"
    assert int(out[1]) > 50_000  # kB returned
