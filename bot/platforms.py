"""Builds the adapters whose credentials are set. Adapters take typed keyword arguments;
settings are read here, never inside an adapter."""

from __future__ import annotations

from pydantic import SecretStr

from bot.commands import menu, other_menus
from bot.settings import Settings
from core.errors import ConfigError
from core.ports import Adapter, KeptReplies, WebDirectory


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None


def build_adapters(settings: Settings, platforms: list[str], *,
                   kept_replies: KeptReplies | None = None,
                   hold_in_outbox: bool = False,
                   web_directory: WebDirectory | None = None) -> list[Adapter]:
    """The adapters for `platforms`. What WeChat and WeCom refuse while the user's window is
    closed is held by the outbox with `hold_in_outbox` (`App.build_adapters`: one mechanism,
    in Postgres), else kept by the adapter in `kept_replies`. The web platform shows what
    `web_directory` (over the store: `App.build_adapters`) knows."""
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
                commands=menu("en"), localized_commands=other_menus(),
            ))
        elif name == "discord":
            from adapters.discord import DiscordAdapter

            assert settings.discord_bot_token is not None
            adapters.append(DiscordAdapter(
                token=settings.discord_bot_token.get_secret_value(),
                application_id=settings.discord_application_id,
                api_base_url=settings.discord_api_base_url,
                gateway_url=settings.discord_gateway_url,
                public_key=settings.discord_public_key,
                interactions_listen=settings.discord_interactions_listen,
                interactions_port=settings.discord_interactions_port,
                interactions_path=settings.discord_interactions_path,
                interactions_insecure=settings.discord_interactions_insecure,
                gateway=settings.discord_gateway,
                message_content_intent=settings.discord_message_content_intent,
                commands=menu("en"), localized_commands=other_menus(),
            ))
        elif name == "slack":
            from adapters.slack import SlackAdapter

            assert settings.slack_bot_token is not None
            if not (settings.slack_signing_secret or settings.slack_app_token):
                raise ConfigError("SLACK_BOT_TOKEN needs SLACK_SIGNING_SECRET (HTTP events) "
                                  "or SLACK_APP_TOKEN (Socket Mode)")
            adapters.append(SlackAdapter(
                bot_token=settings.slack_bot_token.get_secret_value(),
                signing_secret=_secret(settings.slack_signing_secret),
                app_token=_secret(settings.slack_app_token),
                api_base_url=settings.slack_api_base_url,
                events_listen=settings.slack_events_listen,
                events_port=settings.slack_events_port,
                events_path=settings.slack_events_path,
                commands_name=settings.slack_command,
                commands=menu("en"),
            ))
        elif name == "wechat":
            from adapters.wechat import WeChatAdapter

            assert settings.wechat_token is not None and settings.wechat_app_secret is not None
            adapters.append(WeChatAdapter(
                kind="official",
                token=settings.wechat_token.get_secret_value(),
                app_id=settings.wechat_app_id or "",
                app_secret=settings.wechat_app_secret.get_secret_value(),
                encoding_aes_key=_secret(settings.wechat_encoding_aes_key),
                api_base_url=settings.wechat_api_base_url, proxy_url=settings.wechat_proxy_url,
                listen=settings.wechat_listen, port=settings.wechat_port,
                path=settings.wechat_path, kept_replies=kept_replies,
                passive_reply_s=settings.wechat_passive_reply_s,
                hold_in_outbox=hold_in_outbox,
            ))
        elif name == "wecom":
            from adapters.wechat import WeChatAdapter

            assert settings.wecom_token is not None and settings.wecom_secret is not None
            adapters.append(WeChatAdapter(
                kind="wecom",
                token=settings.wecom_token.get_secret_value(),
                app_id=settings.wecom_corp_id or "",
                app_secret=settings.wecom_secret.get_secret_value(),
                agent_id=settings.wecom_agent_id,
                encoding_aes_key=_secret(settings.wecom_encoding_aes_key),
                api_base_url=settings.wecom_api_base_url, proxy_url=settings.wecom_proxy_url,
                listen=settings.wecom_listen, port=settings.wecom_port,
                path=settings.wecom_path, kept_replies=kept_replies,
                hold_in_outbox=hold_in_outbox,
            ))
        elif name == "web":
            from adapters.web import WebAdapter

            assert settings.web_port is not None
            if web_directory is None:
                raise ConfigError("the web platform (WEB_PORT) needs the store: start it "
                                  "with `bullpen serve`")
            adapters.append(WebAdapter(listen=settings.web_listen, port=settings.web_port,
                                       base_url=settings.web_links_base() or "",
                                       directory=web_directory))
        else:
            raise ConfigError(f"no adapter for platform {name!r}")
    return adapters
