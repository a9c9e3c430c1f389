"""Settings: defaults < config file < WORKBENCH_* variables < flags, the config/locate commands, recent models."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

import workbench
import workbench.apps as apps
from workbench.arm_spec import ArmConfig, SandboxLimits
from workbench.cli import cli
from workbench.config import (
    ConfigError,
    Settings,
    load_settings,
    recent_models,
    remember_model,
    template,
)
from workbench.locations import APP_DIR_NAME, config_file, recent_models_file, resolve_db
from workbench.runner import BadInput, prepare
from workbench.scripted.model import PRICE_AS


def invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="workbench")
    if result.exception and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.stdout, result.stderr


def write_config(text: str) -> Path:
    path = config_file()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_the_config_file_lives_in_the_user_config_dir(isolated_user_dirs: Path) -> None:
    assert config_file() == isolated_user_dirs / "config" / APP_DIR_NAME / "config.toml"


def test_without_a_config_file_everything_is_the_engine_default() -> None:
    settings = load_settings()
    sources = {key: source for key, _, source, _ in settings.rows()}
    assert sources.pop("db") == "env WORKBENCH_DB"  # set by the test fixture
    assert set(sources.values()) == {"default"}
    assert settings.model == "scripted" and settings.price_as == PRICE_AS
    assert settings.page_size == apps.DEFAULT_PAGE_SIZE
    assert settings.arm_config() == ArmConfig()
    assert SandboxLimits(**settings.sandbox.model_dump()) == SandboxLimits()


def test_precedence_is_file_then_env_then_flag(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config('model = "scripted:paced"\nrequest_limit = 7\npage_size = 20\n[sandbox]\nmax_memory = 1000000\n')
    monkeypatch.setenv("WORKBENCH_REQUEST_LIMIT", "9")
    monkeypatch.setenv("WORKBENCH_SANDBOX__MAX_TOOL_CALLS", "5")
    settings = load_settings(request_limit=None, model="openai:gpt-5-mini")
    assert (settings.model, settings.source("model")) == ("openai:gpt-5-mini", "flag")
    assert (settings.request_limit, settings.source("request_limit")) == (9, "env WORKBENCH_REQUEST_LIMIT")
    assert (settings.page_size, settings.source("page_size")) == (20, "file")
    assert settings.sandbox.max_memory == 1_000_000 and settings.source("sandbox.max_memory") == "file"
    assert settings.sandbox.max_tool_calls == 5
    assert settings.source("sandbox.max_tool_calls") == "env WORKBENCH_SANDBOX__MAX_TOOL_CALLS"
    assert settings.source("timeout_s") == "default"


@pytest.mark.parametrize(
    ("text", "env", "expected"),
    [
        ("model = [", {}, "is not valid TOML"),
        ('modle = "scripted"\n', {}, "config file {path}: modle: unknown setting"),
        ("page_size = 0\n", {}, "config file {path}: page_size: must be between 1 and 10,000, got 0"),
        ("[sandbox]\nmax_memroy = 1\n", {}, "sandbox.max_memroy: unknown setting"),
        ("", {"WORKBENCH_TIMEOUT_S": "soon"}, "WORKBENCH_TIMEOUT_S: timeout_s: Input should be a valid number"),
    ],
)
def test_a_bad_setting_names_where_it_came_from(
    text: str, env: dict[str, str], expected: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_config(text)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(ConfigError) as raised:
        load_settings()
    assert expected.format(path=path) in str(raised.value)


def test_a_bad_config_is_a_one_line_error_for_every_command(db_path: Path) -> None:
    write_config("request_limit = -1\n")
    for args in (["run", "--task", "cart/remove-expensive"], ["config"], ["locate"], ["sessions"]):
        code, out, err = invoke(*args)
        assert code == 2, args
        assert err.startswith("workbench: error: config file ") and err.count("\n") == 1
        assert "request_limit" in err and out == ""
    with pytest.raises(BadInput, match="request_limit"):
        prepare(task="cart/remove-expensive")


def test_the_template_documents_every_setting_and_parses_at_the_defaults() -> None:
    text = template()
    assert tomllib.loads(text) == {"sandbox": {}, "queue": {}}
    uncommented = "\n".join(line[2:] if line.startswith("# ") and " = " in line else line for line in text.splitlines())
    values = tomllib.loads(re.sub(r'(?m)^\w+ = ""$', "", uncommented))  # unset by default: base_url, max_tokens, ...
    assert Settings(**values).model_dump() == Settings().model_dump()
    for key, _, _, description in load_settings().rows():
        assert description, f"{key} has no description"
        assert f"# {key.split('.')[-1]} = " in text


def test_config_init_writes_the_documented_file_once() -> None:
    code, out, _ = invoke("config", "--init")
    assert code == 0 and str(config_file()) in out
    assert config_file().read_text() == template() and load_settings().model == "scripted"
    code, _, err = invoke("config", "--init")
    assert code == 2 and "already exists" in err


def test_config_command_shows_each_value_and_its_source(monkeypatch: pytest.MonkeyPatch) -> None:
    path = write_config('price_as = "openai:gpt-4o"\n')
    monkeypatch.setenv("WORKBENCH_MODEL", "openai-chat:qwen3")
    code, out, _ = invoke("config", "--json")
    assert code == 0
    data = json.loads(out)
    assert data["config_file"] == str(path) and data["config_file_exists"] is True
    rows = {row["key"]: row for row in data["settings"]}
    assert rows["model"] | {"description": ""} == {
        "key": "model", "value": "openai-chat:qwen3", "source": "env WORKBENCH_MODEL", "description": ""
    }  # fmt: skip
    assert (rows["price_as"]["value"], rows["price_as"]["source"]) == ("openai:gpt-4o", "file")
    assert rows["retries"]["source"] == "default" and rows["retries"]["description"]
    code, out, _ = invoke("config")
    assert code == 0 and f"config file: {path}" in out
    assert "env WORKBENCH_MODEL" in out and "openai-chat:qwen3" in out and "sandbox.max_memory" in out


def test_run_follows_file_then_env_then_flag(monkeypatch: pytest.MonkeyPatch, db_path: Path) -> None:
    """The cart task needs 5 requests in the tool arm: a limit of 2 stops it, 50 does not."""
    write_config("request_limit = 50\n")
    args = ["run", "--task", "cart/remove-expensive", "--json", "--db", str(db_path)]

    def tool_arm(*extra: str) -> dict[str, object]:
        code, out, err = invoke(*args, *extra)
        assert code == 0, err
        return json.loads(out)["arms"][0]

    assert tool_arm()["status"] == "completed"
    monkeypatch.setenv("WORKBENCH_REQUEST_LIMIT", "2")
    stopped = tool_arm()
    assert stopped["status"] == "failed" and stopped["requests"] == 2
    assert str(stopped["error"]).startswith("stopped by the request limit")
    assert tool_arm("--request-limit", "50")["status"] == "completed"


def config_reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every opening of the config file from now on (the loader and pydantic-settings both open it by path)."""
    path, opened, real_open = config_file(), [], Path.open

    def counted(self: Path, *args: Any, **kwargs: Any) -> Any:
        if self == path:
            opened.append(self)
        return real_open(self, *args, **kwargs)

    monkeypatch.setattr(Path, "open", counted)
    return opened


