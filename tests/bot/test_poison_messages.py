"""Poison messages: a message whose handling raises is answered with a short apology in the
user's language (in its placeholder when it has one), recorded `failed` with the error, and
never taken up again (not by a redelivery, not by the sweep of unanswered messages); input
that cannot be bound to a query gets a clear refusal."""

from __future__ import annotations

from pathlib import Path

from bot.gateway import Gateway
from core.agent import AgentRunner
from core.events import Done
from core.store import Database, Store
from core.testing import RecordingAdapter
from core.words import t
from tests.bot.test_gateway import CHAT, msg


class Exploding:
    """A mode that fails in a way nobody planned for (a bug), after its placeholder is out."""

    name = "normal"

    def __init__(self) -> None:
        self.asked = 0

    async def run(self, turn):  # type: ignore[no-untyped-def]
        self.asked += 1
        if self.asked:  # always: a mode that fails before its first event
            raise RuntimeError("a bug in the mode")
        yield Done(text="never")


def gateway_with(pg_db: Database, tmp_path: Path, mode: object) -> tuple[Gateway, Store]:
    store = Store(pg_db, files_dir=tmp_path)
    return Gateway(store=store, runner=AgentRunner(store=store, modes={"normal": mode})), store  # type: ignore[dict-item]


async def recorded(pg_db: Database, mid: str) -> tuple[str, str | None]:
    row = await pg_db.pool.fetchrow(
        "SELECT status, error FROM inbound_events WHERE message_id = $1", mid)
    return row["status"], row["error"]


async def test_a_run_that_raises_is_apologised_for_in_its_placeholder_and_not_retried(
        pg_db: Database, tmp_path: Path) -> None:
    adapter = RecordingAdapter()
    mode = Exploding()
    gw, _ = gateway_with(pg_db, tmp_path, mode)
    await gw.handle(adapter, msg("NVDA?", "41"))
    await gw.idle()
    assert adapter.visible_text(CHAT) == [t("chat.sorry", "en")]  # the placeholder says it
    status, error = await recorded(pg_db, "41")
    assert status == "failed" and error == "RuntimeError: a bug in the mode"
    await gw.handle(adapter, msg("NVDA?", "41"))  # the platform redelivers it
    await pg_db.pool.execute(  # and its process looks gone: nothing resumes a failed message
        "UPDATE inbound_events SET owner = 'dead-process', updated_at = now() - interval '1h'")
    assert await gw.stages.resume.unanswered(lambda p: adapter, ["test"], too_old_s=1e9) == 0
    await gw.idle()
    assert mode.asked == 1 and adapter.visible_text(CHAT) == [t("chat.sorry", "en")]
    await gw.aclose()


async def test_the_apology_is_in_the_users_language(pg_db: Database, tmp_path: Path) -> None:
    adapter = RecordingAdapter()
    gw, _ = gateway_with(pg_db, tmp_path, Exploding())
    await gw.handle(adapter, msg("贵州茅台最近怎么样？", "42"))
    await gw.idle()
    assert adapter.visible_text(CHAT) == [t("chat.sorry", "zh")]
    await gw.aclose()


async def test_a_number_no_column_can_hold_is_refused_clearly(
        pg_db: Database, tmp_path: Path) -> None:
    """`/unsubscribe 99999999999999999999`: asyncpg cannot bind it (out of int64 range). The
    user is told their input is unusable; the message is `failed` with the error, once."""
    adapter = RecordingAdapter()
    mode = Exploding()
    gw, _ = gateway_with(pg_db, tmp_path, mode)
    await gw.handle(adapter, msg("/unsubscribe 99999999999999999999", "43"))
    await gw.idle()
    assert adapter.visible_text(CHAT) == [t("chat.bad_input", "en")]
    status, error = await recorded(pg_db, "43")
    assert status == "failed" and error is not None and error.startswith("DataError:")
    await gw.handle(adapter, msg("/unsubscribe 99999999999999999999", "43"))  # redelivered
    await gw.idle()
    assert len(adapter.visible_text(CHAT)) == 1 and mode.asked == 0
    # the chat goes on: the next message is handled as usual
    await gw.handle(adapter, msg("/unsubscribe 7", "44"))
    await gw.idle()
    assert adapter.visible_text(CHAT)[-1] == "No such subscription in this chat."
    await gw.aclose()
