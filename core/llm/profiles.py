"""Model profiles: which endpoint and model serve a role, with limits and prices."""

from __future__ import annotations

from pydantic import BaseModel, SecretStr

ROLES = (
    "agent", "planner", "fast", "judge", "summarizer", "moderator",
    "bull", "bear", "expert", "script_writer",
)


DEFAULT_CONTEXT = 32_768


class ModelProfile(BaseModel):
    name: str = "default"
    base_url: str
    api_key: SecretStr = SecretStr("not-needed")
    model: str
    timeout_s: float = 60.0  # the whole call: retries, keep-alives and streaming included
    max_retries: int = 2
    # the context window in tokens; None: asked from the server (vLLM, llama.cpp, LM Studio
    # say it), else DEFAULT_CONTEXT
    context_tokens: int | None = None
    max_output_tokens: int = 1024  # max_tokens of a call that names none
    # USD per million tokens, for the usage table; 0 when unknown. Cached input: prompt
    # tokens the provider served from its prompt cache (None: priced as input).
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    price_cached_in_per_mtok: float | None = None
    provider: str = "openai-compatible"
    # a small local model (issue 35): compact tools, no planning call, answers checked
    # before they are shown
    small: bool = False
    # time limits from the measured pace (core.llm.pace), `timeout_s` being the least; the
    # rates to assume before the first call is measured (tokens a second), None: unknown
    derive_timeouts: bool = False
    prompt_tps: float | None = None
    gen_tps: float | None = None

    def cost(self, prompt_tokens: int, completion_tokens: int, cached_tokens: int = 0) -> float:
        """(prompt - cached) * input + cached * cached input + completion * output."""
        cached = min(max(0, cached_tokens), prompt_tokens)
        cached_price = (self.price_in_per_mtok if self.price_cached_in_per_mtok is None
                        else self.price_cached_in_per_mtok)
        return ((prompt_tokens - cached) * self.price_in_per_mtok + cached * cached_price
                + completion_tokens * self.price_out_per_mtok) / 1_000_000
