"""Where a Mandarin voice note's time goes, and what each speed setting costs in names.

Every setting hears the Mandarin notes of ``tests/fixtures/voice_zh`` as a WeChat user sends
them (the chat says Mandarin, so no language detection) through Whisper base's n-best path
(:meth:`FasterWhisperBackend.listen_sync`) and the reading choice against the symbols
directory (:func:`bot.voice.reading.choose_reading`). The model is loaded before any timing.
Per step, the process's CPU seconds (all threads) per second of audio: decoding the file
(PyAV), the log-mel features, the encoder, the beam search, the reading choice; and the wall
seconds per second of audio, at the load average printed (the machine is shared: CPU RTF is
the figure to compare; on an idle machine with two cores the wall RTF is about half of it).

Settings (each against ``stock``, the 30 s encoder window with beam 5 and five readings,
int8, threads = cores, which is what the pipeline ran before):

- ``short_context``: the encoder sees the note and padding (>= 10 s), not 30 s;
- ``short_context_beam1``: and greedy decoding, one reading;
- ``short_context_vad``: and silence trimmed by faster-whisper's Silero VAD first;
- ``short_context_float32`` / ``short_context_1_thread``: the compute type and threads.

Settings that can change what is heard run on every note (found / false / asked); the others
(``speed_only``) on the first ``speed_notes``. English: tiny.en against base on the English
notes of ``tests/fixtures/audio`` (the model the English path uses).
"""

from __future__ import annotations

import os
import statistics
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray


@dataclass(frozen=True)
class Setting:
    """One way to hear a note."""

    name: str
    short_context: bool = True
    beam: int = 5
    readings: int = 5
    vad: bool = False
    compute_type: str = "int8"
    threads: int = 0  # 0: the cores
    speed_only: bool = False


SETTINGS = (
    Setting("stock", short_context=False),
    Setting("short_context"),
    Setting("short_context_beam1", beam=1, readings=1),
    Setting("short_context_vad", vad=True),
    Setting("short_context_float32", compute_type="float32", speed_only=True),
    Setting("short_context_1_thread", threads=1, speed_only=True),
)


def trim_silence(samples: NDArray[np.float32], pad_s: float = 0.2) -> NDArray[np.float32]:
    """The audio from the first speech to the last (Silero VAD), ``pad_s`` either side."""
    from faster_whisper.vad import VadOptions, get_speech_timestamps

    spans = get_speech_timestamps(samples, VadOptions(min_silence_duration_ms=300))
    if not spans:
        return samples
    pad = int(pad_s * 16_000)
    return samples[max(0, spans[0]["start"] - pad):spans[-1]["end"] + pad]


def _ratios(values: list[float]) -> dict[str, float]:
    if not values:
        return {}
    return {"median": round(statistics.median(values), 4),
            "mean": round(statistics.fmean(values), 4)}


