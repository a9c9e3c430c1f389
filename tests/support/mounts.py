"""The storage fault tests' mounts come from :mod:`reliability.storage`; where ``mount`` is refused (not root,
no mount namespace) the test is skipped, saying why."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from reliability.storage import MountRefused


@contextmanager
def refused_mount_skips() -> Iterator[None]:
    try:
        yield
    except MountRefused as refused:
        pytest.skip(str(refused))
