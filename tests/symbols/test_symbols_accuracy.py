"""Top-1 accuracy of resolve() on the query set, and precision of extract() on sentences."""

from __future__ import annotations

from typing import Any

from tools.symbols import SymbolDirectory

MIN_TOP1 = 0.97


def _top1(directory: SymbolDirectory, item: dict[str, Any]) -> str | None:
    matches = directory.resolve(item["q"], market=item.get("market"), limit=5)
    return matches[0].code if matches else None


def test_query_set_is_big_and_varied(query_set: dict[str, Any]) -> None:
    total = (
        len(query_set["resolve"])
        + len(query_set["ambiguous"])
        + len(query_set["extract"])
        + len(query_set["none"])
    )
    assert total >= 150
    cats = {item["cat"] for item in query_set["resolve"]}
    assert {"cn_name", "pinyin", "initials", "traditional", "en_name", "ticker"} <= cats
    assert {"misspelling", "speech", "alias"} <= cats


def test_resolve_top1_accuracy(directory: SymbolDirectory, query_set: dict[str, Any]) -> None:
    items = query_set["resolve"]
    misses = []
    per_cat: dict[str, list[int]] = {}
    for item in items:
        got = _top1(directory, item)
        ok = got == item["expect"]
        per_cat.setdefault(item["cat"], [0, 0])[0] += ok
        per_cat[item["cat"]][1] += 1
        if not ok:
            misses.append((item["q"], item["expect"], got))
    accuracy = 1 - len(misses) / len(items)
    report = ", ".join(f"{c} {ok}/{n}" for c, (ok, n) in sorted(per_cat.items()))
    print(f"\nresolve top-1 accuracy {accuracy:.1%} on {len(items)} queries ({report})")
    for miss in misses:
        print("  miss:", miss)
    assert accuracy >= MIN_TOP1, misses


def test_ambiguous_queries_report_candidates(
    directory: SymbolDirectory, query_set: dict[str, Any]
) -> None:
    for item in query_set["ambiguous"]:
        matches = directory.resolve(item["q"], limit=5)
        codes = [m.code for m in matches]
        for code in item["any_of"]:
            assert code in codes, (item["q"], codes)
        assert matches[0].ambiguous, (item["q"], matches[:2])
        assert sum(m.ambiguous for m in matches) >= 2


def test_extract_finds_every_symbol(directory: SymbolDirectory, query_set: dict[str, Any]) -> None:
    wrong = []
    for item in query_set["extract"]:
        got = [m.code for m in directory.extract(item["text"])]
        if sorted(got) != sorted(item["expect"]):
            wrong.append((item["text"], item["expect"], got))
    n = len(query_set["extract"])
    print(f"\nextract exact-set accuracy {(n - len(wrong)) / n:.1%} on {n} sentences")
    for w in wrong:
        print("  wrong:", w)
    assert len(wrong) <= n * (1 - MIN_TOP1), wrong


def test_no_false_symbols_in_plain_sentences(
    directory: SymbolDirectory, query_set: dict[str, Any]
) -> None:
    false = {t: [m.symbol for m in directory.extract(t)] for t in query_set["none"]}
    false = {t: codes for t, codes in false.items() if codes}
    assert false == {}


def test_extract_spans_point_at_the_mention(directory: SymbolDirectory) -> None:
    text = "Compare  AAPL with 贵州茅台 and ＴＳＬＡ\x00 please"
    matches = directory.extract(text)
    assert [m.code for m in matches] == ["AAPL", "600519", "TSLA"]
    spans = [text[m.span[0] : m.span[1]] for m in matches if m.span]
    assert spans == ["AAPL", "贵州茅台", "ＴＳＬＡ"]
