"""Every setting is described once, in its Field, and the generated docs/settings.md and
.env.example say what the model says (issue 31 item 5). When this fails after a change to
bot/settings.py: `make docs-settings` and commit both files."""

from __future__ import annotations

from pathlib import Path

import pytest
from dotenv import dotenv_values

from bot import settings_doc
from bot.settings import GROUPS, Settings, env_names, load_settings

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.parametrize("name", list(Settings.model_fields))
def test_every_setting_has_a_description(name: str) -> None:
    description = Settings.model_fields[name].description or ""
    assert len(description) >= 20 and description.endswith((".", ")")), (
        f"{name}: give its Field a description= (what it does, its unit, when to change it)")


def test_the_groups_name_real_fields_in_declaration_order() -> None:
    names = list(Settings.model_fields)
    firsts = [first for _, first in GROUPS]
    assert firsts[0] == names[0] and firsts == sorted(firsts, key=names.index)


def test_docs_settings_md_is_up_to_date() -> None:
    assert (ROOT / "docs/settings.md").read_text(encoding="utf-8") == \
        settings_doc.render_markdown(), "docs/settings.md is stale: run make docs-settings"


def test_env_example_is_up_to_date() -> None:
    assert (ROOT / ".env.example").read_text(encoding="utf-8") == \
        settings_doc.render_env_example(), ".env.example is stale: run make docs-settings"


def test_every_setting_is_in_both_files_and_secrets_show_no_default() -> None:
    doc, example = settings_doc.render_markdown(), settings_doc.render_env_example()
    for name, field in Settings.model_fields.items():
        env = settings_doc.env_name(field)
        assert f"| `{env}` |" in doc and f"\n# {env}=" in example, name
        if settings_doc.is_secret(field):
            assert f"| `{env}` | secret |  |" in doc and f"\n# {env}=\n" in example


def test_the_example_uncommented_gives_the_defaults(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """`KEY=` (an unset setting) and `KEY=default` both load to the defaults."""
    lines = settings_doc.render_env_example().splitlines()
    keys = set(env_names())
    body = [line[2:] for line in lines if line.startswith("# ") and
            line[2:].partition("=")[0] in keys]
    assert len(body) == len(keys)
    (tmp_path / ".env").write_text("\n".join(body) + "\n")
    assert set(dotenv_values(tmp_path / ".env")) == keys
    for key in keys:
        monkeypatch.delenv(key, raising=False)
    monkeypatch.chdir(tmp_path)
    assert load_settings().model_dump() == Settings(_env_file=None).model_dump()


def test_the_check_names_a_stale_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert settings_doc.run(root=tmp_path, check=True) == 1
    assert settings_doc.run(root=tmp_path, check=False) == 0
    assert settings_doc.run(root=tmp_path, check=True) == 0
    (tmp_path / ".env.example").write_text("# old\n")
    capsys.readouterr()
    assert settings_doc.run(root=tmp_path, check=True) == 1
    err = capsys.readouterr().err.strip()
    assert err == f"{tmp_path / '.env.example'} is out of date with bot/settings.py: run make " \
                  "docs-settings"


def test_the_cli_writes_them(tmp_path: Path) -> None:
    from bot.cli import main

    assert main(["settings", "doc", "--root", str(tmp_path)]) == 0
    assert (tmp_path / "docs/settings.md").read_text() == settings_doc.render_markdown()
    assert main(["settings", "doc", "--check", "--root", str(tmp_path)]) == 0
