"""`@tool` and the registry: a tool is declared once, on a typed async function.

The registry derives the JSON schema from the signature (pydantic) and the docstring
(first paragraph = description, Google-style `Args:` = parameter descriptions), validates
the model's arguments, and leaves the function itself callable by deterministic code.
"""

from __future__ import annotations

import inspect
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, get_type_hints, overload

from pydantic import BaseModel, ValidationError, create_model
from pydantic.fields import FieldInfo

from core.errors import BullpenError, InvalidArguments, UnknownTool

MAX_TOOL_RESULT_CHARS = 40_000

ToolFunc = Callable[..., Awaitable[BaseModel]]


@dataclass(frozen=True)
class ToolSpec:
    name: str
    description: str
    func: ToolFunc
    args_model: type[BaseModel]
    result_type: Any
    label: str = ""
    tags: frozenset[str] = field(default_factory=frozenset)

    def schema(self) -> dict[str, Any]:
        params = self.args_model.model_json_schema()
        params.pop("title", None)
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": params},
        }

    def validate(self, arguments: str | dict[str, Any]) -> BaseModel:
        """Parse the model's raw argument JSON; raise InvalidArguments with a readable reason."""
        if isinstance(arguments, str):
            try:
                data = json.loads(arguments) if arguments.strip() else {}
            except json.JSONDecodeError as exc:
                raise InvalidArguments(f"arguments are not valid JSON: {exc.msg}") from exc
        else:
            data = arguments
        if not isinstance(data, dict):
            raise InvalidArguments("arguments must be a JSON object")
        try:
            return self.args_model.model_validate(data)
        except ValidationError as exc:
            errs = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors()
            )
            raise InvalidArguments(f"invalid arguments for {self.name}: {errs}") from exc

    def render_label(self, args: dict[str, Any]) -> str:
        if not self.label:
            return f"Running {self.name}..."
        try:
            return self.label.format(**args)
        except (KeyError, IndexError, ValueError):
            return self.label


@dataclass
class ToolOutcome:
    name: str
    ok: bool
    content: str  # what the model sees
    result: BaseModel | None = None
    error: BaseException | None = None
    elapsed_s: float = 0.0


def _docstring_parts(doc: str | None) -> tuple[str, dict[str, str]]:
    if not doc:
        return "", {}
    text = inspect.cleandoc(doc)
    head, _, rest = text.partition("\nArgs:")
    params: dict[str, str] = {}
    current: str | None = None
    for line in rest.splitlines():
        m = re.match(r"^\s{2,}(\w+)(?:\s*\([^)]*\))?:\s*(.*)$", line)
        if m:
            current = m.group(1)
            params[current] = m.group(2).strip()
        elif current and line.strip() and line.startswith(" " * 6):
            params[current] += " " + line.strip()
        elif line.strip() and not line.startswith(" "):
            break
    description = " ".join(p.strip() for p in head.strip().split("\n\n")[0].splitlines())
    return description, params


def _args_model(func: Callable[..., Any], name: str, docs: dict[str, str]) -> type[BaseModel]:
    sig = inspect.signature(func)
    hints = get_type_hints(func, include_extras=True)
    fields: dict[str, Any] = {}
    for pname, param in sig.parameters.items():
        if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
            raise TypeError(f"tool {name}: *args/**kwargs are not allowed")
        annotation = hints.get(pname, Any)
        default = param.default
        if isinstance(default, FieldInfo):
            if default.description is None and pname in docs:
                default.description = docs[pname]
            fields[pname] = (annotation, default)
        else:
            from pydantic import Field

            fields[pname] = (
                annotation,
                Field(
                    ... if default is inspect.Parameter.empty else default,
                    description=docs.get(pname),
                ),
            )
    model_name = "".join(part.title() for part in name.split("_")) + "Args"
    return create_model(model_name, **fields)


