"""`docs/settings.md` and `.env.example`, generated from the `Settings` model (issue 31 item 5).

Each setting is described once, in its `Field(description=...)` in `bot/settings.py`; this
module only renders them, a table per group (`GROUPS`). `make docs-settings`,
`bullpen settings doc` or `python -m bot.settings_doc` write both files; `--check` says which
one is out of date (tests/bot/test_settings_doc.py runs the same comparison).
"""

from __future__ import annotations

import argparse
import sys
import types
import typing
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import SecretStr
from pydantic.fields import FieldInfo

from bot.settings import GROUPS, ROLE_FIELDS, Settings, role_key
from core.llm.profiles import ROLES

DOC = Path("docs/settings.md")
EXAMPLE = Path(".env.example")
_GENERATED = "Generated from bot/settings.py by `make docs-settings`: edit the descriptions there."


def env_name(field: FieldInfo) -> str:
    alias = field.validation_alias
    choices = getattr(alias, "choices", None)
    assert choices, f"a setting without its environment name: {field}"
    return str(choices[0])


def _bare(annotation: Any) -> tuple[Any, bool]:
    """(the type without None, whether None is allowed)."""
    if isinstance(annotation, types.UnionType) or typing.get_origin(annotation) is typing.Union:
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return (args[0] if len(args) == 1 else annotation), True
    return annotation, False


def is_secret(field: FieldInfo) -> bool:
    return _bare(field.annotation)[0] is SecretStr


def type_text(field: FieldInfo) -> str:
    """The value a setting takes, in words, with its bounds."""
    bare, _ = _bare(field.annotation)
    if typing.get_origin(bare) is Literal:
        return "one of " + ", ".join(str(a) for a in typing.get_args(bare))
    words = {bool: "true/false", int: "integer", float: "number", str: "text", Path: "path",
             SecretStr: "secret"}
    text = words.get(bare, getattr(bare, "__name__", str(bare)))
    for bound in field.metadata:
        for attr, sign in (("ge", "≥"), ("gt", ">"), ("le", "≤"), ("lt", "<")):
            value = getattr(bound, attr, None)
            if value is not None:
                text += f", {sign} {value}"
    return text


def default_text(field: FieldInfo) -> str:
    """The default as it would be written in `.env` ('' for unset and for secrets)."""
    if is_secret(field) or field.default is None:
        return ""
    if isinstance(field.default, bool):
        return "true" if field.default else "false"
    return str(field.default)


def grouped() -> list[tuple[str, list[tuple[str, FieldInfo]]]]:
    """The settings in declaration order, cut into GROUPS."""
    starts = {first: title for title, first in GROUPS}
    out: list[tuple[str, list[tuple[str, FieldInfo]]]] = []
    for name, field in Settings.model_fields.items():
        if name in starts:
            out.append((starts[name], []))
        assert out, f"{name} comes before the first group of GROUPS"
        out[-1][1].append((name, field))
    return out


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("<", "&lt;").replace("\n", " ")


def render_markdown() -> str:
    lines = ["# Settings", "", f"<!-- {_GENERATED} -->", "",
             "Bullpen reads these from the environment or from a `.env` file in the working "
             "directory (the environment wins). Names are case-insensitive. `serve`, `chat`, "
             "`ask` and `db` refuse to start when a `BULLPEN_` key names no setting (the line "
             "names the closest one); an unknown key under a platform's prefix (`TELEGRAM_`, "
             "`DISCORD_`, `SLACK_`, `WECHAT_`, `WECOM_`, `WEB_`) is a warning. Secrets show no "
             "default. A commented `.env.example` lists the same settings.", ""]
    for title, fields in grouped():
        lines += [f"## {title}", "", "| Setting | Type | Default | Description |",
                  "|---|---|---|---|"]
        for _, field in fields:
            default = default_text(field)
            shown = f"`{default}`" if default else ("" if is_secret(field) else "unset")
            lines.append(f"| `{env_name(field)}` | {_cell(type_text(field))} | {_cell(shown)} "
                         f"| {_cell(field.description or '')} |")
        lines.append("")
    lines += ["## Per-role model overrides", "",
              "Each role can have its own model: `BULLPEN_LLM_<ROLE>_<FIELD>`, where ROLE is "
              "one of " + ", ".join(f"`{r.upper()}`" for r in ROLES) + ". A field left unset "
              "takes the default model's (`BULLPEN_LLM_*`); a bad value stops start-up with "
              "one line naming its key. For example `BULLPEN_LLM_JUDGE_MODEL=gpt-4o`.", "",
              "| Field | Value |", "|---|---|"]
    lines += [f"| `{field}` | {_cell(what)} |" for field, what in ROLE_FIELDS.items()]
    return "\n".join(lines) + "\n"


def render_env_example() -> str:
    lines = ["# Bullpen settings: every one, commented out with its default (blank: unset).",
             f"# {_GENERATED}",
             "# The same as tables: docs/settings.md. Uncomment and set what you need;",
             "# a BULLPEN_ key that names no setting stops start-up.", "",
             "# Per-role model overrides: BULLPEN_LLM_<ROLE>_<FIELD>, ROLE one of",
             "# " + ", ".join(r.upper() for r in ROLES) + ",",
             "# FIELD one of " + ", ".join(list(ROLE_FIELDS)[:4]) + ",",
             "# " + ", ".join(list(ROLE_FIELDS)[4:]) + ";",
             "# unset fields take the default model's. For example:",
             f"# {role_key('judge', 'MODEL')}=", ""]
    for title, fields in grouped():
        lines += [f"# --- {title} ---", ""]
        for _, field in fields:
            lines.append(f"# {field.description or ''}")
            lines.append(f"# {env_name(field)}={default_text(field)}")
        lines.append("")
    return "\n".join(lines).rstrip("\n") + "\n"


def outputs(root: Path) -> dict[Path, str]:
    return {root / DOC: render_markdown(), root / EXAMPLE: render_env_example()}


def stale(root: Path) -> list[Path]:
    """The generated files under `root` that differ from what the model renders."""
    return [path for path, text in outputs(root).items()
            if not path.exists() or path.read_text(encoding="utf-8") != text]


def write(root: Path) -> list[Path]:
    """Write both files under `root`; the ones that changed."""
    changed = stale(root)
    for path, text in outputs(root).items():
        if path in changed:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return changed


def run(*, root: Path, check: bool) -> int:
    if check:
        old = stale(root)
        for path in old:
            print(f"{path} is out of date with bot/settings.py: run make docs-settings",
                  file=sys.stderr)
        return 1 if old else 0
    for path in write(root):
        print(f"wrote {path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bot.settings_doc", description=__doc__)
    parser.add_argument("--root", type=Path, default=Path("."),
                        help="the checkout to write docs/settings.md and .env.example in")
    parser.add_argument("--check", action="store_true", help="only say which file is stale")
    args = parser.parse_args(argv)
    return run(root=args.root, check=args.check)


if __name__ == "__main__":
    sys.exit(main())
