"""`bot.logs`: the redaction filter on every root handler (message, args, traceback, stack),
the secrets registered from the settings, and the token-bearing shapes nobody configured."""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Iterator

import pytest
from pydantic import SecretStr

from bot import logs
from bot.settings import load_settings


@pytest.fixture
def root() -> Iterator[logging.Logger]:
    """The root logger, its handlers, level and the registered secrets restored after."""
    logger = logging.getLogger()
    handlers, level = list(logger.handlers), logger.level
    yield logger
    logger.handlers[:] = handlers
    logger.setLevel(level)
    logs.REDACTOR.clear()


def lines(handler: logging.StreamHandler[io.StringIO]) -> str:
    return handler.stream.getvalue()


def installed(root: logging.Logger, fmt: str = "text") -> logging.StreamHandler[io.StringIO]:
    """`setup` as the CLI calls it, with its stderr handler's stream captured."""
    logs.setup("DEBUG", fmt, secrets=["configured-Secret-77", "p@ss word/+="])
    [handler] = root.handlers
    assert isinstance(handler, logging.StreamHandler) and logs.REDACTOR in handler.filters
    handler.setStream(io.StringIO())
    return handler


@pytest.mark.parametrize(("text", "secret"), [
    ("Set Bot API URL: http://127.0.0.1:1/bot777000111:TEST-fake-token-Xyz_0123456789",
     "TEST-fake-token"),
    ("GET https://api.telegram.org/file/bot12345:AAbbCC-ddEEff/voice/file_7.oga", "AAbbCC"),
    ("token 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw0 given", "AAHdqTcvCH1vGWJxfSeofSAs0K5"),
    ("POST https://discord.com/api/v10/interactions/1234/aW50ZXJhY3Rpb246MTIz/callback",
     "aW50ZXJhY3Rpb246MTIz"),
    ("PATCH https://discord.com/api/v10/webhooks/800/itok_f-Ej9xLL5sxs/messages/@original",
     "itok_f-Ej9xLL5sxs"),
    ("{'t': 'INTERACTION_CREATE', 'd': {'token': 'itok_abc-DEF_123', 'version': 1}}",
     "itok_abc-DEF_123"),
    ("token MTA5ODc2NTQzMjEwOTg3NjU0.GaBcDe.abcdefghijklmnopqrstuvwxyz0123 in use",
     "GaBcDe.abcdefghijklmnopqrstuvwxyz0123"),
    ("auth with xoxb-1111-2222-TESTfakeBotToken0123", "TESTfakeBotToken0123"),
    ("socket token xapp-1-A0BULL-3333-TESTfakeAppToken0123", "TESTfakeAppToken0123"),
    ("headers {'Authorization': 'Bearer sk-live-abcdefghijklmnop'}", "abcdefghijklmnop"),
    ("Authorization: Bot ODAwMDAwMDAwMDAwMDAwMDAx.FAKE", "ODAwMDAwMDAwMDAwMDAwMDAx"),
    ("connecting to postgresql://bullpen:hunter2pw@db:5432/bullpen", "hunter2pw"),
    ('"GET /cgi-bin/token?grant_type=client_credential&appid=wx1&secret=s3cr3tApp HTTP/1.1"',
     "s3cr3tApp"),
    ("GET /cgi-bin/media/get?access_token=ACCESS-tok_123&media_id=M1", "ACCESS-tok_123"),
    ("GET /cgi-bin/gettoken?corpid=ww1&corpsecret=CorpSecret99", "CorpSecret99"),
    ("wss://wss-primary.slack.com/link/?ticket=5c1f-9a7e-44&app_id=A1", "5c1f-9a7e-44"),
    ("Calling setWebhook with {'url': 'https://x/hook', 'secret_token': 'WebHook-S3cret'}",
     "WebHook-S3cret"),
    ('{"access_token": "tok\\"en-with-quote", "expires_in": 7200}', "en-with-quote"),
    ("{'X-Telegram-Bot-Api-Secret-Token': 'HeaderSecret9'}", "HeaderSecret9"),
    ("OfficialClient(appid='wx1', secret='kwargSecret1')", "kwargSecret1"),
])
def test_token_bearing_shapes_are_redacted_without_being_configured(text: str,
                                                                    secret: str) -> None:
    clean = logs.REDACTOR.redact(text)
    assert secret not in clean and logs.MASK in clean


