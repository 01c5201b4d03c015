"""Every key Bullpen might read is a known setting (issue 31 item 5): an unknown BULLPEN_ key
stops start-up with one line naming the closest setting, an unknown key under a platform's
shared prefix is a warning, and per-role overrides are validated with the rest."""

from __future__ import annotations

from pathlib import Path

import pytest

from bot.settings import env_names, load_settings, role_keys, unknown_keys


def test_a_misspelt_role_key_names_the_one_meant() -> None:
    got = unknown_keys({"BULLPEN_LLM_JUGDE_MODEL": "x", "PATH": "/bin"})
    assert got == [("BULLPEN_LLM_JUGDE_MODEL", "BULLPEN_LLM_JUGDE_MODEL is not a Bullpen "
                    "setting (did you mean BULLPEN_LLM_JUDGE_MODEL?)")]


def test_a_misspelt_security_switch_is_reported() -> None:
    [(_key, line)] = unknown_keys({"BULLPEN_SANDBOX_ISOLATON": "0"})
    assert line.endswith("(did you mean BULLPEN_SANDBOX_ISOLATION?)")


def test_known_keys_role_keys_and_other_programs_keys_pass() -> None:
    env = {name: "1" for name in env_names()} | {name: "1" for name in role_keys()}
    env |= {"HOME": "/root", "PYTHONPATH": "x", "BULLPEN_TEST_LLM": "1",
            "bullpen_data_dir": "d"}  # read case-insensitively, as pydantic-settings does
    assert unknown_keys(env) == []
    assert "BULLPEN_LLM_SCRIPT_WRITER_CONTEXT_TOKENS" in role_keys()


def test_a_platform_prefix_key_that_is_no_setting_is_reported() -> None:
    assert [k for k, _ in unknown_keys({"TELEGRAM_WEBHOOK_SECRT": "s", "WEB_PORT": "1"})] == [
        "TELEGRAM_WEBHOOK_SECRT"]


def test_dotenv_keys_are_checked_too(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / ".env").write_text("BULLPEN_ACESS=allowlist\n")
    assert [k for k, _ in unknown_keys()] == ["BULLPEN_ACESS"]


@pytest.mark.parametrize(("key", "value", "said"), [
    ("BULLPEN_LLM_JUDGE_CONTEXT_TOKENS", "lots", "a whole number of tokens"),
    ("BULLPEN_LLM_JUDGE_CONTEXT_TOKENS", "100", "at least 512"),
    ("BULLPEN_LLM_FAST_PRICE_IN_PER_MTOK", "-1", "a price in US dollars"),
])
def test_a_bad_role_value_is_an_error_naming_its_key(
        monkeypatch: pytest.MonkeyPatch, key: str, value: str, said: str) -> None:
    monkeypatch.setenv(key, value)
    with pytest.raises(ValueError, match=f"{key}='{value}': .*{said}"):
        load_settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="m")


def test_role_values_reach_the_profiles(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BULLPEN_LLM_JUDGE_CONTEXT_TOKENS", "65536")
    monkeypatch.setenv("BULLPEN_LLM_JUDGE_API_KEY", "judge-key")
    s = load_settings(llm_base_url="http://127.0.0.1:1/v1", llm_model="m")
    judge = s.role_profiles()["judge"]
    assert judge.context_tokens == 65536 and judge.api_key.get_secret_value() == "judge-key"
    assert judge.model == "m" and set(s.role_profiles()) == {"judge"}
