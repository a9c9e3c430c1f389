"""Sessions in the database: storing a comparison (whole, or row by row as its writer streams it), reading it
back (its listing, its events, the domain :class:`~workbench.session.Comparison`), and deleting it.

:class:`Sessions` is what :class:`workbench.store.Store` delegates to; every call goes through the
:class:`~workbench.store.database.Database`'s one write policy or read deadline.
"""

from __future__ import annotations

import bisect
import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, bindparam, func, insert, text
from sqlmodel import Session, col, delete, select, update

from workbench.events import ArmEvent, TurnStarted
from workbench.session import Comparison, fold_header, settle_stored
from workbench.store.codec import decode_event, encode_event
from workbench.store.convert import arm_outcomes, session_record
from workbench.store.database import Database, database_now, seconds_since
from workbench.store.fallback import EventTuple
from workbench.store.faults import StoreError, UnknownSession
from workbench.store.listing import DamagedRow, Listing, SessionInfo, list_sessions
from workbench.store.liveness import writer_alive
from workbench.store.schema import ArmRow, EventRow, SessionRow, SweepRunRow

log = logging.getLogger(__name__)

_EVENT_COLUMNS = (EventRow.arm, EventRow.seq, EventRow.t, EventRow.kind, EventRow.data)
_ARM_POSITION = (
    select(ArmRow.position)
    .where(col(ArmRow.session_id) == col(EventRow.session_id), col(ArmRow.name) == col(EventRow.arm))
    .scalar_subquery()
)
"""An event's arm's position, to order events by arm."""


def _turn_starts(session_id: str) -> Any:
    """A session's turn-started rows (arm, seq, data): one per arm and turn of a conversation, none for one prompt."""
    return (
        select(EventRow.arm, EventRow.seq, EventRow.data)
        .where(col(EventRow.session_id) == session_id, col(EventRow.kind) == TurnStarted.kind)
        .order_by(col(EventRow.arm), col(EventRow.seq))
    )


class _TurnIndex:
    """Which turn each event of a session belongs to, from its arm's turn-started rows: that of the last one at
    or before the event's seq, else 1 (a run of one prompt, or the first turn of a session continued with a
    follow-up, has no turn-started event)."""

    def __init__(self, starts: Iterable[tuple[str, int, str]]) -> None:
        self._by_arm: dict[str, tuple[list[int], list[int]]] = {}
        for arm, seq, data in sorted(starts, key=lambda row: (row[0], row[1])):
            try:
                turn = json.loads(data)["turn"]
            except (KeyError, TypeError, ValueError):
                continue  # a damaged row: it is skipped when decoded too
            if isinstance(turn, int) and not isinstance(turn, bool):
                seqs, turns = self._by_arm.setdefault(arm, ([], []))
                seqs.append(seq)
                turns.append(turn)

    def turn_of(self, arm: str, seq: int) -> int:
        found = self._by_arm.get(arm)
        if found is None:
            return 1
        seqs, turns = found
        index = bisect.bisect_right(seqs, seq) - 1
        return turns[index] if index >= 0 else 1


