"""Text to speech over any OpenAI-compatible `/v1/audio/speech` endpoint (the `openai` client).

One call per turn of a dialogue, WAV back (so turns can be joined without a lossy step); a
provider's refusal becomes a `core.errors.LLMError` with the reason, never a silent gap.
`openai` (~20 MB with its pydantic types) is imported when a client is made, not with this
module: serve imports it for the type, and most servers have no speech endpoint (issue 34).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from core.errors import LLMBadResponse, LLMError, LLMRateLimited, LLMTimeout

MAX_INPUT_CHARS = 4000  # the OpenAI endpoint's limit per request


@dataclass(frozen=True)
class SpeechProfile:
    base_url: str
    api_key: str = "none"
    model: str = "tts-1"
    timeout_s: float = 60.0


class SpeechClient:
    def __init__(self, profile: SpeechProfile) -> None:
        from core.llm.clients import openai_client

        self.profile = profile
        self._client: Any = openai_client(base_url=profile.base_url, api_key=profile.api_key,
                                          timeout=profile.timeout_s, max_retries=2)

    async def speak(self, text: str, *, voice: str) -> bytes:
        """`text` read by `voice`, as WAV bytes."""
        import openai  # loaded when the client was made

        try:
            got = await self._client.audio.speech.create(
                model=self.profile.model, voice=voice, input=text[:MAX_INPUT_CHARS],
                response_format="wav")
        except openai.APITimeoutError as exc:
            raise LLMTimeout(f"speech: no answer in {self.profile.timeout_s:g} s") from exc
        except openai.RateLimitError as exc:
            raise LLMRateLimited(f"speech: rate limited: {exc.message}") from exc
        except openai.APIStatusError as exc:
            raise LLMError(f"speech: HTTP {exc.status_code}: {exc.message}") from exc
        except openai.APIError as exc:
            raise LLMError(f"speech: {type(exc).__name__}: {exc}") from exc
        data: bytes = got.content
        if not data:
            raise LLMBadResponse("speech: empty audio")
        return data

    async def aclose(self) -> None:
        await self._client.close()
