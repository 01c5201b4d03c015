"""pandas without pyarrow (bot.lean_pandas): `bullpen` starts pandas that way, the test session
too, and a parquet file still reads to the same values as pandas with pyarrow reads it."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

import pandas as pd
import pytest

from bot import lean_pandas

# a frame's values as plain JSON (strings, numbers, None for missing; timestamps as ISO)
_DUMP = """
import json, sys
import pandas as pd
def dump(df):
    out = {}
    for c in df.columns:
        col = df[c].astype(object).where(df[c].notna(), None)
        out[c] = [v.isoformat() if hasattr(v, "isoformat") else v for v in col.tolist()]
    return {"columns": list(df.columns), "dtypes": [str(t) for t in df.dtypes], "values": out}
"""
_READ = _DUMP + """
path, columns, filters = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
df = pd.read_parquet(path, columns=columns, filters=[tuple(f) for f in filters] or None)
print(json.dumps(dump(df)))
"""


def _edgar_tickers() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("edgar")
    assert spec is not None and spec.origin is not None
    return Path(spec.origin).parent / "reference" / "data" / "company_tickers.parquet"


def _read(path: Path, *, lean: bool, columns: list[str] | None = None,
          filters: Sequence[Sequence[object]] | None = None) -> dict[str, object]:
    head = "from bot.lean_pandas import without_pyarrow\nwithout_pyarrow()\n" if lean else ""
    args = [str(path), json.dumps(columns), json.dumps([list(f) for f in filters or ()])]
    out = subprocess.run([sys.executable, "-c", head + _READ, *args], capture_output=True,
                         text=True, timeout=120, check=True,
                         cwd=Path(__file__).resolve().parents[2])
    result: dict[str, object] = json.loads(out.stdout.splitlines()[-1])
    return result


def test_the_test_session_runs_pandas_as_bullpen_does() -> None:
    assert lean_pandas.active()
    assert pd.Series(["a", None]).dtype.storage == "python"


def test_the_cli_starts_pandas_without_pyarrow() -> None:
    probe = ("import sys\nfrom bot.cli import main\ntry:\n    main(['--help'])\n"
             "except SystemExit:\n    pass\nimport pandas as pd\n"
             "print('pyarrow' in sys.modules, pd.Series(['a']).dtype.storage)")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.splitlines()[-1] == "False python"
    # and a plain interpreter does import it with pandas (what the lean start avoids)
    plain = subprocess.run([sys.executable, "-c", "import sys, pandas\n"
                            "print('pyarrow' in sys.modules)"],
                           capture_output=True, text=True, timeout=120, check=True).stdout
    assert plain.splitlines()[-1] == "True"


def test_pandas_imported_before_it_is_too_late() -> None:
    """`without_pyarrow` says so when pandas already started with pyarrow (this is why the
    CLI calls it before any command runs)."""
    probe = ("import pandas\nfrom bot.lean_pandas import without_pyarrow, active\n"
             "print(without_pyarrow(), active())")
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.splitlines()[-1] == "False False"


def test_a_parquet_file_reads_the_same_as_with_pyarrow(tmp_path: Path) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({
        "ticker": ["AAPL", None, "茅台", "BRK-B"],
        "cik": pa.array([320193, 2, None, 1067983], type=pa.int64()),
        "close": [189.5, None, 1688.0, 412.25],
        "day": pa.array([1_700_000_000_000, None, 1_700_086_400_000, 0],
                        type=pa.timestamp("ms", tz="America/New_York")),
        "listed": [True, False, None, True],
    })
    path = tmp_path / "rows.parquet"
    pq.write_table(table, path)
    for columns, filters in ((None, None), (["ticker", "close"], [["ticker", "==", "AAPL"]])):
        lean = _read(path, lean=True, columns=columns, filters=filters)
        plain = _read(path, lean=False, columns=columns, filters=filters)
        assert lean == plain
        assert lean["values"]["ticker"][0] == "AAPL"  # type: ignore[index]


@pytest.mark.parametrize("columns", [None, ["ticker", "cik"]])
def test_edgartools_ticker_table_reads_the_same_as_with_pyarrow(columns: list[str] | None
                                                                ) -> None:
    """The parquet serve reads (`tools.data.sec_provider`, the symbols build), real data."""
    path = _edgar_tickers()
    lean, plain = _read(path, lean=True, columns=columns), _read(path, lean=False,
                                                                 columns=columns)
    assert len(lean["values"]["ticker"]) > 10_000  # type: ignore[index]
    assert lean == plain
