"""The outbox on real Postgres: stored first, once per key, sent in order, retried until the
deadline, held until the chat writes, resumed after a crash mid-delivery."""

from __future__ import annotations

import asyncio
import itertools
from datetime import timedelta

import pytest

from bot.outbox import AdapterRegistry, PostgresOutbox
from core.errors import Forbidden, Held, PlatformError, PlatformUnavailable, RateLimited
from core.store import Database, DeliveriesRepo
from core.testing import RecordingAdapter
from core.types import ChatRef, OutgoingFile, Reply, utcnow

CHAT = ChatRef(platform="test", chat_id="c1")
PNG = OutgoingFile(kind="image", filename="chart.png", data=b"\x89PNG fake", mime_type="image/png")


async def no_sleep(_: float) -> None:
    await asyncio.sleep(0)


def outbox(db: Database, adapter: RecordingAdapter, **kw: object) -> PostgresOutbox:
    registry = AdapterRegistry()
    registry.add(adapter)
    return PostgresOutbox(DeliveriesRepo(db.pool), registry, sleep=no_sleep, **kw)  # type: ignore[arg-type]


async def test_stored_once_per_key_and_sent_in_order(pg_db: Database) -> None:
    adapter = RecordingAdapter()
    box = outbox(pg_db, adapter)
    first = await box.deliver(CHAT, [Reply(text="report"), PNG], key="k1")
    again = await box.deliver(CHAT, [Reply(text="report"), PNG], key="k1")
    assert first.created and not again.created and first.status == "pending"
    assert await box.drain() == 1
    assert await box.drain() == 0
    assert [(o.kind, o.text) for o in adapter.ops] == [("send", "report"), ("file", "")]
    assert adapter.ops[1].file is not None and adapter.ops[1].file.data == PNG.data
    got = await box.receipt("k1")
    assert got is not None and got.status == "delivered" and len(got.message_ids) == 2
    # a third deliver of the same key after delivery sends nothing either
    assert not (await box.deliver(CHAT, [Reply(text="report")], key="k1")).created
    await box.drain()
    assert len(adapter.ops) == 2


async def test_rate_limits_are_waited_out_within_the_deadline(pg_db: Database) -> None:
    adapter = RecordingAdapter()
    adapter.faults["send"] = [RateLimited("slow down", retry_after=1.0) for _ in range(30)]
    box = outbox(pg_db, adapter)
    await box.deliver(CHAT, [Reply(text="still arrives")], key="k429")
    await box.drain()  # 15 s of waiting in place at most, then rescheduled (not failed)
    got = await box.receipt("k429")
    assert got is not None and got.status == "pending" and adapter.ops == []
    for _ in range(5):  # time passes: the sender takes it again until the refusals end
        await pg_db.pool.execute("UPDATE deliveries SET next_attempt_at = now()")
        await box.drain()
    assert [o.text for o in adapter.ops] == ["still arrives"]
    assert (await box.receipt("k429")).status == "delivered"  # type: ignore[union-attr]


async def test_a_long_retry_after_reschedules_and_the_deadline_fails_it(pg_db: Database) -> None:
    adapter = RecordingAdapter()
    adapter.faults["send"] = [RateLimited("wait", retry_after=120.0)]
    box = outbox(pg_db, adapter)
    await box.deliver(CHAT, [Reply(text="x")], key="later")
    await box.drain()
    got = await box.receipt("later")
    assert got is not None and got.status == "pending" and "rate limited" in got.last_error
    await box.deliver(CHAT, [Reply(text="y")], key="short", deadline_s=60)
    adapter.faults["send"] = [RateLimited("wait", retry_after=120.0)]
    await box.drain()
    short = await box.receipt("short")
    assert short is not None and short.status == "failed" and "deadline" in short.last_error


