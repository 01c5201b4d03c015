"""Value types shared by every package: chats, messages, replies, files, LLM messages."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Mode = Literal["normal", "fast", "debate"]
MODES: tuple[Mode, ...] = ("normal", "fast", "debate")
Markup = Literal["telegram_html", "discord_md", "slack_mrkdwn", "plain", "rich"]


def utcnow() -> datetime:
    return datetime.now(UTC)


class ChatRef(BaseModel):
    """Where a message lives: a platform's chat (and thread, where threads exist)."""

    model_config = ConfigDict(frozen=True)

    platform: str
    chat_id: str
    thread_id: str | None = None
    is_group: bool = False

    @property
    def key(self) -> str:
        return f"{self.platform}:{self.chat_id}:{self.thread_id or ''}"


class Sender(BaseModel):
    model_config = ConfigDict(frozen=True)

    platform_uid: str
    display_name: str = ""


class Attachment(BaseModel):
    """A file that came with a message. `data` is filled by the adapter on demand."""

    kind: Literal["voice", "audio", "image", "document", "sticker", "video", "other"]
    file_id: str = ""
    filename: str = ""
    mime_type: str = ""
    size: int | None = None
    duration_s: float | None = None
    recognition: str | None = None  # WeChat's own speech recognition, when present


class IncomingMessage(BaseModel):
    platform: str
    chat: ChatRef
    sender: Sender
    message_id: str
    text: str = ""
    attachments: list[Attachment] = Field(default_factory=list)
    reply_to: str | None = None
    received_at: datetime = Field(default_factory=utcnow)
    is_edit: bool = False
    addressed: bool = True  # in groups: mentioned, replied to, or commanded
    callback_data: str | None = None  # a pressed inline button


class MessageRef(BaseModel):
    model_config = ConfigDict(frozen=True)

    chat: ChatRef
    message_id: str


class Button(BaseModel):
    label: str
    data: str


class Reply(BaseModel):
    text: str
    markup: Literal["markdown", "plain"] = "markdown"
    buttons: list[list[Button]] = Field(default_factory=list)
    # the `IncomingMessage.message_id` this reply answers (None: a push nobody asked for);
    # adapters that tie a response to a command (Discord's deferred slash commands) match it
    in_reply_to: str | None = None
    # for the outbox: the bot's own message this text takes the place of (a "working"
    # placeholder), edited into it when the platform allows, else sent anew
    replaces: str | None = None


class OutgoingFile(BaseModel):
    kind: Literal["image", "document"]
    filename: str
    data: bytes = Field(repr=False)
    mime_type: str = "application/octet-stream"
    caption: str = ""
    # the `IncomingMessage.message_id` whose answer this file belongs to (None: a push)
    in_reply_to: str | None = None


class Capabilities(BaseModel):
    max_message_length: int = 4096
    can_edit: bool = True
    min_edit_interval_s: float = 1.0
    supports_images: bool = True
    supports_documents: bool = True
    supports_voice: bool = True
    supports_buttons: bool = False
    markup: Markup = "plain"
    # the platform delivers an update again when the bot does not acknowledge it (Telegram's
    # polling offset, webhook 5xx): an update that cannot be stored is left to it
    redelivers: bool = False


# --- LLM messages -----------------------------------------------------------------------------


class ToolCall(BaseModel):
    id: str
    name: str
    arguments: str  # raw JSON text as the model produced it


class ChatMessage(BaseModel):
    role: Literal["system", "user", "assistant", "tool"]
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [
                {"id": c.id, "type": "function",
                 "function": {"name": c.name, "arguments": c.arguments}}
                for c in self.tool_calls
            ]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


class Usage(BaseModel):
    provider: str = ""
    model: str = ""
    role: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cached_tokens: int = 0  # of the prompt tokens, those the provider served from its cache
    cost_usd: float = 0.0
    latency_s: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


class LLMResponse(BaseModel):
    content: str = ""
    thinking: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    usage: Usage = Field(default_factory=Usage)
    finish_reason: str = ""


_UNSTORABLE = re.compile(r"[\x00\ud800-\udfff]")


def storable(text: str) -> str:
    """`text` as Postgres can store it: NUL removed, lone surrogates (from a platform's broken
    UTF-16 or a terminal's undecodable bytes) as U+FFFD. Everything else is kept as sent."""
    if not _UNSTORABLE.search(text):
        return text
    return _UNSTORABLE.sub(lambda m: "" if m.group(0) == "\x00" else "\ufffd", text)


def storable_message(msg: IncomingMessage) -> IncomingMessage:
    """The message with every free-text field made `storable` (a copy only when needed)."""
    texts = [msg.text, msg.message_id, msg.reply_to, msg.callback_data, msg.chat.chat_id,
             msg.chat.thread_id, msg.sender.platform_uid, msg.sender.display_name,
             *(t for a in msg.attachments for t in (a.filename, a.file_id))]
    if not any(_UNSTORABLE.search(t) for t in texts if t):
        return msg  # the usual message: nothing to copy or compare
    fields = {"text": msg.text, "message_id": msg.message_id, "reply_to": msg.reply_to,
              "callback_data": msg.callback_data}
    chat = msg.chat.model_copy(update={"chat_id": storable(msg.chat.chat_id),
                                       "thread_id": storable(msg.chat.thread_id)
                                       if msg.chat.thread_id else msg.chat.thread_id})
    sender = msg.sender.model_copy(update={
        "platform_uid": storable(msg.sender.platform_uid),
        "display_name": storable(msg.sender.display_name)})
    attachments = [a.model_copy(update={"filename": storable(a.filename),
                                        "file_id": storable(a.file_id)})
                   for a in msg.attachments]
    update: dict[str, object] = {k: storable(v) for k, v in fields.items() if v}
    if (update == {k: v for k, v in fields.items() if v} and chat == msg.chat
            and sender == msg.sender and attachments == msg.attachments):
        return msg
    return msg.model_copy(update={**update, "chat": chat, "sender": sender,
                                  "attachments": attachments})
