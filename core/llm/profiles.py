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
    # USD per million tokens, for the usage table; 0 when unknown.
    price_in_per_mtok: float = 0.0
    price_out_per_mtok: float = 0.0
    provider: str = "openai-compatible"

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.price_in_per_mtok
                + completion_tokens * self.price_out_per_mtok) / 1_000_000
