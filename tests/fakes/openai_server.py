"""A local OpenAI-compatible server (aiohttp) that replays scripted turns.

Each request to /v1/chat/completions takes the next `Turn` from the script (or the default).
A turn is text and/or tool calls, streamed in chunks when the client asks for a stream, with
optional latency and a fault: HTTP 429, HTTP 500, a hang longer than the client's timeout,
or malformed JSON. Every request body is recorded in `requests`.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web


@dataclass
class Turn:
    text: str = ""
    tool_calls: list[tuple[str, dict[str, Any] | str]] = field(default_factory=list)
    latency_s: float = 0.0
    fault: str | None = None  # "429" | "500" | "hang" | "malformed"
    chunk: int = 6
    prompt_tokens: int = 20
    completion_tokens: int = 10


class FakeOpenAI:
    def __init__(self, script: list[Turn] | None = None, *, default: Turn | None = None,
                 model: str = "fake-model") -> None:
        self.script = list(script or [])
        self.default = default
        self.model = model
        self.requests: list[dict[str, Any]] = []
        self.speech_requests: list[dict[str, Any]] = []
        self._runner: web.AppRunner | None = None
        self.port = 0
        self._closing = asyncio.Event()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def __aenter__(self) -> FakeOpenAI:
        app = web.Application()
        app.router.add_post("/v1/chat/completions", self._completions)
        app.router.add_get("/v1/models", self._models)
        app.router.add_post("/v1/audio/speech", self._speech)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self._runner is not None
        self._closing.set()  # release hanging handlers so shutdown is quick
        await self._runner.cleanup()

    async def _speech(self, request: web.Request) -> web.Response:
        """`/v1/audio/speech`: real audio (a WAV tone, pitched per voice, 60 ms per character
        of input, 0.3 to 4 s); an input containing "FAIL" gets HTTP 500."""
        body = await request.json()
        self.speech_requests.append(body)
        text = str(body.get("input", ""))
        if "FAIL" in text:
            return web.json_response({"error": {"message": "speech failed", "type": "server"}},
                                     status=500)
        return web.Response(body=tone_wav(text, str(body.get("voice", ""))),
                            content_type="audio/wav")

    async def _models(self, request: web.Request) -> web.Response:
        return web.json_response({"object": "list", "data": [{"id": self.model,
                                                                "object": "model"}]})

    def _next(self) -> Turn:
        if self.script:
            return self.script.pop(0)
        if self.default is not None:
            return self.default
        return Turn(fault="500")

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        turn = self._next()
        if turn.latency_s:
            await asyncio.sleep(turn.latency_s)
        if turn.fault == "429":
            return web.json_response({"error": {"message": "rate limited", "type": "rate"}},
                                     status=429, headers={"retry-after": "0"})
        if turn.fault == "500":
            return web.json_response({"error": {"message": "boom", "type": "server"}},
                                     status=500)
        if turn.fault == "hang":
            await self._closing.wait()
            return web.json_response({"error": {"message": "closing"}}, status=503)
        if turn.fault == "malformed" and not body.get("stream"):
            return web.Response(text='{"id": "x", "choices": [', content_type="application/json")
        calls = [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": name,
                          "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for i, (name, args) in enumerate(turn.tool_calls)
        ]
        usage = {"prompt_tokens": turn.prompt_tokens, "completion_tokens": turn.completion_tokens,
                 "total_tokens": turn.prompt_tokens + turn.completion_tokens}
        created = int(time.time())
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
            if calls:
                message["tool_calls"] = calls
            return web.json_response({
                "id": "chatcmpl-fake", "object": "chat.completion", "created": created,
                "model": self.model,
                "choices": [{"index": 0, "message": message,
                             "finish_reason": "tool_calls" if calls else "stop"}],
                "usage": usage,
            })
        resp = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await resp.prepare(request)

        async def send(payload: dict[str, Any] | str) -> None:
            data = payload if isinstance(payload, str) else json.dumps(payload)
            await resp.write(f"data: {data}\n\n".encode())

        def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
            return {"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": created,
                    "model": self.model,
                    "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}

        await send(chunk({"role": "assistant", "content": ""}))
        if turn.fault == "malformed":
            await send("{not json")
        for i in range(0, len(turn.text), turn.chunk):
            await send(chunk({"content": turn.text[i:i + turn.chunk]}))
        for i, c in enumerate(calls):
            args = c["function"]["arguments"]
            half = len(args) // 2
            await send(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                              "function": {"name": c["function"]["name"],
                                                           "arguments": args[:half]}}]}))
            await send(chunk({"tool_calls": [{"index": i,
                                              "function": {"arguments": args[half:]}}]}))
        await send(chunk({}, "tool_calls" if calls else "stop"))
        if (body.get("stream_options") or {}).get("include_usage"):
            await send({"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                        "created": created, "model": self.model, "choices": [],
                        "usage": usage})
        await send("[DONE]")
        await resp.write_eof()
        return resp


def tone_wav(text: str, voice: str, *, rate: int = 24_000) -> bytes:
    """A mono 16-bit WAV tone: what a speech endpoint returns, decodable by any player."""
    import io
    import math
    import wave

    seconds = min(4.0, max(0.3, 0.06 * len(text)))
    pitch = 180.0 + (sum(voice.encode()) % 7) * 40.0
    n = int(seconds * rate)
    frames = bytearray()
    for i in range(n):
        value = int(8000 * math.sin(2 * math.pi * pitch * i / rate))
        frames += value.to_bytes(2, "little", signed=True)
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(bytes(frames))
    return out.getvalue()
