"""The conformance harness: one `PlatformHarness` per platform, each the platform's loopback fake,
its real adapter (the real SDK pointed at the fake) and the real App (gateway, renderer,
Postgres), behind the same operations, so one suite runs unchanged on every platform.

Users are small integers; each harness maps them to its platform's ids (a Telegram private
chat, a Discord DM channel, a Slack DM, a WeChat openid). Everything a harness reports is what
the fake platform holds: the messages as the user sees them now, the files that arrived, and
every send / edit call it got (refused ones included) with the time it was answered.
"""

from __future__ import annotations

import asyncio
import copy
import itertools
import json
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

import aiohttp
import pytest
from discord.gateway import DiscordWebSocket
from discord.http import Route

from bot.app import App
from bot.markup import to_plain, to_slack_mrkdwn, to_telegram_html
from bot.settings import load_settings
from core.ports import Adapter
from core.types import Capabilities, ChatRef
from tests.adapters.conftest import (
    discord_adapter,
    inbound_count,
    slack_adapter,
    telegram_adapter,
    wechat_adapter,
)
from tests.fakes._common import WAIT_S
from tests.fakes.discord_server import GUILD_CHANNEL_ID, FakeDiscord
from tests.fakes.discord_server import rate_limited as discord_429
from tests.fakes.openai_server import FakeOpenAI
from tests.fakes.slack_server import FakeSlack
from tests.fakes.slack_server import rate_limited as slack_429
from tests.fakes.telegram_server import ApiError as TelegramApiError
from tests.fakes.telegram_server import FakeTelegram, parse_text
from tests.fakes.telegram_server import rate_limited as telegram_429
from tests.fakes.wechat_server import FakeWeChat, openid, render_xml

On = Literal["send", "edit"]
PLATFORMS = ("telegram", "discord", "slack", "wechat")
IDLE_S = 300.0  # the longest a harness waits for the gateway to finish what it was given
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp")
WECHAT_RATE_LIMITED = 45011  # "api minute-quota reach limit": WeChat's 429


@dataclass(frozen=True)
class SentFile:
    """A file the bot sent to a chat, as the platform received it."""

    kind: Literal["image", "document"]
    filename: str
    data: bytes


@dataclass(frozen=True)
class Outgoing:
    """One send or edit call the platform got for a chat (refused ones included): when it was
    answered, and its text as the chat shows it."""

    t: float
    text: str


def _file_kind(filename: str) -> Literal["image", "document"]:
    return "image" if filename.lower().endswith(IMAGE_SUFFIXES) else "document"


