"""Layer 1 alone: what the AST check refuses, and ordinary analysis code it lets through."""

from __future__ import annotations

import pytest

from tools.sandbox import check_code
from tools.sandbox.ast_check import describe

ORDINARY = [
    "import pandas_ta as ta\nresult = {'rsi': ta.rsi(df['close'], length=14).iloc[-1]}",
    "import numpy as np\nimport pandas as pd\nr = np.log(df['close']).diff()\n"
    "result = {'vol': float(r.std() * np.sqrt(252)), 'dates': df.index.strftime('%Y/%m/%d')[-3:]"
    ".tolist()}",
    "from datetime import timedelta\nimport math, json, statistics\n"
    "result = json.dumps({'x': math.sqrt(2), 'm': statistics.mean([1, 2, 3])})",
    "import matplotlib.pyplot as plt\nfig, ax = plt.subplots()\nax.plot(df['close'])\n"
    "fig.savefig('close.png')\nresult = 'ok'",
    "with open('notes.txt', 'w') as fh:\n    fh.write('a/b ... c')\nresult = 1",
    "def test_x():\n    assert 1\n\nif __name__ == '__main__':\n    test_x()\nresult = 2",
    "class Box:\n    def __init__(self, v):\n        self.v = v\nresult = Box(3).v",
]


@pytest.mark.parametrize("code", ORDINARY)
def test_ordinary_analysis_code_passes(code: str) -> None:
    assert check_code(code) == []


@pytest.mark.parametrize(("code", "kind", "says"), [
    ("import os", "import", "import of 'os' is not allowed"),
    ("from os import path", "import", "import of 'os'"),
    ("import pandas.io.common as c", "attribute", "import of 'pandas.io.common'"),
    ("import pandas as pd\nc = pd.core.common\nc.os.getcwd()", "attribute", "attribute .os"),
    ("from pandas.io import common", "attribute", "import of 'pandas.io'"),
    ("from . import x", "import", "relative imports"),
    ("from numpy import *", "import", "importing '*'"),
    ("import dataclasses\nf = dataclasses.inspect.currentframe()", "attribute",
     "attribute .inspect"),
    ("try:\n    1 / 0\nexcept Exception as e:\n    g = e.__traceback__", "dunder",
     ".__traceback__"),
    ("import numpy as np\nnp.load('a.npy', allow_pickle=True)", "call", "allow_pickle="),
    ("import numpy as np\nnp.load('a.npy', **{'allow_pickle': True})", "call",
     "'allow_pickle'"),
    ("import pandas as pd\npd.read_pickle('a.pkl')", "attribute", ".read_pickle"),
    ("eval('1')", "call", "'eval' is not allowed"),
    ("exec('x = 1')", "call", "'exec' is not allowed"),
    ("compile('1', 'f', 'eval')", "call", "'compile' is not allowed"),
    ("f = getattr", "call", "'getattr' is not allowed"),
    ("x = ().__class__", "dunder", ".__class__"),
    ("x = __builtins__", "call", "'__builtins__' is not allowed"),
    ("x = '__subclasses__'", "dunder", "names a dunder attribute"),
    ("open(name)", "path", "literal file name"),
    ("open('/etc/passwd')", "path", "outside the work directory"),
    ("import pandas as pd\npd.read_csv('../../secret.csv')", "path", "outside the work"),
    ("import pandas as pd\npd.read_pickle('x.pkl')", "attribute", ".read_pickle"),
    ("result = (", "syntax", "syntax error"),
    # strings a library evaluates: typing's forward references, str.format's lookups
    ("import typing\ndef f(x: \"__import__('os')\"): pass\ntyping.get_type_hints(f)",
     "dunder", "names a dunder attribute"),
    ("def f(x: \"exec('1')\"): pass", "call", "calls a banned function"),
    ("result = '{0.__class__}'.format(1)", "dunder", "names a dunder attribute"),
    ("import typing\nh = typing.get_type_hints", "attribute", ".get_type_hints"),
])
def test_refused(code: str, kind: str, says: str) -> None:
    found = check_code(code)
    assert found, code
    assert any(v.kind == kind for v in found), found
    assert says in describe(found)


def test_description_names_lines_and_caps_the_list() -> None:
    code = "\n".join(f"import os{i}" for i in range(12))
    text = describe(check_code(code))
    assert text.startswith("the code was refused before running: line 1:")
    assert "and 4 more" in text
