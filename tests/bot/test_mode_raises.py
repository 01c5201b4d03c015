"""A mode that raises mid-answer (a tool at work on the placeholder, part of the text shown)
ends the answer with a short failure sentence in the user's language, never a placeholder left
saying it is working; the run ends in a Failed event (so the web page and `bullpen ask` see
the end too) and the inbound message is recorded `failed` with the error (issue 29)."""

from __future__ import annotations

from pathlib import Path

from core.events import Done, Event, Failed, Status, TextDelta, ToolStarted
from core.store import Database
from core.testing import RecordingAdapter
from core.types import Capabilities, IncomingMessage
from core.words import t
from tests.bot.test_gateway import CHAT, msg
from tests.bot.test_poison_messages import gateway_with, recorded


class RaisesMidAnswer:
    """Shows a tool at work (and some text), then fails as a tool's bug does: pandas'
    ValueError, the crash "浦发银行2024年9月的走势" once met."""

    name = "normal"

    def __init__(self, text: str = "") -> None:
        self.text = text

    async def run(self, turn):  # type: ignore[no-untyped-def]
        yield Status(text="Reading the question...")
        yield ToolStarted(call_id="1", name="get_ohlcv", label="Fetching 600000 bars")
        if self.text:
            yield TextDelta(text=self.text)
        raise ValueError("year 0 is out of range")


async def test_a_mode_raising_mid_answer_ends_with_the_failure_sentence(
        pg_db: Database, tmp_path: Path) -> None:
    adapter = RecordingAdapter()
    events: list[Event] = []
    gw, _ = gateway_with(pg_db, tmp_path, RaisesMidAnswer())
    gw.stages.answer.on_event = lambda m, e: events.append(e)  # what the web page is shown
    await gw.handle(adapter, msg("浦发银行2024年9月的走势", "51"))
    await gw.idle()
    assert adapter.visible_text(CHAT) == [t("chat.sorry", "zh")]  # in the placeholder, in Chinese
    assert isinstance(events[-1], Failed) and events[-1].kind == "internal"
    status, error = await recorded(pg_db, "51")
    assert status == "failed" and error == "ValueError: year 0 is out of range"
    await gw.aclose()


async def test_text_already_shown_stays_with_the_failure_below_it_on_a_throttled_platform(
        pg_db: Database, tmp_path: Path) -> None:
    adapter = RecordingAdapter(capabilities=Capabilities(
        max_message_length=4096, can_edit=True, min_edit_interval_s=0.2, markup="plain"))
    gw, _ = gateway_with(pg_db, tmp_path, RaisesMidAnswer("SPDB opened September at 8.26"))
    await gw.handle(adapter, msg("How did SPDB do in September 2024?", "52"))
    await gw.idle()
    (shown,) = adapter.visible_text(CHAT)
    assert shown == f"SPDB opened September at 8.26\n\n{t('chat.sorry', 'en')}"
    assert "⏳" not in shown and "Fetching" not in shown
    assert (await recorded(pg_db, "52"))[0] == "failed"
    await gw.aclose()


async def test_the_chat_goes_on_after_a_failed_answer(pg_db: Database, tmp_path: Path) -> None:
    class FailsOnce(RaisesMidAnswer):
        calls = 0

        async def run(self, turn):  # type: ignore[no-untyped-def]
            FailsOnce.calls += 1
            if FailsOnce.calls == 1:
                async for e in super().run(turn):
                    yield e
            yield Done(text="8.52 CNY on 2024-09-19")

    adapter = RecordingAdapter()
    gw, _ = gateway_with(pg_db, tmp_path, FailsOnce())
    await gw.handle(adapter, msg("SPDB?", "53"))
    await gw.idle()
    second: IncomingMessage = msg("SPDB close?", "54")
    await gw.handle(adapter, second)
    await gw.idle()
    assert adapter.visible_text(CHAT) == [t("chat.sorry", "en"), "8.52 CNY on 2024-09-19"]
    assert (await recorded(pg_db, "54"))[0] == "answered"
    await gw.aclose()
