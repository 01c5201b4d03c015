"""The one way an adapter serves HTTP (webhooks, signed interactions, callbacks, the web page):
aiohttp on a host and port, where port 0 takes any free one."""

from __future__ import annotations

from typing import Any

from aiohttp import web

from core.errors import PlatformError


async def listen(app: web.Application, *, host: str, port: int, what: str,
                 **runner_options: Any) -> tuple[web.AppRunner, int]:
    """Serve `app` on `host:port`: its runner (the caller cleans it up) and the port bound.
    A port that cannot be bound is a `PlatformError` naming `what` ("slack events")."""
    runner = web.AppRunner(app, handle_signals=False, access_log=None, **runner_options)
    await runner.setup()
    try:
        await web.TCPSite(runner, host, port).start()
    except OSError as exc:
        await runner.cleanup()
        raise PlatformError(f"{what}: cannot listen on {host}:{port}: {exc.strerror}") from None
    return runner, int(runner.addresses[0][1])
