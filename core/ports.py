"""The ports (protocols) the kernel talks through. Every one has a twin in `core.testing`."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, Protocol, runtime_checkable

from core.events import Event
from core.types import (
    Capabilities,
    ChatMessage,
    ChatRef,
    IncomingMessage,
    LLMResponse,
    MessageRef,
    OutgoingFile,
    Reply,
)

MessageHandler = Callable[[IncomingMessage], Awaitable[None]]


@runtime_checkable
class Adapter(Protocol):
    """A platform, translated. Raises `core.errors.PlatformError` subclasses on refusal."""

    name: str
    capabilities: Capabilities

    async def start(self, on_message: MessageHandler) -> None: ...

    async def send(self, chat: ChatRef, reply: Reply) -> MessageRef: ...

    async def edit(self, ref: MessageRef, reply: Reply) -> None: ...

    async def send_file(self, chat: ChatRef, file: OutgoingFile) -> MessageRef: ...

    async def typing(self, chat: ChatRef) -> None: ...

    async def fetch_attachment(self, message: IncomingMessage, index: int) -> bytes: ...

    async def aclose(self) -> None: ...


class LLMStreamEvent(Protocol):
    kind: str


class LLMProvider(Protocol):
    """An OpenAI-compatible model behind roles (agent, planner, fast, judge, ...)."""

    async def complete(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: str = "agent",
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
        json_mode: bool = False,
    ) -> LLMResponse: ...

    def stream(
        self,
        messages: Sequence[ChatMessage],
        *,
        role: str = "agent",
        tools: Sequence[dict[str, Any]] | None = None,
        max_tokens: int | None = None,
    ) -> AsyncIterator[Any]: ...


class Mode(Protocol):
    """A way of answering: normal (tool loop), fast (one call), debate, offline analyst."""

    name: str

    def run(self, turn: Any) -> AsyncIterator[Event]: ...
