"""Every fetcher's transform over fixtures shaped on real responses; empty or changed shapes
fail with a clear DataUnavailable naming the provider."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

import pytest

from core.errors import DataUnavailable
from tools.data import fetcher as fx
from tools.data import providers


def _fixtures() -> Any:
    """tests/tools/provider_fixtures.py (pytest runs with --import-mode=importlib)."""
    name = "bullpen_tools_provider_fixtures"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(
            name, Path(__file__).with_name("provider_fixtures.py"))
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


providers.load()
FIXTURES = _fixtures()
CASES = FIXTURES.cases()
ak_columns = FIXTURES.ak_columns


def _fetcher(provider: str, dataset: str, name: str, query: Any) -> fx.Fetcher[Any, Any]:
    for f in fx.fetchers(dataset):
        if f.provider != provider:
            continue
        func_for = getattr(f, "func_for", None)
        if func_for is not None and func_for(query) != name:
            continue
        return f
    raise AssertionError(f"no fetcher for {provider} {dataset} {name}")


def test_every_registered_fetcher_has_a_fixture() -> None:
    covered = {type(_fetcher(p, d, n, q)) for (p, d, n), (q, _raw) in CASES.items()}
    missing = {type(f).__name__ for f in fx.all_fetchers()} - {c.__name__ for c in covered}
    assert not missing, f"fetchers without a contract fixture: {missing}"


@pytest.mark.parametrize("case", list(CASES), ids=lambda c: "/".join(c))
def test_transform_gives_the_standard_model(case: tuple[str, str, str]) -> None:
    query, raw = CASES[case]
    f = _fetcher(*case, query)
    result = f.transform(query, raw)
    assert isinstance(result, f.result_model)
    assert result.source.provider == case[0]
    assert len(result.model_dump_json()) < 200_000


def _changed(raw: Any) -> Any:
    if isinstance(raw, dict) and "columns" in raw:
        return {"columns": [f"{c}_v2" for c in raw["columns"]], "rows": raw["rows"]}
    if isinstance(raw, dict):
        return {"unexpected": True}
    return [{"headline": "no title field any more"}]


def _empty(raw: Any) -> Any:
    if isinstance(raw, dict) and "columns" in raw:
        return {"columns": [], "rows": []}  # what akshare returns when an endpoint fails
    if isinstance(raw, dict):
        return {}
    return None


@pytest.mark.parametrize("case", list(CASES), ids=lambda c: "/".join(c))
def test_changed_shape_is_data_unavailable(case: tuple[str, str, str]) -> None:
    query, raw = CASES[case]
    f = _fetcher(*case, query)
    with pytest.raises(DataUnavailable) as err:
        f.transform(query, _changed(raw))
    assert err.value.provider == case[0]
    assert str(err.value).startswith(f"{case[0]}: ")


@pytest.mark.parametrize("case", list(CASES), ids=lambda c: "/".join(c))
def test_empty_response_is_data_unavailable(case: tuple[str, str, str]) -> None:
    query, raw = CASES[case]
    f = _fetcher(*case, query)
    with pytest.raises(DataUnavailable) as err:
        f.transform(query, _empty(raw))
    assert err.value.provider == case[0]


def test_fixtures_use_the_documented_akshare_columns() -> None:
    for (provider, _dataset, name), (_q, raw) in CASES.items():
        if provider == "akshare" and name != "stock_financial_abstract":
            assert raw["columns"] == [c for c, _ in ak_columns(name)], name
