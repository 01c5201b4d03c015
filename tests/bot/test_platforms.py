"""Settings decide which adapters start; each is built with typed arguments, never env reads."""

from __future__ import annotations

import pytest

from bot.platforms import build_adapters
from bot.settings import load_settings
from core.errors import ConfigError

BASE = {f: None for f in ("telegram_bot_token", "slack_bot_token", "discord_bot_token",
                          "wechat_token", "wecom_corp_id")}


def test_nothing_configured_means_no_platform():
    assert load_settings(**BASE).platforms_configured() == []


def test_each_platform_is_built_from_its_settings():
    s = load_settings(**{
        **BASE,
        "telegram_bot_token": "123:abcdefghijklmnopqrstuvwxyz0123456789",
        "telegram_webhook_url": None,
        "slack_bot_token": "xoxb-1", "slack_signing_secret": "s3",
        "discord_bot_token": "d.t.x", "discord_application_id": 1,
        "wechat_token": "t", "wechat_app_id": "wx0123456789abcdef", "wechat_app_secret": "s" * 32,
        "wecom_corp_id": "ww0123456789abcdef", "wecom_agent_id": 1, "wecom_secret": "s" * 43,
        "wecom_token": "t",
        "wecom_encoding_aes_key": "a" * 43,
    })
    names = s.platforms_configured()
    assert names == ["telegram", "discord", "slack", "wechat", "wecom"]
    adapters = build_adapters(s, names)
    assert [a.name for a in adapters][:3] == ["telegram", "discord", "slack"]
    assert {a.name for a in adapters[3:]} <= {"wechat", "wecom"}


def test_a_telegram_webhook_without_secret_is_refused_unless_explicitly_insecure():
    s = load_settings(**{**BASE, "telegram_bot_token": "123:abcdefghijklmnopqrstuvwxyz0123456789",
                         "telegram_webhook_url": "https://bot.example/tg"})
    with pytest.raises(ConfigError, match="TELEGRAM_WEBHOOK_SECRET"):
        build_adapters(s, ["telegram"])
    s = load_settings(**{**BASE, "telegram_bot_token": "123:abcdefghijklmnopqrstuvwxyz0123456789",
                         "telegram_webhook_url": "https://bot.example/tg",
                         "telegram_webhook_insecure": True})
    assert build_adapters(s, ["telegram"])[0].name == "telegram"


def test_slack_without_signing_secret_or_app_token_is_a_config_error():
    s = load_settings(**{**BASE, "slack_bot_token": "xoxb-1"})
    with pytest.raises(ConfigError):
        build_adapters(s, ["slack"])


def test_the_wechat_passive_reply_is_a_setting_and_never_in_safe_mode_or_wecom():
    wechat = {**BASE, "wechat_token": "t", "wechat_app_id": "wx0123456789abcdef",
              "wechat_app_secret": "s" * 32}
    (default,) = build_adapters(load_settings(**wechat), ["wechat"])
    (off,) = build_adapters(load_settings(**wechat, wechat_passive_reply_s=0), ["wechat"])
    (on,) = build_adapters(load_settings(**wechat, wechat_passive_reply_s=4.0), ["wechat"])
    (safe,) = build_adapters(load_settings(**wechat, wechat_passive_reply_s=4.0,
                                           wechat_encoding_aes_key="a" * 43), ["wechat"])
    assert [getattr(a, "passive_wait_s", None) for a in (default, off, on, safe)] == [
        3.0, 0.0, 4.0, 0.0]
    with pytest.raises(ValueError):  # past WeChat's 5 s the callback itself would be retried
        load_settings(**wechat, wechat_passive_reply_s=6.0)