@pytest.mark.parametrize(
    "args",
    [
        ["run", "--task", "cart/remove-expensive", "--json"],
        ["bench", "--task", "cart/remove-expensive", "--json"],
        ["sessions", "--json"],
    ],
    ids=["run", "bench", "sessions"],
)
def test_one_invocation_reads_the_config_file_once(monkeypatch: pytest.MonkeyPatch, args: list[str]) -> None:
    """The command loads its settings once and passes them down (the store, the runner, the sweep), and a load
    opens the file once. Before: ``run`` opened it 3 times, ``bench`` and ``sessions`` 6."""
    write_config("request_limit = 40\n[sandbox]\nmax_tool_calls = 900\n")
    opened = config_reads(monkeypatch)
    code, _, err = invoke(*args)
    assert code == 0, err
    assert len(opened) == 1


def test_a_worker_applies_a_job_s_flags_over_the_settings_it_loaded_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """``with_flags`` is what a fresh load with those flags gives (sources included), without reading the file."""
    write_config('request_limit = 40\nbase_url = "http://localhost:8000/v1"\n[sandbox]\nmax_tool_calls = 900\n'
                 '[arms.small]\nmode = "code"\neager = true\n[queue]\nheartbeat_s = 3\n')  # fmt: skip
    monkeypatch.setenv("WORKBENCH_SANDBOX__MAX_MEMORY", "123456789")
    loaded = load_settings()
    opened = config_reads(monkeypatch)
    flags = {"request_limit": 12, "stream": False, "max_tokens": None}
    applied = loaded.with_flags(**flags)
    assert opened == []
    again = load_settings(**flags)
    assert applied.model_dump() == again.model_dump() and applied.rows() == again.rows()
    assert loaded.request_limit == 40 and applied.source("request_limit") == "flag"
    with pytest.raises(ConfigError, match="request_limit"):
        loaded.with_flags(request_limit=0)


