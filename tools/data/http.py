"""HTTP for providers (aiohttp): every failure becomes `DataUnavailable` naming the provider."""

from __future__ import annotations

import asyncio
import ipaddress
import socket
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from core.errors import DataUnavailable
from tools.data.config import get_config

BROWSER_UA = ("Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) "
              "Chrome/126.0 Safari/537.36")


async def _request(method: str, url: str, *, provider: str, as_json: bool,
                   headers: dict[str, str] | None = None, params: dict[str, Any] | None = None,
                   json_body: Any = None, max_bytes: int = 20_000_000) -> Any:
    cfg = get_config()
    timeout = aiohttp.ClientTimeout(total=cfg.timeout_s)
    hdrs = {"User-Agent": BROWSER_UA, **(headers or {})}
    try:
        async with aiohttp.ClientSession(timeout=timeout) as session, session.request(
                method, url, headers=hdrs, params=params, json=json_body) as resp:
            if resp.status == 403:
                raise DataUnavailable(f"HTTP 403 forbidden from {_host(url)}", provider=provider)
            if resp.status == 404:
                raise DataUnavailable(f"HTTP 404 not found: {url}", provider=provider)
            if resp.status == 429:
                raise DataUnavailable(f"HTTP 429 rate limited by {_host(url)}",
                                      provider=provider)
            if resp.status >= 400:
                raise DataUnavailable(f"HTTP {resp.status} from {_host(url)}", provider=provider)
            body = await resp.content.read(max_bytes + 1)
            if len(body) > max_bytes:
                body = body[:max_bytes]
            text = body.decode(resp.charset or "utf-8", errors="replace")
    except TimeoutError as exc:
        raise DataUnavailable(f"timed out after {cfg.timeout_s:g}s ({_host(url)})",
                              provider=provider) from exc
    except aiohttp.ClientError as exc:
        raise DataUnavailable(f"{type(exc).__name__} reaching {_host(url)}",
                              provider=provider) from exc
    if not as_json:
        return text
    import json

    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise DataUnavailable(f"non-JSON response from {_host(url)}", provider=provider) from exc


def _host(url: str) -> str:
    return urlsplit(url).netloc or url


async def get_json(url: str, *, provider: str, headers: dict[str, str] | None = None,
                   params: dict[str, Any] | None = None) -> Any:
    return await _request("GET", url, provider=provider, as_json=True, headers=headers,
                          params=params)


async def post_json(url: str, body: Any, *, provider: str,
                    headers: dict[str, str] | None = None) -> Any:
    return await _request("POST", url, provider=provider, as_json=True, headers=headers,
                          json_body=body)


async def get_text(url: str, *, provider: str, headers: dict[str, str] | None = None,
                   params: dict[str, Any] | None = None, max_bytes: int = 20_000_000) -> str:
    return str(await _request("GET", url, provider=provider, as_json=False, headers=headers,
                              params=params, max_bytes=max_bytes))


async def check_public_url(url: str, *, provider: str) -> None:
    """Refuse URLs that are not http(s) or that resolve to private, loopback or link-local
    addresses (SSRF guard), unless `DataConfig.allow_private_urls` is set."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise DataUnavailable(f"only http(s) URLs can be fetched, not {url!r}", provider=provider)
    if get_config().allow_private_urls:
        return
    try:
        infos = await asyncio.get_running_loop().getaddrinfo(parts.hostname, None,
                                                             type=socket.SOCK_STREAM)
    except OSError as exc:
        raise DataUnavailable(f"cannot resolve {parts.hostname}", provider=provider) from exc
    for info in infos:
        addr = ipaddress.ip_address(info[4][0])
        if addr.is_private or addr.is_loopback or addr.is_link_local or addr.is_reserved:
            raise DataUnavailable(f"refusing to fetch a private address ({parts.hostname})",
                                  provider=provider)
