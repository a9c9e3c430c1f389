"""Settings are validated where they are read: limits that cannot work, unparsable variables, a config path
that is a directory, and output to a full device are one line on stderr and exit 2, never "internal error"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from workbench.arm_spec import CODE_OPTIONS, SANDBOX_LIMITS, ArmError, ArmSpec, SandboxLimits
from workbench.cli import cli
from workbench.config import SANDBOX_RANGES, ArmSettings, config_path


def invoke(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, list(args), prog_name="workbench")
    return result.exit_code, result.stderr


def assert_one_line(code: int, stderr: str, *needles: str) -> None:
    assert code == 2, stderr
    assert stderr.count("\n") == 1 and stderr.startswith("workbench: error: "), stderr
    assert "internal error" not in stderr and "Traceback" not in stderr
    for needle in needles:
        assert needle in stderr, (needle, stderr)


IMPOSSIBLE = [
    ("SANDBOX__MAX_DURATION_SECS", "inf"),
    ("SANDBOX__MAX_DURATION_SECS", "nan"),
    ("SANDBOX__MAX_DURATION_SECS", "1e300"),
    ("SANDBOX__MAX_DURATION_SECS", "0.000001"),
    ("SANDBOX__MAX_MEMORY", str(2**64)),
    ("SANDBOX__MAX_MEMORY", "1000"),  # running `1 + 1` takes 42 KB
    ("SANDBOX__MAX_SUSPENSIONS", str(2**64)),
    ("SANDBOX__MAX_TOOL_CALLS", "0"),
    ("MAX_RESULT_BYTES", "10"),
    ("TIMEOUT_S", "inf"),
]
COMMANDS = [["config"], ["run", "--task", "cart/remove-expensive"], []]
"""``[]`` opens the TUI, which reads the settings before anything else."""


@pytest.mark.parametrize(("key", "value"), IMPOSSIBLE, ids=[f"{k}={v}" for k, v in IMPOSSIBLE])
@pytest.mark.parametrize("command", COMMANDS, ids=["config", "run", "tui"])
def test_a_limit_that_cannot_work_is_refused_naming_the_key_and_range(
    monkeypatch: pytest.MonkeyPatch, command: list[str], key: str, value: str
) -> None:
    monkeypatch.setenv(f"WORKBENCH_{key}", value)
    code, stderr = invoke(*command)
    name = key.lower().replace("__", ".")
    assert_one_line(code, stderr, f"WORKBENCH_{key}", name)
    if name.startswith("sandbox."):
        low, high = SANDBOX_RANGES[name.removeprefix("sandbox.")]
        assert f"must be between {low:,}" in stderr and f"{high:,}" in stderr


def test_the_accepted_ranges_hold_at_their_edges(monkeypatch: pytest.MonkeyPatch) -> None:
    for key, (low, high) in SANDBOX_RANGES.items():
        for value in (low, high):
            monkeypatch.setenv(f"WORKBENCH_SANDBOX__{key.upper()}", str(value))
            code, stderr = invoke("config", "--json")
            assert code == 0, stderr
        monkeypatch.delenv(f"WORKBENCH_SANDBOX__{key.upper()}")


def test_the_sandbox_limits_are_named_once() -> None:
    """SANDBOX_RANGES names the limits; the [sandbox] table, an [arms.NAME] table, an arm's options and the
    keywords CodeMode is given each take exactly those (a limit added to one place only fails here)."""
    limits = set(SANDBOX_LIMITS)
    assert limits == set(SANDBOX_RANGES) == set(SandboxLimits.model_fields)
    assert limits <= set(ArmSettings.model_fields) and limits <= set(CODE_OPTIONS)
    kwargs = SandboxLimits().to_codemode_kwargs()
    assert {*kwargs, *kwargs["resource_limits"]} - {"resource_limits"} == limits


def test_a_custom_arm_with_an_impossible_limit_is_refused() -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('[arms.fast]\nmode = "code"\nmax_duration_secs = 1e300\n', encoding="utf-8")
    code, stderr = invoke("run", "--task", "cart/remove-expensive", "--arms", "tool,fast")
    assert_one_line(code, stderr, "arms.fast.max_duration_secs", "must be between 0.01 and 86,400")
    with pytest.raises(ArmError, match="max_memory must be between"):
        ArmSpec("big", "code", options={"max_memory": 2**64})


def test_a_variable_holding_bad_json_is_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("WORKBENCH_SANDBOX", "{not json")
    for command in COMMANDS:
        code, stderr = invoke(*command)
        assert_one_line(code, stderr, "WORKBENCH_SANDBOX is not valid JSON")


def test_a_config_path_that_is_a_directory_is_one_line(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("WORKBENCH_CONFIG", str(tmp_path))
    for command in (["config"], ["run", "--task", "cart/remove-expensive"]):
        code, stderr = invoke(*command)
        assert_one_line(code, stderr, "is a directory")


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full on this system")
@pytest.mark.parametrize(
    "command", [["tasks"], ["tasks", "--json"], ["run", "--task", "cart/remove-expensive", "--json"]]
)
def test_output_to_a_full_device_is_one_line(command: list[str]) -> None:
    with open("/dev/full", "w") as full:
        done = subprocess.run(
            [sys.executable, "-m", "workbench", *command], stdout=full, stderr=subprocess.PIPE, text=True, timeout=300
        )
    assert_one_line(done.returncode, done.stderr, "cannot write the output: No space left on device")
