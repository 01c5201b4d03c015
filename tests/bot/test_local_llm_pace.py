"""The local model's pace is measured when its server starts (issue 35): one short request,
timed by llama.cpp itself (`timings`), and the profile's time limits start from those rates
instead of a quiet machine's. Here the server is a loopback stand-in that answers as
llama.cpp does; the real one is measured by `make test-llm`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from bot.local_llm import GEN_TPS, PROMPT_TPS, LocalServer
from core.llm.pace import Pace


@pytest.fixture
async def llama() -> AsyncIterator[tuple[str, list[dict[str, Any]], dict[str, Any]]]:
    seen: list[dict[str, Any]] = []
    reply: dict[str, Any] = {"timings": {"prompt_n": 210, "prompt_per_second": 15.9,
                                         "predicted_n": 16, "predicted_per_second": 7.7}}

    async def chat(request: web.Request) -> web.Response:
        seen.append(await request.json())
        return web.json_response({"choices": [{"message": {"content": "1 2 3"}}], **reply})

    app = web.Application()
    app.router.add_post("/v1/chat/completions", chat)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1", seen, reply
    finally:
        await runner.cleanup()


def server_at(url: str) -> LocalServer:
    server = LocalServer(gguf=Path("unused.gguf"), model="m")
    server.base_url = url
    return server


async def test_the_rates_measured_at_start_are_the_profiles_first_pace(llama):
    url, seen, _ = llama
    server = server_at(url)
    assert await server.measure_pace() == (15.9, 7.7)
    assert seen[0]["max_tokens"] == 16 and seen[0]["temperature"] == 0
    profile = server.profile("0.5b", timeout_s=60.0, max_output_tokens=384)
    assert (profile.prompt_tps, profile.gen_tps) == (15.9, 7.7)
    assert profile.derive_timeouts and profile.small
    # a 700-token quote prompt on this loaded machine: far past the 60 s floor
    limit = Pace(prompt_tps=profile.prompt_tps, gen_tps=profile.gen_tps).timeout(
        700, 384, floor=profile.timeout_s)
    quiet = Pace(prompt_tps=PROMPT_TPS["0.5b"], gen_tps=GEN_TPS["0.5b"]).timeout(
        700, 384, floor=profile.timeout_s)
    assert limit > 700 / 15.9 + 384 / 7.7 > quiet


async def test_a_server_that_does_not_time_itself_leaves_the_assumed_rates(llama):
    url, _, reply = llama
    reply["timings"] = None
    server = server_at(url)
    assert await server.measure_pace() is None
    profile = server.profile("1.5b", timeout_s=60.0, max_output_tokens=384)
    assert (profile.prompt_tps, profile.gen_tps) == (PROMPT_TPS["1.5b"], GEN_TPS["1.5b"])
