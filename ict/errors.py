"""Errors raised by the ICT analyzer.

One hierarchy so it can be re-parented under the project's error tree in a single place:

    ICTError
    └── ICTInputError (also a ValueError)   bars, options or a plan that cannot be used
        └── PlanValidationError             a trade plan failed validation; `.reasons` says why
"""

from __future__ import annotations


class ICTError(Exception):
    """Root of every error the `ict` package raises."""


class ICTInputError(ICTError, ValueError):
    """The bars, interval or options given to the analyzer are unusable."""


class PlanValidationError(ICTInputError):
    """A trade plan was rejected; `reasons` lists every failed rule."""

    def __init__(self, reasons: list[str]) -> None:
        self.reasons = list(reasons)
        super().__init__("trade plan rejected: " + "; ".join(self.reasons))
