"""Game reviews in the database: claimed by one process at a time, their progress, their result."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import update
from sqlalchemy.orm import Session

from coloretto.web.storage.rows import (
    ReviewRow,
)
from coloretto.web.table.live import aware


@dataclass(frozen=True)
class StoredReview:
    """A review's row: its progress while it runs, its JSON text once done."""

    game_id: str
    deal: int
    budget: int
    status: str  #: running, done, failed
    done: int
    total: int
    data: str | None
    error: str | None
    updated_at: datetime


def read_review(session: Session, game_id: str, deal: int, budget: int) -> StoredReview | None:
    row = session.get(ReviewRow, (game_id, deal, budget))
    if row is None:
        return None
    return StoredReview(
        row.game_id,
        row.deal,
        row.budget,
        row.status,
        row.done,
        row.total,
        row.data,
        row.error,
        aware(row.updated_at),
    )


def claim_review(
    session: Session, game_id: str, deal: int, budget: int, total: int, now: datetime, stale_before: datetime
) -> bool:
    """Mark a review running (from scratch) unless it is done, or running and updated since
    ``stale_before`` (another process works on it); True if this caller is to run it. The row is
    locked first (PostgreSQL), so that of two processes only one claims it; a row inserted by
    another process at the same moment is an IntegrityError, for the caller to read again."""
    row = session.get(ReviewRow, (game_id, deal, budget), with_for_update=True)
    if row is None:
        session.add(
            ReviewRow(
                game_id=game_id,
                deal=deal,
                budget=budget,
                status="running",
                done=0,
                total=total,
                data=None,
                error=None,
                updated_at=now,
            )
        )
        session.flush()
        return True
    if row.status == "done" or (row.status == "running" and aware(row.updated_at) > stale_before):
        return False
    row.status, row.done, row.total, row.updated_at = "running", 0, total, now
    row.data = row.error = None
    return True


def review_progress(session: Session, game_id: str, deal: int, budget: int, done: int, now: datetime) -> None:
    """A running review's progress (and that it is alive)."""
    session.execute(
        update(ReviewRow)
        .where(
            ReviewRow.game_id == game_id,
            ReviewRow.deal == deal,
            ReviewRow.budget == budget,
            ReviewRow.status == "running",
        )
        .values(done=done, updated_at=now)
    )


def end_review(
    session: Session,
    game_id: str,
    deal: int,
    budget: int,
    status: str,
    now: datetime,
    data: str | None = None,
    error: str | None = None,
    done: int | None = None,
) -> None:
    """A review done (``data``: its JSON) or failed (``error``: why)."""
    values: dict[str, Any] = {"status": status, "data": data, "error": error, "updated_at": now}
    if done is not None:
        values["done"] = done
    session.execute(
        update(ReviewRow)
        .where(ReviewRow.game_id == game_id, ReviewRow.deal == deal, ReviewRow.budget == budget)
        .values(**values)
    )


# ---------------------------------------------------------------- table features
