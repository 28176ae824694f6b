"""Game reviews and what-if lines of finished games, worked out in the server's worker processes.

A review (:mod:`coloretto.review`) is planned here, in a thread (the plan is one task per
analysed position), its tasks run in the bot workers a few at a time
(:meth:`coloretto.web.runtime.workers.BotPool.run_review`: other games' bots and hints keep their turn),
and the result is assembled and stored in the ``reviews`` table, with the game, under its game
of the match and its budget (``review_budget``). The row holds the review's progress while it
runs (written at most every :data:`PROGRESS_EVERY` seconds, and at least every
:data:`HEARTBEAT_EVERY`), so that every process of a cluster, and a restarted server, answer the
same; a review left ``running`` by a process that died (no update for :data:`STALE_AFTER`
seconds) is started again by the next request for it. When a review ends the game's watchers
here and in the other processes get ``{"type": "review", "game": N, "status": ...}``.

A what-if line replays the finished game to one of its positions, plays the moves given
(checked by the engine: a draw turns over the deal's real next card) and analyses the position
reached in a worker (``coloretto.analysis.analyze_position``: one search at the review's budget).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from dataclasses import dataclass
from datetime import timedelta
from functools import partial
from typing import Any

from sqlalchemy.exc import IntegrityError

from coloretto.game import IllegalActionError
from coloretto.record import RecordError
from coloretto.web.common.errors import ServiceError
from coloretto.web.common.i18n import N_, explained
from coloretto.web.common.i18n import gettext as _
from coloretto.web.common.schemas import Outlook, ReviewLine, WhatIf, WhatIfRequest
from coloretto.web.features.records import Records
from coloretto.web.runtime.games import Games
from coloretto.web.runtime.limits import Counters, LocalCounters, client_key
from coloretto.web.runtime.workers import PoolBusy, ReviewFailed
from coloretto.web.storage import reviews as store
from coloretto.web.table import views
from coloretto.web.table.live import ABANDONED_MESSAGE, EXPIRED_MESSAGE, LiveGame, log_entry, now_utc

log = logging.getLogger("coloretto.web")

#: seconds between two writes of a running review's progress, at most
PROGRESS_EVERY = 1.0
#: seconds between two writes of a running review's row, at least (it is alive)
HEARTBEAT_EVERY = 30.0
#: a review ``running`` whose row has not been written for this long is taken for dead
STALE_AFTER = 120.0
#: the seed of every review and what-if analysis: the same game gives the same figures
SEED = 0


@dataclass
class _Running:
    """A review this process runs."""

    done: int = 0
    total: int = 0
    task: asyncio.Task[None] | None = None

    def progress(self, done: int, total: int) -> None:
        self.done, self.total = done, total


def status_json(
    status: str, done: int = 0, total: int = 0, error: str | None = None, data: str | None = None
) -> str:
    """The body of ``GET /api/games/{id}/review`` (:class:`~coloretto.web.common.schemas.ReviewStatus`):
    the stored review's JSON text goes in as it is, unparsed."""
    head = json.dumps({"status": status, "done": done, "total": total, "error": error})
    return head[:-1] + ', "review": ' + (data if status == "done" and data else "null") + "}"


#: what a review left running by a process that died reads as
STALE_MESSAGE = "the server process that worked out this review stopped: ask for it again"


def _stale(stored: store.StoredReview) -> bool:
    """A review ``running`` whose row has not been written for :data:`STALE_AFTER` seconds."""
    return stored.status == "running" and (now_utc() - stored.updated_at).total_seconds() > STALE_AFTER


def _stored_json(stored: store.StoredReview) -> str:
    if _stale(stored):  # nobody works on it: it reads as failed, and asked again it starts anew
        return status_json("failed", stored.done, stored.total, STALE_MESSAGE)
    return status_json(stored.status, stored.done, stored.total, stored.error, stored.data)


