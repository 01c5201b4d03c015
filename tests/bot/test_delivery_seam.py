"""The one delivery seam (`bot.sender`): nothing else in `bot/` calls an adapter's send, edit
or send_file; its table has an answer for every platform refusal; a secret is never stored."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

from bot.outbox import AdapterRegistry, PostgresOutbox
from bot.sender import Policy, Sender, decide
from core import errors
from core.errors import (
    Forbidden,
    FormattingRejected,
    Held,
    PlatformError,
    PlatformUnavailable,
    RateLimited,
)
from core.store import Database, DeliveriesRepo
from core.testing import RecordingAdapter
from core.types import ChatRef, IncomingMessage
from core.types import Sender as Who

ROOT = Path(__file__).resolve().parents[2]
CHAT = ChatRef(platform="test", chat_id="c1")


def _bot_shape():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("bot_shape", ROOT / "devtools/bot_shape.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.pop("bot_shape", None)
    spec.loader.exec_module(module)
    return module


def test_no_adapter_call_outside_the_seam() -> None:
    shape = _bot_shape()
    assert shape.SEAM == ("bot/sender.py",)
    assert shape.adapter_calls_outside_the_seam() == []


def test_the_scan_finds_a_direct_call(tmp_path: Path) -> None:
    """The scan is not vacuous: the pattern it looks for is what a direct call looks like."""
    shape = _bot_shape()
    assert shape._CALL.search("        await self._adapter.send(chat, reply)")
    assert shape._CALL.search("await adapter.send_file(msg.chat, file)")
    assert not shape._CALL.search("await self._sender.send(chat, reply)")


def test_every_platform_refusal_has_a_policy_both_ways() -> None:
    refusals = [c for c in vars(errors).values()
                if isinstance(c, type) and issubclass(c, PlatformError)]
    assert len(refusals) >= 6
    for cls in refusals:
        exc = cls("x", retry_after=1.0) if cls is RateLimited else cls("x")
        assert isinstance(decide(exc, stored=False), Policy)
        assert isinstance(decide(exc, stored=True), Policy)
    assert decide(RateLimited("x", retry_after=1.0), stored=False) is Policy.WAIT
    assert decide(RateLimited("x", retry_after=1.0), stored=True) is Policy.PAUSE
    assert decide(FormattingRejected("x"), stored=True) is Policy.PLAIN
    assert decide(Held("x"), stored=False) is Policy.HOLD
    assert decide(Forbidden("x"), stored=False) is Policy.DROP
    assert decide(PlatformError("x"), stored=False) is Policy.OUTBOX
    assert decide(PlatformError("x"), stored=True) is Policy.RESCHEDULE
    assert decide(PlatformUnavailable("x"), stored=False) is Policy.RETRY
    assert decide(PlatformUnavailable("x"), stored=True) is Policy.RESCHEDULE


def _msg(mid: str) -> IncomingMessage:
    return IncomingMessage(platform="test", chat=CHAT, message_id=mid,
                           sender=Who(platform_uid="u1", display_name="U"), text="/link")


async def test_a_refused_reply_is_kept_and_a_refused_secret_is_not(pg_db: Database) -> None:
    adapter = RecordingAdapter()
    registry = AdapterRegistry()
    registry.add(adapter)
    box = PostgresOutbox(DeliveriesRepo(pg_db.pool), registry)
    sender = Sender(adapter, outbox=box)
    adapter.faults["send"] = [PlatformError("timeout"), PlatformError("timeout")]
    await sender.say(_msg("m1"), "your report is ready")
    await sender.say(_msg("m2"), "https://example.test/sign-in?token=secret", plain=True,
                     keep=False)
    rows = await pg_db.pool.fetch("SELECT key, items::text AS items FROM deliveries")
    assert len(rows) == 1 and rows[0]["key"].startswith(f"say:{CHAT.key}:m1:")
    assert "secret" not in rows[0]["items"]
    assert adapter.ops == []  # both refused live; only the first waits in the outbox