class PlatformHarness(Protocol):
    """What the conformance suite may do with a platform, the same way on every platform."""

    name: str  # the platform, as in `IncomingMessage.platform`
    voice_format: str  # the suffix of the voice notes this platform's users send
    app: App  # while running
    adapter: Adapter  # while running

    @property
    def caps(self) -> Capabilities: ...

    def running(self, *, llm: FakeOpenAI | None = None, signed: bool = False,
                **settings: Any) -> AbstractAsyncContextManager[App]:
        """The App with this platform's adapter started (on the same database every time: a
        restart). `signed`: messages come in through the platform's signed ingress (Telegram:
        the webhook with its secret; Discord: HTTP interactions; Slack and WeChat: always).
        `settings`: `bot.settings.Settings` fields (budgets, access, rate limits ...)."""
        ...

    def chat(self, user: int) -> ChatRef: ...

    def uid(self, user: int) -> str: ...

    async def send_text(self, user: int, text: str) -> None:
        """The user writes `text` in a direct chat with the bot."""
        ...

    async def send_command(self, user: int, command: str) -> None:
        """`/name args` as the platform's native slash command where it has them (Telegram's
        bot_command, a Discord application command, Slack's `/bullpen name args`); typed text
        on WeChat."""
        ...

    async def send_voice(self, user: int, fixture: Path) -> None:
        """The user sends the recording `fixture` as a voice note."""
        ...

    async def deliver_duplicate(self, user: int, text: str) -> None:
        """A message delivered again the way the platform redelivers (the same update, event,
        MESSAGE_CREATE or MsgId)."""
        ...

    async def send_forged(self, user: int, text: str) -> list[int]:
        """Forged, stale, tampered or unsigned deliveries of `text` to the signed ingress; the
        HTTP statuses the adapter answered."""
        ...

    async def send_signed(self, user: int, text: str) -> None:
        """A genuine question through the signed ingress (Discord: `/fast text`)."""
        ...

    def inject_429(self, on: On, *, containing: str | None = None,
                   final: str | None = None) -> None:
        """The platform refuses one call with its rate-limit answer (a second or two to wait):
        `on="send"`, the first message whose text contains `containing`; `on="edit"`, the edit
        that carries the final rendering of the Markdown `final` (not a progress preview)."""
        ...

    def faults_left(self) -> int: ...

    def visible_messages(self, user: int) -> list[str]:
        """The current text of every text message the bot has in the user's chat, in order."""
        ...

    def final_text(self, user: int) -> str: ...

    def shows(self, user: int, needle: str) -> bool: ...

    def sent_files(self, user: int) -> list[SentFile]: ...

    def outgoing(self, on: On, user: int) -> list[Outgoing]: ...

    def rendered(self, md: str) -> str:
        """What the chat shows for an answer written as the Markdown `md`."""
        ...

    def fits(self, text: str) -> bool:
        """`text` is within the platform's message limit."""
        ...

    async def wait_for(self, predicate: Callable[[], object], within_s: float = WAIT_S) -> None: ...

    async def settle(self, quiet_s: float = 0.3) -> None: ...

    async def idle(self) -> None: ...

    async def inbound_count(self) -> int: ...

    # --- groups (`has_groups`: WeChat official accounts have none) ---------------------------

    has_groups: bool

    async def send_in_group(self, user: int, text: str, *, native: bool = True) -> None:
        """The user writes `text` (a `/command`) in the platform's group chat with the bot:
        as the platform's own slash command (`native`), or as a message addressed to the bot
        (a mention where the platform needs one)."""
        ...

    def group_messages(self) -> list[str]:
        """The current text of every text message the bot has in the group chat."""
        ...

    def make_group_admin(self, user: int) -> None:
        """The platform reports the user as an admin of the group chat."""
        ...

    def admin_checks(self) -> int:
        """How many times the adapter asked the platform who administers a chat."""
        ...


@asynccontextmanager
async def run_app(harnesses: Sequence[BaseHarness], *, dsn: str, data_dir: Path,
                  llm: FakeOpenAI | None = None, signed: bool = False,
                  settings: dict[str, Any] | None = None) -> AsyncIterator[App]:
    """One App with the adapters of all `harnesses` started (the linked person uses four);
    `settings` are `bot.settings.Settings` fields."""
    overrides: dict[str, Any] = dict(settings or {})
    if llm is not None:
        overrides |= {"llm_base_url": llm.base_url, "llm_model": "fake-model",
                      "llm_plan": False}
    app = await App.create(load_settings(database_url=dsn, data_dir=data_dir, **overrides))
    try:
        for harness in harnesses:
            adapter = harness.make_adapter(signed=signed)
            # jobs=False: tests fire subscriptions by hand (`app.jobs.due`); a live scheduler
            # would also fire one whose time falls while the test runs (08:00 Shanghai at
            # 00:00 UTC), a second report and a second model call
            await app.start_adapters([adapter], jobs=False)
            harness.attach(app, adapter)
        yield app
    finally:
        await app.aclose()
        for harness in harnesses:
            harness.detach()


