"""``coloretto loadtest --rolling-restart SECONDS``: under load, each server the test started gets
SIGTERM in turn (as ``systemctl restart`` sends it), is started again on the same port once it has
exited, and is waited for (its bot workers warm) before the next one's turn; SECONDS pass between
one server being back and the next one's SIGTERM. Meanwhile the clients do what a browser behind
nginx does: a table closed with 1012 (service restart) reconnects at once, and a server that
refuses connections while it restarts is skipped for the next one (with one server alone, tried
again until it is back). What is measured of each restart: the games the server ran (held the
lease of, read from Redis at the SIGTERM; alone, every game), and for each the time from the
SIGTERM until its client saw it move again; the process's exit status and how long it took to
exit and to serve again."""

from __future__ import annotations

import asyncio
import time

from coloretto.tools.loadtest.clients import Load, Restart
from coloretto.tools.loadtest.servers import StartedServer
from coloretto.tools.serve_process import START_TIMEOUT, ServerUsage

#: the longest a server may take to drain and exit after SIGTERM (a hang guard: the drain's own
#: timeout is 10 s, then uvicorn's 3 s for the requests in flight)
EXIT_TIMEOUT = 60.0


async def rolling_restart(
    load: Load,
    servers: list[StartedServer],
    usage_before: list[ServerUsage],
    every: float,
    redis_url: str | None,
) -> None:
    """Restart every server in turn, ``every`` seconds apart (counted from the last one being back)."""
    for server, before in zip(servers, usage_before, strict=True):
        await asyncio.sleep(every)
        if load.stopping:
            return
        await restart(load, server, before, redis_url)


async def restart(load: Load, server: StartedServer, before: ServerUsage, redis_url: str | None) -> Restart:
    playing = {t.game_id: t for t in load.tracks if t.status == "playing"}
    ids = list(playing)
    if redis_url is not None:  # the games whose lease it holds
        holders = await lease_holders(redis_url, ids)
        ids = [game_id for game_id in ids if holders.get(game_id) == server.process_id]
    progress = await asyncio.to_thread(stored_progress, server.data_url, ids)
    if server.cpu_base is None:
        server.cpu_base = before.cpu_seconds
    server.cpu_carried += server.usage().cpu_seconds - server.cpu_base
    record = Restart(
        url=server.url,
        pid=server.pid,
        at=time.monotonic(),
        at_s=time.monotonic() - load.window_start,
        games={game_id: max(progress.get(game_id, 0), playing[game_id].last_move) for game_id in ids},
    )
    # the clients stop sending it anything new the moment it is told to stop, as a proxy would once
    # its connections are refused
    load.restarting.add(server.url)
    server.terminate()
    load.restarts.append(record)
    for game_id in record.games:
        playing[game_id].restarts.append(record)
    try:
        record.exit_status = await asyncio.to_thread(server.wait_exit, EXIT_TIMEOUT)
        record.exited_after = time.monotonic() - record.at
        server.launch()  # the same port, the same database
        await server.wait_ready_async(START_TIMEOUT, workers=True)
        record.back_after = time.monotonic() - record.at
        server.restarted += 1
        server.cpu_base = server.usage().cpu_seconds
    finally:
        load.restarting.discard(server.url)
    return record


async def lease_holders(redis_url: str, ids: list[str]) -> dict[str, str | None]:
    """The process holding each game's lease (the keys ``coloretto serve`` keeps in Redis)."""
    from redis.asyncio import Redis

    from coloretto.web.runtime.cluster import RedisBus

    if not ids:
        return {}
    client = Redis.from_url(redis_url, socket_timeout=5.0)
    try:
        bus = RedisBus(redis_url)  # not started: only its key names
        keys = [bus.lease_key(game_id) for game_id in ids]
        values = await client.mget(keys)
    finally:
        await client.aclose()
    return {
        game_id: value.decode() if isinstance(value, bytes) else None for game_id, value in zip(ids, values)
    }


def stored_progress(url: str, ids: list[str]) -> dict[str, int]:
    """Each game's moves stored in the database now."""
    from sqlalchemy.orm import sessionmaker

    from coloretto.web.storage import games as store
    from coloretto.web.storage.db import create_db_engine

    if not ids:
        return {}
    engine = create_db_engine(url)
    try:
        with sessionmaker(engine)() as session:
            stored = store.stored_progress(session, ids)
    finally:
        engine.dispose()
    return {game_id: moves for game_id, (moves, _status) in stored.items()}
