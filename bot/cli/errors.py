"""The one error a CLI command raises to end with a message and an exit code (no traceback).

Its own module so that building the parser (`bullpen --help`) imports nothing heavy."""

from __future__ import annotations


class CLIError(Exception):
    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.code = code