def run(*, repeat: int = 1, speed_notes: int = 10, notes_limit: int = 0) -> dict[str, Any]:
    """Each setting on the Mandarin notes (the first ``notes_limit`` when given: a quicker
    run), then tiny.en against base on the English ones."""
    from bot.benches.stt import cpu_model
    from bot.benches.stt_zh import ZH_FIXTURES, score, zh_notes
    from bot.voice.backends import FasterWhisperBackend, base_model_path
    from bot.voice.decode import Audio, decode
    from bot.voice.hints import build_hints
    from bot.voice.reading import choose_reading
    from core.errors import ConfigError
    from tools.symbols import default_directory

    try:
        base_model_path()
    except ConfigError as exc:
        return {"bench": "stt_speed", "skipped": str(exc)}
    directory = default_directory()
    hints = build_hints(directory)
    notes = zh_notes()[:notes_limit] if notes_limit else zh_notes()
    load_avg = os.getloadavg()
    out: dict[str, Any] = {"bench": "stt_speed", "cpu": cpu_model(), "cores": os.cpu_count(),
                           "load_avg": [round(x, 2) for x in load_avg], "model": "whisper-base",
                           "notes": len(notes), "speed_notes": speed_notes, "settings": {}}
    from bot.voice.soundalike import sound_index

    sound_index(directory, frozenset(hints.codes))  # built once, before any timing
    for setting in SETTINGS:
        backend = FasterWhisperBackend(model="base", compute_type=setting.compute_type,
                                       cpu_threads=setting.threads, beam_size=setting.beam,
                                       short_context=setting.short_context)
        t0 = time.perf_counter()
        backend._model()
        load_s = time.perf_counter() - t0
        rows: list[dict[str, Any]] = []
        for note in notes[:speed_notes] if setting.speed_only else notes:
            data = (ZH_FIXTURES / note["file"]).read_bytes()
            best: dict[str, Any] | None = None
            for _ in range(max(1, repeat)):
                stages: dict[str, float] = {}
                w0, c0 = time.perf_counter(), time.process_time()
                audio = decode(data)
                if setting.vad:
                    trimmed = trim_silence(audio.samples)
                    audio = Audio(samples=trimmed, duration_s=audio.duration_s,
                                  source_rate=audio.source_rate)
                stages["file_decode" if not setting.vad else "file_decode_and_vad"] = (
                    time.process_time() - c0)
                listened = backend.listen_sync(audio, languages=("zh",),
                                               hypotheses=setting.readings, stages=stages)
                c1 = time.process_time()
                hyps = listened.hypotheses.get("zh", ())
                reading = choose_reading(hyps, directory, hints) if hyps else None
                stages["reading_choice"] = time.process_time() - c1
                row = {"file": note["file"], "expected": note["expected"],
                       "duration_s": audio.duration_s, "wall_s": time.perf_counter() - w0,
                       "cpu_s": time.process_time() - c0, "stages": stages,
                       "found": [m.symbol for m in reading.correction.symbols]
                       if reading else [],
                       "asked": [m.symbol for m in reading.suggestions] if reading else [],
                       "heard": reading.text if reading else ""}
                if best is None or row["cpu_s"] < best["cpu_s"]:
                    best = row
            assert best is not None
            rows.append(best)
        steps = sorted({k for r in rows for k in r["stages"]})
        summary: dict[str, Any] = {
            "notes": len(rows), "model_load_s": round(load_s, 3),
            "cpu_rtf": _ratios([r["cpu_s"] / r["duration_s"] for r in rows]),
            "wall_rtf": _ratios([r["wall_s"] / r["duration_s"] for r in rows]),
            "cpu_rtf_by_step": {k: _ratios([r["stages"].get(k, 0.0) / r["duration_s"]
                                            for r in rows]) for k in steps},
            "share_of_cpu_by_step": {k: round(sum(r["stages"].get(k, 0.0) for r in rows)
                                              / max(1e-9, sum(r["cpu_s"] for r in rows)), 3)
                                     for k in steps},
        }
        if not setting.speed_only:
            summary["names"] = score(rows, "found", "asked")
            summary["heard"] = {r["file"]: r["heard"] for r in rows}
        out["settings"][setting.name] = summary
    out["english"] = _english()
    out["english_passes"] = run_english_passes()
    out["table"] = [
        {"setting": k, "cpu_rtf_median": v["cpu_rtf"].get("median"),
         "wall_rtf_median": v["wall_rtf"].get("median"),
         "encode_share": v["share_of_cpu_by_step"].get("encode"),
         "found": v.get("names", {}).get("found"), "false": v.get("names", {}).get("false"),
         "asked": v.get("names", {}).get("asked_notes")}
        for k, v in out["settings"].items()]
    return out


def _english() -> dict[str, Any]:
    """tiny.en (the bundled English model) against base, on the English notes, short context
    both (what the English path runs)."""
    import json

    from bot.benches.stt import FIXTURES
    from bot.voice.backends import FasterWhisperBackend
    from bot.voice.correct import correct
    from bot.voice.decode import decode
    from bot.voice.hints import build_hints
    from tools.symbols import default_directory

    directory = default_directory()
    hints = build_hints(directory)  # as the English path corrects (sound-alikes of hints)
    notes = [n for n in json.loads((FIXTURES / "manifest.json").read_text("utf-8"))["notes"]
             if n["language"] == "en"]
    result: dict[str, Any] = {"notes": len(notes)}
    for name, model in (("tiny.en", None), ("base", "base")):
        backend = FasterWhisperBackend(model=model)
        backend._model()
        rows = []
        for n in notes:
            audio = decode((FIXTURES / n["file"]).read_bytes())
            c0 = time.process_time()
            raw = backend.transcribe_sync(audio, language="en")
            cpu = time.process_time() - c0
            found = [m.code for m in correct(raw.text, directory, hints).symbols]
            rows.append({"expected": n["expected"], "found": found,
                         "cpu_rtf": cpu / audio.duration_s})
        from bot.benches.stt_zh import score

        result[name] = {"names": score(rows, "found"),
                        "cpu_rtf": _ratios([r["cpu_rtf"] for r in rows])}
    return result


