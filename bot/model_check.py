"""Is the configured model endpoint there? Checked once at start, then again in the background
every `recheck_s` while it is not (`ModelHealth.watch`, owned by the app): until it answers, the
questions the model would have answered go to the offline analyst (and the deterministic
debate), with a one-line note in the user's language under each answer, instead of failing
after retries; no question waits on a probe (issue 33).

The probe checks the default profile (BULLPEN_LLM_BASE_URL, BULLPEN_LLM_MODEL): it lists the
endpoint's models; when the model is not in the list (or the endpoint offers no list) one
completion of one token decides, so a provider with a partial list is not mistaken for a broken
one. Only a refusal counts against it there: a test call that is merely slow is left to the
calls' own timeouts and fallbacks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from core.events import Done, Event
from core.llm.clients import openai_client
from core.llm.profiles import ModelProfile
from core.ports import Mode
from core.words import t

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 5.0
RECHECK_S = 30.0


async def probe(profile: ModelProfile, *, timeout_s: float = PROBE_TIMEOUT_S) -> str | None:
    """What is wrong with the endpoint of `profile`, in one line naming the setting to fix
    (never the API key); None when it serves the model."""
    import openai

    where = f"BULLPEN_LLM_BASE_URL={profile.base_url}"
    client = openai_client(base_url=profile.base_url,
                           api_key=profile.api_key.get_secret_value() or "none",
                           timeout=timeout_s, max_retries=0)
    try:
        try:
            listed: set[str] | None = {m.id async for m in client.models.list()}
        except (openai.NotFoundError, openai.APIResponseValidationError):
            listed = None  # no model list here: the completion below decides
        if listed and profile.model in listed:
            return None
        try:
            await client.chat.completions.create(
                model=profile.model, max_tokens=1,
                messages=[{"role": "user", "content": "ping"}])
        except openai.APITimeoutError:
            return None  # there and working, only slow: the calls' own timeouts handle that
        return None
    except openai.APITimeoutError:
        return f"{where}: the model endpoint did not answer within {timeout_s:g} s"
    except openai.APIConnectionError as exc:
        cause = exc.__cause__ or exc
        return f"{where}: cannot reach the model endpoint ({_reason(cause)})"
    except (openai.AuthenticationError, openai.PermissionDeniedError) as exc:
        return (f"{where}: the model endpoint refused the API key (HTTP {exc.status_code}): "
                "check BULLPEN_LLM_API_KEY")
    except openai.NotFoundError:
        return (f"{where}: no model {profile.model!r} there (HTTP 404): check "
                "BULLPEN_LLM_MODEL, and that the URL ends where the API's /v1 is")
    except openai.APIStatusError as exc:
        said = _reason(exc.message) if isinstance(exc.message, str) else ""
        return (f"{where}: the model endpoint answered HTTP {exc.status_code} to a test call "
                f"of model {profile.model!r}" + (f" ({said})" if said else ""))
    except openai.APIError as exc:
        return f"{where}: not an OpenAI-compatible endpoint ({type(exc).__name__})"
    finally:
        await client.close()


def _reason(exc: BaseException | str) -> str:
    """The first line of what went wrong, at most 160 characters."""
    text = str(exc).strip()
    first = text.splitlines()[0] if text else type(exc).__name__
    return first[:160]


class ModelHealth:
    """The start-up check's verdict; while it is bad, `watch` checks again every `recheck_s`
    until the endpoint answers (then `answering` is set and the watch ends)."""

    def __init__(self, profile: ModelProfile, *, recheck_s: float = RECHECK_S,
                 timeout_s: float = PROBE_TIMEOUT_S, lang: str = "en") -> None:
        self.profile = profile
        self.lang = lang  # the operator's, for the line that says the model is back
        self.recheck_s = recheck_s
        self.timeout_s = timeout_s
        self.problem: str | None = None
        self.answering = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def check(self) -> str | None:
        self.problem = await probe(self.profile, timeout_s=self.timeout_s)
        if self.problem is None:
            self.answering.set()
        else:
            self.answering.clear()
        return self.problem

    async def usable(self) -> bool:
        """True when the model answered at the last check."""
        return self.problem is None

    def watch(self) -> None:
        """Start checking again in the background while the model is not answering."""
        if self.problem is not None and self._task is None:
            self._task = asyncio.create_task(self._watch(), name="model-health")

    async def _watch(self) -> None:
        while self.problem is not None:
            await asyncio.sleep(self.recheck_s)
            try:
                if await self.check() is None:
                    log.warning(t("startup.model_back", self.lang, model=self.profile.model))
            except Exception as exc:  # a probe that breaks is logged; the watch goes on
                log.warning("model check failed: %s: %s", type(exc).__name__, exc)

    async def aclose(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task


class FallbackMode:
    """`primary` (a model's mode) while the model answers, else `fallback` (the offline
    analyst, the deterministic debate) with the note under its answer."""

    def __init__(self, primary: Mode, fallback: Mode, health: ModelHealth) -> None:
        self.name = primary.name
        self.primary = primary
        self.fallback = fallback
        self.health = health

    async def run(self, turn: Any) -> AsyncIterator[Event]:
        if await self.health.usable():
            async for event in self.primary.run(turn):
                yield event
            return
        note = t("startup.model_down_note", getattr(turn, "lang", "en"))
        async for event in self.fallback.run(turn):
            if isinstance(event, Done):
                event = event.model_copy(update={"label": note})
            yield event


def with_fallback(primary: dict[str, Mode], fallback: dict[str, Mode],
                  health: ModelHealth) -> dict[str, Mode]:
    """Each mode of `primary` that `fallback` also has, switched by `health`."""
    return {name: FallbackMode(mode, fallback[name], health) if name in fallback else mode
            for name, mode in primary.items()}
