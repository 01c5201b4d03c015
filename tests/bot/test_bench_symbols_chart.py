"""The symbols and chart benches at a small size: their peers do the work they are named for,
the held-out query set stays held out, and every report says how to read it. Timings are the
benches' to print, not these tests' to assert."""

from __future__ import annotations

import json

from bot.benches import chart, symbols
from tools.symbols import default_directory


def _heldout() -> dict[str, object]:
    data: dict[str, object] = json.loads(symbols._HELDOUT.read_text("utf-8"))
    return data


def test_the_heldout_set_never_repeats_the_tuned_set_and_names_real_codes() -> None:
    held = _heldout()
    tuned = json.loads(symbols._QUERIES.read_text("utf-8"))
    tuned_q = {x["q"].strip().lower() for x in tuned["resolve"] + tuned["ambiguous"]}
    tuned_t = {x["text"].strip().lower() for x in tuned["extract"]} | {
        x.strip().lower() for x in tuned["none"]}
    resolve, extract, none = held["resolve"], held["extract"], held["none"]
    assert isinstance(resolve, list) and isinstance(extract, list) and isinstance(none, list)
    assert len(resolve) + len(extract) + len(none) >= 100
    assert not [x["q"] for x in resolve if x["q"].strip().lower() in tuned_q]
    assert not [x["text"] for x in extract if x["text"].strip().lower() in tuned_t]
    assert not [x for x in none if x.strip().lower() in tuned_t]
    directory = default_directory()
    codes = {c for x in resolve for c in x["expect"].split("|")}
    codes |= {c for x in extract for e in x["expect"] for c in e.split("|")}
    assert not sorted(c for c in codes if directory.get(c) is None)
    # both languages
    assert any(any("\u4e00" <= ch <= "\u9fff" for ch in x["text"]) for x in extract)
    assert any(x["text"].isascii() for x in extract)


def test_the_rapidfuzz_peer_resolves_and_extracts_over_the_same_names() -> None:
    peer = symbols.RapidfuzzPeer(default_directory())
    assert peer.resolve("贵州茅台") == ["600519"]
    assert peer.resolve("$NVDA") == ["NVDA"]
    assert peer.resolve("Microsfot") == ["MSFT"]  # fuzzy: extractOne
    assert peer.extract("Compare AAPL and 贵州茅台") == ["AAPL", "600519"]


def test_symbols_bench_reports_both_sets_direction_and_load() -> None:
    out = symbols.run(repeat=1, postgres=False)
    assert "higher is better" in out["direction"]
    assert set(out["load_avg_1m"]) == {"start", "end"}
    for name in ("held_out", "tuned"):
        part = out[name]
        for kind in ("resolve", "extract"):
            for side in ("ours", "rapidfuzz_peer"):
                row = part[kind][side]
                assert row["n"] > 0
                assert row["cpu_p50_ms"] <= row["cpu_p99_ms"]
        for side in ("ours", "rapidfuzz_peer"):
            acc = part["accuracy"][side]
            assert 0.0 <= acc["resolve_top1"] <= 1.0 and 0.0 <= acc["extract_recall"] <= 1.0
    assert out["held_out"]["queries"] == len(_heldout()["resolve"])  # type: ignore[arg-type]
    assert out["long_inputs"]["worst_probes"] > 0


def test_chart_bench_renders_every_side_and_says_how_to_read_it() -> None:
    out = chart.run(repeat=1)
    assert "lower is better" in out["direction"]
    assert out["ours"]["png_bytes"] > 10_000
    for name in ("matplotlib", "mplfinance"):
        assert out["peers"][name]["png_bytes"] > 10_000
        assert out["peers"][name]["wall_ms"]["n"] == 1
    assert out["floor"]["cpu_ms"]["median"] is not None
    assert out["ratio_vs_matplotlib"] is not None and out["ratio_vs_mplfinance"] is not None
    assert set(out["load_avg_1m"]) == {"start", "end"}
