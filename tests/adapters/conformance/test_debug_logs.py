"""Logs at DEBUG, on every platform, carry no secret: the configured ones (bot tokens, the
webhook secret, Slack's signing secret, WeChat's app secret and AES key, registered the way
`bullpen serve` registers its settings) and the ones nobody configured (Discord interaction
tokens, WeChat access tokens), which only the redaction patterns can catch."""

from __future__ import annotations

import io
import logging
import re

from bot.logs import REDACTOR, redacting, register_secrets
from tests.adapters.conformance.conftest import PlatformHarness
from tests.fakes.openai_server import FakeOpenAI, Turn

USER = 7
ANSWER = "Fine, thank you: nothing to report on the tape today."


def configured(harness: PlatformHarness) -> list[str]:
    """What the platform's settings would hold for this harness."""
    fake = harness.fake  # type: ignore[attr-defined]
    found = [fake.token]
    for name in ("SECRET",):
        found.append(getattr(harness, name, ""))
    for name in ("signing_secret", "app_secret", "aes_key"):
        found.append(getattr(fake, name, ""))
    return [s for s in found if isinstance(s, str) and len(s) >= 8]


def unconfigured(harness: PlatformHarness) -> list[str]:
    """Tokens the platform issued during the run: Discord interaction tokens, WeChat access
    tokens."""
    fake = harness.fake  # type: ignore[attr-defined]
    found = list(getattr(fake, "interactions", {}))
    found += list(getattr(fake, "_tokens", {}))
    return [s for s in found if isinstance(s, str) and len(s) >= 8]


async def test_debug_logs_carry_no_secret(harness: PlatformHarness) -> None:
    out = io.StringIO()
    handler = redacting(logging.StreamHandler(out))
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    level = root.level
    register_secrets(*configured(harness))
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        async with FakeOpenAI(default=Turn(text=ANSWER)) as llm:
            async with harness.running(llm=llm, signed=True):
                await harness.send_signed(USER, "How are markets today?")
                await harness.wait_for(lambda: ANSWER in " ".join(
                    harness.visible_messages(USER)), within_s=30)
                await harness.send_text(USER, "/help")
                await harness.wait_for(lambda: len(harness.visible_messages(USER)) >= 2,
                                       within_s=30)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    logged = out.getvalue()
    assert len(logged.splitlines()) > 20  # DEBUG was on: the SDKs said plenty
    leaked = [s for s in configured(harness) + unconfigured(harness) if s in logged]
    assert not leaked, [re.findall(rf".{{0,80}}{re.escape(s)}.{{0,20}}", logged)[:2]
                        for s in leaked]
    assert REDACTOR in handler.filters


async def test_debug_logs_carry_no_link_code_or_sign_in_link(harness: PlatformHarness) -> None:
    """A /link code is a credential for ten minutes, and so is a web sign-in link: the code
    goes out in a message body the SDKs log at DEBUG, and comes back in the other account's
    /link message; neither may be written to a log."""
    from bot.logs import REDACTOR
    from bot.web_links import login_link

    out = io.StringIO()
    handler = redacting(logging.StreamHandler(out))
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    try:
        async with FakeOpenAI(default=Turn(text=ANSWER)) as llm:
            async with harness.running(llm=llm, signed=True) as app:
                await harness.send_text(USER, "/link")
                await harness.wait_for(lambda: re.search(
                    r"\b\d{8}\b", " ".join(harness.visible_messages(USER))) is not None,
                    within_s=30)
                match = re.search(r"\b(\d{8})\b", " ".join(harness.visible_messages(USER)))
                assert match is not None
                code = match.group(1)
                before = len(harness.visible_messages(USER + 1))
                await harness.send_text(USER + 1, f"/link {code}")
                await harness.wait_for(
                    lambda: len(harness.visible_messages(USER + 1)) > before, within_s=30)
                user = await app.store.accounts.user_for(harness.name, harness.uid(USER))
                link = await login_link(app.store, "http://127.0.0.1:9", user)
                logging.getLogger("bullpen.test").debug("sending %s", link)
    finally:
        root.removeHandler(handler)
        root.setLevel(level)
    logged = out.getvalue()
    token = link.rsplit("/", 1)[1]
    assert len(logged.splitlines()) > 5  # DEBUG was on (WeChat's SDK says least)
    assert code not in logged, re.findall(rf".{{0,80}}{code}.{{0,20}}", logged)[:2]
    assert token not in logged
    assert "/login/***" in logged and REDACTOR in handler.filters
