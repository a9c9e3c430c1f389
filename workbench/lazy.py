"""A package's names imported on first use (PEP 562): what its ``__getattr__`` is.

The workbench, its demo apps and its app sources each offer names whose modules are heavy (pydantic-ai,
SQLModel, the task catalog); a command or a first screen that uses none of them does not pay for them.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping
from typing import Any


def lazy_attributes(package: str, names: Mapping[str, str]) -> Callable[[str], Any]:
    """The ``__getattr__`` of ``package`` that imports each of ``names`` (name -> module) when first asked for."""

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
        setattr(sys.modules[package], name, value)
        return value

    return __getattr__