class BaseHarness:
    """What every platform's harness does alike; the fake is `self.fake`."""

    name = ""
    voice_format = ""
    fake: Any

    def __init__(self, *, dsn: str, data_dir: Path) -> None:
        self.dsn = dsn
        self.data_dir = data_dir
        self._app: App | None = None
        self._adapter: Adapter | None = None
        self._caps: Capabilities | None = None  # kept after a stop: they do not change

    async def __aenter__(self) -> BaseHarness:
        await self.fake.__aenter__()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.fake.__aexit__(*exc)

    # --- lifecycle -------------------------------------------------------------------------

    def make_adapter(self, *, signed: bool) -> Adapter:
        raise NotImplementedError

    def attach(self, app: App, adapter: Adapter) -> None:
        self._app, self._adapter, self._caps = app, adapter, adapter.capabilities

    def detach(self) -> None:
        self._app = self._adapter = None

    def running(self, *, llm: FakeOpenAI | None = None, signed: bool = False,
                **settings: Any) -> AbstractAsyncContextManager[App]:
        return run_app([self], dsn=self.dsn, data_dir=self.data_dir, llm=llm, signed=signed,
                       settings=settings)

    @property
    def app(self) -> App:
        assert self._app is not None, "not running"
        return self._app

    @property
    def adapter(self) -> Adapter:
        assert self._adapter is not None, "not running"
        return self._adapter

    @property
    def caps(self) -> Capabilities:
        assert self._caps is not None, "never started"
        return self._caps

    # --- what a platform's harness declares ------------------------------------------------

    SEND = ""  # the fake's name for the call that sends a message
    EDIT = ""  # ... and for the one that edits it ("" where the platform cannot edit)

    def _key(self, user: int) -> Any:
        """The user's direct chat as the fake names it."""
        raise NotImplementedError

    def uid(self, user: int) -> str:
        raise NotImplementedError

    def rendered(self, md: str) -> str:
        raise NotImplementedError

    def _text_of(self, params: dict[str, Any]) -> str:
        """A send or edit call's text as the chat shows it."""
        raise NotImplementedError

    def _refuse(self, method: str, when: Callable[[dict[str, Any]], bool]) -> None:
        """The fake answers the next `method` call matching `when` with its 429."""
        raise NotImplementedError

    def _calls(self, method: str, user: int) -> list[tuple[float, dict[str, Any]]]:
        return [(c.t, c.params) for c in self.fake.calls_of(method, self._key(user))]

    # --- rate limits -----------------------------------------------------------------------

    def inject_429(self, on: On, *, containing: str | None = None,
                   final: str | None = None) -> None:
        if on == "send":
            assert containing is not None
            self._refuse(self.SEND, lambda p: containing in self._text_of(p))
            return
        if not self.EDIT:
            raise ValueError(f"{self.name} cannot edit: there is no edit to refuse")
        assert final is not None
        shown = self.rendered(final)  # progress previews show the Markdown as typed: not this
        self._refuse(self.EDIT, lambda p: self._text_of(p) == shown)

    def faults_left(self) -> int:
        return sum(f.times for f in self.fake.faults)

    # --- what the chat shows ---------------------------------------------------------------

    def chat(self, user: int) -> ChatRef:
        return ChatRef(platform=self.name, chat_id=str(self._key(user)))

    def visible_messages(self, user: int) -> list[str]:
        return list(self.fake.texts(self._key(user)))

    def final_text(self, user: int) -> str:
        texts = self.visible_messages(user)
        return texts[-1] if texts else ""

    def shows(self, user: int, needle: str) -> bool:
        return any(needle in t for t in self.visible_messages(user))

    def outgoing(self, on: On, user: int) -> list[Outgoing]:
        method = self.SEND if on == "send" else self.EDIT
        return [Outgoing(t, self._text_of(params))
                for t, params in (self._calls(method, user) if method else [])]

    def fits(self, text: str) -> bool:
        return len(text) <= self.caps.max_message_length

    # --- waiting ---------------------------------------------------------------------------

    async def wait_for(self, predicate: Callable[[], object], within_s: float = WAIT_S) -> None:
        await self.fake.wait_for(lambda: bool(predicate()), within_s)

    async def settle(self, quiet_s: float = 0.3) -> None:
        await self.fake.settle(quiet_s)

    async def idle(self) -> None:
        """Every queued question answered, within IDLE_S (a run that never ends fails here,
        saying so, instead of holding the suite: one did under xdist at load ~10)."""
        try:
            async with asyncio.timeout(IDLE_S):
                await self.app.gateway.idle()
        except TimeoutError:
            busy = self.app.gateway.stages.queue.busy_chats()
            raise AssertionError(f"the gateway still busy after {IDLE_S:g} s: chats {busy}"
                                 ) from None

    async def inbound_count(self) -> int:
        return await inbound_count(self.app)

    # --- groups ----------------------------------------------------------------------------

    has_groups = False  # a platform with group chats says so and gives the methods below
    ADMIN_CHECKS: tuple[str, ...] = ()  # the fake's names for the calls that ask

    def _group_key(self) -> Any:
        raise NotImplementedError

    async def send_in_group(self, user: int, text: str, *, native: bool = True) -> None:
        raise NotImplementedError

    def make_group_admin(self, user: int) -> None:
        raise NotImplementedError

    def group_messages(self) -> list[str]:
        return list(self.fake.texts(self._group_key()))

    def admin_checks(self) -> int:
        return sum(len(self.fake.calls_of(method)) for method in self.ADMIN_CHECKS)


def _command(command: str) -> tuple[str, str]:
    name, _, args = command.strip().lstrip("/").partition(" ")
    return name, args.strip()


