"""A serving gateway collects its youngest generation every `YOUNG_THRESHOLD` allocations (a
message makes ~1,900: Python's 700 spent 8-10% of the gateway's CPU collecting), with the
startup heap frozen out of every collection."""

from __future__ import annotations

import gc

import pytest

from bot import gateway


def test_the_young_generation_waits_for_ten_thousand_and_startup_is_frozen(
        monkeypatch: pytest.MonkeyPatch) -> None:
    before = gc.get_threshold()
    monkeypatch.setattr(gateway, "_heap_frozen", False)
    gc.set_threshold(700, before[1], before[2])
    try:
        gateway._freeze_startup_heap()
        assert gc.get_threshold() == (gateway.YOUNG_THRESHOLD, before[1], before[2])
        assert gc.get_freeze_count() > 0
        gateway._freeze_startup_heap()  # once per process: a second gateway changes nothing
        assert gc.get_threshold()[0] == gateway.YOUNG_THRESHOLD
    finally:
        gc.set_threshold(*before)
