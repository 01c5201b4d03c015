"""slack_sdk formats every request and response for a debug line when its logger's own `level`
is at or below DEBUG, NOTSET included: the adapter's client logger carries the effective level,
so that work is done only when debug logging is on."""

from __future__ import annotations

import logging

import pytest

from adapters.slack import SlackAdapter


@pytest.mark.parametrize("level", [logging.WARNING, logging.INFO, logging.DEBUG])
def test_the_web_clients_logger_level_is_the_effective_one(level: int) -> None:
    sdk = logging.getLogger("slack_sdk.web")
    before = sdk.level
    sdk.setLevel(logging.NOTSET)
    root = logging.getLogger()
    root_before = root.level
    root.setLevel(level)
    try:
        adapter = SlackAdapter(bot_token="xoxb-1-test", signing_secret="s" * 32)
        client_log = adapter._client.logger
        assert client_log.level == level  # what slack_sdk compares with DEBUG
        assert (client_log.level <= logging.DEBUG) == (level == logging.DEBUG)
    finally:
        root.setLevel(root_before)
        sdk.setLevel(before)
