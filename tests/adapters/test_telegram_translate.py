"""The Telegram adapter translates the Bot API's JSON itself (PTB's object tree cost a tenth of
the gateway's CPU per message): what it reads of each kind of update, mentions and commands
found by their UTF-16 offsets as Telegram counts them."""

from __future__ import annotations

from typing import Any

import pytest
from telegram import User

from adapters.telegram import TelegramAdapter

ME = User(id=42, first_name="Bullpen", is_bot=True, username="BullpenBot")
PERSON = {"id": 7, "is_bot": False, "first_name": "Li", "last_name": "Wei", "username": "lw"}
GROUP = {"id": -100, "type": "supergroup", "title": "desk"}
PRIVATE = {"id": 7, "type": "private", "first_name": "Li"}


@pytest.fixture
def adapter() -> TelegramAdapter:
    bot = TelegramAdapter(token="123456:" + "A" * 35)
    bot._me, bot._username = ME, "bullpenbot"
    return bot


def message(text: str = "", chat: dict[str, Any] = PRIVATE, **fields: Any) -> dict[str, Any]:
    body = {"message_id": 5, "from": PERSON, "chat": chat, "date": 1, **fields}
    if text:
        body["text"] = text
    return {"update_id": 900, "message": body}


def mention(text: str, word: str, kind: str = "mention") -> list[dict[str, Any]]:
    before = text[:text.index(word)]
    return [{"type": kind, "offset": len(before.encode("utf-16-le")) // 2,
             "length": len(word.encode("utf-16-le")) // 2}]


def test_a_private_text_message(adapter: TelegramAdapter) -> None:
    got = adapter.translate(message("茅台 price?", reply_to_message={"message_id": 3,
                                                                   "chat": PRIVATE, "date": 1}))
    assert got is not None
    assert (got.text, got.message_id, got.reply_to, got.addressed, got.is_edit) == (
        "茅台 price?", "5", "3", True, False)
    assert (got.chat.chat_id, got.chat.is_group, got.sender.platform_uid,
            got.sender.display_name) == ("7", False, "7", "Li Wei")


def test_in_a_group_a_mention_after_emoji_counts_by_utf16_and_is_taken_out(
        adapter: TelegramAdapter) -> None:
    text = "👍🏽 茅台 @BullpenBot price"
    got = adapter.translate(message(text, GROUP, entities=mention(text, "@BullpenBot")))
    assert got is not None and got.addressed and got.text == "👍🏽 茅台  price"
    other = "👍🏽 @someone_else price"
    got = adapter.translate(message(other, GROUP, entities=mention(other, "@someone_else")))
    assert got is not None and not got.addressed


def test_commands_text_mentions_and_replies_in_a_group(adapter: TelegramAdapter) -> None:
    def addressed(update: dict[str, Any]) -> bool:
        got = adapter.translate(update)
        assert got is not None
        return got.addressed

    command = [{"type": "bot_command", "offset": 0, "length": 6}]
    assert addressed(message("/start", GROUP, entities=command))
    mine = [{"type": "bot_command", "offset": 0, "length": 17}]
    assert addressed(message("/start@BullpenBot", GROUP, entities=mine))
    theirs = [{"type": "bot_command", "offset": 0, "length": 15}]
    assert not addressed(message("/start@OtherBot", GROUP, entities=theirs))
    text_mention = [{"type": "text_mention", "offset": 0, "length": 4,
                     "user": {"id": 42, "is_bot": True, "first_name": "Bullpen"}}]
    assert addressed(message("desk, NVDA?", GROUP, entities=text_mention))
    reply = {"message_id": 3, "from": {"id": 42, "is_bot": True, "first_name": "B"},
             "chat": GROUP, "date": 1}
    assert addressed(message("and AAPL?", GROUP, reply_to_message=reply))
    caption = "chart @BullpenBot"
    assert addressed(message(chat=GROUP, caption=caption, photo=[
        {"file_id": "p", "file_unique_id": "u", "width": 9, "height": 9}],
        caption_entities=mention(caption, "@BullpenBot")))
    assert not addressed(message("NVDA?", GROUP))


def test_edits_callbacks_channels_and_service_messages(adapter: TelegramAdapter) -> None:
    edit = {"update_id": 901, "edited_message": message("NVDA?")["message"]}
    got = adapter.translate(edit)
    assert got is not None and got.is_edit and got.message_id == "5:edit:901"
    press = {"update_id": 902, "callback_query": {
        "id": "q1", "from": PERSON, "data": "mode:debate", "chat_instance": "c",
        "message": {"message_id": 8, "chat": GROUP, "date": 0}}}  # inaccessible: date 0
    got = adapter.translate(press)
    assert got is not None and (got.callback_data, got.message_id, got.reply_to,
                                got.chat.is_group, got.chat.thread_id) == (
        "mode:debate", "cb:q1", "8", True, None)
    channel = message("news", {"id": -5, "type": "channel", "title": "c"})
    assert adapter.translate(channel) is None
    assert adapter.translate(message(chat=PRIVATE, new_chat_title="renamed")) is None
    topic = message("NVDA?", GROUP, is_topic_message=True, message_thread_id=77)
    got = adapter.translate(topic)
    assert got is not None and got.chat.thread_id == "77"


def test_attachments(adapter: TelegramAdapter) -> None:
    got = adapter.translate(message(
        voice={"file_id": "v", "file_unique_id": "u", "duration": 4, "file_size": 900},
        photo=[{"file_id": "small", "file_unique_id": "a", "width": 90, "height": 90},
               {"file_id": "big", "file_unique_id": "b", "width": 900, "height": 900}],
        sticker={"file_id": "s", "file_unique_id": "c", "width": 1, "height": 1,
                 "is_animated": False, "is_video": True, "type": "regular"},
        video_note={"file_id": "n", "file_unique_id": "d", "length": 1, "duration": 2}))
    assert got is not None
    assert [(a.kind, a.file_id, a.mime_type, a.duration_s) for a in got.attachments] == [
        ("voice", "v", "audio/ogg", 4.0), ("image", "big", "image/jpeg", None),
        ("sticker", "s", "video/webm", None), ("video", "n", "video/mp4", 2.0)]
    got = adapter.translate(message(location={"latitude": 1.0, "longitude": 2.0}))
    assert got is not None and [a.kind for a in got.attachments] == ["other"]
