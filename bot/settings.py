"""Settings: the only reader of the environment (and `.env`)."""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from dotenv import dotenv_values
from pydantic import (
    AliasChoices,
    BaseModel,
    Field,
    PrivateAttr,
    SecretStr,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic_settings import BaseSettings, SettingsConfigDict

from core.llm.profiles import ROLES, ModelProfile

if TYPE_CHECKING:  # the speech client pulls in `openai`; settings stay light for the CLI
    from core.llm.speech import SpeechProfile


def _env(name: str) -> AliasChoices:
    return AliasChoices(name, name.lower())


# The shapes of the platforms' credentials, checked when the settings load so a mistyped one is
# one line at start-up, never a traceback from the SDK. Messages name the setting and describe
# the expected shape; they never repeat the value (it is a secret).
_CREDENTIALS: dict[str, tuple[str, str]] = {
    "telegram_bot_token": (
        r"\d+:[A-Za-z0-9_-]{1,}",
        "TELEGRAM_BOT_TOKEN is not a Telegram bot token: it is the bot's number, a colon and "
        "letters, digits, - or _ (123456789:AAH...), as @BotFather gives it: no 'bot' prefix, "
        "no quotes or spaces"),
    "discord_bot_token": (
        r"[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+",
        "DISCORD_BOT_TOKEN is not a Discord bot token: three dot-separated parts (the Bot page "
        "of the developer portal, Reset Token), not the application id, public key or client "
        "secret; no 'Bot ' prefix, no quotes or spaces"),
    "slack_bot_token": (
        r"xoxb-[A-Za-z0-9-]+",
        "SLACK_BOT_TOKEN is not a Slack bot token: it starts with xoxb- (OAuth & Permissions, "
        "Bot User OAuth Token); an xapp- token goes in SLACK_APP_TOKEN"),
    "slack_app_token": (
        r"xapp-[A-Za-z0-9-]+",
        "SLACK_APP_TOKEN is not a Slack app-level token: it starts with xapp- (Basic "
        "Information, App-Level Tokens, scope connections:write); an xoxb- token goes in "
        "SLACK_BOT_TOKEN"),
    "wechat_app_id": (
        r"wx[0-9a-fA-F]{16}",
        "WECHAT_APP_ID is not a WeChat AppID: wx and 16 hexadecimal digits (公众号 settings, "
        "开发 → 基本配置)"),
    "wechat_app_secret": (
        r"[A-Za-z0-9_-]{32}",
        "WECHAT_APP_SECRET is not a WeChat AppSecret: 32 letters and digits (开发 → 基本配置), "
        "not the AppID or the Token; no quotes or spaces"),
    "wechat_encoding_aes_key": (
        r"[A-Za-z0-9]{43}",
        "WECHAT_ENCODING_AES_KEY is not a WeChat EncodingAESKey: 43 letters and digits"),
    "wecom_corp_id": (
        r"ww[0-9a-fA-F]{16}",
        "WECOM_CORP_ID is not a WeCom corp id: ww and 16 hexadecimal digits (我的企业 → 企业ID)"),
    "wecom_secret": (
        r"[A-Za-z0-9_-]{43}",
        "WECOM_SECRET is not a WeCom application Secret: 43 letters, digits, - or _"),
    "wecom_encoding_aes_key": (
        r"[A-Za-z0-9]{43}",
        "WECOM_ENCODING_AES_KEY is not a WeCom EncodingAESKey: 43 letters and digits"),
}


def check_credential(field: str, value: str) -> str | None:
    """What is wrong with the shape of credential `field` (None when it looks right)."""
    pattern, problem = _CREDENTIALS[field]
    return None if re.fullmatch(pattern, value) else problem


# What `BULLPEN_LLM_<ROLE>_<FIELD>` may name (ROLE one of core.llm.profiles.ROLES), and what
# a bad value of each is told it should be.
ROLE_FIELDS: dict[str, str] = {
    "MODEL": "a model name",
    "BASE_URL": "an OpenAI-compatible endpoint URL",
    "API_KEY": "an API key",
    "CONTEXT_TOKENS": "a whole number of tokens, at least 512",
    "PRICE_IN_PER_MTOK": "a price in US dollars per million tokens, e.g. 0.6",
    "PRICE_OUT_PER_MTOK": "a price in US dollars per million tokens, e.g. 0.6",
    "PRICE_CACHED_IN_PER_MTOK": "a price in US dollars per million tokens, e.g. 0.6",
}


class RoleOverride(BaseModel):
    """What `BULLPEN_LLM_<ROLE>_*` sets for one role; unset fields fall back to the default
    profile (`BULLPEN_LLM_*`)."""

    model: str | None = None
    base_url: str | None = None
    api_key: SecretStr | None = None
    context_tokens: int | None = Field(None, ge=512)
    price_in_per_mtok: float | None = Field(None, ge=0)
    price_out_per_mtok: float | None = Field(None, ge=0)
    price_cached_in_per_mtok: float | None = Field(None, ge=0)


def role_key(role: str, field: str) -> str:
    return f"BULLPEN_LLM_{role.upper()}_{field}"


def _environment(env_file: Any) -> dict[str, str]:
    """The process environment over the `.env` file, keys upper-cased (pydantic-settings
    matches names case-insensitively)."""
    merged: dict[str, str] = {}
    if env_file:
        for key, value in dotenv_values(env_file).items():
            if value is not None:
                merged[key.upper()] = value
    merged.update({k.upper(): v for k, v in os.environ.items()})
    return merged


def _role_overrides(env: Mapping[str, str]) -> dict[str, RoleOverride]:
    """The per-role overrides set in `env`, validated: a bad value is one error naming its
    key (a non-numeric `_CONTEXT_TOKENS` is never dropped silently)."""
    out: dict[str, RoleOverride] = {}
    for role in ROLES:
        given = {field: env[role_key(role, field)] for field in ROLE_FIELDS
                 if env.get(role_key(role, field))}
        if not given:
            continue
        try:
            out[role] = RoleOverride(**{field.lower(): value for field, value in given.items()})
        except ValidationError as exc:
            field = str(exc.errors()[0]["loc"][0]).upper()
            shown = "" if field == "API_KEY" else f"={given[field]!r}"
            raise ValueError(f"{role_key(role, field)}{shown}: {ROLE_FIELDS[field]}") from None
    return out


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    _roles: dict[str, RoleOverride] = PrivateAttr(default_factory=dict)

    data_dir: Path = Field(Path("data"), validation_alias=_env("BULLPEN_DATA_DIR"))
    database_url: SecretStr | None = Field(None, validation_alias=_env("DATABASE_URL"))
    data_mode: Literal["live", "offline", "record", "replay"] = Field(
        "offline", validation_alias=_env("BULLPEN_DATA_MODE"))
    log_level: str = Field("WARNING", validation_alias=_env("BULLPEN_LOG_LEVEL"))
    log_format: Literal["text", "json"] = Field("text", validation_alias=_env("BULLPEN_LOG_FORMAT"))

    llm_base_url: str | None = Field(None, validation_alias=_env("BULLPEN_LLM_BASE_URL"))
    llm_api_key: SecretStr | None = Field(None, validation_alias=_env("BULLPEN_LLM_API_KEY"))
    llm_model: str | None = Field(None, validation_alias=_env("BULLPEN_LLM_MODEL"))
    llm_timeout_s: float = Field(60.0, validation_alias=_env("BULLPEN_LLM_TIMEOUT_S"))
    llm_max_retries: int = Field(2, validation_alias=_env("BULLPEN_LLM_MAX_RETRIES"))
    llm_plan: bool = Field(True, validation_alias=_env("BULLPEN_LLM_PLANNING"))
    # the model's context window in tokens (unset: asked from the server, else 32,768) and the
    # max_tokens of a call that names none; `BULLPEN_LLM_<ROLE>_CONTEXT_TOKENS` per role
    llm_context_tokens: int | None = Field(None, ge=512,
                                           validation_alias=_env("BULLPEN_LLM_CONTEXT_TOKENS"))
    llm_max_tokens: int = Field(1024, ge=16, validation_alias=_env("BULLPEN_LLM_MAX_TOKENS"))
    # the model's price in US dollars per million input and output tokens (what budgets in
    # dollars count); `BULLPEN_LLM_<ROLE>_PRICE_IN_PER_MTOK` / `_PRICE_OUT_PER_MTOK` per role
    llm_price_in_per_mtok: float = Field(
        0.0, ge=0, validation_alias=_env("BULLPEN_LLM_PRICE_IN_PER_MTOK"))
    llm_price_out_per_mtok: float = Field(
        0.0, ge=0, validation_alias=_env("BULLPEN_LLM_PRICE_OUT_PER_MTOK"))
    # prompt tokens the provider served from its cache (unset: the input price);
    # `BULLPEN_LLM_<ROLE>_PRICE_CACHED_IN_PER_MTOK` per role
    llm_price_cached_in_per_mtok: float | None = Field(
        None, ge=0, validation_alias=_env("BULLPEN_LLM_PRICE_CACHED_IN_PER_MTOK"))

    debate_token_budget: int | None = Field(
        200_000, validation_alias=_env("BULLPEN_DEBATE_TOKEN_BUDGET"))
    max_input_chars: int = Field(20_000, validation_alias=_env("BULLPEN_MAX_INPUT_CHARS"))

    # who may spend what (core.usage_gate): open or allowlist access; admins as platform:uid
    # ("telegram:123,slack:U1"); per-person budgets per UTC day and month (unset: unlimited;
    # /admin budget sets a person's own); rate limits per person (0: unlimited)
    access: Literal["open", "allowlist"] = Field("open", validation_alias=_env("BULLPEN_ACCESS"))
    admins: str = Field("", validation_alias=_env("BULLPEN_ADMINS"))
    budget_daily_tokens: int | None = Field(
        None, validation_alias=_env("BULLPEN_BUDGET_DAILY_TOKENS"))
    budget_monthly_tokens: int | None = Field(
        None, validation_alias=_env("BULLPEN_BUDGET_MONTHLY_TOKENS"))
    budget_daily_usd: float | None = Field(None, validation_alias=_env("BULLPEN_BUDGET_DAILY_USD"))
    budget_monthly_usd: float | None = Field(
        None, validation_alias=_env("BULLPEN_BUDGET_MONTHLY_USD"))
    rate_messages_per_minute: int = Field(
        20, ge=0, validation_alias=_env("BULLPEN_RATE_MESSAGES_PER_MINUTE"))
    rate_voice_per_hour: int = Field(30, ge=0, validation_alias=_env("BULLPEN_RATE_VOICE_PER_HOUR"))
    rate_debates_per_day: int = Field(
        20, ge=0, validation_alias=_env("BULLPEN_RATE_DEBATES_PER_DAY"))
    one_run_per_person: bool = Field(True, validation_alias=_env("BULLPEN_ONE_RUN_PER_PERSON"))
    # issue 28 item 8: glibc malloc arenas of a serve process (0: glibc's default, 8 per core);
    # more fragment under a long soak and RSS creeps (bot.malloc)
    malloc_arena_max: int = Field(2, ge=0, validation_alias=_env("BULLPEN_MALLOC_ARENA_MAX"))
    # issue 28: /unlink per person in any 24 hours (0: unlimited), and what multiplies pushes: a
    # person's subscriptions anywhere and a chat's, whoever made them (0: no cap)
    unlinks_per_day: int = Field(3, ge=0, validation_alias=_env("BULLPEN_UNLINKS_PER_DAY"))
    subscriptions_per_person: int = Field(
        20, ge=0, validation_alias=_env("BULLPEN_SUBSCRIPTIONS_PER_PERSON"))
    subscriptions_per_chat: int = Field(
        10, ge=0, validation_alias=_env("BULLPEN_SUBSCRIPTIONS_PER_CHAT"))
    # seed 003: a conversation that spent this many tokens is closed (unset: never)
    conversation_token_budget: int | None = Field(
        None, ge=1, validation_alias=_env("BULLPEN_CONVERSATION_TOKEN_BUDGET"))
    data_timeout_s: float = Field(15.0, validation_alias=_env("BULLPEN_DATA_TIMEOUT_S"))
    sec_user_agent: str | None = Field(None, validation_alias=_env("SEC_USER_AGENT"))
    tavily_api_key: SecretStr | None = Field(None, validation_alias=_env("TAVILY_API_KEY"))


    # scheduled pushes: a fire missed by less than this (downtime) still runs once; how often a
    # process that does not run the scheduler checks whether the one that does is gone
    jobs_grace_s: float = Field(3600.0, validation_alias=_env("BULLPEN_JOBS_GRACE_S"))
    jobs_leader_check_s: float = Field(5.0, validation_alias=_env("BULLPEN_JOBS_LEADER_CHECK_S"))

    # the sandbox of analysis code the agent writes (run_ta_script, generated tools): every
    # layer is on; only these named settings turn one off (for debugging, never in use).
    # AST_CHECK: the static check; GUARD: the in-process guard; ISOLATION: the OS layer (rlimits,
    # the bubblewrap jail, seccomp). Where the host cannot build the jail, no code runs unless
    # WEAK_ISOLATION accepts rlimits and namespaces alone. UID/GID: who the code runs as when
    # serve is root (never 0).
    sandbox_ast_check: bool = Field(True, validation_alias=_env("BULLPEN_SANDBOX_AST_CHECK"))
    sandbox_guard: bool = Field(True, validation_alias=_env("BULLPEN_SANDBOX_GUARD"))
    sandbox_isolation: bool = Field(True, validation_alias=_env("BULLPEN_SANDBOX_ISOLATION"))
    sandbox_weak_isolation: bool = Field(
        False, validation_alias=_env("BULLPEN_SANDBOX_WEAK_ISOLATION"))
    sandbox_uid: int = Field(65534, ge=1, validation_alias=_env("BULLPEN_SANDBOX_UID"))
    sandbox_gid: int = Field(65534, ge=1, validation_alias=_env("BULLPEN_SANDBOX_GID"))
    # how long a statement is retried while the database is unreachable (then the write
    # fails); the embedded server is restarted when it is found down
    db_retry_s: float = Field(60.0, ge=0, validation_alias=_env("BULLPEN_DB_RETRY_S"))
    # crash safety: each serve process beats for the messages it answers every sweep; one that
    # went quiet for `stale` seconds stopped, and another process answers its messages (or,
    # past `too_old`, asks the user to send them again)
    inbound_sweep_s: float = Field(10.0, gt=0, validation_alias=_env("BULLPEN_INBOUND_SWEEP_S"))
    # a Slack, WeChat or Discord message not stored within this goes to the local spool first
    # (bot.spool: write + fsync, replayed by the sweep); the spool lives in data_dir/spool
    inbound_spool_after_s: float = Field(0.5, gt=0,
                                         validation_alias=_env("BULLPEN_INBOUND_SPOOL_AFTER_S"))
    inbound_stale_s: float = Field(30.0, gt=0, validation_alias=_env("BULLPEN_INBOUND_STALE_S"))
    inbound_too_old_s: float = Field(600.0, gt=0,
                                     validation_alias=_env("BULLPEN_INBOUND_TOO_OLD_S"))

    # text to speech for the podcast's audio: any OpenAI-compatible /v1/audio/speech endpoint
    # (unset: the podcast is delivered as a script only); one voice per speaker
    tts_base_url: str | None = Field(None, validation_alias=_env("BULLPEN_TTS_BASE_URL"))
    tts_api_key: SecretStr | None = Field(None, validation_alias=_env("BULLPEN_TTS_API_KEY"))
    tts_model: str = Field("tts-1", validation_alias=_env("BULLPEN_TTS_MODEL"))
    tts_voice_host: str = Field("alloy", validation_alias=_env("BULLPEN_TTS_VOICE_HOST"))
    tts_voice_analyst: str = Field("onyx", validation_alias=_env("BULLPEN_TTS_VOICE_ANALYST"))

    # voice notes
    whisper_backend: Literal["faster-whisper", "openai-whisper", "api"] = Field(
        "faster-whisper", validation_alias=_env("BULLPEN_WHISPER_BACKEND"))
    whisper_model: str | None = Field(None, validation_alias=_env("BULLPEN_WHISPER_MODEL"))
    whisper_api_base_url: str | None = Field(
        None, validation_alias=_env("BULLPEN_WHISPER_API_BASE_URL"))
    whisper_api_key: SecretStr | None = Field(None,
                                              validation_alias=_env("BULLPEN_WHISPER_API_KEY"))
    whisper_beam_size: int = Field(5, validation_alias=_env("BULLPEN_WHISPER_BEAM_SIZE"))
    # faster-whisper's CTranslate2 compute type (int8, int8_float32, float32) and threads per
    # worker (0: the cores shared among the workers)
    whisper_compute_type: str = Field("int8",
                                      validation_alias=_env("BULLPEN_WHISPER_COMPUTE_TYPE"))
    whisper_cpu_threads: int = Field(0, validation_alias=_env("BULLPEN_WHISPER_CPU_THREADS"))
    voice_max_seconds: float = Field(300.0, validation_alias=_env("BULLPEN_VOICE_MAX_SECONDS"))
    voice_max_bytes: int = Field(20 * 1024 * 1024,
                                 validation_alias=_env("BULLPEN_VOICE_MAX_BYTES"))
    voice_workers: int = Field(1, validation_alias=_env("BULLPEN_VOICE_WORKERS"))
    # languages voice notes are heard in ("zh,en": Mandarin needs the whisper-base data pack;
    # "en": tiny.en only); the multilingual model (unset: the pack); the model that hears
    # English once a note is known to be English (base found 33/33 expected symbols of the
    # English fixtures against tiny.en's 29/33, at ~4x the time: `bullpen bench stt`; without
    # the pack, tiny.en hears everything); per-note deadline:
    # base + per second of audio, capped
    voice_languages: str = Field("zh,en", validation_alias=_env("BULLPEN_VOICE_LANGUAGES"))
    whisper_multilingual_model: str | None = Field(
        None, validation_alias=_env("BULLPEN_WHISPER_MULTILINGUAL_MODEL"))
    whisper_english_model: Literal["tiny.en", "base"] = Field(
        "base", validation_alias=_env("BULLPEN_WHISPER_ENGLISH_MODEL"))
    voice_deadline_s: float = Field(20.0, validation_alias=_env("BULLPEN_VOICE_DEADLINE_S"))
    voice_deadline_per_audio_s: float = Field(
        0.5, validation_alias=_env("BULLPEN_VOICE_DEADLINE_PER_AUDIO_S"))
    voice_deadline_max_s: float = Field(90.0,
                                        validation_alias=_env("BULLPEN_VOICE_DEADLINE_MAX_S"))

    # Telegram (starts when the token is set)
    telegram_bot_token: SecretStr | None = Field(None, validation_alias=_env("TELEGRAM_BOT_TOKEN"))
    telegram_api_base_url: str | None = Field(None,
                                              validation_alias=_env("TELEGRAM_API_BASE_URL"))
    telegram_file_base_url: str | None = Field(None,
                                               validation_alias=_env("TELEGRAM_FILE_BASE_URL"))
    telegram_webhook_url: str | None = Field(None, validation_alias=_env("TELEGRAM_WEBHOOK_URL"))
    telegram_webhook_secret: SecretStr | None = Field(
        None, validation_alias=_env("TELEGRAM_WEBHOOK_SECRET"))
    telegram_webhook_listen: str = Field("127.0.0.1",
                                         validation_alias=_env("TELEGRAM_WEBHOOK_LISTEN"))
    telegram_webhook_port: int = Field(8443, validation_alias=_env("TELEGRAM_WEBHOOK_PORT"))
    # Turning the webhook secret check off must be explicit (house rule 9).
    telegram_webhook_insecure: bool = Field(False,
                                            validation_alias=_env("TELEGRAM_WEBHOOK_INSECURE"))

    # Slack (starts when the bot token is set; HTTP events need the signing secret, Socket
    # Mode the app token)
    slack_bot_token: SecretStr | None = Field(None, validation_alias=_env("SLACK_BOT_TOKEN"))
    slack_signing_secret: SecretStr | None = Field(
        None, validation_alias=_env("SLACK_SIGNING_SECRET"))
    slack_app_token: SecretStr | None = Field(None, validation_alias=_env("SLACK_APP_TOKEN"))
    slack_api_base_url: str | None = Field(None, validation_alias=_env("SLACK_API_BASE_URL"))
    slack_events_listen: str = Field("127.0.0.1", validation_alias=_env("SLACK_EVENTS_LISTEN"))
    slack_events_port: int = Field(3000, validation_alias=_env("SLACK_EVENTS_PORT"))
    slack_events_path: str = Field("/slack/events", validation_alias=_env("SLACK_EVENTS_PATH"))
    slack_command: str = Field("/bullpen", validation_alias=_env("SLACK_COMMAND"))

    # Discord (starts when the token is set; HTTP interactions need the public key)
    discord_bot_token: SecretStr | None = Field(None, validation_alias=_env("DISCORD_BOT_TOKEN"))
    discord_application_id: int | None = Field(
        None, validation_alias=_env("DISCORD_APPLICATION_ID"))
    discord_public_key: str | None = Field(None, validation_alias=_env("DISCORD_PUBLIC_KEY"))
    discord_api_base_url: str | None = Field(  # including /api/v10
        None, validation_alias=_env("DISCORD_API_BASE_URL"))
    discord_gateway_url: str | None = Field(None, validation_alias=_env("DISCORD_GATEWAY_URL"))
    discord_interactions_listen: str = Field(
        "127.0.0.1", validation_alias=_env("DISCORD_INTERACTIONS_LISTEN"))
    discord_interactions_port: int | None = Field(
        None, validation_alias=_env("DISCORD_INTERACTIONS_PORT"))
    discord_interactions_path: str = Field(
        "/interactions", validation_alias=_env("DISCORD_INTERACTIONS_PATH"))
    # Turning the Ed25519 check off must be explicit (house rule 9).
    discord_interactions_insecure: bool = Field(
        False, validation_alias=_env("DISCORD_INTERACTIONS_INSECURE"))
    discord_gateway: bool = Field(True, validation_alias=_env("DISCORD_GATEWAY"))
    discord_message_content_intent: bool = Field(
        False, validation_alias=_env("DISCORD_MESSAGE_CONTENT_INTENT"))

    # WeChat official account (starts when token, app id and secret are set)
    wechat_token: SecretStr | None = Field(None, validation_alias=_env("WECHAT_TOKEN"))
    wechat_app_id: str | None = Field(None, validation_alias=_env("WECHAT_APP_ID"))
    wechat_app_secret: SecretStr | None = Field(None, validation_alias=_env("WECHAT_APP_SECRET"))
    wechat_encoding_aes_key: SecretStr | None = Field(
        None, validation_alias=_env("WECHAT_ENCODING_AES_KEY"))  # set: safe (encrypted) mode
    wechat_api_base_url: str | None = Field(None, validation_alias=_env("WECHAT_API_BASE_URL"))
    wechat_listen: str = Field("127.0.0.1", validation_alias=_env("WECHAT_LISTEN"))
    wechat_port: int = Field(8080, validation_alias=_env("WECHAT_PORT"))
    wechat_path: str = Field("/wechat", validation_alias=_env("WECHAT_PATH"))
    wechat_proxy_url: str | None = Field(None, validation_alias=_env("WECHAT_PROXY_URL"))

    # WeCom (starts when corp id, agent id, secret, token and AES key are set)
    wecom_corp_id: str | None = Field(None, validation_alias=_env("WECOM_CORP_ID"))
    wecom_agent_id: int | None = Field(None, validation_alias=_env("WECOM_AGENT_ID"))
    wecom_secret: SecretStr | None = Field(None, validation_alias=_env("WECOM_SECRET"))
    wecom_token: SecretStr | None = Field(None, validation_alias=_env("WECOM_TOKEN"))
    wecom_encoding_aes_key: SecretStr | None = Field(
        None, validation_alias=_env("WECOM_ENCODING_AES_KEY"))
    wecom_api_base_url: str | None = Field(None, validation_alias=_env("WECOM_API_BASE_URL"))
    wecom_listen: str = Field("127.0.0.1", validation_alias=_env("WECOM_LISTEN"))
    wecom_port: int = Field(8081, validation_alias=_env("WECOM_PORT"))
    wecom_path: str = Field("/wecom", validation_alias=_env("WECOM_PATH"))
    wecom_proxy_url: str | None = Field(None, validation_alias=_env("WECOM_PROXY_URL"))

    # the web platform (starts when WEB_PORT is set): the chat page, share links, the admin
    # console; WEB_BASE_URL is where links point (default http://127.0.0.1:<port>); the admin
    # console's SQL runs READ ONLY with this statement timeout and row limit
    web_port: int | None = Field(None, ge=0, le=65535, validation_alias=_env("WEB_PORT"))
    web_listen: str = Field("127.0.0.1", validation_alias=_env("WEB_LISTEN"))
    web_base_url: str | None = Field(None, validation_alias=_env("WEB_BASE_URL"))
    admin_sql_timeout_ms: int = Field(5000, gt=0,
                                      validation_alias=_env("BULLPEN_ADMIN_SQL_TIMEOUT_MS"))
    admin_sql_row_limit: int = Field(500, ge=1,
                                     validation_alias=_env("BULLPEN_ADMIN_SQL_ROW_LIMIT"))
    # ... and at most this many bytes of values (the rest is cut, and the result says so)
    admin_sql_byte_limit: int = Field(2 * 1024 * 1024, ge=1024,
                                      validation_alias=_env("BULLPEN_ADMIN_SQL_BYTE_LIMIT"))
    # how the admin console logs in as its role bullpen_console on an external database
    # (default: DATABASE_URL with that user and no password; the embedded server's is made)
    console_database_url: SecretStr | None = Field(
        None, validation_alias=_env("BULLPEN_CONSOLE_DATABASE_URL"))

    @field_validator(*_CREDENTIALS, mode="after")
    @classmethod
    def _credential_shape(cls, value: SecretStr | str | None, info: ValidationInfo) -> Any:
        """A set credential must have its platform's shape (empty counts as unset)."""
        if value is None:
            return None
        text = value.get_secret_value() if isinstance(value, SecretStr) else value
        if not text:
            return None
        problem = check_credential(str(info.field_name), text)
        if problem is not None:
            raise ValueError(problem)
        return value

    @property
    def llm_configured(self) -> bool:
        return bool(self.llm_base_url and self.llm_model)

    def speech_profile(self) -> SpeechProfile | None:
        """The text-to-speech endpoint, when one is configured."""
        from core.llm.speech import SpeechProfile

        if not self.tts_base_url:
            return None
        key = self.tts_api_key.get_secret_value() if self.tts_api_key else "none"
        return SpeechProfile(base_url=self.tts_base_url, api_key=key, model=self.tts_model)

    def speech_voices(self) -> dict[str, str]:
        return {"host": self.tts_voice_host, "analyst": self.tts_voice_analyst}

    def default_profile(self) -> ModelProfile | None:
        if not self.llm_configured:
            return None
        assert self.llm_base_url and self.llm_model
        return ModelProfile(
            name="default", base_url=self.llm_base_url, model=self.llm_model,
            api_key=self.llm_api_key or SecretStr("not-needed"),
            timeout_s=self.llm_timeout_s, max_retries=self.llm_max_retries,
            context_tokens=self.llm_context_tokens, max_output_tokens=self.llm_max_tokens,
            price_in_per_mtok=self.llm_price_in_per_mtok,
            price_out_per_mtok=self.llm_price_out_per_mtok,
            price_cached_in_per_mtok=self.llm_price_cached_in_per_mtok)

    @model_validator(mode="after")
    def _read_role_overrides(self) -> Settings:
        """`BULLPEN_LLM_<ROLE>_*` from the environment and `.env`, validated with the rest."""
        self._roles = _role_overrides(_environment(self.model_config.get("env_file")))
        return self

    def role_profiles(self) -> dict[str, ModelProfile]:
        """`BULLPEN_LLM_<ROLE>_MODEL` / `_BASE_URL` / `_API_KEY` / `_CONTEXT_TOKENS` /
        `_PRICE_*` override the default per role (ROLE in core.llm.profiles.ROLES)."""
        default = self.default_profile()
        out: dict[str, ModelProfile] = {}
        for role, over in self._roles.items():
            base_url = over.base_url or (default.base_url if default else None)
            model_name = over.model or (default.model if default else None)
            if not base_url or not model_name:
                continue
            out[role] = ModelProfile(
                name=role, base_url=base_url, model=model_name,
                api_key=over.api_key or (
                    default.api_key if default else SecretStr("not-needed")),
                timeout_s=self.llm_timeout_s, max_retries=self.llm_max_retries,
                context_tokens=over.context_tokens if over.context_tokens is not None else (
                    default.context_tokens if default else None),
                max_output_tokens=self.llm_max_tokens,
                price_in_per_mtok=over.price_in_per_mtok
                if over.price_in_per_mtok is not None
                else (default.price_in_per_mtok if default else 0.0),
                price_out_per_mtok=over.price_out_per_mtok
                if over.price_out_per_mtok is not None
                else (default.price_out_per_mtok if default else 0.0),
                price_cached_in_per_mtok=over.price_cached_in_per_mtok
                if over.price_cached_in_per_mtok is not None
                else (default.price_cached_in_per_mtok if default else None))
        return out

    def web_links_base(self) -> str | None:
        """Where sign-in and share links point (no trailing slash); None when the web
        platform is not configured (neither WEB_BASE_URL nor WEB_PORT set) or its address is
        not known yet (WEB_PORT=0: any free port, known once the page is served)."""
        if self.web_base_url:
            return self.web_base_url.rstrip("/")
        if self.web_port:
            return f"http://127.0.0.1:{self.web_port}"
        return None

    @property
    def files_dir(self) -> Path:
        return self.data_dir / "files"

    @property
    def spool_dir(self) -> Path:
        """Where acknowledged messages wait for the database (bot.spool)."""
        return self.data_dir / "spool"

    @property
    def packs_dir(self) -> Path:
        """Where `bullpen data install` puts the data packs and every command reads them."""
        return self.data_dir.resolve() / "packs"

    def platforms_configured(self) -> list[str]:
        """Platforms whose credentials are set (each adapter starts only then)."""
        found = []
        if self.telegram_bot_token:
            found.append("telegram")
        if self.discord_bot_token:
            found.append("discord")
        if self.slack_bot_token:
            found.append("slack")
        if self.wechat_token and self.wechat_app_id and self.wechat_app_secret:
            found.append("wechat")
        if (self.wecom_corp_id and self.wecom_agent_id is not None and self.wecom_secret
                and self.wecom_token and self.wecom_encoding_aes_key):
            found.append("wecom")
        if self.web_port is not None:
            found.append("web")
        return found

    def listeners(self, platforms: list[str]) -> list[tuple[str, str, int]]:
        """(setting, host, port) of each fixed port these platforms' adapters will listen on
        (port 0, any free one, is left out): checked before start-up so a port in use is one
        line naming its setting."""
        wanted: list[tuple[str, str, int | None]] = []
        if "telegram" in platforms and self.telegram_webhook_url:
            wanted.append(("TELEGRAM_WEBHOOK_PORT", self.telegram_webhook_listen,
                           self.telegram_webhook_port))
        if "discord" in platforms:
            wanted.append(("DISCORD_INTERACTIONS_PORT", self.discord_interactions_listen,
                           self.discord_interactions_port))
        if "slack" in platforms and not self.slack_app_token:  # Socket Mode listens on none
            wanted.append(("SLACK_EVENTS_PORT", self.slack_events_listen, self.slack_events_port))
        if "wechat" in platforms:
            wanted.append(("WECHAT_PORT", self.wechat_listen, self.wechat_port))
        if "wecom" in platforms:
            wanted.append(("WECOM_PORT", self.wecom_listen, self.wecom_port))
        if "web" in platforms:
            wanted.append(("WEB_PORT", self.web_listen, self.web_port))
        return [(name, host, port) for name, host, port in wanted if port]


# Prefixes whose keys Bullpen owns: an unknown BULLPEN_ key stops start-up; the platforms'
# prefixes are shared with other programs (WEB_CONCURRENCY, a TELEGRAM_CHAT_ID of a script),
# so an unknown one there is a warning.
OWN_PREFIX = "BULLPEN_"
SHARED_PREFIXES = ("TELEGRAM_", "DISCORD_", "SLACK_", "WECHAT_", "WECOM_", "WEB_")
# BULLPEN_ names the test suite reads (never Bullpen): a serve started by a test inherits them
_NOT_SETTINGS = ("BULLPEN_TEST_", "BULLPEN_KILL_", "BULLPEN_ESCAPE_")


def env_names() -> list[str]:
    """Every setting's environment name, in declaration order."""
    names = []
    for field in Settings.model_fields.values():
        alias = field.validation_alias
        assert isinstance(alias, AliasChoices)
        names.append(str(alias.choices[0]))
    return names


def role_keys() -> list[str]:
    return [role_key(role, field) for role in ROLES for field in ROLE_FIELDS]


def unknown_keys(env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(key, one line) for each key of `env` (default: the environment and `.env`) under a
    prefix Bullpen reads that names no setting, the closest known key suggested."""
    if env is None:
        env = _environment(Settings.model_config.get("env_file"))
    known = set(env_names()) | set(role_keys())
    out = []
    for key in sorted(env):
        name = key.upper()
        if (name in known or not name.startswith((OWN_PREFIX, *SHARED_PREFIXES))
                or name.startswith(_NOT_SETTINGS)):
            continue
        close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        out.append((key, f"{key} is not a Bullpen setting{hint}"))
    return out


def load_settings(**overrides: object) -> Settings:
    return Settings(**overrides)  # type: ignore[arg-type]
