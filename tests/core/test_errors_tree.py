"""The error tree drawn in core/errors.py's docstring is the tree in the code: every class drawn
exists under the parent it is drawn under, and every public subclass of `BullpenError` in the
product (found by reading the source, so a module nobody imported yet counts too) is drawn."""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from core import errors

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("core", "tools", "ict", "analyst", "debate", "podcast", "jobs", "bot", "adapters")
_LINE = re.compile(r"^    ((?:│   |    )*)(?:[├└]── )?(\w+)(?:\s+\[([\w.]+)\])?")


def drawn() -> dict[str, tuple[str | None, str]]:
    """name -> (its parent in the drawing, the module it is said to live in: its `[tag]`, else
    its parent's)."""
    doc = errors.__doc__ or ""
    lines = doc[doc.index("    BullpenError"):].split("\n\n")[0].splitlines()
    out: dict[str, tuple[str | None, str]] = {}
    stack: list[str] = []
    for line in lines:
        m = _LINE.match(line)
        assert m is not None, line
        depth = len(m.group(1)) // 4 + (0 if line.strip() == "BullpenError" else 1)
        del stack[depth:]
        assert m.group(2) not in out, f"{m.group(2)} drawn twice"
        parent = stack[-1] if stack else None  # untagged: in its parent's module
        out[m.group(2)] = (parent, m.group(3) or (out[parent][1] if parent else "core.errors"))
        stack.append(m.group(2))
    return out


def test_every_drawn_class_is_where_and_under_what_the_drawing_says() -> None:
    tree = drawn()
    assert tree["BullpenError"] == (None, "core.errors")
    for name, (parent, module) in tree.items():
        cls = getattr(importlib.import_module(module), name)
        assert cls.__module__ == module, name
        if parent is not None:
            assert [b.__name__ for b in cls.__bases__ if issubclass(b, errors.BullpenError)] \
                == [parent], name


def test_every_public_subclass_in_the_code_is_drawn() -> None:
    tree = drawn()
    for _parent, module in tree.values():  # the drawing's modules loaded: walk the classes
        importlib.import_module(module)
    walked: dict[str, str] = {}
    todo = [errors.BullpenError]
    while todo:
        cls = todo.pop()
        for sub in cls.__subclasses__():
            if sub.__module__.split(".")[0] in PACKAGES and not sub.__name__.startswith("_"):
                walked[sub.__name__] = cls.__name__
            todo.append(sub)
    assert walked == {n: p for n, (p, _) in tree.items() if p is not None}
    # and in the source: a subclass in a module none of the drawn ones imports
    known = set(tree)
    defined: dict[str, str] = {}
    classes = [(node, path) for pkg in PACKAGES for path in (ROOT / pkg).rglob("*.py")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.ClassDef)]
    changed = True
    while changed:
        changed = False
        for node, path in classes:
            if (node.name not in defined and not node.name.startswith("_")
                    and any(isinstance(b, ast.Name | ast.Attribute)
                            and (b.id if isinstance(b, ast.Name) else b.attr) in known
                            for b in node.bases)):
                defined[node.name] = path.relative_to(ROOT).as_posix()
                known.add(node.name)
                changed = True
    undrawn = {n: where for n, where in defined.items() if n not in tree}
    assert undrawn == {}
