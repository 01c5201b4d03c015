"""What a serving process loads before anyone asks for it (issue 34: serve under 250 MB after
warm-up). Drawing (matplotlib, ~48 MB with its fonts) loads on the first chart, not at start-up:
checked in a fresh interpreter, since this test process has long since imported everything."""

from __future__ import annotations

import json
import subprocess
import sys

# what serve needs only on first use: a chart or a PDF
ON_FIRST_USE = ("matplotlib", "PIL", "fpdf")
PROBE = """
import json, sys
import tools
tools.build_registry()
import bot.app, jobs.runner, debate.report
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
