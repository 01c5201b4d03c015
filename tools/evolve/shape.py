"""The shape of a generated tool, read from its source with `ast` (nothing is executed): the
function, its typed parameters and docstring, its tests, and the argument model derived from
the signature (so a generated tool is offered to the agent like an `@tool` one)."""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, Field, create_model

from core.tools import _docstring_parts

BARS = "bars"  # a first parameter of this name takes price bars, supplied by the host
_TYPES: dict[str, Any] = {
    "int": int, "float": float, "str": str, "bool": bool,
    "list[int]": list[int], "list[float]": list[float], "list[str]": list[str],
    "dict[str, float]": dict[str, float], "dict[str, int]": dict[str, int],
    "dict[str, str]": dict[str, str],
}
_NAME = re.compile(r"^[a-z][a-z0-9_]{2,48}$")
_CODE_BLOCK = re.compile(r"```(?:python|py)?[ \t]*\n(.*?)```", re.DOTALL)


class ShapeError(ValueError):
    """The code is not a tool we can offer: the message says what to change."""

    def __init__(self, message: str, category: str = "signature") -> None:
        super().__init__(message)
        self.category = category


@dataclass(frozen=True)
class Param:
    name: str
    annotation: str
    default: Any = ...
    description: str = ""


@dataclass(frozen=True)
class ToolShape:
    name: str
    description: str
    params: list[Param]
    takes_bars: bool
    tests: list[str] = field(default_factory=list)

    def args_model(self) -> type[BaseModel]:
        """Arguments as the model sees them: `symbol`/`interval` instead of `bars`."""
        fields: dict[str, Any] = {}
        if self.takes_bars:
            fields["symbol"] = (str, Field(description='code, ticker or name, e.g. "NVDA"'))
            fields["interval"] = (str, Field("1d", description="bar size: 1d, 1w, 1mo"))
        for p in self.params:
            fields[p.name] = (_TYPES[p.annotation],
                              Field(p.default, description=p.description or None))
        model_name = "".join(part.title() for part in self.name.split("_")) + "Args"
        return create_model(model_name, **fields)


def extract_code(text: str) -> str:
    """The Python code in an LLM answer (or a chat message): the longest fenced block, else
    the text without a stray fence (```python on its own, or ```one line```)."""
    blocks = _CODE_BLOCK.findall(text)
    if blocks:
        return str(max(blocks, key=len)).strip() + "\n"
    code = text.strip()
    if code.startswith("```"):
        first, _, rest = code[3:].partition("\n")
        code = rest if first.strip() in ("python", "py", "") else code[3:]
    code = code.strip().removesuffix("```").strip()
    return code + "\n" if code else ""


def read_shape(code: str) -> ToolShape:
    """The tool in `code`: its one non-test top-level function, typed and documented."""
    try:
        tree = ast.parse(code)
    except SyntaxError as exc:
        raise ShapeError(f"syntax error at line {exc.lineno}: {exc.msg}", "syntax") from None
    funcs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
    tools = [f for f in funcs if not f.name.startswith(("test_", "_"))]
    tests = [f.name for f in funcs if f.name.startswith("test_")]
    if len(tools) != 1:
        raise ShapeError(f"the code must define exactly one tool function (not test_ or _ "
                         f"prefixed); it defines {len(tools)}")
    fn = tools[0]
    if not _NAME.match(fn.name):
        raise ShapeError(f"the function name {fn.name!r} must be snake_case, 3-49 characters")
    if not tests:
        raise ShapeError("the code must define at least one test_ function")
    doc = ast.get_docstring(fn) or ""
    description, docs = _docstring_parts(doc)
    if not description:
        raise ShapeError(f"{fn.name} needs a docstring saying what it computes")
    if fn.args.vararg or fn.args.kwarg or fn.args.posonlyargs or fn.args.kwonlyargs:
        raise ShapeError("use plain parameters only (no *args, **kwargs, / or *)")
    args = fn.args.args
    defaults = [...] * (len(args) - len(fn.args.defaults)) + list(fn.args.defaults)
    params: list[Param] = []
    takes_bars = bool(args) and args[0].arg == BARS
    for i, (arg, default) in enumerate(zip(args, defaults, strict=True)):
        if i == 0 and takes_bars:
            continue
        if arg.arg in (BARS, "symbol", "interval"):
            raise ShapeError(f"the parameter name {arg.arg!r} is reserved ({BARS} may only "
                             "be the first parameter)")
        annotation = ast.unparse(arg.annotation).replace(" ", "") if arg.annotation else ""
        annotation = annotation.replace(",", ", ")
        if annotation not in _TYPES:
            raise ShapeError(f"parameter {arg.arg!r} needs one of these types: "
                             f"{', '.join(_TYPES)} (it has {annotation or 'none'!r})")
        value: Any = ...
        if default is not ...:
            try:
                value = ast.literal_eval(default)
            except ValueError:
                raise ShapeError(f"the default of {arg.arg!r} must be a literal") from None
        params.append(Param(arg.arg, annotation, value, docs.get(arg.arg, "")))
    return ToolShape(name=fn.name, description=description, params=params,
                     takes_bars=takes_bars, tests=tests)