class Sessions:
    """The sessions, arms and events of one database."""

    def __init__(self, db: Database) -> None:
        self.db = db

    # -- writing ---------------------------------------------------------------------------------

    def save_all(
        self,
        comparisons: Iterable[Comparison],
        models: Mapping[str, str] | None = None,
        *,
        pid: int | None = None,
        host: str | None = None,
    ) -> None:
        """Store finished (or still running) comparisons whole, in one transaction."""
        now = datetime.now(UTC)
        records = []
        for comparison in comparisons:
            session, arms = session_record(comparison, models, pid=pid, host=host)  # modes: from the events
            session["status"] = comparison.status
            if comparison.status != "running":
                session["finished"] = now
            records.append((session, arm_outcomes(comparison, arms), [encode_event(e) for e in comparison.events]))

        def insert() -> None:
            with self.db.engine.begin() as connection:
                for session, arms, events in records:
                    _insert_rows(connection, session, arms)
                    _insert_events(connection, session["id"], events, skip_stored=False)

        self.db.write(insert, "storing sessions")

    def insert_session(
        self, session: Mapping[str, Any], arms: Sequence[Mapping[str, Any]], *, beat: bool = False
    ) -> bool:
        """Create a session's rows (``session_record``'s shape); False when it is already stored. With
        ``beat``, its writer (this process) is alive: the heartbeat starts."""

        def insert() -> bool:
            with self.db.engine.begin() as connection:
                if _stored(connection, session["id"]):
                    return False
                _insert_rows(connection, session, arms, beat=database_now(self.db.dialect) if beat else None)
                return True

        return self.db.write(insert, f"storing session {session['id']}")

    def write_batch(
        self,
        session: Mapping[str, Any],
        arms: Sequence[Mapping[str, Any]],
        events: Sequence[EventTuple],
        *,
        create: bool = False,
        reopen: bool = False,
        beat: bool = False,
        outcome: tuple[str, datetime, Sequence[Mapping[str, Any]]] | None = None,
    ) -> int:
        """One transaction of a live session's writer (SQLAlchemy Core: no ORM session on its path); the count
        of events added.

        With ``create``, the session's rows (``session_record``'s shape, with the heartbeat started) unless
        they are stored already, in which case ``reopen`` marks them running again (a follow-up turn of a
        stored session). Then ``events``; with ``beat``, the heartbeat; with ``outcome`` (status, finished,
        ``arm_outcomes``), how the session ended. A session created here with its ``outcome`` is inserted as
        it ended: a run shorter than a flush interval costs one transaction.

        A retry after a dropped connection skips the events already there: the commit may have reached the
        server before the connection was lost."""
        session_id = session["id"]
        attempts = 0

        def write() -> int:
            nonlocal attempts
            attempts += 1
            now = database_now(self.db.dialect)
            ended = outcome
            with self.db.engine.begin() as connection:
                if create and not _stored(connection, session_id):
                    if outcome is not None:  # inserted as it ended
                        status, finished, ended_arms = outcome
                        ended_session = {**session, "status": status, "finished": finished}
                        _insert_rows(connection, ended_session, ended_arms, beat=now)
                        ended = None
                    else:
                        _insert_rows(connection, session, arms, beat=now)
                elif create and reopen:
                    connection.execute(_reopen(session_id, now))
                elif beat:
                    connection.execute(self._beat_statement(session_id))
                added = _insert_events(connection, session_id, events, skip_stored=attempts > 1)
                if ended is not None:
                    _finish_rows(connection, session_id, *ended)
                return added

        return self.db.write(write, f"storing session {session_id}")

    def beat(self, session_id: str) -> None:
        """Refresh a running session's heartbeat: its writer is alive (see :func:`liveness.writer_alive`)."""

        def update() -> None:
            with self.db.engine.begin() as connection:
                connection.execute(self._beat_statement(session_id))

        self.db.write(update, f"refreshing session {session_id}")

    def _beat_statement(self, session_id: str) -> Any:
        return (
            update(SessionRow)
            .where(col(SessionRow.id) == session_id, col(SessionRow.status) == "running")
            .values(heartbeat=database_now(self.db.dialect))
        )

    def insert_events(
        self, session_id: str, events: Sequence[EventTuple], *, skip_stored: bool = False, beat: bool = False
    ) -> int:
        """Store encoded events (:func:`encode_event`) in one transaction; with ``skip_stored``, events
        already there (the same arm and seq) are left out, and the count is of those added. With ``beat``,
        the session's heartbeat is refreshed in the same transaction.

        A retry after a dropped connection skips the events already there: the commit may have reached
        the server before the connection was lost."""
        if not events:
            return 0
        attempts = 0

        def insert() -> int:
            nonlocal attempts
            attempts += 1
            with self.db.engine.begin() as connection:
                if beat:
                    connection.execute(self._beat_statement(session_id))
                return _insert_events(connection, session_id, events, skip_stored=skip_stored or attempts > 1)

        return self.db.write(insert, f"storing events of session {session_id}")

    def finish(self, session_id: str, status: str, finished: datetime, arms: Sequence[Mapping[str, Any]]) -> None:
        """Record how a session ended: its status, and each arm's (``session_record``'s arm shape)."""

        def update() -> None:
            with self.db.engine.begin() as connection:
                _finish_rows(connection, session_id, status, finished, arms)

        self.db.write(update, f"finishing session {session_id}")

    def delete(self, session_id: str) -> None:
        """Remove a session with its arms, events and the sweep runs that point at it."""

        def delete_rows() -> None:
            with Session(self.db.engine) as session:
                session.exec(delete(SweepRunRow).where(col(SweepRunRow.session_id) == session_id))
                session.exec(delete(EventRow).where(col(EventRow.session_id) == session_id))
                session.exec(delete(ArmRow).where(col(ArmRow.session_id) == session_id))
                session.exec(delete(SessionRow).where(col(SessionRow.id) == session_id))
                session.commit()

        self.db.write(delete_rows, f"deleting session {session_id}")

    # -- reading ---------------------------------------------------------------------------------

    def load(self, session_id: str) -> Comparison:
        """A stored session as a :class:`~workbench.session.Comparison` (works for runs that never finished)."""
        info = self.session(session_id)
        comparison = fold_header(info.header, self.events(session_id), [arm.name for arm in info.arms])
        return settle_stored(comparison, info.status)

    def resolve_id(self, prefix: str) -> str:
        """The full id of the session whose id starts with ``prefix`` (it must be unambiguous)."""
        return self.db.resolve_prefix(SessionRow.id, prefix, noun="session", listing="workbench sessions")

    def session(self, session_id: str) -> SessionInfo:
        found = self.listing(session_id=session_id).sessions
        if not found:
            raise UnknownSession(f"no session {session_id!r} in {self.db.name}")
        return found[0]

    def sessions(self, *, limit: int | None = None, search: str | None = None) -> list[SessionInfo]:
        """Sessions newest first; ``search`` matches app, model, task, prompt or id (case-insensitive)."""
        return self.listing(limit=limit, search=search).sessions

    def listing(
        self,
        *,
        limit: int | None = None,
        search: str | None = None,
        hide_bench: bool = False,
        session_id: str | None = None,
    ) -> Listing:
        """The one listing query (:func:`workbench.store.listing.list_sessions`, which the quick path runs on
        a bare ``sqlite3`` connection), on this engine's connection under the read deadline."""

        def read() -> Listing:
            with self.db.engine.connect() as connection:

                def execute(statement: str, parameters: Mapping[str, Any]) -> Sequence[Any]:
                    return connection.execute(text(statement), dict(parameters)).all()

                try:
                    return list_sessions(
                        execute, self.db.dialect, limit=limit, search=search, hide_bench=hide_bench,
                        session_id=session_id,
                    )  # fmt: skip
                except DamagedRow as error:  # a row edited by hand or by another program
                    message = f"{self.db.name} holds a damaged session row ({error}); repair or move it"
                    raise StoreError(message) from None

        return self.db.read(read)

    def count(self) -> int:
        def read() -> int:
            with Session(self.db.engine) as session:
                return session.exec(select(func.count()).select_from(SessionRow)).one()

        return self.db.read(read)

    def events(self, session_id: str) -> list[ArmEvent]:
        """Every stored event of a session, per arm (in the comparison's order) in seq order, each with its turn."""
        query = (
            select(*_EVENT_COLUMNS)
            .where(col(EventRow.session_id) == session_id)
            .order_by(_ARM_POSITION, col(EventRow.arm).desc(), col(EventRow.seq))
        )
        return self._decoded(session_id, query, whole=True)

    def events_by_time(self, session_id: str, *, offset: int = 0, limit: int | None = None) -> list[ArmEvent]:
        """A slice of a session's events in the order they happened (time, then arm order, then seq).

        A replay reads a first page to start at once and the rest behind it (decoding 10,000 events takes
        a few hundred milliseconds)."""
        query = (
            select(*_EVENT_COLUMNS)
            .where(col(EventRow.session_id) == session_id)
            .order_by(col(EventRow.t), _ARM_POSITION, col(EventRow.arm).desc(), col(EventRow.seq))
            .offset(offset)
            .limit(limit)
        )
        return self._decoded(session_id, query)

    def _decoded(self, session_id: str, query: Any, *, whole: bool = False) -> list[ArmEvent]:
        """The rows of ``query`` as events, each numbered with its turn. A row holds no turn of its own (the
        order of the events says it: a turn-started event opens each turn), so the turn comes from the arm's
        turn-started rows: those among the rows when they are the ``whole`` session, else read beside them
        (a page of a replay starts past its turns' first events)."""

        def read() -> tuple[list[Any], list[Any]]:
            with self.db.engine.connect() as connection:
                rows = list(connection.execute(query).all())
                if whole or not rows:
                    return rows, []
                return rows, list(connection.execute(_turn_starts(session_id)).all())

        rows, starts = self.db.read(read)
        if whole:
            starts = [(arm, seq, data) for arm, seq, _, kind, data in rows if kind == TurnStarted.kind]
        turns = _TurnIndex(starts)
        events = []
        for arm, seq, t, kind, data in rows:
            try:
                event = decode_event(arm, seq, t, kind, data)
            except (KeyError, ValueError, TypeError) as error:
                # A kind from a newer workbench, or a damaged row: the rest of the session stays readable.
                log.warning("skipped event %s #%s of session %s in %s: %r", arm, seq, session_id, self.db.name, error)
                continue
            turn = turns.turn_of(arm, seq)
            events.append(event if turn == event.turn else replace(event, turn=turn))
        return events

    def writer_alive(self, row: SessionRow) -> bool:
        """Whether a "running" row's writer lives (:func:`liveness.writer_alive`)."""

        def heartbeat_age_s() -> float | None:
            age = seconds_since(SessionRow.heartbeat, self.db.dialect)
            with Session(self.db.engine) as session:
                return session.exec(select(age).where(col(SessionRow.id) == row.id)).one()

        def last_event_t() -> float | None:
            with Session(self.db.engine) as session:
                return session.exec(select(func.max(EventRow.t)).where(col(EventRow.session_id) == row.id)).one()

        return writer_alive(row.pid, row.host, row.created, heartbeat_age_s, last_event_t)