async def test_network_errors_back_off_and_then_deliver(pg_db: Database) -> None:
    adapter = RecordingAdapter()
    adapter.faults["send"] = [PlatformError("connection reset")]
    box = outbox(pg_db, adapter)
    await box.deliver(CHAT, [Reply(text="after a blip")], key="blip")
    await box.drain()
    assert adapter.ops == []
    await pg_db.pool.execute("UPDATE deliveries SET next_attempt_at = now()")  # time passes
    await box.drain()
    assert [o.text for o in adapter.ops] == ["after a blip"]


async def test_held_until_the_chat_writes_again(pg_db: Database) -> None:
    adapter = RecordingAdapter()
    adapter.faults["send"] = [Held("window closed")]
    box = outbox(pg_db, adapter)
    await box.deliver(CHAT, [Reply(text="morning report")], key="held")
    await box.drain()
    assert (await box.receipt("held")).status == "held"  # type: ignore[union-attr]
    await box.drain()
    assert adapter.ops == []
    assert await DeliveriesRepo(pg_db.pool).release_held("test", "c1") == 1
    await box.drain()
    assert [o.text for o in adapter.ops] == ["morning report"]


async def test_forbidden_fails_at_once_and_calls_the_hook(pg_db: Database) -> None:
    adapter = RecordingAdapter()
    adapter.faults["send"] = [Forbidden("bot was kicked")]
    seen = []

    async def hook(d: object) -> None:
        seen.append(d)

    box = outbox(pg_db, adapter, on_forbidden=hook)
    await box.deliver(CHAT, [Reply(text="x")], key="gone")
    await box.drain()
    got = await box.receipt("gone")
    assert got is not None and got.status == "failed" and "forbidden" in got.last_error
    assert len(seen) == 1


async def test_a_crash_mid_delivery_resumes_after_the_last_piece_sent(pg_db: Database) -> None:
    adapter = RecordingAdapter()
    repo = DeliveriesRepo(pg_db.pool)
    box = outbox(pg_db, adapter)
    await box.deliver(CHAT, [Reply(text="one"), Reply(text="two"), PNG], key="crash")
    # a sender claimed it, sent the first piece, recorded it, and died (its lease runs out)
    [claimed] = await repo.claim(platforms=["test"], lease_s=60)
    await repo.progress(claimed.id, pieces_sent=1, message_ids=["m-1"])
    assert await box.drain() == 0  # leased to the dead sender
    await pg_db.pool.execute("UPDATE deliveries SET lease_until = now() - interval '1 s'")
    await box.drain()
    assert [(o.kind, o.text) for o in adapter.ops] == [("send", "two"), ("file", "")]
    got = await box.receipt("crash")
    assert got is not None and got.status == "delivered" and got.message_ids[0] == "m-1"


async def test_two_senders_never_send_one_delivery_twice(pg_db: Database) -> None:
    adapter = RecordingAdapter()
    a, b = outbox(pg_db, adapter), outbox(pg_db, adapter)
    for i in range(40):
        await a.deliver(ChatRef(platform="test", chat_id=f"c{i % 7}"), [Reply(text=f"m{i}")],
                        key=f"k{i}")
    await asyncio.gather(a.drain(), b.drain())
    texts = sorted(o.text for o in adapter.ops)
    assert texts == sorted(f"m{i}" for i in range(40))


async def test_long_text_is_split_at_the_platform_limit(pg_db: Database) -> None:
    from core.types import Capabilities

    adapter = RecordingAdapter(capabilities=Capabilities(max_message_length=100,
                                                         markup="plain"))
    box = outbox(pg_db, adapter)
    await box.deliver(CHAT, [Reply(text="word " * 100)], key="long")
    await box.drain()
    assert len(adapter.ops) >= 5 and all(len(o.text) <= 100 for o in adapter.ops)


