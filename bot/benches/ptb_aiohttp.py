"""python-telegram-bot on aiohttp: the transport a competent PTB user picks under load.

PTB ships one transport, `HTTPXRequest`, whose client CPU per request grows with the requests
in flight (0.66 ms at 1, 5.7 ms at 100 on a 2-core machine: a known httpx problem), so a PTB
echo bot on it measures httpx, not the bot. PTB's `BaseRequest` is the documented seam for
another transport; this is the small one on aiohttp that Bullpen's own adapter also uses, so
the gateway bench compares bots on the same HTTP client.
"""

from __future__ import annotations

from typing import Any

import aiohttp
from telegram._utils.defaultvalue import DEFAULT_NONE
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData


class AiohttpRequest(BaseRequest):
    """One pooled `aiohttp.ClientSession`; timeouts as PTB passes them (None: no limit)."""

    def __init__(self, *, connection_pool_size: int = 256, read_timeout: float | None = 5.0,
                 write_timeout: float | None = 5.0, connect_timeout: float | None = 5.0,
                 pool_timeout: float | None = 1.0) -> None:
        self._pool_size = connection_pool_size
        self._defaults = {"read": read_timeout, "write": write_timeout,
                          "connect": connect_timeout, "pool": pool_timeout}
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._defaults["read"]

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._pool_size))

    async def shutdown(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    def _seconds(self, name: str, given: ODVInput[float]) -> float | None:
        return self._defaults[name] if given is DEFAULT_NONE else given  # type: ignore[return-value]

    async def do_request(self, url: str, method: str, request_data: RequestData | None = None,
                         read_timeout: ODVInput[float] = DEFAULT_NONE,
                         write_timeout: ODVInput[float] = DEFAULT_NONE,
                         connect_timeout: ODVInput[float] = DEFAULT_NONE,
                         pool_timeout: ODVInput[float] = DEFAULT_NONE) -> tuple[int, bytes]:
        await self.initialize()
        assert self._session is not None
        read = self._seconds("read", read_timeout)
        write = self._seconds("write", write_timeout)
        timeout = aiohttp.ClientTimeout(
            total=None, sock_read=read if read is None or write is None else max(read, write),
            sock_connect=self._seconds("connect", connect_timeout))
        data: Any = None
        if request_data is not None:
            if request_data.contains_files:
                form = aiohttp.FormData()
                for name, value in request_data.json_parameters.items():
                    form.add_field(name, value)
                for name, part in request_data.multipart_data.items():
                    filename, content, *rest = part
                    form.add_field(name, content, filename=filename,
                                   content_type=rest[0] if rest else None)
                data = form
            else:
                data = request_data.json_parameters
        try:
            async with self._session.request(method, url, data=data, timeout=timeout) as resp:
                return resp.status, await resp.read()
        except TimeoutError as exc:
            raise TimedOut from exc
        except aiohttp.ClientError as exc:
            raise NetworkError(f"aiohttp: {exc}") from exc
