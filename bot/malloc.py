"""glibc's allocator, set for a process that runs for days (issue 28 item 8: `serve`'s RSS crept
by ~4 MB a minute under a soak while the Python objects alive stayed flat).

What grew was not objects: tracemalloc, started after warm-up, saw 1.5-2.5 MB of live
allocations throughout while RSS rose 613 -> 628 MB in five minutes. It was glibc's arenas:
every thread that mallocs gets its own (up to 8 per core), and the threads of the default
executor (`asyncio.to_thread`: the offline analyst's and the tools' pandas work) each fragment
theirs, freed chunks held but not returned. With at most `MALLOC_ARENA_MAX` arenas the same
soak is flat (`bullpen bench soak`). Side by side on one machine (50 chats, 5 minutes): 7-11
thread arenas and 634.8 -> 637.7 MB with glibc's default; one thread arena and 585.9 MB at
every minute with 2. Without the limit the creep comes in steps when more executor threads
get busy (one 15-minute run stayed within 1.3 %, another grew 18 MB in 5 minutes); with it,
no step was seen in any run. `limit_arenas` sets that limit from inside the process
(`mallopt(M_ARENA_MAX)`, which glibc reads when a thread first needs an arena), so it holds
for every thread started after it: `bullpen serve` calls it before the App starts any.
A no-op where the C library is not glibc (musl, macOS).
"""

from __future__ import annotations

import ctypes
import platform

M_ARENA_MAX = -8  # glibc's malloc.h


def limit_arenas(n: int) -> bool:
    """At most `n` malloc arenas for threads started from now on (0: glibc's default). True
    when the limit was set."""
    if n <= 0 or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL(None)
        return bool(libc.mallopt(ctypes.c_int(M_ARENA_MAX), ctypes.c_int(n)))
    except (OSError, AttributeError):
        return False


def trim() -> bool:
    """Give the memory glibc holds free back to the system (`malloc_trim(0)`: every arena,
    not only the top of the main heap). Serve calls it once its start-up is done: loading the
    symbols directory and reading every offline series for the start-up line leave freed
    chunks in the arenas of the threads that did it (issue 34). False where the C library is
    not glibc."""
    if platform.libc_ver()[0] != "glibc":
        return False
    try:
        return bool(ctypes.CDLL(None).malloc_trim(ctypes.c_size_t(0)))
    except (OSError, AttributeError):
        return False