def run_english_passes() -> dict[str, Any]:
    """What each pass of the English path costs and gains, on the English notes with nothing
    known of the language and the hint prompt (``bullpen bench stt_speed`` runs it last):

    - ``before``: detection on the 30 s window, faster-whisper's ``transcribe`` with the
      prompt (a second 30 s encode), the re-scoring without it (a third);
    - ``full_window_once``: one 30 s encode for detection, decode and re-scoring;
    - ``short_window_only``: one short encode for all three;
    - ``short_then_full_when_doubtful``: what runs, the full window again for a reading that
      names nothing or opens with a prompt name (:meth:`VoicePipeline._doubtful`).

    Per variant: symbols found / false (through the English correction, after prompt leaks
    are dropped), the leaks dropped, the CPU RTF and, for the one-pass variants, by step.
    """
    import json

    from bot.benches.stt import FIXTURES
    from bot.benches.stt_zh import score
    from bot.voice.backends import FasterWhisperBackend, RawTranscript
    from bot.voice.correct import correct
    from bot.voice.decode import decode
    from bot.voice.pipeline import VoicePipeline, drop_prompt_leaks
    from tools.symbols import default_directory

    directory = default_directory()
    pipeline = VoicePipeline(directory=directory)
    hints = pipeline.hints_for()
    prompt = hints.prompt
    doubtful = pipeline._doubtful(prompt, hints)
    short, full = FasterWhisperBackend(model="base"), FasterWhisperBackend(
        model="base", short_context=False)
    short._model()
    notes = [n for n in json.loads((FIXTURES / "manifest.json").read_text("utf-8"))["notes"]
             if n["language"] == "en"]

    def before(audio: Any, stages: dict[str, float]) -> RawTranscript | None:
        full.detect_sync(audio)
        return full.transcribe_sync(audio, prompt=prompt, language="en")

    variants: dict[str, Any] = {
        "before": before,
        "full_window_once": lambda audio, stages: full.english_sync(
            audio, prompt=prompt, sure=lambda probs: True, stages=stages),
        "short_window_only": lambda audio, stages: short.english_sync(
            audio, prompt=prompt, sure=lambda probs: True, stages=stages),
        "short_then_full_when_doubtful": lambda audio, stages: short.english_sync(
            audio, prompt=prompt, sure=lambda probs: True, again=doubtful, stages=stages),
    }
    out: dict[str, Any] = {"bench": "stt_speed english passes", "notes": len(notes),
                           "load_avg": [round(x, 2) for x in os.getloadavg()], "variants": {}}
    for name, hear in variants.items():
        rows = []
        for n in notes:
            audio = decode((FIXTURES / n["file"]).read_bytes())
            stages: dict[str, float] = {}
            c0 = time.process_time()
            raw = hear(audio, stages)
            cpu = time.process_time() - c0
            assert raw is not None
            text = drop_prompt_leaks(raw, prompt)
            found = [m.code for m in correct(text, directory, hints).symbols]
            rows.append({"file": n["file"], "expected": n["expected"], "found": found,
                         "heard": text, "leak_dropped": text != raw.text.strip(),
                         "window": raw.backend.rsplit(":", 1)[-1], "cpu_s": cpu,
                         "duration_s": audio.duration_s, "stages": stages})
        steps = sorted({k for r in rows for k in r["stages"]})
        out["variants"][name] = {
            "names": score(rows, "found"),
            "leaks_dropped": sum(r["leak_dropped"] for r in rows),
            "full_window_again": sum(r["window"] == "full" for r in rows)
            if name.startswith("short") else None,
            "cpu_rtf": _ratios([r["cpu_s"] / r["duration_s"] for r in rows]),
            "cpu_rtf_by_step": {k: _ratios([r["stages"].get(k, 0.0) / r["duration_s"]
                                            for r in rows]) for k in steps},
            "heard": {r["file"]: r["heard"] for r in rows},
        }
    return out