# --- Telegram --------------------------------------------------------------------------------


class TelegramHarness(BaseHarness):
    """python-telegram-bot polling the fake Bot API; signed: the webhook with its secret."""

    name = "telegram"
    voice_format = "ogg"
    SECRET = "conformance-Secret_0123456789abcdef"
    HOOK = "https://bot.example.com/tg/hook"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.fake = FakeTelegram()
        self._hook: str | None = None
        self._update_ids = itertools.count(900_000)

    def make_adapter(self, *, signed: bool) -> Adapter:
        hook = {"webhook_url": self.HOOK, "webhook_secret": self.SECRET,
                "webhook_port": 0} if signed else {}
        return telegram_adapter(self.fake, **hook)

    def attach(self, app: App, adapter: Adapter) -> None:
        super().attach(app, adapter)
        port = getattr(adapter, "webhook_port", None)
        self._hook = f"http://127.0.0.1:{port}/tg/hook" if port else None

    def detach(self) -> None:
        super().detach()
        self._hook = None

    SEND, EDIT = "sendMessage", "editMessageText"

    def _key(self, user: int) -> int:
        return 1000 + user  # a private chat: its id is the user's

    def uid(self, user: int) -> str:
        return str(self._key(user))

    async def _deliver(self, update: dict[str, Any], *,
                       secret: str | None = SECRET) -> int:
        """Into getUpdates' queue, or POSTed to the webhook when the adapter serves one."""
        if self._hook is None:
            self.fake.push(update)
            return 200
        update.setdefault("update_id", next(self._update_ids))
        headers = {} if secret is None else {"X-Telegram-Bot-Api-Secret-Token": secret}
        async with aiohttp.ClientSession() as http, \
                http.post(self._hook, json=update, headers=headers) as resp:
            return resp.status

    async def send_text(self, user: int, text: str) -> None:
        assert await self._deliver(self.fake.message(self._key(user), text)) == 200

    async def send_command(self, user: int, command: str) -> None:
        await self.send_text(user, command)  # the fake marks it with a bot_command entity

    async def send_voice(self, user: int, fixture: Path) -> None:
        data = await asyncio.to_thread(fixture.read_bytes)
        file_id = self.fake.add_file(data, f"voice/{fixture.name}")
        voice = {"file_id": file_id, "file_unique_id": f"u{file_id}", "duration": 3,
                 "mime_type": "audio/ogg", "file_size": len(data)}
        assert await self._deliver(self.fake.message(self._key(user), voice=voice)) == 200

    async def deliver_duplicate(self, user: int, text: str) -> None:
        update = self.fake.message(self._key(user), text)
        await self._deliver(update)  # the update gets its update_id here ...
        await self._deliver(copy.deepcopy(update))  # ... and comes again with it

    async def send_forged(self, user: int, text: str) -> list[int]:
        assert self._hook is not None, "start with signed=True"
        update = self.fake.message(self._key(user), text)
        return [await self._deliver(copy.deepcopy(update), secret=secret)
                for secret in ("not-the-secret", self.SECRET[:-1], self.SECRET.upper(), None)]

    async def send_signed(self, user: int, text: str) -> None:
        assert self._hook is not None, "start with signed=True"
        await self.send_text(user, text)

    def _refuse(self, method: str, when: Callable[[dict[str, Any]], bool]) -> None:
        self.fake.fail(method, telegram_429(1), when=when)

    has_groups = True
    GROUP = -1001234500  # a supergroup
    ADMIN_CHECKS = ("getChatMember",)

    def _group_key(self) -> int:
        return self.GROUP

    async def send_in_group(self, user: int, text: str, *, native: bool = True) -> None:
        if not native and not text.startswith("/"):
            text = f"@{self.fake.username} {text}"
        update = self.fake.message(self.GROUP, text, user_id=self._key(user),
                                   chat_type="supergroup")
        assert await self._deliver(update) == 200

    def make_group_admin(self, user: int) -> None:
        self.fake.make_admin(self.GROUP, self._key(user))

    def _text_of(self, params: dict[str, Any]) -> str:
        text = str(params.get("text") or "")
        try:
            return parse_text(text, params.get("parse_mode"))[0]
        except TelegramApiError:  # HTML Telegram refuses: shown as sent, in the end
            return text

    def sent_files(self, user: int) -> list[SentFile]:
        return [SentFile("image" if m.kind == "photo" else "document", m.filename, m.data)
                for m in self.fake.bot_messages(self._key(user))
                if m.kind in ("photo", "document")]

    def rendered(self, md: str) -> str:
        return parse_text(to_telegram_html(md.strip()), "HTML")[0]