# -- the writer's statements (SQLAlchemy Core on the tables: no ORM session on a live run's path) ---------

_SESSIONS: Any = SessionRow.__table__  # type: ignore[attr-defined]
_ARMS: Any = ArmRow.__table__  # type: ignore[attr-defined]
_EVENTS: Any = EventRow.__table__  # type: ignore[attr-defined]
_ARM_KEY = (_ARMS.c.session_id == bindparam("b_session"), _ARMS.c.name == bindparam("b_name"))


def _stored(connection: Connection, session_id: str) -> bool:
    return connection.execute(select(_SESSIONS.c.id).where(_SESSIONS.c.id == session_id)).first() is not None


def _insert_rows(
    connection: Connection, session: Mapping[str, Any], arms: Sequence[Mapping[str, Any]], *, beat: Any = None
) -> None:
    """A session's row (with ``beat``, SQL for the database's clock: its heartbeat) and its arm rows."""
    connection.execute(insert(_SESSIONS).values(**session, **({} if beat is None else {"heartbeat": beat})))
    if arms:
        connection.execute(insert(_ARMS), [{**arm, "session_id": session["id"]} for arm in arms])


def _reopen(session_id: str, now: Any) -> Any:
    """A stored session running again (a follow-up turn): no end yet, and its writer is alive."""
    return update(_SESSIONS).where(_SESSIONS.c.id == session_id).values(status="running", finished=None, heartbeat=now)


