"""A local OpenAI-compatible server (aiohttp) that replays scripted turns.

Each request to /v1/chat/completions takes the next `Turn` from the script (or the default).
A turn is text and/or tool calls, streamed in chunks when the client asks for a stream, with
optional latency, a `finish` reason (e.g. "length") and a fault: HTTP 429, 500 or 400 (with
`error` as the server's message), a hang longer than the client's timeout, a trickle of
keep-alives that never ends (what llama.cpp sends while it works), malformed JSON, or a stream
that breaks off with an error event after its text (llama.cpp's 500 "does not match the
expected format"). Every request body is recorded in `requests`.

With `context_tokens` set, the server behaves like llama.cpp with that window: `/props` and
`/v1/models` say it, and a request whose prompt is longer is refused with llama.cpp's 400
(`request (N tokens) exceeds the available context size (M tokens)`), N counted as
`prompt_size()` does (its own count, not Bullpen's estimate).
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
    fault: str | None = None  # "429"|"500"|"400"|"hang"|"trickle"|"malformed"|"stream_error"
    error: str = "boom"
    finish: str | None = None  # the finish_reason; default "stop" or "tool_calls"
    chunk: int = 6
    chunk_delay_s: float = 0.0  # a slow stream: a pause before each chunk of text
    prompt_tokens: int = 20
    completion_tokens: int = 10
    # opt-in: of the prompt tokens, this many came from the server's prompt cache (reported
    # as `usage.prompt_tokens_details.cached_tokens`, as OpenAI does)
    cached_tokens: int | None = None


class FakeOpenAI:
    def __init__(self, script: list[Turn] | None = None, *, default: Turn | None = None,
                 model: str = "fake-model", context_tokens: int | None = None) -> None:
        self.script = list(script or [])
        self.default = default
        self.model = model
        self.context_tokens = context_tokens
        self.refused: list[int] = []  # prompt sizes refused as too long
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
        app.router.add_get("/props", self._props)
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
        entry: dict[str, Any] = {"id": self.model, "object": "model"}
        if self.context_tokens:
            entry["meta"] = {"n_ctx_train": self.context_tokens}
        return web.json_response({"object": "list", "data": [entry]})

    async def _props(self, request: web.Request) -> web.Response:
        if not self.context_tokens:
            return web.json_response({"error": {"message": "not found"}}, status=404)
        return web.json_response({"default_generation_settings": {
            "n_ctx": self.context_tokens}})

    def _next(self) -> Turn:
        if self.script:
            return self.script.pop(0)
        if self.default is not None:
            return self.default
        return Turn(fault="500")

    async def _completions(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        size = prompt_size(body)
        if self.context_tokens and size > self.context_tokens:
            self.refused.append(size)
            return web.json_response({"error": {
                "code": 400, "type": "exceed_context_size_error",
                "message": f"request ({size} tokens) exceeds the available context size "
                           f"({self.context_tokens} tokens), try increasing it",
                "n_prompt_tokens": size, "n_ctx": self.context_tokens}}, status=400)
        turn = self._next()
        if turn.latency_s:
            await asyncio.sleep(turn.latency_s)
        if turn.fault == "429":
            return web.json_response({"error": {"message": "rate limited", "type": "rate"}},
                                     status=429, headers={"retry-after": "0"})
        if turn.fault in ("500", "400"):
            return web.json_response({"error": {"message": turn.error, "type": "server"}},
                                     status=int(turn.fault))
        if turn.fault == "hang":
            await self._closing.wait()
            return web.json_response({"error": {"message": "closing"}}, status=503)
        if turn.fault == "trickle":  # keep-alives every 50 ms until the server closes
            keep = web.StreamResponse(headers={"Content-Type": "text/event-stream"
                                               if body.get("stream") else "application/json"})
            await keep.prepare(request)
            while not self._closing.is_set():
                await keep.write(b": keep-alive\n\n" if body.get("stream") else b" ")
                await asyncio.sleep(0.05)
            return keep
        if turn.fault == "malformed" and not body.get("stream"):
            return web.Response(text='{"id": "x", "choices": [', content_type="application/json")
        calls = [
            {"id": f"call_{i}", "type": "function",
             "function": {"name": name,
                          "arguments": args if isinstance(args, str) else json.dumps(args)}}
            for i, (name, args) in enumerate(turn.tool_calls)
        ]
        finish = turn.finish or ("tool_calls" if calls else "stop")
        usage = {"prompt_tokens": turn.prompt_tokens, "completion_tokens": turn.completion_tokens,
                 "total_tokens": turn.prompt_tokens + turn.completion_tokens}
        if turn.cached_tokens is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": turn.cached_tokens}
        created = int(time.time())
        if not body.get("stream"):
            message: dict[str, Any] = {"role": "assistant", "content": turn.text or None}
            if calls:
                message["tool_calls"] = calls
            return web.json_response({
                "id": "chatcmpl-fake", "object": "chat.completion", "created": created,
                "model": self.model,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
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
            if turn.chunk_delay_s:
                await asyncio.sleep(turn.chunk_delay_s)
            await send(chunk({"content": turn.text[i:i + turn.chunk]}))
        for i, c in enumerate(calls):
            args = c["function"]["arguments"]
            half = len(args) // 2
            await send(chunk({"tool_calls": [{"index": i, "id": c["id"], "type": "function",
                                              "function": {"name": c["function"]["name"],
                                                           "arguments": args[:half]}}]}))
            await send(chunk({"tool_calls": [{"index": i,
                                              "function": {"arguments": args[half:]}}]}))
        if turn.fault == "stream_error":  # llama.cpp reports a failed parse mid-stream
            await send({"error": {"code": 500, "type": "server_error", "message": turn.error}})
            await resp.write_eof()
            return resp
        await send(chunk({}, finish))
        if (body.get("stream_options") or {}).get("include_usage"):
            await send({"id": "chatcmpl-fake", "object": "chat.completion.chunk",
                        "created": created, "model": self.model, "choices": [],
                        "usage": usage})
        await send("[DONE]")
        await resp.write_eof()
        return resp


def prompt_size(body: dict[str, Any]) -> int:
    """The fake's own prompt token count: the request's messages and tools as JSON, at 3.5
    characters a token (ASCII), a token per other character."""
    text = json.dumps([body.get("messages", []), body.get("tools", [])], ensure_ascii=False)
    ascii_chars = sum(1 for c in text if ord(c) < 128)
    return int(ascii_chars / 3.5) + (len(text) - ascii_chars)


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
