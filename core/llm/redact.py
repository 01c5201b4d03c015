"""A server's error text, fit to show a user: secrets removed, one line, bounded length."""

from __future__ import annotations

import re
from typing import Any

_SECRETS = [
    (re.compile(r"\b(sk|pk|rk|xai|gsk)-[A-Za-z0-9_\-]{8,}"), r"\1-[redacted]"),
    (re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}"), r"\1 [redacted]"),
    (re.compile(r"(?i)\b(api[_-]?key|access[_-]?token|token|secret|password|key)"
                r"(\s*[=:]\s*)['\"]?[^\s'\",;&]{6,}"), r"\1\2[redacted]"),
    (re.compile(r"(?i)(https?://)[^/\s:@]+:[^/\s@]+@"), r"\1[redacted]@"),
]
MAX_CHARS = 300


def redact(text: str, *secrets: str) -> str:
    """`text` without known secrets (and the given literals), on one line, at most 300 chars."""
    for secret in secrets:
        if secret and len(secret) >= 6 and secret in text:
            text = text.replace(secret, "[redacted]")
    for pattern, repl in _SECRETS:
        text = pattern.sub(repl, text)
    text = " ".join(text.split())
    return text if len(text) <= MAX_CHARS else text[: MAX_CHARS - 1] + "…"


def error_text(body: Any, fallback: str) -> str:
    """The human part of an OpenAI-style error body (`{"error": {"message": ...}}` and kin)."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict):
            msg = inner.get("message") or inner.get("detail") or inner.get("msg")
            if isinstance(msg, str) and msg.strip():
                return msg
        elif isinstance(inner, str) and inner.strip():
            return inner
        detail = body.get("detail") or body.get("message")
        if isinstance(detail, str) and detail.strip():
            return detail
    if isinstance(body, str) and body.strip():
        return body
    return fallback