@pytest.mark.parametrize("deadline_s", [0.001])
async def test_a_delivery_past_its_deadline_is_failed_not_sent(pg_db: Database,
                                                               deadline_s: float) -> None:
    adapter = RecordingAdapter()
    box = outbox(pg_db, adapter)
    await box.deliver(CHAT, [Reply(text="too late")], key="late", deadline_s=deadline_s)
    await pg_db.pool.execute("UPDATE deliveries SET deadline = $1", utcnow() - timedelta(1))
    await box.drain()
    assert adapter.ops == []
    assert (await box.receipt("late")).status == "failed"  # type: ignore[union-attr]


async def test_an_answer_refused_live_past_the_deadline_is_delivered_by_the_outbox(
        pg_db: Database) -> None:
    """A 429 on every send for longer than the renderer's live deadline: the final answer is
    handed to the outbox instead of being dropped (it was a retry count before)."""
    from bot.renderer import Renderer
    from core.events import Done
    from core.types import Capabilities

    adapter = RecordingAdapter(capabilities=Capabilities(can_edit=False, markup="plain",
                                                         min_edit_interval_s=0.0))
    adapter.faults["send"] = [RateLimited("flood", retry_after=0.1) for _ in range(12)]
    box = outbox(pg_db, adapter)
    renderer = Renderer(adapter, CHAT, outbox=box, live_deadline_s=0.4, in_reply_to="q1")
    await renderer.start()
    await renderer.on_event(Done(text="the final answer"))
    assert renderer.result.handed_over and renderer.result.delivered
    assert adapter.visible_text(CHAT) == []
    await box.drain()  # the rest of the refusals are waited out by the outbox
    assert adapter.visible_text(CHAT) == ["the final answer"]
    receipt = await box.receipt("answer:" + CHAT.key + ":q1:0")
    assert receipt is not None and receipt.status == "delivered"


async def test_unsubscribing_while_a_delivery_goes_out_stops_the_rest(pg_db: Database) -> None:
    adapter = RecordingAdapter()
    repo = DeliveriesRepo(pg_db.pool)
    box = outbox(pg_db, adapter)
    await box.deliver(CHAT, [Reply(text="part one"), Reply(text="part two"), PNG], key="sub:1:x",
                      subscription_id=None)
    await pg_db.pool.execute("UPDATE deliveries SET subscription_id = 1")
    sent_one = adapter.send

    async def send_then_cancel(chat: ChatRef, reply: Reply):  # type: ignore[no-untyped-def]
        ref = await sent_one(chat, reply)
        await repo.cancel_for_subscription(1)  # /unsubscribe lands after the first piece
        return ref

    adapter.send = send_then_cancel  # type: ignore[method-assign]
    await box.drain()
    assert [o.text for o in adapter.ops] == ["part one"]
    assert (await box.receipt("sub:1:x")).status == "cancelled"  # type: ignore[union-attr]


async def test_the_placeholder_is_never_the_last_word(pg_db: Database) -> None:
    """Edits and sends refused with 429 past the live deadline: the outbox edits the answer
    into the "working" placeholder later, rather than leaving it or adding a second message."""
    from bot.renderer import Renderer
    from core.events import Done

    adapter = RecordingAdapter()  # can edit
    box = outbox(pg_db, adapter)
    renderer = Renderer(adapter, CHAT, outbox=box, live_deadline_s=0.3, in_reply_to="q2")
    await renderer.start()
    [placeholder] = [o for o in adapter.ops if o.kind == "send"]
    adapter.faults["edit"] = [RateLimited("flood", retry_after=0.1) for _ in range(8)]
    adapter.faults["send"] = [RateLimited("flood", retry_after=0.1) for _ in range(8)]
    await renderer.on_event(Done(text="the final answer"))
    assert renderer.result.handed_over
    await box.drain()
    assert adapter.visible_text(CHAT) == ["the final answer"]  # one message: the placeholder
    assert adapter.texts[placeholder.message_id] == "the final answer"