# --- Discord ---------------------------------------------------------------------------------


class DiscordHarness(BaseHarness):
    """discord.py on the fake gateway + REST; commands as application commands; signed: HTTP
    interactions (Ed25519) as well."""

    name = "discord"
    voice_format = "ogg"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.fake = FakeDiscord()
        self._url: str | None = None
        self._endpoints = (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY)

    def make_adapter(self, *, signed: bool) -> Adapter:
        return discord_adapter(self.fake, **({"interactions_port": 0} if signed else {}))

    def attach(self, app: App, adapter: Adapter) -> None:
        super().attach(app, adapter)
        port = getattr(adapter, "interactions_port", None)
        self._url = f"http://127.0.0.1:{port}/interactions" if port else None

    def detach(self) -> None:
        super().detach()
        self._url = None
        # discord.py's REST base and gateway URL are process-global: the adapter gives them back
        assert (Route.BASE, DiscordWebSocket.DEFAULT_GATEWAY) == self._endpoints

    SEND, EDIT = "send", "edit"

    def _key(self, user: int) -> int:
        return 5000 + 10 * user  # a DM channel; the fake's user in it is channel + 1

    def uid(self, user: int) -> str:
        return str(self._key(user) + 1)

    async def send_text(self, user: int, text: str) -> None:
        await self.fake.push(self.fake.message(self._key(user), text))

    async def send_command(self, user: int, command: str) -> None:
        name, args = _command(command)
        await self.fake.push(self.fake.interaction(self._key(user), name, args or None))

    async def send_voice(self, user: int, fixture: Path) -> None:
        data = await asyncio.to_thread(fixture.read_bytes)
        await self.fake.push(self.fake.voice_message(self._key(user), data, duration_s=3.0))

    async def deliver_duplicate(self, user: int, text: str) -> None:
        event = self.fake.message(self._key(user), text)
        await self.fake.push(event)
        await self.fake.push(event)  # the same message id again

    async def send_forged(self, user: int, text: str) -> list[int]:
        assert self._url is not None, "start with signed=True"
        event = self.fake.interaction(self._key(user), "fast", text)
        body = json.dumps(event.data).encode()
        good = self.fake.sign(body)
        attempts = [
            self.fake.sign(body, forge=True),  # another key
            self.fake.sign(b'{"type": 1}'),  # another body
            self.fake.sign(body, timestamp=str(int(time.time()) - 3600)),  # old: replayed
            {"Content-Type": "application/json"},  # unsigned
            {**good, "X-Signature-Ed25519": "zz" * 64},  # not hex
        ]
        statuses = []
        async with aiohttp.ClientSession() as http:
            for headers in attempts:
                async with http.post(self._url, data=body, headers=headers) as resp:
                    statuses.append(resp.status)
        return statuses

    async def send_signed(self, user: int, text: str) -> None:
        assert self._url is not None, "start with signed=True"
        event = self.fake.interaction(self._key(user), "fast", text)
        status, answer = await self.fake.deliver_interaction(self._url, event)
        assert (status, answer) == (200, {"type": 5})

    def _refuse(self, method: str, when: Callable[[dict[str, Any]], bool]) -> None:
        self.fake.fail(method, discord_429(1.0), when=when)

    has_groups = True
    ADMIN_CHECKS = ("member", "guild")  # slash commands carry the member's permissions

    def _group_key(self) -> int:
        return GUILD_CHANNEL_ID

    async def send_in_group(self, user: int, text: str, *, native: bool = True) -> None:
        uid = int(self.uid(user))
        if native:
            name, args = _command(text)
            await self.fake.push(self.fake.interaction(GUILD_CHANNEL_ID, name, args or None,
                                                       user_id=uid, guild=True))
        else:
            await self.fake.push(self.fake.message(GUILD_CHANNEL_ID, text, user_id=uid,
                                                   guild=True, mention=True))

    def make_group_admin(self, user: int) -> None:
        self.fake.make_admin(int(self.uid(user)))

    def _text_of(self, params: dict[str, Any]) -> str:
        return str(params.get("content") or "")

    def sent_files(self, user: int) -> list[SentFile]:
        return [SentFile(_file_kind(f.filename), f.filename, f.data)
                for m in self.fake.bot_messages(self._key(user)) for f in m.files]

    def rendered(self, md: str) -> str:
        return md.strip()  # Discord's own Markdown, as it is


