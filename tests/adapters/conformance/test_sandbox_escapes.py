"""A chat user's /ta script, on every platform through its real SDK and fake, with every
sandbox layer on as `serve` runs it: the escape attempts of the OS-layer suite are refused and
said, the host's files, environment and network are untouched, and an ordinary script still
answers. (The same attempts with the Python layers off: tests/tools/sandbox.)"""

from __future__ import annotations

import os
from pathlib import Path

from tests.adapters.conformance.conftest import PlatformHarness
from tests.fakes.openai_server import FakeOpenAI, Turn

USER = 5
SECRET = "conformance-canary-51c2"


def attempts(target: Path) -> list[str]:
    return [
        "result = open('/etc/passwd').read()",
        f"import os\nresult = os.system('touch {target}')",
        "import pandas as pd\nresult = pd.io.common.os.listdir('/')",
        f"import numpy as np\nnp.save('{target}', np.arange(3))\nresult = 1",
        "import dataclasses\nresult = str(dataclasses.inspect.currentframe().f_back)",
        "import numpy as np\nresult = str(np.load('p.npy', allow_pickle=True))",
        "c = [k for k in ().__class__.__base__.__subclasses__()][0]\nresult = 1",
        "import pandas as pd\nresult = pd.read_csv(chr(47) + 'proc' + chr(47) + '1' + chr(47)"
        " + 'environ').to_json()",
    ]


async def test_ta_escape_attempts_are_refused_on_every_platform(
        harness: PlatformHarness, tmp_path: Path) -> None:
    os.environ["BULLPEN_ESCAPE_CANARY"] = SECRET
    target = tmp_path / "escaped.npy"
    try:
        async with FakeOpenAI(default=Turn(text="unused")) as llm, \
                harness.running(llm=llm, rate_messages_per_minute=0):
            for code in attempts(target):
                before = len(harness.visible_messages(USER))
                await harness.send_text(USER, f"/ta NVDA\n```python\n{code}\n```")
                await harness.wait_for(
                    lambda b=before: len(harness.visible_messages(USER)) > b, within_s=120)
                await harness.idle()
                said = harness.visible_messages(USER)[before:]
                text = "\n".join(said)
                assert "⚠️" in text and '"result"' not in text.replace(" ", ""), text
                assert SECRET not in text and "root:x:0:0" not in text
            ok_before = len(harness.visible_messages(USER))
            await harness.send_text(
                USER, "/ta NVDA\n```python\nresult = round(float(df['close'].iloc[-1]), 2)\n```")
            await harness.wait_for(
                lambda: len(harness.visible_messages(USER)) > ok_before, within_s=120)
            await harness.idle()
            assert "NVDA 1d" in "\n".join(harness.visible_messages(USER)[ok_before:])
    finally:
        os.environ.pop("BULLPEN_ESCAPE_CANARY", None)
    assert not target.exists()
