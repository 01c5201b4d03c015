"""wechatpy clients pointed at a configurable API base, and WeChat errors as `core.errors`.

wechatpy builds every API URL from `API_BASE_URL` but hard-codes the token endpoints (and
WeCom's media download), so the subclasses fetch tokens from the base URL too. One refresh at
a time: threads that waited for it reuse the new token instead of fetching again.
"""

from __future__ import annotations

import json
import logging
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import requests
from requests.adapters import HTTPAdapter
from wechatpy import WeChatClient
from wechatpy.enterprise import WeChatClient as WeComClient
from wechatpy.exceptions import WeChatClientException

from core.errors import Forbidden, PlatformError, PlatformUnavailable, RateLimited, TooLarge

OFFICIAL_API = "https://api.weixin.qq.com/cgi-bin/"
WECOM_API = "https://qyapi.weixin.qq.com/cgi-bin/"

WINDOW_CLOSED = {45015, 45047}  # outside the 48-hour window / its message quota used up
RATE_LIMITED = {-1, 45009, 45011, 45033}  # busy, daily quota, per-minute, per-user frequency
GONE = {40003, 43004, 43019, 60111, 81013}  # bad or unsubscribed user, blacklisted, not visible
BAD_CREDENTIALS = {40001, 40013, 40091, 40125, 40164, 41002, 41004, 60020, 40056}
RATE_LIMIT_RETRY_S = 2.0
TOKEN_REFUSED = {40001, 40014, 42001}  # invalid credential, invalid token, token expired
MEDIA_CHUNK_BYTES = 64 * 1024


class _RedactQuery(logging.Filter):
    """urllib3 logs request URLs at DEBUG, and wechatpy puts the secret and token in them."""

    _PARAM = re.compile(r"((?:access_token|secret|corpsecret)=)[^&\s\"']+")

    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        clean = self._PARAM.sub(r"\1***", msg)
        if clean != msg:
            record.msg, record.args = clean, None
        return True


_URLLIB3 = logging.getLogger("urllib3.connectionpool")
if not any(isinstance(f, _RedactQuery) for f in _URLLIB3.filters):
    _URLLIB3.addFilter(_RedactQuery())


class WindowClosed(PlatformError):
    """The user can't be messaged now (48-hour window closed or quota used): keep the reply."""


class Unreachable(PlatformUnavailable):
    """WeChat was not reached, or answered without an errcode (network error, HTTP status):
    nothing says the message was refused, so a kept reply stays kept."""


class _TokenOnBase:
    """Mixin: the token endpoint on `API_BASE_URL`, one refresh at a time."""

    API_BASE_URL: str
    access_token: str  # wechatpy's property: the cached token, fetched when missing or expired
    timeout: float | None
    session: Any
    access_token_key: str
    expires_at: int | None
    _http: requests.Session
    _token_path = ""

    def _setup(self, base_url: str, pool: int, proxy_url: str | None) -> None:
        self.API_BASE_URL = base_url if base_url.endswith("/") else base_url + "/"
        self._token_lock = threading.Lock()
        adapter = HTTPAdapter(pool_connections=1, pool_maxsize=pool)
        self._http.mount("http://", adapter)
        self._http.mount("https://", adapter)
        # trust_env reads the proxy variables and stats ~/.netrc on every request (a third of
        # the adapter's CPU per message): the proxy is explicit instead
        self._http.trust_env = False
        if proxy_url:
            self._http.proxies = {"http": proxy_url, "https": proxy_url}

    _fetch_access_token: Callable[..., dict[str, Any]]  # wechatpy's, via the MRO

    def _token_params(self) -> dict[str, str]:
        raise NotImplementedError

    def fetch_access_token(self) -> dict[str, Any]:
        seen = self.session.get(self.access_token_key)
        with self._token_lock:
            now = self.session.get(self.access_token_key)
            if now and now != seen and (self.expires_at or 0) - time.time() > 60:
                return {"access_token": now}  # refreshed while this thread waited
            return self._fetch_access_token(url=self.API_BASE_URL + self._token_path,
                                            params=self._token_params())

    def download_media(self, media_id: str, *, max_bytes: int,
                       chunk_bytes: int = MEDIA_CHUNK_BYTES) -> bytes | None:
        """A temporary media's bytes (`media/get`), streamed and refused past `max_bytes`
        (`TooLarge`): at once when the declared Content-Length says so, else after reading at
        most `max_bytes` plus one chunk. wechatpy's own download reads the whole body before
        anything can look at it. A stale token is refreshed once, as wechatpy does. None when
        WeChat answered with something else than media (a video's URL)."""
        for attempt in (1, 2):
            params = {"access_token": self.access_token, "media_id": media_id}
            with self._http.get(self.API_BASE_URL + "media/get", params=params, stream=True,
                                timeout=self.timeout) as resp:
                if resp.status_code >= 400:
                    raise WeChatClientException(None, None, client=self, request=resp.request,
                                                response=resp)
                declared = _content_length(resp.headers.get("Content-Length"))
                if declared is not None and declared > max_bytes:
                    raise TooLarge(f"media is {declared} bytes, more than {max_bytes}",
                                   size=declared, limit=max_bytes)
                data = bytearray()
                for piece in resp.iter_content(chunk_bytes):
                    data += piece
                    if len(data) > max_bytes:
                        raise TooLarge(f"media is more than {max_bytes} bytes", size=declared,
                                       limit=max_bytes, read=len(data))
                answer = _json_object(bytes(data))
                if answer is None:
                    return bytes(data)
                code = int(answer.get("errcode") or 0)
                if code in TOKEN_REFUSED and attempt == 1:
                    self.fetch_access_token()
                    continue
                if code:
                    raise WeChatClientException(code, answer.get("errmsg", ""), client=self,
                                                request=resp.request, response=resp)
                return None  # e.g. a video's media/get answers with its URL, not bytes
        return None

    def close(self) -> None:
        self._http.close()


