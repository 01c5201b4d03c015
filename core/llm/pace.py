"""How fast a model reads a prompt and writes tokens, learned from its calls, and the time
limits derived from that (issue 35).

A local model on two cores reads ~85 prompt tokens a second and writes ~20 when the machine
is quiet, four times slower when it is loaded, and its first request also loads the model:
a fixed 60 s limit fails it, while a generous fixed one hides a hung server. So a profile
with `derive_timeouts` waits for what its own measured rates say a call needs
(`Pace.seconds`), times `MARGIN`, never less than the profile's `timeout_s`.

Rates start from the profile's `prompt_tps`/`gen_tps` (or none: the configured timeout
holds until the first call is measured) and follow each call: the prompt rate from the time
to the first streamed token, the generation rate from the rest. A slower observation counts
at once (the machine got busy), a faster one is blended in slowly.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

MARGIN = 2.0  # a call may take this many times what the rates predict
FIRST_MARGIN = 4.0  # before any call was measured: the model may still be loading
OVERHEAD_S = 5.0  # per call: HTTP, template, scheduling
BLEND = 0.3  # weight of a faster observation


@dataclass
class Pace:
    prompt_tps: float | None = None
    gen_tps: float | None = None
    observed: int = 0  # calls measured

    def observe(self, *, prompt_tokens: int, completion_tokens: int, total_s: float,
                first_token_s: float | None = None) -> None:
        """Learn from one call: `prompt_tokens` newly read (cached ones excluded)."""
        if total_s <= 0:
            return
        if first_token_s is None or first_token_s <= 0 or first_token_s >= total_s:
            # no split measured: share the time out by the current rates' proportions
            p_s = prompt_tokens / self.prompt_tps if self.prompt_tps else 0.0
            g_s = completion_tokens / self.gen_tps if self.gen_tps else 0.0
            share = p_s / (p_s + g_s) if p_s + g_s > 0 else 0.5
            first_token_s = total_s * share
        gen_s = total_s - first_token_s
        if prompt_tokens >= 16 and first_token_s > 0:
            self.prompt_tps = _follow(self.prompt_tps, prompt_tokens / first_token_s)
        if completion_tokens >= 8 and gen_s > 0:
            self.gen_tps = _follow(self.gen_tps, completion_tokens / gen_s)
        self.observed += 1

    def seconds(self, prompt_tokens: int, max_tokens: int) -> float | None:
        """What one call is expected to take at the learned rates (None: rates unknown)."""
        if not self.prompt_tps or not self.gen_tps:
            return None
        return OVERHEAD_S + prompt_tokens / self.prompt_tps + max_tokens / self.gen_tps

    def timeout(self, prompt_tokens: int, max_tokens: int, *, floor: float) -> float:
        """The limit for one call: the expected time times the margin, at least `floor`."""
        expected = self.seconds(prompt_tokens, max_tokens)
        if expected is None:
            return floor
        return max(floor, expected * (MARGIN if self.observed else FIRST_MARGIN))


def _follow(old: float | None, new: float) -> float:
    if old is None or new < old:
        return new
    return old + BLEND * (new - old)


@runtime_checkable
class Paced(Protocol):
    """An LLM provider that can say how long a call of a role would take (the router)."""

    def expected_seconds(self, role: str, prompt_tokens: int, max_tokens: int) -> float | None:
        ...


def expected_seconds(llm: object, role: str, prompt_tokens: int, max_tokens: int
                     ) -> float | None:
    """`llm.expected_seconds(...)` when the provider measures its pace, else None."""
    if isinstance(llm, Paced):
        return llm.expected_seconds(role, prompt_tokens, max_tokens)
    return None