def test_ordinary_text_and_counts_are_left_alone() -> None:
    for text in ("usage: max_tokens=100, prompt_tokens=12, completion_tokens=3",
                 "NVDA closed at 130.5 on 2025-01-02 12:30:00",
                 "Calling Bot API endpoint `getMe` with parameters `{}`",
                 "GET /bottles/12 HTTP/1.1", "http://127.0.0.1:8080/wechat?timestamp=1"):
        assert logs.REDACTOR.redact(text) == text


def test_the_message_its_args_traceback_and_stack_are_redacted(root: logging.Logger) -> None:
    handler = installed(root)
    log = logging.getLogger("some.sdk.internals")  # any logger: it reaches the root handler
    log.debug("args: %s %r", "configured-Secret-77", {"nested": "x configured-Secret-77 y"})
    log.info("dict arg %(url)s", {"url": "/bot1:configured-Secret-77/getMe"})
    try:
        raise RuntimeError("failed POST https://h/webhooks/1/itok_in-a-traceback")
    except RuntimeError:
        log.exception("failed with %s", "configured-Secret-77")
    log.warning("where am I", stack_info=True, extra={"unused": "configured-Secret-77"})
    log.error("bad format %s %s", "configured-Secret-77")  # too few args: still redacted
    log.debug("encoded p%40ss%20word%2F%2B%3D and plus p%40ss+word%2F%2B%3D and p@ss word/+=")
    out = lines(handler)
    assert "configured-Secret-77" not in out and "itok_in-a-traceback" not in out
    assert "p@ss word/+=" not in out and "p%40ss" not in out
    assert "Traceback" in out and "RuntimeError" in out and "where am I" in out
    assert out.count(logs.MASK) >= 8


def test_json_lines_are_redacted_and_carry_the_traceback(root: logging.Logger) -> None:
    handler = installed(root, "json")
    try:
        raise ValueError("access_token=leaky-token-1")
    except ValueError:
        logging.getLogger("x").exception("token %s", "configured-Secret-77")
    [line] = [json.loads(x) for x in lines(handler).splitlines()]
    assert line["msg"] == "token ***" and "ValueError: access_token=***" in line["exc"]


def test_setup_covers_handlers_other_loggers_already_have(root: logging.Logger) -> None:
    own = logging.getLogger("sdk.with.its.own.handler")
    stream = io.StringIO()
    mine = logging.StreamHandler(stream)
    own.addHandler(mine)
    own.propagate = False
    try:
        installed(root)
        own.warning("secret_token=configured-Secret-77")
    finally:
        own.removeHandler(mine)
        own.propagate = True
    assert "configured-Secret-77" not in stream.getvalue() and logs.MASK in stream.getvalue()


TG = "1:tg-token-abcdefghijklmnopqrstuvwxyz012"


def test_the_configured_secrets_are_taken_from_the_settings(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BULLPEN_LLM_JUDGE_API_KEY", "judge-key-123")
    settings = load_settings(
        database_url="postgresql://u:db-password-1@h/db", telegram_bot_token=TG,
        telegram_webhook_secret="hook-secret", slack_signing_secret="slack-signing",
        wechat_encoding_aes_key="aesKey43" + "x" * 35, llm_base_url="http://llm", llm_model="m",
        llm_api_key="llm-key-9", discord_public_key="not-a-secret")
    found = logs.secrets_of(settings)
    for secret in ("db-password-1", TG, "hook-secret", "slack-signing",
                   "aesKey43" + "x" * 35, "llm-key-9", "judge-key-123"):
        assert secret in found
    assert "not-a-secret" not in found and all(isinstance(s, str) for s in found)
    assert not any(isinstance(s, SecretStr) for s in found)