class OfficialClient(_TokenOnBase, WeChatClient):  # type: ignore[misc]
    """An official account's API client (customer-service messages, media)."""

    _token_path = "token"

    def __init__(self, app_id: str, secret: str, *, base_url: str = OFFICIAL_API,
                 timeout_s: float = 10.0, pool: int = 8, proxy_url: str | None = None) -> None:
        super().__init__(app_id, secret, timeout=timeout_s)
        self._setup(base_url, pool, proxy_url)

    def _token_params(self) -> dict[str, str]:
        return {"grant_type": "client_credential", "appid": self.appid, "secret": self.secret}


class WeComAppClient(_TokenOnBase, WeComClient):  # type: ignore[misc]
    """A WeCom app's API client (app messages, media)."""

    _token_path = "gettoken"

    def __init__(self, corp_id: str, secret: str, *, base_url: str = WECOM_API,
                 timeout_s: float = 10.0, pool: int = 8, proxy_url: str | None = None) -> None:
        super().__init__(corp_id, secret, timeout=timeout_s)
        self._setup(base_url, pool, proxy_url)

    def _token_params(self) -> dict[str, str]:
        return {"corpid": self.corp_id, "corpsecret": self.secret}


def _content_length(value: str | None) -> int | None:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None


def _json_object(body: bytes) -> dict[str, Any] | None:
    """The JSON object WeChat answered instead of media, if `body` is one (media never
    starts with `{`)."""
    if len(body) > 64 * 1024 or not body.lstrip().startswith(b"{"):
        return None
    try:
        answer = json.loads(body)
    except ValueError:
        return None
    return answer if isinstance(answer, dict) else None


def is_bad_credentials(exc: Exception) -> bool:
    """WeChat refused the app id, secret or agent id (a configuration error)."""
    return isinstance(exc, WeChatClientException) and exc.errcode in BAD_CREDENTIALS


def map_error(where: str, exc: Exception) -> PlatformError:
    """The `core.errors` type for a failed call; the text never holds a token or secret."""
    if isinstance(exc, WeChatClientException):
        code = exc.errcode
        if code is None:
            status = getattr(exc.response, "status_code", "?")
            return Unreachable(f"{where}: HTTP {status}")
        text = f"{where}: errcode {code} ({_errmsg(exc)})"
        if code in WINDOW_CLOSED:
            return WindowClosed(text)
        if code in RATE_LIMITED:
            return RateLimited(text, retry_after=RATE_LIMIT_RETRY_S)
        if code in GONE:
            return Forbidden(text)
        return PlatformError(text)
    if isinstance(exc, requests.RequestException):  # its text holds the URL, hence the token
        return Unreachable(f"{where}: network error ({type(exc).__name__})")
    return PlatformError(f"{where}: {type(exc).__name__}")


def _errmsg(exc: WeChatClientException) -> str:
    """WeChat's message without its request id hint (`hint: [...]`, `rid: ...`)."""
    text = str(exc.errmsg or "")
    for marker in (" hint:", " rid:", ", hint:"):
        text = text.split(marker, 1)[0]
    return text.strip()[:200]
