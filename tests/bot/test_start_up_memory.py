"""What a serving process loads before anyone asks for it (issue 34: serve under 250 MB after
warm-up). Drawing (matplotlib, ~48 MB with its fonts) loads on the first chart, and the
`openai` client (~20 MB with its pydantic types) on the first model or speech call, not at
start-up: checked in a fresh interpreter, since this test process has long since imported
everything."""

from __future__ import annotations

import json
import subprocess
import sys

# what serve needs only on first use: a chart or a PDF, a model or a speech endpoint, voice,
# a parquet file (pyarrow: pandas starts without it, bot.lean_pandas)
ON_FIRST_USE = ("matplotlib", "PIL", "fpdf", "openai", "faster_whisper", "ctranslate2",
                "pyarrow")
# what `bullpen serve` imports to start, after what `bot.cli.main` does first: the CLI, the
# App with every mode and tool, the Telegram and console adapters, the scheduler, the start-up
# lines
PROBE = """
import json, sys
from bot.lean_pandas import without_pyarrow
without_pyarrow()
import tools
tools.build_registry()
import bot.app, bot.cli, bot.cli.runtime, bot.cli.startup, jobs.runner, debate.report
import adapters.telegram, adapters.console
print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))
"""


def test_the_app_and_every_tool_register_without_loading_the_drawing_stack() -> None:
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    loaded = set(json.loads(out.splitlines()[-1]))
    assert "tools" in loaded and "bot" in loaded  # the probe ran
    assert sorted(loaded & set(ON_FIRST_USE)) == []


def test_the_first_chart_loads_it() -> None:
    probe = PROBE.replace("print(", "import tools.chart_draw\nprint(")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert "matplotlib" in json.loads(out.splitlines()[-1])


def test_the_first_model_or_speech_client_loads_openai() -> None:
    probe = PROBE.replace("print(", """
from core.llm import LLMRouter, ModelProfile
from core.llm.speech import SpeechClient, SpeechProfile
router = LLMRouter(default=ModelProfile(name="m", base_url="http://127.0.0.1:9/v1", model="m"))
assert "openai" not in sys.modules
router._provider(router.profile())
SpeechClient(SpeechProfile(base_url="http://127.0.0.1:9/v1"))
print(""")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert "openai" in json.loads(out.splitlines()[-1])


def test_the_start_up_coverage_line_keeps_no_bars() -> None:
    """The start-up line reads every offline series for its first and last dates; the bars
    are not kept (they held ~25 MB in serve's cache before anyone asked about them)."""
    from analyst.offline import _coverage
    from tools import snapshot

    before = snapshot._load_in.cache_info().currsize
    _coverage.cache_clear()
    try:
        covered = _coverage("start-up probe")
    finally:
        _coverage.cache_clear()
    assert covered  # the snapshot has series here
    assert snapshot._load_in.cache_info().currsize == before


def test_a_parquet_read_loads_pyarrow_and_a_cik_lookup_not_edgartools() -> None:
    """pandas starts without pyarrow (bot.lean_pandas); the first parquet read loads it. The
    local CIK lookup reads edgartools' ticker table without importing edgartools (~65 MB more
    beyond pyarrow)."""
    probe = PROBE.replace("print(", """
assert "pyarrow" not in sys.modules
from tools.data.sec_provider import local_cik
assert local_cik("AAPL") == ("0000320193", "Apple Inc.")
print(""")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    loaded = set(json.loads(out.splitlines()[-1]))
    assert "pyarrow" in loaded
    assert "edgar" not in loaded