class Clock:
    """Time that passes only while someone waits on it (the renderer's clock and sleep)."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += seconds
        await asyncio.sleep(0)


class RefusingWindow(RecordingAdapter):
    """Every send and edit refused with 429 while the window is open (on `clock`), telling
    retry_after 1, 2, 3, 5 s in turn, as the serve tests' Telegram fake does."""

    def __init__(self, clock: Clock) -> None:
        super().__init__()
        self.clock = clock
        self.until = 0.0
        self.refused: list[tuple[str, float]] = []
        self._waits = itertools.cycle((1, 2, 3, 5))

    def _fault(self, kind: str) -> None:
        if kind in ("send", "edit") and self.clock() < self.until:
            self.refused.append((kind, self.clock()))
            raise RateLimited("flood", retry_after=next(self._waits))
        super()._fault(kind)


async def test_a_429_window_that_outlasts_the_live_deadline_ends_in_the_placeholder(
        pg_db: Database) -> None:
    """Issue #36: the placeholder is out, then every send and edit is refused for 60 s; the
    answer is done 4 s in. Its edits are refused past the live deadline (30 s), and the
    window closes soon after: the answer goes into the placeholder (through the outbox), not
    into a new message sent once the window closed, which left the placeholder saying it was
    working for good."""
    from bot.renderer import Renderer
    from core.events import Done, TextDelta
    from core.words import t

    clock = Clock()
    adapter = RefusingWindow(clock)
    box = outbox(pg_db, adapter)
    renderer = Renderer(adapter, CHAT, outbox=box, in_reply_to="q36", clock=clock,
                        sleep=clock.sleep)
    await renderer.start()
    [placeholder] = [o for o in adapter.ops if o.kind == "send"]
    adapter.until = clock() + 60.0
    await renderer.on_event(TextDelta(text="the final "))  # its progress edit is refused
    clock.now += 4.0
    await renderer.on_event(Done(text="the final answer"))
    assert renderer.result.handed_over and renderer.result.delivered
    # every try was refused, and nothing but the placeholder went out
    assert adapter.refused and all(at < adapter.until for _, at in adapter.refused)
    assert adapter.visible_text(CHAT) == [t("chat.working", "en")]
    assert clock() < adapter.until  # handed over while the window was still open

    clock.now = adapter.until  # the window closes: the outbox sends what it holds
    await box.drain()
    assert adapter.texts[placeholder.message_id] == "the final answer"
    assert adapter.visible_text(CHAT) == ["the final answer"]  # one message: the placeholder
    receipt = await box.receipt(f"answer:{CHAT.key}:q36:0")
    assert receipt is not None and receipt.status == "delivered"


async def test_a_file_refused_for_longer_than_the_live_deadline_is_handed_over_at_it(
        pg_db: Database) -> None:
    """A 429 on a chart with a retry_after longer than the live deadline: the renderer waits
    until the deadline, not a whole retry_after past it, then the outbox takes the file."""
    from bot.renderer import LIVE_DEADLINE_S, Renderer
    from core.events import File

    clock = Clock()
    adapter = RecordingAdapter()
    adapter.faults["file"] = [RateLimited("flood", retry_after=50) for _ in range(3)]
    box = outbox(pg_db, adapter)
    renderer = Renderer(adapter, CHAT, outbox=box, in_reply_to="q37", clock=clock,
                        sleep=clock.sleep)
    start = clock()
    await renderer.on_event(File(file=PNG))
    assert renderer.result.handed_over
    assert clock() - start == LIVE_DEADLINE_S
    receipt = await box.receipt(f"answer-file:{CHAT.key}:q37:chart.png")
    assert receipt is not None and receipt.status == "pending"


async def test_a_placeholder_that_is_gone_gets_the_answer_as_a_new_message(
        pg_db: Database) -> None:
    adapter = RecordingAdapter()
    box = outbox(pg_db, adapter)
    await box.deliver(CHAT, [Reply(text="answer", replaces="999")], key="gone-placeholder")
    adapter.faults["edit"] = [PlatformError("message to edit not found")]
    await box.drain()
    assert [(o.kind, o.text) for o in adapter.ops] == [("send", "answer")]


