"""Every fetcher's transform over fixtures shaped on real responses; empty or changed shapes
fail with a clear DataUnavailable naming the provider. Cases come from provider_fixtures.py
(parametrised as `contract_case` by conftest.py)."""

from __future__ import annotations

from typing import Any

import pytest

from core.errors import DataUnavailable
from tools.data import fetcher as fx
from tools.data import providers

providers.load()
Case = tuple[str, str, str]


def _fetcher(provider: str, dataset: str, name: str, query: Any) -> fx.Fetcher[Any, Any]:
    for f in fx.fetchers(dataset):
        if f.provider != provider:
            continue
        func_for = getattr(f, "func_for", None)
        if func_for is not None and func_for(query) != name:
            continue
        return f
    raise AssertionError(f"no fetcher for {provider} {dataset} {name}")


def test_every_registered_fetcher_has_a_fixture(pf: Any) -> None:
    covered = {type(_fetcher(p, d, n, q)).__name__ for (p, d, n), (q, _raw) in pf.cases().items()}
    # local fetchers read installed data packs, not provider responses: their contract is
    # tested on the real pack files (tests/tools/test_offline_packs.py)
    missing = {type(f).__name__ for f in fx.all_fetchers() if not f.local} - covered
    assert not missing, f"fetchers without a contract fixture: {missing}"


def test_transform_gives_the_standard_model(pf: Any, contract_case: Case) -> None:
    query, raw = pf.cases()[contract_case]
    f = _fetcher(*contract_case, query)
    result = f.transform(query, raw)
    assert isinstance(result, f.result_model)
    assert result.source.provider == contract_case[0]
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


def test_changed_shape_is_data_unavailable(pf: Any, contract_case: Case) -> None:
    query, raw = pf.cases()[contract_case]
    f = _fetcher(*contract_case, query)
    with pytest.raises(DataUnavailable) as err:
        f.transform(query, _changed(raw))
    assert err.value.provider == contract_case[0]
    assert str(err.value).startswith(f"{contract_case[0]}: ")


def test_empty_response_is_data_unavailable(pf: Any, contract_case: Case) -> None:
    query, raw = pf.cases()[contract_case]
    f = _fetcher(*contract_case, query)
    with pytest.raises(DataUnavailable) as err:
        f.transform(query, _empty(raw))
    assert err.value.provider == contract_case[0]


def test_fixtures_use_the_documented_akshare_columns(pf: Any) -> None:
    for (provider, _dataset, name), (_q, raw) in pf.cases().items():
        if provider == "akshare" and name != "stock_financial_abstract":
            assert raw["columns"] == [c for c, _ in pf.ak_columns(name)], name