def test_prepare_takes_its_defaults_from_the_config(monkeypatch: pytest.MonkeyPatch) -> None:
    write_config('page_size = 7\nprice_as = "openai:gpt-4o"\n[sandbox]\nmax_tool_calls = 12\n')
    monkeypatch.setenv("WORKBENCH_MODEL", "scripted:paced")
    setup = prepare(task="cart/remove-expensive")
    assert setup.page_size == 7 and setup.config.sandbox.max_tool_calls == 12
    assert setup.models["tool"].label == "scripted:paced"
    assert setup.models["code"].pricer.label == "scripted model, priced as openai:gpt-4o"
    explicit = prepare(task="cart/remove-expensive", model="scripted", page_size=50, config=ArmConfig())
    assert explicit.page_size == 50 and explicit.config == ArmConfig() and explicit.model_label == "scripted"


def test_a_comparison_can_take_settings_read_once() -> None:
    write_config('price_as = "openai:gpt-4o"\n')
    settings = load_settings()
    write_config("not toml [")  # read again, the config would now fail
    comparison = workbench.compare_sync(task="cart/remove-expensive", items=10, db=False, settings=settings)
    assert {arm.summary.price_label for arm in comparison.arms.values()} == {"scripted model, priced as openai:gpt-4o"}
    with pytest.raises(ConfigError, match="not valid TOML"):
        workbench.compare_sync(task="cart/remove-expensive", items=10, db=False)


def test_every_entry_point_uses_the_database_the_config_names(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    configured = tmp_path / "from-config.db"
    write_config(f'db = "{configured}"\n')
    monkeypatch.delenv("WORKBENCH_DB")
    assert resolve_db(None, load_settings()).target == configured and resolve_db(None, load_settings()).source == "file"
    code, out, _ = invoke("run", "--task", "cart/cap-quantity", "--items", "5", "--json")
    assert code == 0 and configured.exists()
    session_id = json.loads(out)["session_id"]
    code, out, _ = invoke("sessions", "--json")
    assert code == 0 and [info["session_id"] for info in json.loads(out)] == [session_id]
    code, out, _ = invoke("show", session_id, "--json")
    assert code == 0 and json.loads(out)["session_id"] == session_id and json.loads(out)["stored"] is True
    code, out, _ = invoke("export", session_id)
    assert code == 0 and json.loads(out)["session_id"] == session_id
    comparison = workbench.compare_sync(task="cart/cap-quantity", items=5)
    assert comparison.stored and [s.id for s in workbench.open_store(None).sessions()] == [
        comparison.session_id,
        session_id,
    ]
    code, out, _ = invoke("locate", "--json")
    assert json.loads(out)["database"] == str(configured) and json.loads(out)["database_from"] == "file"

    # The variable beats the config file, and the flag beats both.
    monkeypatch.setenv("WORKBENCH_DB", str(tmp_path / "from-env.db"))
    assert resolve_db(None, load_settings()).target == tmp_path / "from-env.db"
    assert resolve_db(str(tmp_path / "flag.db"), load_settings()).target == tmp_path / "flag.db"
    code, out, _ = invoke("locate", "--json")
    assert json.loads(out)["database"] == str(tmp_path / "from-env.db")
    assert json.loads(out)["database_from"] == "env WORKBENCH_DB"
    code, out, _ = invoke("sessions", "--json", "--db", str(configured))
    assert code == 0 and len(json.loads(out)) == 2


def test_locate_prints_the_config_and_data_paths(isolated_user_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    code, out, _ = invoke("locate", "--json")
    places = json.loads(out)
    assert code == 0
    assert places["config_file"] == str(isolated_user_dirs / "config" / APP_DIR_NAME / "config.toml")
    assert places["config_file_exists"] is False
    assert places["data_dir"] == str(isolated_user_dirs / "data" / APP_DIR_NAME)
    other = isolated_user_dirs / "elsewhere.toml"
    other.write_text('model = "scripted:paced"\n')
    monkeypatch.setenv("WORKBENCH_CONFIG", str(other))
    code, out, _ = invoke("locate")
    assert code == 0 and str(other) in out and "data dir" in out and "database" in out
    assert load_settings().model == "scripted:paced"


def test_recent_models_are_remembered_newest_first_once_each() -> None:
    assert recent_models() == []
    for spec in ("scripted", "openai:gpt-5-mini", "scripted", " anthropic:claude-sonnet-4-5 ", ""):
        remember_model(spec)
    assert recent_models() == ["anthropic:claude-sonnet-4-5", "scripted", "openai:gpt-5-mini"]
    for number in range(20):
        remember_model(f"openai-chat:model-{number}")
    assert len(recent_models()) == 10 and recent_models(limit=2) == ["openai-chat:model-19", "openai-chat:model-18"]
    recent_models_file().write_text("not json")
    assert recent_models() == []
