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
from core.words import norm

if TYPE_CHECKING:  # the speech client pulls in `openai`; settings stay light for the CLI
    from core.llm.speech import SpeechProfile


LOG_LEVELS = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def _env(name: str) -> AliasChoices:
    return AliasChoices(name, name.lower())


# The shapes of the platforms' credentials, checked when the settings load so a mistyped one is
# one line at start-up, never a traceback from the SDK. Messages name the setting and describe
# the expected shape; they never repeat the value (it is a secret).
_CREDENTIALS: dict[str, tuple[str, str]] = {
    "telegram_bot_token": (
        r"\d+:[A-Za-z0-9_-]{30,}",
        "TELEGRAM_BOT_TOKEN is not a Telegram bot token: it is the bot's number, a colon and "
        "35 letters, digits, - or _ (123456789:AAH...), as @BotFather gives it: not cut "
        "short, no 'bot' prefix, no quotes or spaces"),
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


# The groups of settings in docs/settings.md and .env.example: each starts at its first field
# (declaration order) and runs to the next group's.
GROUPS: tuple[tuple[str, str], ...] = (
    ("Storage and logs", "data_dir"),
    ("Model (LLM)", "llm_base_url"),
    ("Limits, access and budgets", "debate_token_budget"),
    ("Market data", "data_timeout_s"),
    ("Scheduled pushes", "jobs_grace_s"),
    ("Sandbox (security)", "sandbox_ast_check"),
    ("Database and crash safety", "db_retry_s"),
    ("Podcast audio", "tts_base_url"),
    ("Voice notes", "whisper_backend"),
    ("Telegram", "telegram_bot_token"),
    ("Slack", "slack_bot_token"),
    ("Discord", "discord_bot_token"),
    ("WeChat official account", "wechat_token"),
    ("WeCom", "wecom_corp_id"),
    ("Web page and admin console", "web_port"),
)


class Settings(BaseSettings):
    # env_ignore_empty: `KEY=` (as .env.example writes an unset setting) means unset
    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True,
                                      env_ignore_empty=True)

    _roles: dict[str, RoleOverride] = PrivateAttr(default_factory=dict)

    # --- Storage and logs -------------------------------------------------------------------------
    data_dir: Path = Field(
        Path("data"), validation_alias=_env("BULLPEN_DATA_DIR"),
        description=("Where Bullpen keeps its state: the embedded Postgres (when DATABASE_URL is "
                     "unset), the data packs, files and the spool. A relative path is taken from "
                     "the working directory."))
    database_url: SecretStr | None = Field(
        None, validation_alias=_env("DATABASE_URL"),
        description=("The Postgres to use (postgresql://user:password@host/db). Unset: an "
                     "embedded Postgres server is started under the data directory."))
    log_level: str | None = Field(
        None, validation_alias=_env("BULLPEN_LOG_LEVEL"),
        description=("The lowest level logged to stderr (DEBUG, INFO, WARNING, ERROR). Unset: "
                     "WARNING, then INFO once `bullpen serve` has started its platforms (its "
                     "start-up lines, a line per message and per delivery; the SDKs' own "
                     "chatter stays at WARNING); the console chat and one-shot commands stay at "
                     "WARNING: their output is the terminal."))
    operator_lang: str = Field(
        "en", validation_alias=AliasChoices("BULLPEN_OPERATOR_LANG", "bullpen_operator_lang",
                                            "LANG"),
        description=("The language of serve's start-up lines, `bullpen status` and `bullpen "
                     "data install` (en or zh; unset: zh when the locale, LANG, is Chinese)."))
    log_format: Literal["text", "json"] = Field(
        "text", validation_alias=_env("BULLPEN_LOG_FORMAT"),
        description=("text for people, json for one JSON object per line (log collectors). "
                     "Secrets are redacted in both."))

    # --- Model (LLM) ------------------------------------------------------------------------------
    llm_base_url: str | None = Field(
        None, validation_alias=_env("BULLPEN_LLM_BASE_URL"),
        description=("The OpenAI-compatible endpoint of the default model "
                     "(https://api.openai.com/v1, http://127.0.0.1:11434/v1 for Ollama...). "
                     "Unset, or without BULLPEN_LLM_MODEL: the offline analyst answers."))
    llm_api_key: SecretStr | None = Field(
        None, validation_alias=_env("BULLPEN_LLM_API_KEY"),
        description=("The API key of the default endpoint (unset: a placeholder, for local "
                     "servers that need none)."))
    llm_model: str | None = Field(
        None, validation_alias=_env("BULLPEN_LLM_MODEL"),
        description=("The default model's name at that endpoint; every role uses it unless its "
                     "BULLPEN_LLM_<ROLE>_MODEL says otherwise."))
    llm_timeout_s: float = Field(
        60.0, validation_alias=_env("BULLPEN_LLM_TIMEOUT_S"),
        description="Seconds one model call may take in all, retries and streaming included.")
    llm_max_retries: int = Field(
        2, validation_alias=_env("BULLPEN_LLM_MAX_RETRIES"),
        description="How many times a failed model call is retried before it counts as failed.")
    llm_plan: bool = Field(
        True, validation_alias=_env("BULLPEN_LLM_PLANNING"),
        description=("Normal mode first asks the model for a short plan without tools, then runs "
                     "the tool loop. Turn it off to save one call per question (small or slow "
                     "models)."))
    llm_context_tokens: int | None = Field(
        None, ge=512, validation_alias=_env("BULLPEN_LLM_CONTEXT_TOKENS"),
        description=("The default model's context window in tokens. Unset: asked from the server "
                     "(vLLM, llama.cpp, LM Studio say it), else 32,768. Per role: "
                     "BULLPEN_LLM_<ROLE>_CONTEXT_TOKENS."))
    llm_max_tokens: int = Field(
        1024, ge=16, validation_alias=_env("BULLPEN_LLM_MAX_TOKENS"),
        description=("The max_tokens of a model call that names none: the longest answer, in "
                     "tokens."))
    llm_price_in_per_mtok: float = Field(
        0.0, ge=0, validation_alias=_env("BULLPEN_LLM_PRICE_IN_PER_MTOK"),
        description=("The default model's price in US dollars per million input tokens: what "
                     "budgets in dollars and the usage table count (0: free or unknown). Per "
                     "role: BULLPEN_LLM_<ROLE>_PRICE_IN_PER_MTOK."))
    llm_price_out_per_mtok: float = Field(
        0.0, ge=0, validation_alias=_env("BULLPEN_LLM_PRICE_OUT_PER_MTOK"),
        description=("The default model's price in US dollars per million output tokens (0: free "
                     "or unknown). Per role: BULLPEN_LLM_<ROLE>_PRICE_OUT_PER_MTOK."))
    llm_price_cached_in_per_mtok: float | None = Field(
        None, ge=0, validation_alias=_env("BULLPEN_LLM_PRICE_CACHED_IN_PER_MTOK"),
        description=("US dollars per million prompt tokens the provider served from its prompt "
                     "cache (unset: the input price). Per role: "
                     "BULLPEN_LLM_<ROLE>_PRICE_CACHED_IN_PER_MTOK."))

    llm: Literal["remote", "local"] = Field(
        "remote", validation_alias=_env("BULLPEN_LLM"),
        description=("remote: the endpoint BULLPEN_LLM_BASE_URL names. local: `serve` starts "
                     "llama.cpp's server (the `llm` extra's xllamacpp) on loopback with the model "
                     "`bullpen model install` put in the data directory, supervises it, and "
                     "points every role at it: a small model (compact tools, no planning call, "
                     "answers checked before they are shown, time limits from its measured "
                     "speed)."))
    llm_local_model: Literal["0.5b", "1.5b"] = Field(
        "1.5b", validation_alias=_env("BULLPEN_LLM_LOCAL_MODEL"),
        description=("Which local model BULLPEN_LLM=local serves: 1.5b (Qwen2.5-Coder-1.5B-"
                     "Instruct Q4_K_M, 1.1 GB) or 0.5b (Qwen2.5-Coder-0.5B-Instruct, 0.5 GB, "
                     "faster and weaker)."))
    llm_local_threads: int = Field(
        2, ge=1, validation_alias=_env("BULLPEN_LLM_LOCAL_THREADS"),
        description="CPU threads the local model server uses.")
    llm_local_context_tokens: int = Field(
        8192, ge=2048, validation_alias=_env("BULLPEN_LLM_LOCAL_CONTEXT_TOKENS"),
        description=("The local model server's context window in tokens (memory grows with "
                     "it)."))

    # --- Limits, access and budgets ---------------------------------------------------------------
    debate_token_budget: int | None = Field(
        200_000, validation_alias=_env("BULLPEN_DEBATE_TOKEN_BUDGET"),
        description="The most tokens one debate may spend, all its calls together.")
    max_input_chars: int = Field(
        20_000, validation_alias=_env("BULLPEN_MAX_INPUT_CHARS"),
        description=("The longest message answered, in characters; a longer one is refused with a"
                     " request to shorten it."))
    access: Literal["open", "allowlist"] = Field(
        "open", validation_alias=_env("BULLPEN_ACCESS"),
        description=("open: anyone who writes may use the bot; allowlist: only the people an "
                     "admin allowed (/admin allow PLATFORM:ID). People an admin blocked are "
                     "refused either way."))
    admins: str = Field(
        "", validation_alias=_env("BULLPEN_ADMINS"),
        description=("Bullpen's admins as platform:user-id, comma-separated "
                     "(telegram:123,slack:U1): they may use /admin and change any chat's mode."))
    budget_daily_tokens: int | None = Field(
        None, validation_alias=_env("BULLPEN_BUDGET_DAILY_TOKENS"),
        description=("Tokens a person may spend per UTC day (unset: unlimited); /admin budget "
                     "sets one person's own."))
    budget_monthly_tokens: int | None = Field(
        None, validation_alias=_env("BULLPEN_BUDGET_MONTHLY_TOKENS"),
        description=("Tokens a person may spend per UTC month (unset: unlimited); /admin budget "
                     "sets one person's own."))
    budget_daily_usd: float | None = Field(
        None, validation_alias=_env("BULLPEN_BUDGET_DAILY_USD"),
        description=("US dollars a person may spend per UTC day, priced with the "
                     "BULLPEN_LLM_*PRICE* settings (unset: unlimited)."))
    budget_monthly_usd: float | None = Field(
        None, validation_alias=_env("BULLPEN_BUDGET_MONTHLY_USD"),
        description=("US dollars a person may spend per UTC month, priced with the "
                     "BULLPEN_LLM_*PRICE* settings (unset: unlimited)."))
    rate_messages_per_minute: int = Field(
        20, ge=0, validation_alias=_env("BULLPEN_RATE_MESSAGES_PER_MINUTE"),
        description="Messages a person may send per minute (0: unlimited).")
    rate_voice_per_hour: int = Field(
        30, ge=0, validation_alias=_env("BULLPEN_RATE_VOICE_PER_HOUR"),
        description="Voice notes a person may send per hour (0: unlimited).")
    rate_debates_per_day: int = Field(
        20, ge=0, validation_alias=_env("BULLPEN_RATE_DEBATES_PER_DAY"),
        description="Debates (and other heavy modes) a person may start per day (0: unlimited).")
    one_run_per_person: bool = Field(
        True, validation_alias=_env("BULLPEN_ONE_RUN_PER_PERSON"),
        description=("A person's messages are answered one at a time, across all their chats and "
                     "platforms. Turn it off to let one person run several answers at once."))
    stage_admission: bool = Field(
        True, validation_alias=_env("BULLPEN_STAGE_ADMISSION"),
        description=("The admission stage of the message path: BULLPEN_ACCESS, the people an "
                     "admin allowed or blocked. Turning it off (a security layer; debugging "
                     "only) lets anyone who writes, blocked people too, use the bot."))
    stage_rate_limits: bool = Field(
        True, validation_alias=_env("BULLPEN_STAGE_RATE_LIMITS"),
        description=("The rate-limit stage of the message path (BULLPEN_RATE_*). Turning it off "
                     "lets a flood of messages, voice notes or debates reach the model."))
    stage_spend: bool = Field(
        True, validation_alias=_env("BULLPEN_STAGE_SPEND"),
        description=("The spend stage of the message path: the budgets (BULLPEN_BUDGET_*, /admin "
                     "budget) and BULLPEN_CONVERSATION_TOKEN_BUDGET, checked before each run. "
                     "Turning it off lets a person spend without limit."))
    malloc_arena_max: int = Field(
        2, ge=0, validation_alias=_env("BULLPEN_MALLOC_ARENA_MAX"),
        description=("glibc malloc arenas of a serve process (0: glibc's default, 8 per core); "
                     "more arenas fragment over a long run and memory creeps up."))
    unlinks_per_day: int = Field(
        3, ge=0, validation_alias=_env("BULLPEN_UNLINKS_PER_DAY"),
        description="How many times a person may /unlink in any 24 hours (0: unlimited).")
    subscriptions_per_person: int = Field(
        20, ge=0, validation_alias=_env("BULLPEN_SUBSCRIPTIONS_PER_PERSON"),
        description=("Scheduled pushes one person may subscribe to, in all chats together (0: no "
                     "cap)."))
    subscriptions_per_chat: int = Field(
        10, ge=0, validation_alias=_env("BULLPEN_SUBSCRIPTIONS_PER_CHAT"),
        description="Scheduled pushes one chat may hold, whoever subscribed (0: no cap).")
    conversation_token_budget: int | None = Field(
        None, ge=1, validation_alias=_env("BULLPEN_CONVERSATION_TOKEN_BUDGET"),
        description="A conversation that spent this many tokens is closed (unset: never).")
    data_mode: Literal["live", "offline", "record", "replay"] = Field(
        "offline", validation_alias=_env("BULLPEN_DATA_MODE"),
        description=("Where market data comes from: offline serves the shipped snapshot only; "
                     "live asks the providers (cache first, the snapshot last); record asks them "
                     "and stores every raw response; replay serves stored responses only."))

    # --- Market data ------------------------------------------------------------------------------
    data_timeout_s: float = Field(
        15.0, validation_alias=_env("BULLPEN_DATA_TIMEOUT_S"),
        description="Seconds one market-data provider request may take (live and record modes).")
    sec_user_agent: str | None = Field(
        None, validation_alias=_env("SEC_USER_AGENT"),
        description=("The User-Agent sent to SEC EDGAR, which requires contact details ('Bullpen "
                     "Research admin@example.com'). Unset: SEC filings are not fetched live."))
    tavily_api_key: SecretStr | None = Field(
        None, validation_alias=_env("TAVILY_API_KEY"),
        description=("API key of Tavily, tried first for web search (unset: the other search "
                     "providers)."))

    # --- Scheduled pushes -------------------------------------------------------------------------
    jobs_grace_s: float = Field(
        3600.0, validation_alias=_env("BULLPEN_JOBS_GRACE_S"),
        description=("A scheduled push missed by less than this many seconds (serve was down) "
                     "still runs once; older misses are skipped."))
    jobs_leader_check_s: float = Field(
        5.0, validation_alias=_env("BULLPEN_JOBS_LEADER_CHECK_S"),
        description=("How often, in seconds, a serve process that does not run the scheduler "
                     "checks whether the one that does is gone."))

    # --- Sandbox (security) -----------------------------------------------------------------------
    sandbox_ast_check: bool = Field(
        True, validation_alias=_env("BULLPEN_SANDBOX_AST_CHECK"),
        description=("The static check that refuses analysis code the agent writes (/ta scripts, "
                     "generated tools) that names forbidden modules or attributes. Turning it off"
                     " (debugging only) lets such code reach the other layers."))
    sandbox_guard: bool = Field(
        True, validation_alias=_env("BULLPEN_SANDBOX_GUARD"),
        description=("The in-process guard around analysis code (blocks file, network and process"
                     " calls from Python). Turning it off (debugging only) leaves the OS layer as"
                     " the only wall."))
    sandbox_isolation: bool = Field(
        True, validation_alias=_env("BULLPEN_SANDBOX_ISOLATION"),
        description=("The OS layer around analysis code: resource limits, the bubblewrap jail and"
                     " seccomp. Turning it off (debugging only, never in use) runs code a user or"
                     " a model wrote with serve's own rights: its files, network and secrets."))
    sandbox_weak_isolation: bool = Field(
        False, validation_alias=_env("BULLPEN_SANDBOX_WEAK_ISOLATION"),
        description=("Where the host cannot build the bubblewrap jail, run analysis code under "
                     "rlimits and namespaces alone instead of running none. On, that code sees "
                     "more of the host than the jail allows."))
    sandbox_uid: int = Field(
        65534, ge=1, validation_alias=_env("BULLPEN_SANDBOX_UID"),
        description="The user id analysis code runs as when serve runs as root (never 0).")
    sandbox_gid: int = Field(
        65534, ge=1, validation_alias=_env("BULLPEN_SANDBOX_GID"),
        description="The group id analysis code runs as when serve runs as root (never 0).")

    # --- Database and crash safety ----------------------------------------------------------------
    db_retry_s: float = Field(
        60.0, ge=0, validation_alias=_env("BULLPEN_DB_RETRY_S"),
        description=("Seconds a statement is retried while the database is unreachable, then the "
                     "write fails; the embedded server is restarted when it is found down."))
    inbound_sweep_s: float = Field(
        10.0, gt=0, validation_alias=_env("BULLPEN_INBOUND_SWEEP_S"),
        description=("Seconds between crash-safety sweeps: each serve process beats for the "
                     "messages it is answering and replays the local spool."))
    inbound_spool_after_s: float = Field(
        0.5, gt=0, validation_alias=_env("BULLPEN_INBOUND_SPOOL_AFTER_S"),
        description=("A Slack, WeChat or Discord message not stored within this many seconds goes"
                     " to the local spool first (data_dir/spool: written and fsynced, replayed by"
                     " the sweep)."))
    inbound_stale_s: float = Field(
        30.0, gt=0, validation_alias=_env("BULLPEN_INBOUND_STALE_S"),
        description=("A serve process whose beat is this many seconds old is taken for stopped, "
                     "and another process answers its messages."))
    inbound_too_old_s: float = Field(
        600.0, gt=0, validation_alias=_env("BULLPEN_INBOUND_TOO_OLD_S"),
        description=("A message a stopped process left unanswered for longer than this many "
                     "seconds is not answered late: the user is asked to send it again."))
    stage_held_deliveries: bool = Field(
        True, validation_alias=_env("BULLPEN_STAGE_HELD_DELIVERIES"),
        description=("When a chat writes, what the outbox held for it (a closed WeChat window) is "
                     "sent first and the answer waits behind it. Turned off, the outbox's own "
                     "sender sends those in its time and a new answer may overtake them."))
    stage_resume: bool = Field(
        True, validation_alias=_env("BULLPEN_STAGE_RESUME"),
        description=("The resume stage of the message path: the sweeper that beats, replays the "
                     "spool and answers what a stopped process left, and the retake of an "
                     "answer a database outage cut short. Turned off, those stay unanswered."))

    # --- Podcast audio ----------------------------------------------------------------------------
    tts_base_url: str | None = Field(
        None, validation_alias=_env("BULLPEN_TTS_BASE_URL"),
        description=("An OpenAI-compatible /v1/audio/speech endpoint for the podcast's audio "
                     "(unset: the podcast is delivered as a script only)."))
    tts_api_key: SecretStr | None = Field(
        None, validation_alias=_env("BULLPEN_TTS_API_KEY"),
        description="The API key of the text-to-speech endpoint.")
    tts_model: str = Field(
        "tts-1", validation_alias=_env("BULLPEN_TTS_MODEL"),
        description="The text-to-speech model.")
    tts_voice_host: str = Field(
        "alloy", validation_alias=_env("BULLPEN_TTS_VOICE_HOST"),
        description="The voice of the podcast's host.")
    tts_voice_analyst: str = Field(
        "onyx", validation_alias=_env("BULLPEN_TTS_VOICE_ANALYST"),
        description="The voice of the podcast's analyst.")

    # --- Voice notes ------------------------------------------------------------------------------
    whisper_backend: Literal["faster-whisper", "openai-whisper", "api"] = Field(
        "faster-whisper", validation_alias=_env("BULLPEN_WHISPER_BACKEND"),
        description=("What transcribes voice notes: faster-whisper (local, CTranslate2), "
                     "openai-whisper (local, the reference code) or api (an OpenAI-compatible "
                     "transcription endpoint)."))
    whisper_model: str | None = Field(
        None, validation_alias=_env("BULLPEN_WHISPER_MODEL"),
        description=("The transcription model: for the local backends a name or path (unset: the "
                     "bundled tiny.en; base: the whisper-base data pack); for api the model name "
                     "(unset: whisper-1)."))
    whisper_api_base_url: str | None = Field(
        None, validation_alias=_env("BULLPEN_WHISPER_API_BASE_URL"),
        description="The transcription endpoint of BULLPEN_WHISPER_BACKEND=api.")
    whisper_api_key: SecretStr | None = Field(
        None, validation_alias=_env("BULLPEN_WHISPER_API_KEY"),
        description="The API key of the transcription endpoint.")
    whisper_beam_size: int = Field(
        5, validation_alias=_env("BULLPEN_WHISPER_BEAM_SIZE"),
        description=("Beam size of local decoding: smaller is faster, larger a little more "
                     "accurate."))
    whisper_compute_type: str = Field(
        "int8", validation_alias=_env("BULLPEN_WHISPER_COMPUTE_TYPE"),
        description="faster-whisper's CTranslate2 compute type (int8, int8_float32, float32).")
    whisper_cpu_threads: int = Field(
        0, validation_alias=_env("BULLPEN_WHISPER_CPU_THREADS"),
        description=("CPU threads per transcription worker (0: the cores shared among the "
                     "workers)."))
    voice_max_seconds: float = Field(
        300.0, validation_alias=_env("BULLPEN_VOICE_MAX_SECONDS"),
        description=("The longest voice note transcribed, in seconds of audio; a longer one is "
                     "refused."))
    voice_max_bytes: int = Field(
        20 * 1024 * 1024, validation_alias=_env("BULLPEN_VOICE_MAX_BYTES"),
        description="The largest voice-note file accepted, in bytes.")
    voice_workers: int = Field(
        1, validation_alias=_env("BULLPEN_VOICE_WORKERS"),
        description="Transcription workers: voice notes transcribed at the same time.")
    voice_languages: str = Field(
        "zh,en", validation_alias=_env("BULLPEN_VOICE_LANGUAGES"),
        description=("Languages voice notes are heard in, comma-separated: zh,en needs the "
                     "whisper-base data pack for Mandarin; en hears with tiny.en only."))
    whisper_multilingual_model: str | None = Field(
        None, validation_alias=_env("BULLPEN_WHISPER_MULTILINGUAL_MODEL"),
        description=("The multilingual model that hears Mandarin (unset: the whisper-base data "
                     "pack)."))
    whisper_english_model: Literal["tiny.en", "base"] = Field(
        "base", validation_alias=_env("BULLPEN_WHISPER_ENGLISH_MODEL"),
        description=("The model that hears a note once it is known to be English: base found "
                     "33/33 expected symbols of the English fixtures against tiny.en's 29/33, at "
                     "about 4x the time (bullpen bench stt). Without the pack, tiny.en hears "
                     "everything."))
    voice_deadline_s: float = Field(
        20.0, validation_alias=_env("BULLPEN_VOICE_DEADLINE_S"),
        description=("A voice note's transcription deadline, in seconds: this, plus "
                     "BULLPEN_VOICE_DEADLINE_PER_AUDIO_S per second of audio, capped at "
                     "BULLPEN_VOICE_DEADLINE_MAX_S."))
    voice_deadline_per_audio_s: float = Field(
        0.5, validation_alias=_env("BULLPEN_VOICE_DEADLINE_PER_AUDIO_S"),
        description="Seconds added to the transcription deadline per second of audio.")
    voice_deadline_max_s: float = Field(
        90.0, validation_alias=_env("BULLPEN_VOICE_DEADLINE_MAX_S"),
        description="The longest transcription deadline, in seconds.")

    # --- Telegram ---------------------------------------------------------------------------------
    telegram_bot_token: SecretStr | None = Field(
        None, validation_alias=_env("TELEGRAM_BOT_TOKEN"),
        description=("The bot's token from @BotFather (123456789:AAH...). Set: the Telegram "
                     "adapter starts."))
    telegram_api_base_url: str | None = Field(
        None, validation_alias=_env("TELEGRAM_API_BASE_URL"),
        description=("Another Bot API server (a local one, or the tests' fake); unset: "
                     "api.telegram.org."))
    telegram_file_base_url: str | None = Field(
        None, validation_alias=_env("TELEGRAM_FILE_BASE_URL"),
        description="Where files are downloaded from on that Bot API server.")
    telegram_webhook_url: str | None = Field(
        None, validation_alias=_env("TELEGRAM_WEBHOOK_URL"),
        description=("The public URL Telegram posts updates to; unset: Bullpen polls. A webhook "
                     "needs TELEGRAM_WEBHOOK_SECRET."))
    telegram_webhook_secret: SecretStr | None = Field(
        None, validation_alias=_env("TELEGRAM_WEBHOOK_SECRET"),
        description=("The secret Telegram sends with every webhook update; an update without it "
                     "is refused."))
    telegram_webhook_listen: str = Field(
        "127.0.0.1", validation_alias=_env("TELEGRAM_WEBHOOK_LISTEN"),
        description="The address the webhook server listens on.")
    telegram_webhook_port: int = Field(
        8443, validation_alias=_env("TELEGRAM_WEBHOOK_PORT"),
        description="The port the webhook server listens on.")
    telegram_webhook_insecure: bool = Field(
        False, validation_alias=_env("TELEGRAM_WEBHOOK_INSECURE"),
        description=("Run the webhook without a secret. Anyone who finds the URL can then post "
                     "forged updates as any user."))

    # --- Slack ------------------------------------------------------------------------------------
    slack_bot_token: SecretStr | None = Field(
        None, validation_alias=_env("SLACK_BOT_TOKEN"),
        description="The Bot User OAuth Token (xoxb-...). Set: the Slack adapter starts.")
    slack_signing_secret: SecretStr | None = Field(
        None, validation_alias=_env("SLACK_SIGNING_SECRET"),
        description=("The app's Signing Secret: every HTTP event is verified with it (needed "
                     "unless SLACK_APP_TOKEN selects Socket Mode)."))
    slack_app_token: SecretStr | None = Field(
        None, validation_alias=_env("SLACK_APP_TOKEN"),
        description=("An app-level token (xapp-..., scope connections:write). Set: events come "
                     "over Socket Mode and no port is opened."))
    slack_api_base_url: str | None = Field(
        None, validation_alias=_env("SLACK_API_BASE_URL"),
        description="Another Slack Web API (the tests' fake); unset: slack.com/api.")
    slack_events_listen: str = Field(
        "127.0.0.1", validation_alias=_env("SLACK_EVENTS_LISTEN"),
        description="The address the HTTP events server listens on.")
    slack_events_port: int = Field(
        3000, validation_alias=_env("SLACK_EVENTS_PORT"),
        description="The port the HTTP events server listens on.")
    slack_events_path: str = Field(
        "/slack/events", validation_alias=_env("SLACK_EVENTS_PATH"),
        description="The URL path of the HTTP events endpoint.")
    slack_command: str = Field(
        "/bullpen", validation_alias=_env("SLACK_COMMAND"),
        description="The slash command the Slack app declares.")

    # --- Discord ----------------------------------------------------------------------------------
    discord_bot_token: SecretStr | None = Field(
        None, validation_alias=_env("DISCORD_BOT_TOKEN"),
        description=("The bot token (developer portal, Bot page). Set: the Discord adapter "
                     "starts."))
    discord_application_id: int | None = Field(
        None, validation_alias=_env("DISCORD_APPLICATION_ID"),
        description="The application id: with it, slash commands are registered at start-up.")
    discord_public_key: str | None = Field(
        None, validation_alias=_env("DISCORD_PUBLIC_KEY"),
        description=("The application's public key (hex): HTTP interactions are verified with it "
                     "(Ed25519)."))
    discord_api_base_url: str | None = Field(
        None, validation_alias=_env("DISCORD_API_BASE_URL"),
        description="Another REST API, including /api/v10 (the tests' fake); unset: discord.com.")
    discord_gateway_url: str | None = Field(
        None, validation_alias=_env("DISCORD_GATEWAY_URL"),
        description="Another gateway WebSocket (the tests' fake); unset: the one Discord names.")
    discord_interactions_listen: str = Field(
        "127.0.0.1", validation_alias=_env("DISCORD_INTERACTIONS_LISTEN"),
        description="The address the HTTP interactions server listens on.")
    discord_interactions_port: int | None = Field(
        None, validation_alias=_env("DISCORD_INTERACTIONS_PORT"),
        description=("Receive slash commands as signed HTTP interactions on this port (unset: no "
                     "HTTP endpoint)."))
    discord_interactions_path: str = Field(
        "/interactions", validation_alias=_env("DISCORD_INTERACTIONS_PATH"),
        description="The URL path of the HTTP interactions endpoint.")
    discord_interactions_insecure: bool = Field(
        False, validation_alias=_env("DISCORD_INTERACTIONS_INSECURE"),
        description=("Accept HTTP interactions without the Ed25519 signature check. Anyone who "
                     "finds the URL can then forge commands as any user."))
    discord_gateway: bool = Field(
        True, validation_alias=_env("DISCORD_GATEWAY"),
        description=("Connect to the gateway (messages and slash commands over the WebSocket). "
                     "Off: only HTTP interactions are received."))
    discord_message_content_intent: bool = Field(
        False, validation_alias=_env("DISCORD_MESSAGE_CONTENT_INTENT"),
        description=("Ask for the privileged message-content intent, so plain messages in servers"
                     " are read (DMs and mentions need not); enable it in the developer portal "
                     "too."))

    # --- WeChat official account ------------------------------------------------------------------
    wechat_token: SecretStr | None = Field(
        None, validation_alias=_env("WECHAT_TOKEN"),
        description=("The callback Token (开发 → 基本配置) that signs WeChat's requests. "
                     "Set with the app id and secret: the WeChat adapter starts."))
    wechat_app_id: str | None = Field(
        None, validation_alias=_env("WECHAT_APP_ID"),
        description="The official account's AppID (wx and 16 hexadecimal digits).")
    wechat_app_secret: SecretStr | None = Field(
        None, validation_alias=_env("WECHAT_APP_SECRET"),
        description="The AppSecret, used to get access tokens.")
    wechat_encoding_aes_key: SecretStr | None = Field(
        None, validation_alias=_env("WECHAT_ENCODING_AES_KEY"),
        description="The EncodingAESKey (43 characters). Set: safe (encrypted) mode.")
    wechat_api_base_url: str | None = Field(
        None, validation_alias=_env("WECHAT_API_BASE_URL"),
        description="Another API host (the tests' fake); unset: api.weixin.qq.com.")
    wechat_listen: str = Field(
        "127.0.0.1", validation_alias=_env("WECHAT_LISTEN"),
        description="The address the callback server listens on.")
    wechat_port: int = Field(
        8080, validation_alias=_env("WECHAT_PORT"),
        description="The port the callback server listens on.")
    wechat_path: str = Field(
        "/wechat", validation_alias=_env("WECHAT_PATH"),
        description="The URL path of the callback.")
    wechat_passive_reply_s: float = Field(
        3.0, ge=0.0, le=4.5, validation_alias=_env("WECHAT_PASSIVE_REPLY_S"),
        description=("Official account, plain mode: an answer ready this many seconds after "
                     "the callback goes back as the callback's own reply (no API call, no "
                     "48-hour window, and the one way an account without the customer-service "
                     "API can answer); later ones through the API. 0 is off; 4 stays inside "
                     "WeChat's 5 s, 3 leaves room for the network."))
    wechat_proxy_url: str | None = Field(
        None, validation_alias=_env("WECHAT_PROXY_URL"),
        description=("An HTTP proxy for calls to WeChat's API, e.g. the host on WeChat's IP "
                     "allowlist (proxy environment variables are not read)."))

    # --- WeCom ------------------------------------------------------------------------------------
    wecom_corp_id: str | None = Field(
        None, validation_alias=_env("WECOM_CORP_ID"),
        description=("The corp id (ww and 16 hexadecimal digits, 我的企业 → 企业ID). "
                     "Set with the agent id, secret, token and AES key: the WeCom adapter "
                     "starts."))
    wecom_agent_id: int | None = Field(
        None, validation_alias=_env("WECOM_AGENT_ID"),
        description="The application's AgentId.")
    wecom_secret: SecretStr | None = Field(
        None, validation_alias=_env("WECOM_SECRET"),
        description="The application's Secret, used to get access tokens.")
    wecom_token: SecretStr | None = Field(
        None, validation_alias=_env("WECOM_TOKEN"),
        description="The callback Token that signs WeCom's requests.")
    wecom_encoding_aes_key: SecretStr | None = Field(
        None, validation_alias=_env("WECOM_ENCODING_AES_KEY"),
        description="The callback EncodingAESKey (WeCom always encrypts).")
    wecom_api_base_url: str | None = Field(
        None, validation_alias=_env("WECOM_API_BASE_URL"),
        description="Another API host (the tests' fake); unset: qyapi.weixin.qq.com.")
    wecom_listen: str = Field(
        "127.0.0.1", validation_alias=_env("WECOM_LISTEN"),
        description="The address the callback server listens on.")
    wecom_port: int = Field(
        8081, validation_alias=_env("WECOM_PORT"),
        description="The port the callback server listens on.")
    wecom_path: str = Field(
        "/wecom", validation_alias=_env("WECOM_PATH"),
        description="The URL path of the callback.")
    wecom_proxy_url: str | None = Field(
        None, validation_alias=_env("WECOM_PROXY_URL"),
        description=("An HTTP proxy for calls to WeCom's API (proxy environment variables are not"
                     " read)."))

    # --- Web page and admin console ---------------------------------------------------------------
    web_port: int | None = Field(
        None, ge=0, le=65535, validation_alias=_env("WEB_PORT"),
        description=("The port of the web platform: the chat page, share links and the admin "
                     "console. Set: it starts (0: any free port)."))
    web_listen: str = Field(
        "127.0.0.1", validation_alias=_env("WEB_LISTEN"),
        description="The address the web platform listens on.")
    web_base_url: str | None = Field(
        None, validation_alias=_env("WEB_BASE_URL"),
        description=("Where sign-in and share links point, the page's public URL (unset: "
                     "http://127.0.0.1:<WEB_PORT>)."))
    admin_sql_timeout_ms: int = Field(
        5000, gt=0, validation_alias=_env("BULLPEN_ADMIN_SQL_TIMEOUT_MS"),
        description=("The statement timeout of the admin console's SQL, in milliseconds (it runs "
                     "READ ONLY)."))
    admin_sql_row_limit: int = Field(
        500, ge=1, validation_alias=_env("BULLPEN_ADMIN_SQL_ROW_LIMIT"),
        description="The most rows an admin-console query returns.")
    admin_sql_byte_limit: int = Field(
        2 * 1024 * 1024, ge=1024, validation_alias=_env("BULLPEN_ADMIN_SQL_BYTE_LIMIT"),
        description=("The most bytes of values an admin-console query returns; the rest is cut, "
                     "and the result says so."))
    console_database_url: SecretStr | None = Field(
        None, validation_alias=_env("BULLPEN_CONSOLE_DATABASE_URL"),
        description=("How the admin console logs in as its role bullpen_console on an external "
                     "database (unset: DATABASE_URL with that user and no password; the embedded "
                     "server's is made)."))

    @field_validator("log_level", mode="after")
    @classmethod
    def _known_level(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if value.upper() not in LOG_LEVELS:
            raise ValueError(f"BULLPEN_LOG_LEVEL is not a log level: one of "
                             f"{', '.join(LOG_LEVELS)}")
        return value.upper()

    @field_validator("operator_lang", mode="after")
    @classmethod
    def _operator_lang(cls, value: str) -> str:
        """en or zh; a locale (zh_CN.UTF-8, C.UTF-8) counts by its language."""
        return norm(value)

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
