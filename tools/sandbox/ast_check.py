"""Layer 1: a static check of the source before it runs.

It refuses imports outside the allowlist, calls and references to names that run strings as
code or reach the interpreter (`eval`, `exec`, `compile`, `__import__`, `getattr`...), any
dunder attribute (`().__class__.__subclasses__()`), attribute names that lead to the OS through
an allowed module (`pandas.io.common.os`), and file paths outside the work directory (absolute
paths or `..`), including `open` with anything but a literal relative path.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass

from tools.sandbox.policy import (
    ALLOWED_MODULES,
    ALLOWED_TEXT,
    BANNED_ATTRIBUTES,
    BANNED_KEYWORDS,
    BANNED_NAMES,
)

_PATHLIKE = re.compile(r"^(/[\w.\-]|~/|[A-Za-z]:\\)|(^|[/\\])\.\.([/\\]|$)")
# strings some library may evaluate as code (typing's forward references, pandas.eval,
# str.format's attribute lookups): no dunders and no calls of the banned names inside them
_DUNDER_IN_TEXT = re.compile(r"__\w+__")
_CALL_IN_TEXT = re.compile(r"\b(eval|exec|compile|getattr|setattr|open|__import__|globals|"
                           r"vars|breakpoint)\s*\(")


@dataclass(frozen=True)
class Violation:
    line: int
    kind: str  # import, call, dunder, attribute, path, syntax
    message: str

    def __str__(self) -> str:
        return f"line {self.line}: {self.message}"


def _dunder(name: str) -> bool:
    return name.startswith("__") and name.endswith("__") and len(name) > 4


class _Checker(ast.NodeVisitor):
    def __init__(self, allowed: frozenset[str]) -> None:
        self.allowed = allowed
        self.found: list[Violation] = []

    def flag(self, node: ast.AST, kind: str, message: str) -> None:
        self.found.append(Violation(getattr(node, "lineno", 0), kind, message))

    def _module(self, node: ast.AST, name: str) -> None:
        top, *rest = name.split(".")
        if top not in self.allowed:
            self.flag(node, "import", f"import of {name!r} is not allowed (allowed: "
                                      f"{ALLOWED_TEXT})")
        elif any(part in BANNED_ATTRIBUTES or _dunder(part) for part in rest):
            self.flag(node, "attribute", f"import of {name!r} is not allowed (it reaches the "
                                         "operating system or runs code)")

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self._module(node, alias.name)

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level:
            self.flag(node, "import", "relative imports are not allowed")
        else:
            self._module(node, node.module or "")
        for alias in node.names:
            if alias.name == "*" or _dunder(alias.name) or alias.name in BANNED_ATTRIBUTES:
                self.flag(node, "import", f"importing {alias.name!r} is not allowed")

    def visit_Name(self, node: ast.Name) -> None:
        if node.id in BANNED_NAMES:
            self.flag(node, "call", f"{node.id!r} is not allowed")
        elif _dunder(node.id) and node.id != "__name__":
            self.flag(node, "dunder", f"the name {node.id!r} is not allowed")
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if _dunder(node.attr):
            self.flag(node, "dunder", f"dunder attribute .{node.attr} is not allowed")
        elif node.attr in BANNED_ATTRIBUTES:
            self.flag(node, "attribute", f"attribute .{node.attr} is not allowed (it reaches "
                                         "the operating system or runs code)")
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        if isinstance(node.func, ast.Name) and node.func.id == "open":
            first = node.args[0] if node.args else None
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str)
                    and first.value and not _PATHLIKE.search(first.value)):
                self.flag(node, "path", "open() takes only a literal file name inside the work "
                                        "directory")
        self.generic_visit(node)

    def visit_keyword(self, node: ast.keyword) -> None:
        if node.arg in BANNED_KEYWORDS:
            self.flag(node, "call", f"the argument {node.arg}= is not allowed (it loads "
                                    "pickles, which run code)")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, str):
            return
        text = node.value
        if text in BANNED_KEYWORDS:  # the same passed as **{"allow_pickle": True}
            self.flag(node, "call", f"the string {text!r} is not allowed (it loads pickles)")
            return
        if _PATHLIKE.search(text):
            self.flag(node, "path", f"the path {text[:60]!r} is outside the work directory")
        elif text.strip() != "__main__" and _DUNDER_IN_TEXT.search(text):
            self.flag(node, "dunder", f"the string {text[:40]!r} names a dunder attribute")
        elif _CALL_IN_TEXT.search(text):
            self.flag(node, "call", f"the string {text[:40]!r} calls a banned function")


def check_code(source: str, *, allowed_modules: frozenset[str] = ALLOWED_MODULES,
               ) -> list[Violation]:
    """Every violation in `source` (empty when it passes); a syntax error is one violation."""
    try:
        tree = ast.parse(source, mode="exec")
    except SyntaxError as exc:
        return [Violation(exc.lineno or 0, "syntax", f"syntax error: {exc.msg}")]
    checker = _Checker(allowed_modules)
    checker.visit(tree)
    return checker.found


def describe(violations: list[Violation], limit: int = 8) -> str:
    """The violations as text the model (or a user) can act on."""
    lines = [str(v) for v in violations[:limit]]
    if len(violations) > limit:
        lines.append(f"... and {len(violations) - limit} more")
    return "the code was refused before running: " + "; ".join(lines)
