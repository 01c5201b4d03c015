"""The HTTP clients Bullpen opens to model endpoints, sharing one TLS context per HTTP library
per process.

httpx, and httpx2 under `openai`, build a verifying TLS context for every client they make
unless handed one: the CA bundle is loaded and parsed again, ~30 ms of CPU a client (0.2 ms
with the context shared). Bullpen makes such clients often: a provider per model profile, the
context-window discovery, the endpoint probe (every 30 s while a model is down), speech,
Whisper over the API. Each context is made on first use by its library's own default (so
SSL_CERT_FILE / SSL_CERT_DIR are honoured as the library honours them, read once);
`openai` and httpx are imported then too, not with this module (core/llm/speech.py says why).
"""

from __future__ import annotations

import functools
import ssl
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import httpx
    import openai


@functools.cache
def _openai_tls() -> ssl.SSLContext:
    import httpx2  # openai's HTTP library

    return httpx2.create_ssl_context()


@functools.cache
def _httpx_tls() -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context()


def openai_client(*, base_url: str | None, api_key: str, timeout: float,
                  max_retries: int = 0) -> openai.AsyncOpenAI:
    """An `openai.AsyncOpenAI` as the library makes it by default, on the shared context."""
    import openai

    return openai.AsyncOpenAI(base_url=base_url, api_key=api_key, timeout=timeout,
                              max_retries=max_retries,
                              http_client=openai.DefaultAsyncHttpxClient(verify=_openai_tls()))


def http_client(**options: Any) -> httpx.AsyncClient:
    """An `httpx.AsyncClient(**options)` on the shared context."""
    import httpx

    return httpx.AsyncClient(verify=_httpx_tls(), **options)