# --- Slack -----------------------------------------------------------------------------------


class SlackHarness(BaseHarness):
    """slack-bolt on signed HTTP events from the fake; commands as `/bullpen name args`."""

    name = "slack"
    voice_format = "webm"

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.fake = FakeSlack()
        self._url: str | None = None

    def make_adapter(self, *, signed: bool) -> Adapter:
        return slack_adapter(self.fake)  # HTTP events are always signed

    def attach(self, app: App, adapter: Adapter) -> None:
        super().attach(app, adapter)
        self._url = f"http://127.0.0.1:{getattr(adapter, 'events_port', 0)}/slack/events"

    def detach(self) -> None:
        super().detach()
        self._url = None

    SEND, EDIT = "chat.postMessage", "chat.update"

    def _key(self, user: int) -> str:
        return f"D0USER{user:03d}"  # a DM

    def uid(self, user: int) -> str:
        return f"U0USER{user:03d}"

    async def _post(self, body: dict[str, Any], **kw: Any) -> None:
        assert self._url is not None, "not running"
        status, text = await self.fake.post(self._url, body, **kw)
        assert status == 200, text

    def _event(self, user: int, text: str, **extra: Any) -> dict[str, Any]:
        return self.fake.envelope(self.fake.message(self._key(user), text,
                                                    user=self.uid(user), **extra))

    async def send_text(self, user: int, text: str) -> None:
        await self._post(self._event(user, text))

    async def send_command(self, user: int, command: str) -> None:
        name, args = _command(command)
        await self._post(self.fake.command(f"{name} {args}".strip(), channel=self._key(user),
                                           user=self.uid(user)), kind="command")

    async def send_voice(self, user: int, fixture: Path) -> None:
        data = await asyncio.to_thread(fixture.read_bytes)
        clip = self.fake.add_file(data, f"audio_message.{self.voice_format}",
                                  mimetype=f"audio/{self.voice_format}", subtype="slack_audio",
                                  duration_ms=3000)
        await self._post(self._event(user, "", subtype="file_share", files=[clip]))

    async def deliver_duplicate(self, user: int, text: str) -> None:
        body = self._event(user, text)
        await self._post(body)
        await self._post(body, retry_num=1)  # Slack was unsure: the same event again

    async def send_forged(self, user: int, text: str) -> list[int]:
        assert self._url is not None, "not running"
        statuses = []
        stale = int(time.time()) - 6 * 60
        for how in ({"secret": "not-the-signing-secret"}, {"timestamp": stale},
                    {"tamper": True}):
            statuses.append((await self.fake.post(self._url, self._event(user, text),
                                                  **how))[0])
            command = self.fake.command(f"fast {text}", channel=self._key(user),
                                        user=self.uid(user))
            statuses.append((await self.fake.post(self._url, command, kind="command",
                                                  **how))[0])
        async with aiohttp.ClientSession() as http, \
                http.post(self._url, json=self._event(user, text)) as resp:  # unsigned
            statuses.append(resp.status)
        return statuses

    async def send_signed(self, user: int, text: str) -> None:
        await self.send_text(user, text)

    def _refuse(self, method: str, when: Callable[[dict[str, Any]], bool]) -> None:
        self.fake.fail(method, slack_429(1), when=when)

    has_groups = True
    GROUP = "C0GROUP01"  # a public channel
    ADMIN_CHECKS = ("users.info", "conversations.info")

    def _group_key(self) -> str:
        return self.GROUP

    async def send_in_group(self, user: int, text: str, *, native: bool = True) -> None:
        if native:
            name, args = _command(text)
            await self._post(self.fake.command(f"{name} {args}".strip(), channel=self.GROUP,
                                               user=self.uid(user)), kind="command")
        else:
            await self._post(self.fake.envelope(self.fake.mention(self.GROUP, text,
                                                                  user=self.uid(user))))

    def make_group_admin(self, user: int) -> None:
        self.fake.make_admin(self.uid(user))

    def _text_of(self, params: dict[str, Any]) -> str:
        return str(params.get("text") or "")

    def sent_files(self, user: int) -> list[SentFile]:
        return [SentFile(_file_kind(f.name), f.name, f.data)
                for m in self.fake.bot_messages(self._key(user)) for f in m.files]

    def rendered(self, md: str) -> str:
        return to_slack_mrkdwn(md.strip())


