"""Pieces of the memory, podcast and debate benches that decide what their figures mean: the
process tree the memory bench sums, the packages it says load on first use, and the production
settings the podcast and debate benches read (not copy)."""

from __future__ import annotations

import inspect
import os
import subprocess
import sys
import tempfile

from bot.benches import debate, memory, podcast
from bot.settings import load_settings
from podcast import produce_podcast


def test_the_tree_holds_children_and_processes_named_by_the_marker() -> None:
    with tempfile.TemporaryDirectory(prefix="bench-mem-tree-") as marker:
        # a child of ours, and a process that names the marker but is no child of the root
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        named = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)", marker])
        try:
            groups = memory.tree(os.getpid(), marker)
            assert groups["serve"] == [os.getpid()]
            assert child.pid in groups["serve_children"]
            # `named` is our child too, so it counts once, under serve's children
            assert named.pid in groups["serve_children"] and named.pid not in groups["postgres"]
            sizes = memory.measure_tree(os.getpid(), marker)
            assert sizes["tree"]["processes"] >= 3
            assert sizes["tree"]["pss_sum_mb"] > 0
            assert sizes["tree"]["rss_sum_mb"] >= sizes["serve"]["rss_mb"]
        finally:
            for proc in (child, named):
                proc.kill()
                proc.wait()


def test_mapped_packages_names_what_this_process_loaded() -> None:
    import numpy  # noqa: F401  # maps numpy's shared libraries

    assert "numpy" in memory.mapped_packages(os.getpid())


def test_podcast_bench_reads_production_concurrency() -> None:
    default = inspect.signature(produce_podcast).parameters["concurrency"].default
    assert podcast.production_concurrency() == default
    # five tickers, waves of `default`, each a ticker's chain, then the refiner
    waves = -(-len(podcast.TICKERS) // default)
    assert podcast.critical_path_s(default) == (waves * podcast.TICKER_CHAIN + 1) * 0.5


def test_debate_bench_reads_the_budget_from_the_settings() -> None:
    assert debate.production_budget() == load_settings().debate_token_budget
