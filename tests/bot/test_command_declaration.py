"""A command is declared once: an example command declared here (as a new module of
`bot/commands/` would) is in /help in both languages, in Telegram's native menus (the real
adapter, built by `bot.platforms.build_adapters`, against the fake Bot API) and answered; every
product command's words are the catalogue's; the flags the message path reads come from the
declarations."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from bot import commands
from bot.app import App
from bot.commands import command
from bot.commands.context import CommandContext
from bot.platforms import build_adapters
from bot.settings import load_settings
from core.words import LANGS, catalogue, has, t
from tests.fakes.telegram_server import FakeTelegram

CHAT = 4242


@pytest.fixture
def echo() -> Iterator[None]:
    """/echo, declared with its words, as a module of bot/commands would; gone afterwards."""
    words = catalogue()
    assert isinstance(words, dict)
    with pytest.MonkeyPatch.context() as mp:
        mp.setitem(words, "chat.cmd_echo", {"en": "Say it back", "zh": "原样复述"})
        mp.setitem(words, "chat.use_echo", {"en": "/echo TEXT", "zh": "/echo 文字"})

        @command("echo", summary="chat.cmd_echo", usage="chat.use_echo")
        async def echo_(ctx: CommandContext) -> None:
            await ctx.say(ctx.args or ctx.usage())

        try:
            yield
        finally:
            commands.forget("echo")


async def test_a_declared_command_is_in_the_help_the_menu_and_answered(
        echo: None, pg_dsn: str, tmp_path: Path) -> None:
    async with FakeTelegram() as tg:
        settings = load_settings(database_url=pg_dsn, data_dir=tmp_path / "data",
                                 telegram_bot_token=tg.token, telegram_api_base_url=tg.base_url,
                                 telegram_file_base_url=tg.base_file_url,
                                 telegram_webhook_url=None)
        app = await App.create(settings)
        try:
            await app.start_adapters(build_adapters(settings, ["telegram"]), jobs=False)
            assert {"command": "echo", "description": "Say it back"} in tg.commands
            assert {"command": "echo", "description": "原样复述"} in tg.localized_commands["zh"]
            assert [c["command"] for c in tg.commands] == list(commands.declared())

            tg.push(tg.message(CHAT, "/help"))
            await tg.wait_for(lambda: any("/echo TEXT - Say it back" in x
                                          for x in tg.texts(CHAT)))
            tg.push(tg.message(CHAT, "/echo hello there"))
            await tg.wait_for(lambda: "hello there" in tg.texts(CHAT))
            tg.push(tg.message(CHAT, "/lang zh"))
            tg.push(tg.message(CHAT, "/help"))
            await tg.wait_for(lambda: any("/echo 文字 - 原样复述" in x for x in tg.texts(CHAT)))
            tg.push(tg.message(CHAT, "/echo"))
            await tg.wait_for(lambda: "用法：/echo 文字" in tg.texts(CHAT))
        finally:
            await app.aclose()


def test_every_command_has_its_words_in_both_languages() -> None:
    for spec in commands.declared().values():
        assert has(spec.summary), spec.name
        assert spec.usage is None or has(spec.usage), spec.name
        for lang in LANGS:
            if spec.usage is not None:
                assert t(spec.usage, lang).startswith(f"/{spec.name}"), (spec.name, lang)
            assert f"/{spec.name}" in commands.help_text(lang)


def test_admin_ta_and_tools_are_in_both_helps_and_admin_usage_is_in_both_languages() -> None:
    for lang in LANGS:
        help_text = commands.help_text(lang)
        assert all(f"\n/{name}" in help_text for name in ("admin", "ta", "tools"))
    assert commands.usage_line("admin", "zh") != commands.usage_line("admin", "en")
    assert "平台:ID" in commands.usage_line("admin", "zh")


def test_the_message_path_reads_its_flags_from_the_declarations() -> None:
    declared = commands.declared()
    assert [n for n, s in declared.items() if not s.rated] == ["stop"]
    assert [n for n, s in declared.items() if s.gated] == ["report"]
    assert sorted(n for n, s in declared.items() if not s.in_order) == ["mode", "new", "stop"]
    assert sorted(n for n, s in declared.items() if s.new_epoch) == ["mode", "new"]


def test_a_name_declared_twice_is_refused() -> None:
    async def other(ctx: CommandContext) -> None:
        return None

    with pytest.raises(ValueError, match="/help is declared twice"):
        command("help", summary="chat.cmd_help")(other)


def test_every_summary_fits_every_platforms_menu() -> None:
    """Telegram takes 3-256 characters per description, Discord 1-100 (the names: 1-32 of
    a-z, 0-9 and _ on both)."""
    for lang in LANGS:
        for name, summary in commands.menu(lang):
            assert 3 <= len(summary) <= 100, (name, lang, summary)
            assert name.isascii() and name.islower() and 1 <= len(name) <= 32
