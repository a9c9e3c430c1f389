"""Field types shared by the demo apps: ISO dates and date-times kept as plain strings.

Dates stay strings (``2026-06-03``, ``2026-06-03T10:00``) so that records are JSON as-is and plays can
compare them as strings; the validators only reject values that are not real dates.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Annotated

from pydantic import AfterValidator, Field


def _check_date(value: str) -> str:
    date.fromisoformat(value)
    return value


def _check_datetime(value: str) -> str:
    datetime.fromisoformat(value)
    return value


IsoDate = Annotated[
    str,
    Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="A date like 2026-06-03"),
    AfterValidator(_check_date),
]
IsoDateTime = Annotated[
    str,
    Field(pattern=r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$", description="A local date and time like 2026-06-03T10:00"),
    AfterValidator(_check_datetime),
]


def minutes(moment: datetime) -> str:
    """``moment`` as an :data:`IsoDateTime` string (no seconds)."""
    return moment.isoformat(timespec="minutes")