class Reviews:
    """The reviews and what-if lines of one server process."""

    def __init__(self, games: Games, records: Records, limits: Counters | None = None) -> None:
        self.games = games
        self.records = records
        self.settings = games.settings
        #: who has a what-if being worked out (every process's, with Redis)
        self.limits = limits if limits is not None else LocalCounters()
        self._running: dict[tuple[str, int, int], _Running] = {}

    @property
    def budget(self) -> int:
        return self.settings.review_iterations()

    def running(self) -> int:
        """Reviews this process runs now."""
        return len(self._running)

    # ------------------------------------------------------------- reviews

    async def status(self, game_id: str, deal: int) -> str:
        """The review's status (and the review, once done) as JSON text."""
        key = (game_id, deal, self.budget)
        running = self._running.get(key)
        if running is not None:
            return status_json("running", running.done, running.total)
        stored = await self._read_review(key)
        if stored is not None:
            return _stored_json(stored)
        await self._finished(game_id, deal)  # an unknown or unfinished game is an error, not "none"
        return status_json("none")

    async def start(self, game_id: str, deal: int) -> str:
        """Start the review of a finished game, unless it is done or running (here or in another
        process); its status as JSON text."""
        key = (game_id, deal, self.budget)
        running = self._running.get(key)
        if running is not None:
            return status_json("running", running.done, running.total)
        stored = await self._read_review(key)
        if stored is not None and not self._may_start(stored):
            return _stored_json(stored)
        live = await self._finished(game_id, deal)
        running = self._running.get(key)  # asked twice at once: the first one runs it
        if running is not None:
            return status_json("running", running.done, running.total)
        limit = self.settings.max_running_reviews
        if len(self._running) >= limit:
            raise ServiceError(
                "busy",
                _(
                    "this server is already reviewing {reviews} games (at most {limit} at once): "
                    "ask again in a moment",
                    reviews=len(self._running),
                    limit=limit,
                ),
                429,
                retry_after=5.0,
            )
        running = self._running[key] = _Running()
        try:
            plan = await self._plan(live, deal, key[2])
            running.total = len(plan.tasks)
            now = now_utc()
            try:
                claimed = await self.games.writer.write(
                    partial(
                        store.claim_review,
                        game_id=game_id,
                        deal=deal,
                        budget=key[2],
                        total=running.total,
                        now=now,
                        stale_before=now - timedelta(seconds=STALE_AFTER),
                    )
                )
            except IntegrityError:  # another process inserted the row first: it runs it
                claimed = False
        except BaseException:
            del self._running[key]
            raise
        if not claimed:
            del self._running[key]
            stored = await self._read_review(key)
            return status_json("none") if stored is None else _stored_json(stored)
        running.task = asyncio.get_running_loop().create_task(
            self._run(key, plan, running), name=f"review {game_id} game {deal}"
        )
        return status_json("running", running.done, running.total)

    @staticmethod
    def _may_start(stored: store.StoredReview) -> bool:
        """A review may be started again when it failed or its process died."""
        return stored.status == "failed" or _stale(stored)

    async def _read_review(self, key: tuple[str, int, int]) -> store.StoredReview | None:
        game_id, deal, budget = key
        stored: store.StoredReview | None = await self.games.read(
            partial(store.read_review, game_id=game_id, deal=deal, budget=budget)
        )
        return stored

    async def _plan(self, live: LiveGame, deal: int, budget: int) -> Any:
        record = await self.records.record(live.id, deal)

        def plan() -> Any:
            from coloretto.review import plan_review

            return plan_review(record, budget=budget, seed=SEED)

        try:
            return await asyncio.to_thread(plan)
        except RecordError as exc:  # the server's own record: it should always replay
            log.exception("game %s: the record of game %d cannot be reviewed", live.id, deal)
            raise ServiceError(
                "unreadable", _("this game cannot be reviewed: {problem}", problem=exc), 500
            ) from exc

    async def _run(self, key: tuple[str, int, int], plan: Any, running: _Running) -> None:
        game_id, deal, budget = key
        reporter = asyncio.get_running_loop().create_task(self._report(key, running))
        data: str | None = None
        error: str | None = None
        try:
            review = await self.games.pool().run_review(f"review:{game_id}:{deal}", plan, running.progress)
            data = await asyncio.to_thread(review.to_json)
        except asyncio.CancelledError:
            # stored, and shown to whoever asks in their own language: the pages translate it
            error = N_("the server stopped while it worked out this review: ask for it again")
        except Exception as exc:
            log.exception("game %s: the review of game %d failed", game_id, deal)
            error = str(exc) if isinstance(exc, ReviewFailed) else f"the review failed: {exc!r}"
        finally:
            reporter.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reporter
        status = "done" if error is None else "failed"
        try:
            await self.games.writer.write(
                partial(
                    store.end_review,
                    game_id=game_id,
                    deal=deal,
                    budget=budget,
                    status=status,
                    now=now_utc(),
                    data=data,
                    error=error,
                    done=running.total if status == "done" else running.done,
                )
            )
        except Exception:
            log.exception("game %s: the review of game %d could not be stored", game_id, deal)
            status = "failed"
        finally:
            self._running.pop(key, None)
        self._announce(game_id, {"type": "review", "game": deal, "status": status})

    async def _report(self, key: tuple[str, int, int], running: _Running) -> None:
        """Write the progress of a running review now and then (and that it is alive)."""
        game_id, deal, budget = key
        written, at = running.done, time.monotonic()
        while True:
            await asyncio.sleep(PROGRESS_EVERY)
            if running.done == written and time.monotonic() - at < HEARTBEAT_EVERY:
                continue
            done = running.done
            try:
                await self.games.writer.write(
                    partial(
                        store.review_progress,
                        game_id=game_id,
                        deal=deal,
                        budget=budget,
                        done=done,
                        now=now_utc(),
                    )
                )
            except Exception:
                log.exception("game %s: the progress of a review could not be stored", game_id)
            written, at = done, time.monotonic()

    def _announce(self, game_id: str, message: dict[str, Any]) -> None:
        """Tell the game's watchers, here and (through the bus) in the other processes."""
        live = self.games.live.get(game_id)
        if live is not None:
            self.games.fanout.message(live, message)
        self.games.publish(game_id, message)

    async def stop(self) -> None:
        """Stop the reviews running here (each stored as failed: asked again, it starts anew)."""
        tasks = [r.task for r in self._running.values() if r.task is not None]
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    async def _finished(self, game_id: str, deal: int) -> LiveGame:
        live = await self.games.get_live(game_id)
        if live.status == "expired":
            raise ServiceError(
                "not_finished", _("{reason}: there is nothing to review", reason=_(EXPIRED_MESSAGE)), 409
            )
        if live.status == "abandoned":
            raise ServiceError(
                "not_finished", _("{reason}: there is nothing to review", reason=_(ABANDONED_MESSAGE)), 409
            )
        if live.status != "finished":
            raise ServiceError(
                "not_finished", _("a game can be reviewed once it (the whole match) is over"), 409
            )
        if not 1 <= deal <= len(live.games):
            raise ServiceError(
                "not_found", _("this match has games 1 to {games}", games=len(live.games)), 404
            )
        return live

    # ------------------------------------------------------------- what if

    async def whatif(self, game_id: str, request: WhatIfRequest, client: str) -> WhatIf:
        """From position ``upto`` of a finished game's replay, play ``moves`` and analyse where
        they lead."""
        deal = request.game
        live = await self._finished(game_id, deal)
        game = live.games[deal - 1].copy()
        length = len(game)
        if request.upto > length:
            raise ServiceError(
                "bad_upto",
                _(
                    "position {position} is past the end: this game has positions 0 to {last}",
                    position=request.upto,
                    last=length,
                ),
            )
        for _undone in range(length - request.upto):
            game.pop()
        for i, text in enumerate(request.moves, 1):
            where = _("move {number} of the line ({move})", number=i, move=repr(text))
            if game.is_over:
                raise ServiceError("bad_move", _("{where}: the game is over before it", where=where))
            try:
                action = game.parse_action(text.strip())
            except ValueError as exc:  # NotationError
                raise ServiceError(
                    "bad_move", _("{where} is not a move: {problem}", where=where, problem=explained(exc))
                ) from None
            try:
                game.push(action)
            except IllegalActionError as exc:
                raise ServiceError(
                    "bad_move", _("{where} is illegal: {problem}", where=where, problem=explained(exc))
                ) from None
        edition = live.rules.edition
        event = game.last_event()
        earlier = sum(len(g) for g in live.games[: deal - 1])
        entry = None if event is None else log_entry(event, earlier, deal, live.names(), edition)
        frame = views.replay_frame(game, entry)
        legal = [action.notation(edition) for action in game.legal_actions]
        if game.is_over:
            winners = game.winners()
            outcome = Outlook(
                win=[1.0 / len(winners) if seat in winners else 0.0 for seat in range(game.players)],
                score=[float(b.total) for b in game.scores()],
            )
            return WhatIf(frame=frame, legal=legal, lines=[], position=outcome)
        asking = client_key("whatif", client)
        # held at most as long as a worker may take over the job, should this process die
        if not await self.limits.hold(asking, self.settings.worker_job_timeout):
            raise ServiceError(
                "busy", _("your last what-if line is still being worked out"), 429, retry_after=1.0
            )
        seat = game.to_move if game.to_move is not None else 0
        try:
            values, value = await self.games.pool().whatif(game_id, game.observation(seat), self.budget, SEED)
        except PoolBusy as exc:
            raise ServiceError("busy", str(exc), 429, retry_after=2.0) from None
        finally:
            await self.limits.let_go(asking)
        allowed = set(game.legal_actions)
        lines = [
            ReviewLine(
                action=v.action.notation(edition),
                win=round(float(v.win_probability), 3),
                score=round(float(v.expected_score), 2),
                simulations=int(v.simulations),
                win_share=round(float(v.win_share), 3),
            )
            for v in values
            if v.action in allowed  # never a move the rules forbid, whatever the analysis answers
        ]
        position = Outlook(
            win=[round(w, 3) for w in value.win_probabilities],
            score=[round(s, 2) for s in value.expected_scores],
        )
        return WhatIf(frame=frame, legal=legal, lines=lines, position=position)
