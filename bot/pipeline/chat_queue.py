"""The chat queue: one worker task per chat answers its questions in order; `/stop` cancels
the current run. Its own state: the workers, and which messages are queued (or running).
The queue owns its tasks: `aclose` cancels them with `CANCEL_SHUTDOWN` and waits."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine, Iterator
from dataclasses import dataclass, field
from typing import Any

from bot.pipeline.context import Job
from core.agent.runner import CANCEL_SHUTDOWN
from core.shutdown import settle

log = logging.getLogger(__name__)

# A command's reply is held until the placeholder of a question sent before it is out, but not
# for longer than this after that question arrived (it may be queued behind a long run).
PLACEHOLDER_WAIT_S = 1.0

Key = tuple[str, str]  # (chat key, message id)


@dataclass
class _ChatWorker:
    queue: asyncio.Queue[Job] = field(default_factory=asyncio.Queue)
    task: asyncio.Task[None] | None = None
    current: asyncio.Task[None] | None = None
    stop_requested: bool = False
    last: Job | None = None  # the question queued last (jobs start in order)


class ChatQueue:
    def __init__(self, *, answer: Callable[[Job], Coroutine[Any, Any, None]]) -> None:
        self._answer = answer
        self._workers: dict[str, _ChatWorker] = {}
        self._queued: set[Key] = set()
        self._in_hand: set[Key] = set()  # recorded (or taken over), being routed now

    def __len__(self) -> int:
        """Chats with a worker now."""
        return len(self._workers)

    @property
    def pending(self) -> int:
        """Messages routed, queued or being answered now."""
        return len(self._queued) + len(self._in_hand)

    def holds(self, key: Key) -> bool:
        """The message is queued or being answered here."""
        return key in self._queued

    def busy(self, key: Key) -> bool:
        """The message is being routed, queued or answered here (not to be taken again)."""
        return key in self._queued or key in self._in_hand

    @contextlib.contextmanager
    def in_hand(self, key: Key) -> Iterator[None]:
        """While a message is routed (before it is queued, or answered as a command)."""
        self._in_hand.add(key)
        try:
            yield
        finally:
            self._in_hand.discard(key)

    def done(self, key: Key) -> None:
        self._queued.discard(key)

    def put(self, job: Job) -> None:
        msg = job.message
        self._queued.add((msg.chat.key, msg.message_id))
        key = msg.chat.key
        worker = self._workers.get(key)
        if worker is None:
            worker = _ChatWorker()
            self._workers[key] = worker
        if job.question.text:  # not a voice note: transcribing it may take a while
            loop = asyncio.get_running_loop()
            job.started, job.queued_at = loop.create_future(), loop.time()
            worker.last = job
        worker.queue.put_nowait(job)
        if worker.task is None or worker.task.done():
            worker.task = asyncio.create_task(self._work(key, worker), name=f"chat:{key}")

    def stop(self, key: str) -> bool:
        """Cancels the chat's current run; False when none is running."""
        worker = self._workers.get(key)
        if worker is None or worker.current is None or worker.current.done():
            return False
        worker.stop_requested = True
        worker.current.cancel()
        return True

    async def after_placeholder(self, key: str) -> None:
        """Replies keep the order of the messages: a command sent after a question waits for
        that question's placeholder, unless the question has waited for PLACEHOLDER_WAIT_S
        already (behind a long run): the command's reply then goes first, as it always did."""
        worker = self._workers.get(key)
        job = worker.last if worker is not None else None
        if job is None or job.started is None or job.started.done():
            return
        loop = asyncio.get_running_loop()
        wait_s = job.queued_at + PLACEHOLDER_WAIT_S - loop.time()
        if wait_s > 0:
            await asyncio.wait([job.started], timeout=wait_s)

    def busy_chats(self) -> list[str]:
        """The chats whose worker is still answering."""
        return [key for key, w in self._workers.items()
                if w.task is not None and not w.task.done()]

    async def idle(self) -> None:
        """Wait until every queued question is answered (tests, one-shot runs)."""
        while True:
            tasks = [w.task for w in self._workers.values()
                     if w.task is not None and not w.task.done()]
            if not tasks:
                return
            await asyncio.wait(tasks)

    async def aclose(self) -> None:
        tasks = [w.task for w in self._workers.values() if w.task is not None]
        for task in tasks:
            task.cancel(CANCEL_SHUTDOWN)
        await settle(tasks, what="the chats' workers")
        self._workers.clear()

    async def _work(self, key: str, worker: _ChatWorker) -> None:
        while not worker.queue.empty():
            job = worker.queue.get_nowait()
            worker.stop_requested = False
            worker.current = asyncio.create_task(self._answer(job), name=f"run:{key}")
            try:
                await worker.current
            except asyncio.CancelledError:
                if not worker.stop_requested:  # the gateway is shutting down
                    worker.current.cancel(CANCEL_SHUTDOWN)
                    raise
            except Exception:
                log.exception("run for %s failed", key)
            finally:
                worker.current = None
                job.shown()
        if self._workers.get(key) is worker:
            del self._workers[key]