async def test_a_sender_waiting_out_429s_keeps_its_lease_so_no_other_sends_twice(
        pg_db: Database) -> None:
    """Short 429s waited out in place for longer than the lease: the sender renews its lease
    after each wait (fenced by the claim), so a second sender never takes the delivery."""
    adapter = RecordingAdapter()
    adapter.faults["send"] = [RateLimited("flood", retry_after=0.4) for _ in range(6)]
    registry = AdapterRegistry()
    registry.add(adapter)
    a = PostgresOutbox(DeliveriesRepo(pg_db.pool), registry, lease_s=1.0)
    b = PostgresOutbox(DeliveriesRepo(pg_db.pool), registry, lease_s=1.0)
    await a.deliver(CHAT, [Reply(text="once")], key="lease")
    first = asyncio.create_task(a.drain())  # about 2.4 s of waiting in place, lease 1 s
    for _ in range(12):
        await asyncio.sleep(0.25)
        await b.drain()
    await first
    assert [o.text for o in adapter.ops] == ["once"]


async def test_a_platform_failing_on_its_side_gets_the_answer_into_the_placeholder(
        pg_db: Database) -> None:
    """A 5xx (or no answer) on the final edit says nothing about the placeholder: the edit is
    tried again (0.5, 1, 2 ... s) and the answer lands in it, never in a new message that
    would leave the placeholder saying it is working for good (seen in a kill-load run, a
    500 on the final edit)."""
    from bot.renderer import Renderer
    from core.events import Done

    clock = Clock()
    adapter = RecordingAdapter()
    renderer = Renderer(adapter, CHAT, outbox=outbox(pg_db, adapter), in_reply_to="q1",
                        clock=clock, sleep=clock.sleep)
    await renderer.start()
    adapter.faults["edit"] = [PlatformUnavailable("telegram editMessageText: Internal Server"
                                                  " Error (500)") for _ in range(3)]
    start = clock()
    await renderer.on_event(Done(text="the answer"))
    assert renderer.result.delivered and not renderer.result.handed_over
    assert adapter.visible_text(CHAT) == ["the answer"]  # one message: the placeholder
    assert clock() - start == 0.5 + 1 + 2


async def test_a_platform_failing_past_the_live_deadline_hands_the_edit_to_the_outbox(
        pg_db: Database) -> None:
    """Still failing at the live deadline: the outbox keeps the answer as an edit of the
    placeholder, and a 5xx there reschedules it (not sent anew); once the platform answers,
    the placeholder becomes the answer and nothing else is said."""
    from bot.renderer import LIVE_DEADLINE_S, Renderer
    from core.events import Done

    clock = Clock()
    adapter = RecordingAdapter()
    box = outbox(pg_db, adapter)
    renderer = Renderer(adapter, CHAT, outbox=box, in_reply_to="q2", clock=clock,
                        sleep=clock.sleep)
    await renderer.start()
    adapter.faults["edit"] = [PlatformUnavailable("slack chat.update: HTTP 503")
                              for _ in range(40)]
    start = clock()
    await renderer.on_event(Done(text="the answer"))
    assert renderer.result.handed_over and renderer.result.delivered
    assert clock() - start == LIVE_DEADLINE_S
    adapter.faults["edit"] = [PlatformUnavailable("slack chat.update: HTTP 503")]
    await box.drain()  # refused again: rescheduled, nothing sent anew
    assert [o.kind for o in adapter.ops] == ["send"]  # the placeholder only
    await pg_db.pool.execute("UPDATE deliveries SET next_attempt_at = now()")
    await box.drain()
    assert adapter.visible_text(CHAT) == ["the answer"]
    assert [o.kind for o in adapter.ops] == ["send", "edit"]
