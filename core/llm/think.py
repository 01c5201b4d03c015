"""Split `<think>...</think>` blocks of reasoning models from user-visible text, streaming."""

from __future__ import annotations

OPEN, CLOSE = "<think>", "</think>"


class ThinkSplitter:
    """Feed chunks; get (visible, thinking) pieces. Tags split across chunks are handled."""

    def __init__(self) -> None:
        self._buf = ""
        self._inside = False

    def feed(self, chunk: str) -> tuple[str, str]:
        self._buf += chunk
        visible: list[str] = []
        thinking: list[str] = []
        while self._buf:
            tag = CLOSE if self._inside else OPEN
            idx = self._buf.find(tag)
            if idx >= 0:
                (thinking if self._inside else visible).append(self._buf[:idx])
                self._buf = self._buf[idx + len(tag):]
                self._inside = not self._inside
                continue
            keep = _partial_suffix(self._buf, tag)
            emit = self._buf[: len(self._buf) - keep]
            (thinking if self._inside else visible).append(emit)
            self._buf = self._buf[len(self._buf) - keep:]
            break
        return "".join(visible), "".join(thinking)

    def flush(self) -> tuple[str, str]:
        rest, self._buf = self._buf, ""
        return ("", rest) if self._inside else (rest, "")


def _partial_suffix(text: str, tag: str) -> int:
    """Length of the longest suffix of `text` that is a proper prefix of `tag`."""
    for n in range(min(len(tag) - 1, len(text)), 0, -1):
        if text.endswith(tag[:n]):
            return n
    return 0


def split_thinking(text: str) -> tuple[str, str]:
    splitter = ThinkSplitter()
    v1, t1 = splitter.feed(text)
    v2, t2 = splitter.flush()
    return (v1 + v2).strip(), (t1 + t2).strip()
