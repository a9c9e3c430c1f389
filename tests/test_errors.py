"""One error hierarchy: every error the workbench raises on purpose is a ``WorkbenchError`` whose class says
its exit code, so the CLI maps the base once."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

from workbench.errors import EXIT_BAD_INPUT, EXIT_INTERNAL, BadInput, UserError, WorkbenchError

ROOT = Path(__file__).resolve().parent.parent
OUTSIDE = {
    ("workbench.providers.failures", "ProviderError"): "pydantic-ai's ModelAPIError, so its retry and fallback see it",
    ("workbench.providers.failures", "StreamCutShort"): "pydantic-ai's ModelAPIError, so its retry and fallback see it",
    ("workbench.signals", "Stopped"): "a stop by a signal, not an error: its exit code is the signal's",
    ("workbench.queue.enqueue", "EnqueueInterrupted"): "a stop by a signal between two enqueued comparisons",
}


def exception_classes() -> list[tuple[str, str]]:
    """Every class in workbench/ (the demo apps included) that derives from an exception (by the names of its bases)."""
    found = []
    for package in ("workbench",):
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            module = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            for node in ast.parse(path.read_text(encoding="utf-8")).body:
                if isinstance(node, ast.ClassDef) and not node.name.startswith("_"):
                    bases = [ast.unparse(base) for base in node.bases]
                    if any(base.endswith(("Error", "Exception", "Input", "Unavailable", "Failed")) for base in bases):
                        found.append((module, node.name))
    return found


def test_every_error_of_the_workbench_has_the_one_base() -> None:
    classes = exception_classes()
    assert len(classes) >= 20
    for module, name in classes:
        if (module, name) in OUTSIDE:
            continue
        error = getattr(importlib.import_module(module), name)
        assert issubclass(error, WorkbenchError), f"{module}.{name}"


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("workbench.config", "ConfigError"),
        ("workbench.arm_spec", "ArmError"),
        ("workbench.models", "ModelSpecError"),
        ("workbench.bench.plan", "PlanError"),
        ("workbench.share.tracing", "TracingUnavailable"),
        ("workbench.apps.registry", "UnknownName"),
        ("workbench.runner", "AppUnavailable"),
    ],
)
def test_bad_arguments_are_bad_input_and_keep_their_builtin_base(module: str, name: str) -> None:
    """The Python API raises ``BadInput`` for bad arguments (its kinds are still ``ValueError``s)."""
    error = getattr(importlib.import_module(module), name)
    assert issubclass(error, BadInput) and issubclass(error, ValueError)
    assert error.exit_code == EXIT_BAD_INPUT


def test_exit_codes_by_kind() -> None:
    from workbench.commands.options import InputError
    from workbench.scripted.player import PlayFailed
    from workbench.sources.base import SourceError
    from workbench.store import StoreError, UnknownSession

    assert InputError.exit_code == SourceError.exit_code == UnknownSession.exit_code == EXIT_BAD_INPUT
    assert issubclass(UnknownSession, UserError) and issubclass(UnknownSession, LookupError)
    assert StoreError.exit_code == EXIT_BAD_INPUT and not issubclass(StoreError, UserError)
    assert PlayFailed.exit_code == WorkbenchError.exit_code == EXIT_INTERNAL
