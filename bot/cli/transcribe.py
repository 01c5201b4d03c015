"""`bullpen transcribe FILE [--json]`: a voice note through the same pipeline the chats use."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any


def register(sub: Any) -> None:
    """Add the ``transcribe`` subcommand to the ``bullpen`` parser's subparsers."""
    p = sub.add_parser("transcribe", help="transcribe a voice note and correct stock names")
    p.add_argument("file", help="OGG/Opus, AMR, M4A, MP3, WAV or WebM")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.add_argument("--lang", choices=["zh", "en"], default=None,
                   help="the speaker's language, as their /lang would say (default: detect, "
                        "Mandarin or English)")
    p.add_argument("--english-only", action="store_true",
                   help="hear English only (tiny.en), without the whisper-base data pack")
    p.set_defaults(func=handler)


def _settings() -> Any:
    """The settings, with the data layer pointed at their data directory's packs (the
    ``BULLPEN_DATA_DIR`` the server would use, not the repository's ``data/``)."""
    import dataclasses

    from bot.settings import load_settings
    from tools.data.config import configure, get_config

    settings = load_settings()
    configure(dataclasses.replace(get_config(), packs_dir=settings.packs_dir))
    return settings


def missing_mandarin(settings: Any) -> str | None:
    """Why Mandarin cannot be heard with these settings (the pack is missing), else None."""
    from bot.voice.backends import base_model_path
    from core.errors import ConfigError

    if "zh" not in str(settings.voice_languages).split(",") or (
            settings.whisper_multilingual_model):
        return None
    try:
        base_model_path()
    except ConfigError as exc:
        return (f"{exc}\nMandarin voice notes need the whisper-base data pack under "
                f"{settings.packs_dir}: run `bullpen data install --dir {settings.packs_dir}`, "
                "set BULLPEN_DATA_DIR to the data directory that has it, or pass --english-only "
                "to hear English with tiny.en alone")
    return None


async def _run(data: bytes, filename: str, lang: str | None = None,
               settings: Any = None) -> Any:
    from bot.voice.language import LanguageContext
    from bot.voice.pipeline import VoicePipeline

    pipeline = VoicePipeline.from_settings(settings if settings is not None else _settings())
    try:
        await pipeline.warm_up()
        return await pipeline.transcribe(data, filename=filename,
                                         context=LanguageContext(chosen=lang))
    finally:
        await pipeline.aclose()


def handler(args: argparse.Namespace) -> int:
    """Print the transcript; exit 0, 1 when the note is unusable, 2 when the file is missing."""
    from bot.voice.decode import AudioError
    from core.errors import ConfigError

    path = Path(args.file)
    if not path.is_file():
        print(f"bullpen: no such file: {path}", file=sys.stderr)
        return 2
    settings = _settings()
    if getattr(args, "english_only", False):
        settings = settings.model_copy(update={"voice_languages": "en",
                                               "whisper_english_model": "tiny.en"})
    elif (why := missing_mandarin(settings)) is not None:
        print(f"bullpen: {why}", file=sys.stderr)
        return 2
    try:
        t = asyncio.run(_run(path.read_bytes(), path.name, args.lang, settings))
    except AudioError as exc:
        if args.json:
            print(json.dumps({"error": type(exc).__name__, "message": exc.message("en"),
                              "detail": str(exc)}, ensure_ascii=False, indent=2))
        else:
            print(f"bullpen: {exc.message('en')} ({exc})", file=sys.stderr)
        return 1
    except ConfigError as exc:
        print(f"bullpen: {exc}", file=sys.stderr)
        return 2
    symbols = [{"code": m.code, "symbol": m.symbol, "name": m.name, "market": m.market,
                "score": m.score, "span": list(m.span) if m.span else None, "why": m.why}
               for m in t.symbols]
    if args.json:
        print(json.dumps({"text": t.text, "language": t.language,
                          "duration_s": round(t.duration_s, 3),
                          "elapsed_s": round(t.elapsed_s, 3), "query": t.query,
                          "symbols": symbols, "source": t.source,
                          "did_you_mean": [m.symbol for m in t.suggestions]},
                         ensure_ascii=False, indent=2))
        return 0
    print(f"text:       {t.text}")
    print(f"language:   {t.language}")
    print(f"duration_s: {t.duration_s:.2f}")
    print(f"elapsed_s:  {t.elapsed_s:.2f}")
    print(f"query:      {t.query}")
    if t.suggestions:
        print(f"asks:       {t.ask_line('en')}")
    print("symbols:" + ("" if symbols else "    none"))
    for s in symbols:
        span = f"{s['span'][0]}:{s['span'][1]}" if s["span"] else "-"
        print(f"  {s['symbol']:<11} {s['name']:<28} {s['market']:<3} {s['score']:6.2f} "
              f"@{span}  {s['why']}")
    return 0
