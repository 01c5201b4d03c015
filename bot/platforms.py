"""Builds the adapters whose credentials are set. Adapters take typed keyword arguments;
settings are read here, never inside an adapter."""

from __future__ import annotations

from bot.commands import COMMANDS
from bot.settings import Settings
from core.errors import ConfigError
from core.ports import Adapter


def build_adapters(settings: Settings, platforms: list[str]) -> list[Adapter]:
    adapters: list[Adapter] = []
    for name in platforms:
        if name == "telegram":
            from adapters.telegram import TelegramAdapter

            assert settings.telegram_bot_token is not None
            if settings.telegram_webhook_url and not (
                    settings.telegram_webhook_secret or settings.telegram_webhook_insecure):
                raise ConfigError("TELEGRAM_WEBHOOK_URL needs TELEGRAM_WEBHOOK_SECRET "
                                  "(or TELEGRAM_WEBHOOK_INSECURE=true to run without the check)")
            adapters.append(TelegramAdapter(
                token=settings.telegram_bot_token.get_secret_value(),
                base_url=settings.telegram_api_base_url,
                base_file_url=settings.telegram_file_base_url,
                webhook_url=settings.telegram_webhook_url,
                webhook_secret=settings.telegram_webhook_secret.get_secret_value()
                if settings.telegram_webhook_secret else None,
                webhook_insecure=settings.telegram_webhook_insecure,
                webhook_listen=settings.telegram_webhook_listen,
                webhook_port=settings.telegram_webhook_port,
                commands=list(COMMANDS),
            ))
        else:
            raise ConfigError(f"no adapter for platform {name!r}")
    return adapters