class ToolRegistry:
    def __init__(self, specs: Iterable[ToolSpec] = ()) -> None:
        self._specs: dict[str, ToolSpec] = {}
        self._schemas: list[dict[str, Any]] | None = None
        self._name_set: frozenset[str] | None = None
        for spec in specs:
            self.add(spec)

    def add(self, spec: ToolSpec) -> None:
        if spec.name in self._specs and self._specs[spec.name].func is not spec.func:
            raise ValueError(f"tool {spec.name!r} registered twice")
        self._specs[spec.name] = spec
        self._schemas = None
        self._name_set = None

    def __contains__(self, name: object) -> bool:
        return name in self._specs

    def __len__(self) -> int:
        return len(self._specs)

    def get(self, name: str) -> ToolSpec:
        try:
            return self._specs[name]
        except KeyError:
            raise UnknownTool(f"no tool named {name!r}") from None

    def names(self) -> list[str]:
        return sorted(self._specs)

    def name_set(self) -> frozenset[str]:
        """The names to test membership in (the agent reads them every turn): built once."""
        if self._name_set is None:
            self._name_set = frozenset(self._specs)
        return self._name_set

    def specs(self) -> list[ToolSpec]:
        return [self._specs[n] for n in self.names()]

    def subset(
        self, *, include: Iterable[str] | None = None, exclude_tags: Iterable[str] = ()
    ) -> ToolRegistry:
        wanted = set(include) if include is not None else set(self._specs)
        banned = set(exclude_tags)
        return ToolRegistry(
            s for s in self.specs() if s.name in wanted and not (s.tags & banned)
        )

    def schemas(self) -> list[dict[str, Any]]:
        """Built once (pydantic's JSON schema costs ~14 ms for 25 tools); treat as read-only."""
        if self._schemas is None:
            self._schemas = [s.schema() for s in self.specs()]
        return self._schemas

    async def call(self, name: str, arguments: str | dict[str, Any]) -> ToolOutcome:
        """Run one tool for the model: never raises; errors come back as text for the model."""
        started = time.perf_counter()
        try:
            spec = self.get(name)
            args = spec.validate(arguments)
            result = await spec.func(**{k: getattr(args, k) for k in type(args).model_fields})
        except BullpenError as exc:
            return ToolOutcome(name, False, f"Error: {exc}", error=exc,
                               elapsed_s=time.perf_counter() - started)
        except Exception as exc:  # a tool bug must not end the run; the model is told
            return ToolOutcome(name, False, f"Error: {type(exc).__name__}: {exc}", error=exc,
                               elapsed_s=time.perf_counter() - started)
        content = truncate(result.model_dump_json(exclude_none=True))
        return ToolOutcome(name, True, content, result=result,
                           elapsed_s=time.perf_counter() - started)


def truncate(text: str, limit: int = MAX_TOOL_RESULT_CHARS) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n...[truncated {len(text) - limit} characters]"


DEFAULT_REGISTRY = ToolRegistry()


@overload
def tool[F: ToolFunc](func: F, /) -> F: ...


@overload
def tool[F: ToolFunc](
    *, name: str | None = None, label: str = "", tags: Iterable[str] = (),
    registry: ToolRegistry | None = None,
) -> Callable[[F], F]: ...


def tool[F: ToolFunc](
    func: F | None = None,
    /,
    *,
    name: str | None = None,
    label: str = "",
    tags: Iterable[str] = (),
    registry: ToolRegistry | None = None,
) -> F | Callable[[F], F]:
    """Declare a tool. Usable bare (`@tool`) or with options (`@tool(label="Fetching {symbol}")`).

    The decorated function is returned unchanged (with `__tool_spec__` attached).
    """

    def decorate(fn: F) -> F:
        target: object = fn  # checked on a copy: the TypeGuard would narrow `fn` itself
        if not inspect.iscoroutinefunction(target):
            raise TypeError(f"tool {fn.__name__} must be async")
        tool_name = name or fn.__name__
        description, docs = _docstring_parts(fn.__doc__)
        hints = get_type_hints(fn)
        spec = ToolSpec(
            name=tool_name,
            description=description or tool_name,
            func=fn,
            args_model=_args_model(fn, tool_name, docs),
            result_type=hints.get("return"),
            label=label,
            tags=frozenset(tags),
        )
        (registry if registry is not None else DEFAULT_REGISTRY).add(spec)
        fn.__tool_spec__ = spec  # type: ignore[attr-defined]
        return fn

    if func is not None:
        return decorate(func)
    return decorate