# --- WeChat ----------------------------------------------------------------------------------


class WeChatHarness(BaseHarness):
    """An official account: wechatpy behind signed XML callbacks, answers through the
    customer-service API. WeChat has no slash commands (they are typed) and cannot edit."""

    name = "wechat"
    voice_format = "amr"
    SEND = "message/custom/send"  # and no EDIT

    def __init__(self, **kw: Any) -> None:
        super().__init__(**kw)
        self.fake = FakeWeChat()

    def make_adapter(self, *, signed: bool) -> Adapter:
        return wechat_adapter(self.fake)  # callbacks are always signed

    def attach(self, app: App, adapter: Adapter) -> None:
        super().attach(app, adapter)
        self.fake.callback_url = f"http://127.0.0.1:{getattr(adapter, 'port', 0)}/wechat"

    def _key(self, user: int) -> str:
        return openid(user)  # the user's openid is the chat

    def uid(self, user: int) -> str:
        return openid(user)

    async def send_text(self, user: int, text: str) -> None:
        delivery = await self.fake.post(self.fake.text(openid(user), text))
        assert (delivery.status, delivery.text) == (200, "success")

    async def send_command(self, user: int, command: str) -> None:
        await self.send_text(user, command)

    async def send_voice(self, user: int, fixture: Path) -> None:
        data = await asyncio.to_thread(fixture.read_bytes)
        media = self.fake.add_media(data, filename=fixture.name)
        delivery = await self.fake.post(self.fake.voice(openid(user), media))
        assert delivery.status == 200

    async def deliver_duplicate(self, user: int, text: str) -> None:
        storm = await self.fake.storm(self.fake.text(openid(user), text), retries=3,
                                      spacing_s=0.2)
        assert [d.status for d in storm] == [200] * 4

    async def send_forged(self, user: int, text: str) -> list[int]:
        forged = await self.fake.forge(url=self.fake.callback_url, users=[openid(user)])
        unsigned = await self.fake.post_raw(
            {}, render_xml(self.fake.text(openid(user), text)).encode())
        return [*forged["statuses"], unsigned.status]

    async def send_signed(self, user: int, text: str) -> None:
        await self.send_text(user, text)

    def _refuse(self, method: str, when: Callable[[dict[str, Any]], bool]) -> None:
        self.fake.fail(method, WECHAT_RATE_LIMITED, "api minute-quota reach limit", when=when)

    def _text_of(self, params: dict[str, Any]) -> str:
        return str((params.get("text") or {}).get("content") or "")

    def _calls(self, method: str, user: int) -> list[tuple[float, dict[str, Any]]]:
        return [(c.t, c.body or {}) for c in self.fake.calls_of(method)
                if (c.body or {}).get("touser") == openid(user)]

    def sent_files(self, user: int) -> list[SentFile]:
        return [SentFile("image" if s.kind == "image" else "document", s.filename, s.data)
                for s in self.fake.sent_to(openid(user)) if s.kind in ("image", "file")]

    def rendered(self, md: str) -> str:
        return to_plain(md.strip())

    def fits(self, text: str) -> bool:
        return super().fits(text) and len(text.encode("utf-8")) <= 2048

    # has_groups stays False: an official account talks with each follower alone


HARNESSES: dict[str, type[BaseHarness]] = {
    "telegram": TelegramHarness, "discord": DiscordHarness, "slack": SlackHarness,
    "wechat": WeChatHarness,
}


@pytest.fixture(params=PLATFORMS)
async def harness(request: pytest.FixtureRequest, pg_dsn: str,
                  tmp_path: Path) -> AsyncIterator[PlatformHarness]:
    """Each platform's harness in turn, its fake running, on this test's database."""
    async with HARNESSES[request.param](dsn=pg_dsn, data_dir=tmp_path / "data") as h:
        yield h  # type: ignore[misc]


@pytest.fixture
async def everywhere(pg_dsn: str, tmp_path: Path) -> AsyncIterator[list[BaseHarness]]:
    """The four harnesses at once, their fakes running, on one database (`run_app` starts
    one App with all four adapters)."""
    async with AsyncExitStack() as stack:
        yield [await stack.enter_async_context(cls(dsn=pg_dsn, data_dir=tmp_path / "data"))
               for cls in HARNESSES.values()]
