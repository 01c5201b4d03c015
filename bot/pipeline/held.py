"""Held deliveries: when a chat writes, what the outbox held for it (a closed WeChat window)
is flushed first, and the answer to this message queues behind what is still held. Its own
state: the chats whose answers wait behind held deliveries."""

from __future__ import annotations

import logging

from core.ports import Outbox
from core.types import ChatRef

log = logging.getLogger(__name__)


class HeldDeliveries:
    def __init__(self, *, outbox: Outbox | None) -> None:
        self._outbox = outbox
        self._behind: set[str] = set()

    def __len__(self) -> int:
        return len(self._behind)

    async def chat_wrote(self, chat: ChatRef, *, held: bool) -> None:
        """`held`: the inbound record found deliveries held for the chat."""
        behind = False
        if held and self._outbox is not None:
            try:
                behind = await self._outbox.flush_chat(chat) > 0
            except Exception as exc:  # the sender's loop takes it from here
                log.warning("held deliveries for %s not flushed: %s", chat.key, exc)
                self._outbox.kick()
                behind = True
        if behind:
            self._behind.add(chat.key)
        else:
            self._behind.discard(chat.key)

    def behind(self, chat: ChatRef) -> bool:
        """The chat's answer waits in the outbox behind what is held (never overtakes it)."""
        return chat.key in self._behind