def _insert_events(connection: Connection, session_id: str, events: Sequence[EventTuple], *, skip_stored: bool) -> int:
    """Insert encoded events in the caller's transaction (with ``skip_stored``, not those already there)."""
    rows = events
    if skip_stored and rows:
        query = select(_EVENTS.c.arm, _EVENTS.c.seq).where(_EVENTS.c.session_id == session_id)
        stored = {(arm, seq) for arm, seq in connection.execute(query)}
        rows = [e for e in events if (e[0], e[1]) not in stored]
    if rows:
        connection.execute(
            insert(_EVENTS),
            [{"session_id": session_id, "arm": a, "seq": s, "t": t, "kind": k, "data": d} for a, s, t, k, d in rows],
        )
    return len(rows)


def _finish_rows(
    connection: Connection, session_id: str, status: str, finished: datetime | None, arms: Sequence[Mapping[str, Any]]
) -> None:
    """How a session ended, in the caller's transaction: its row's status and end, each named arm's fields."""
    connection.execute(update(_SESSIONS).where(_SESSIONS.c.id == session_id).values(status=status, finished=finished))
    by_fields: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for arm in arms:
        fields = tuple(key for key in arm if key != "name")
        values = {key: arm[key] for key in fields}
        by_fields.setdefault(fields, []).append({"b_session": session_id, "b_name": arm["name"], **values})
    for fields, rows in by_fields.items():
        if fields:
            statement = update(_ARMS).where(*_ARM_KEY).values({key: bindparam(key) for key in fields})
            connection.execute(statement, rows)
