"""The real servers the tests run: one ``coloretto serve`` process, or several on one PostgreSQL
database and one real ``redis-server``, optionally behind a real nginx that runs ``docs/nginx.conf``.

Every test that needs one asks the ``servers`` fixture (``tests/conftest.py``; ``module_servers``
for one kept by a module's tests), which stops everything it started::

    server = servers.one(tmp_path, bot_delay=0.02, args=["--abandon-after", "0.001"])
    cluster = servers.cluster(tmp_path, database_url, size=2, nginx=True)
    a, b = cluster.servers
    a.url, b.url, cluster.nginx.url, cluster.lease_holder(game_id), a.kill()

PostgreSQL comes from ``COLORETTO_TEST_POSTGRESQL`` (``.ci/run`` sets it): without it the tests
are skipped, except under CI (``CI`` set), where they fail; so do they when ``redis-server`` or
nginx is missing there (CI installs both). Every cluster starts on an empty database: its tables
are dropped first (CI's database user may not create databases).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import httpx
import pytest
from sqlalchemy import Engine, MetaData, create_engine, text

from coloretto.tools.serve_process import ServeProcess as RealServer
from coloretto.web.storage.db import normalise_url
from tests.redis_server import RedisServer, free_port, require_redis_server

REPO = Path(__file__).resolve().parent.parent
#: the example configuration of docs/operator/deploy.md, run as it is with only its ports changed
NGINX_SITE = REPO / "docs" / "nginx.conf"
DEBIAN_NGINX = "/usr/sbin/nginx"
#: what docs/nginx.conf listens on and proxies to; the tests put free ports in their place
SITE_LISTEN = "listen 80;"
SITE_BACKENDS = ("server 127.0.0.1:8001", "server 127.0.0.1:8002")


def _missing(what: str, install: str) -> None:
    """Skip the test (fail it under CI, which must test against the real thing)."""
    if os.environ.get("CI"):
        pytest.fail(f"{what} is missing, and CI must test against a real one: {install}", pytrace=False)
    pytest.skip(f"{what} is missing ({install})")


def require_postgresql() -> str:
    url = os.environ.get("COLORETTO_TEST_POSTGRESQL")
    if not url:
        _missing(
            "COLORETTO_TEST_POSTGRESQL",
            "set it to postgresql://user:password@127.0.0.1:5432/database (.ci/run does)",
        )
    assert url is not None
    return url


def nginx_binary() -> str | None:
    """Debian's nginx, else the one on PATH, else None."""
    if os.access(DEBIAN_NGINX, os.X_OK):
        return DEBIAN_NGINX
    return shutil.which("nginx")


def require_nginx() -> str:
    binary = nginx_binary()
    if binary is None:
        _missing("nginx", "install Debian's nginx package (.ci/run does)")
    assert binary is not None
    return binary


def database_engine(url: str) -> Engine:
    return create_engine(normalise_url(url), pool_pre_ping=True)


def reset_database(engine: Engine) -> None:
    """An empty database: the servers' migrations make the tables again. Every table there
    is dropped, whatever it is (a table the migrations add later must not be left behind:
    migrating from scratch would find it and fail)."""
    found = MetaData()
    found.reflect(engine)
    with engine.begin() as connection:
        for table in found.sorted_tables:
            connection.execute(text(f'DROP TABLE IF EXISTS "{table.name}" CASCADE'))


def stored_moves(engine: Engine, game_id: str) -> list[str]:
    """The game's moves in the database, in order."""
    with engine.connect() as connection:
        rows = connection.execute(
            text("SELECT move FROM moves WHERE game_id = :id ORDER BY number"), {"id": game_id}
        ).all()
    return [str(row[0]) for row in rows]


def stored_seed(engine: Engine, game_id: str) -> int:
    with engine.connect() as connection:
        return int(
            connection.execute(text("SELECT seed FROM games WHERE id = :id"), {"id": game_id}).scalar_one()
        )


#: what every test server is started with (beside what a test asks for)
TEST_ARGS = (
    "--bot-workers", "1",  # a test's processes share the machine's two cores with the test itself
    "--hint-budget", "0.1",
    "--message-rate", "100",  # a test clicks faster than a person; the limit has its own tests
    "--requests-per-minute", "0",  # tests poll far faster than a person; tested in test_web_limits.py
)  # fmt: skip


class ServeProcess(RealServer):
    """``coloretto serve`` as every test runs it (:class:`coloretto.tools.serve_process.ServeProcess`,
    the one the load test runs too), with the tests' defaults: on PostgreSQL and Redis when they are
    given, else alone on SQLite in ``directory``."""

    def __init__(
        self,
        directory: Path,
        database_url: str | None = None,
        redis_url: str | None = None,
        *,
        bot_delay: float = 0.05,
        port: int = 0,
        args: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(
            directory,
            database_url=database_url,
            redis_url=redis_url,
            bot_delay=bot_delay,
            port=port,
            args=(*TEST_ARGS, *args),
            env=env,
            log_level="info",
        )


def nginx_site(listen_port: int, backend_ports: Sequence[int]) -> str:
    """docs/nginx.conf with the tests' ports in place of its own, and nothing else changed."""
    site = NGINX_SITE.read_text()
    assert site.count(SITE_LISTEN) == 1, f"docs/nginx.conf no longer has one {SITE_LISTEN!r}"
    site = site.replace(SITE_LISTEN, f"listen 127.0.0.1:{listen_port};")
    lines = site.splitlines(keepends=True)
    backends = [i for i, line in enumerate(lines) if line.strip().startswith(SITE_BACKENDS)]
    assert len(backends) == len(SITE_BACKENDS), f"docs/nginx.conf no longer lists {SITE_BACKENDS}"
    template = lines[backends[0]]
    lines[backends[0] : backends[-1] + 1] = [
        template.replace(SITE_BACKENDS[0], f"server 127.0.0.1:{port}") for port in backend_ports
    ]
    return "".join(lines)


class Nginx:
    """nginx in the foreground with a prefix and files of its own, running docs/nginx.conf."""

    def __init__(self, directory: Path, backend_ports: Sequence[int], binary: str | None = None) -> None:
        self.directory = directory
        self.backend_ports = tuple(backend_ports)
        self.binary = binary or require_nginx()
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.error_log = directory / "error.log"
        self.access_log = directory / "access.log"

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def ws_url(self) -> str:
        return f"ws://127.0.0.1:{self.port}"

    def _main_config(self) -> str:
        """What a distribution's /etc/nginx/nginx.conf does around a site, in this directory."""
        d = self.directory
        temp = "\n".join(
            f"    {kind}_temp_path {d}/{kind};"
            for kind in ("client_body", "proxy", "fastcgi", "uwsgi", "scgi")
        )
        # run by root, nginx's workers would be nobody, who cannot enter the test's directory
        user = "user root;\n" if os.geteuid() == 0 else ""
        return (
            f"{user}worker_processes 1;\ndaemon off;\npid {d}/nginx.pid;\nerror_log {self.error_log} info;\n"
            "events { worker_connections 256; }\n"
            f"http {{\n    access_log {self.access_log};\n{temp}\n    include {d}/coloretto.conf;\n}}\n"
        )

    def start(self, timeout: float = 20.0) -> Nginx:
        self.directory.mkdir(parents=True, exist_ok=True)
        for _ in range(5):
            self.port = free_port()
            (self.directory / "coloretto.conf").write_text(nginx_site(self.port, self.backend_ports))
            (self.directory / "nginx.conf").write_text(self._main_config())
            command = [
                self.binary, "-p", str(self.directory), "-c", str(self.directory / "nginx.conf"),
                "-e", str(self.error_log),
            ]  # fmt: skip
            self.proc = subprocess.Popen(
                command, stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True,
            )  # fmt: skip
            deadline = time.monotonic() + timeout
            while time.monotonic() < deadline:
                if self.proc.poll() is not None:
                    break
                with contextlib.suppress(httpx.HTTPError):
                    httpx.get(f"{self.url}/api/health", timeout=2.0)
                    return self
                time.sleep(0.05)  # polling a starting server: no event to wait on
            self.stop()
            if "Address already in use" not in self.log_tail():
                raise RuntimeError(f"nginx did not start; its log:\n{self.log_tail()}")
        raise RuntimeError(f"nginx found no free port; its log:\n{self.log_tail()}")

    def log_tail(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.error_log.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self) -> None:
        if self.proc is None:
            return
        proc, self.proc = self.proc, None
        if proc.poll() is None:
            proc.send_signal(signal.SIGQUIT)  # nginx's graceful stop; TERM is its fast one
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=10)
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)  # a worker left behind


class Cluster:
    """A redis-server, ``size`` server processes on an emptied PostgreSQL database, and nginx in
    front of them if asked; everything stopped on exit. ``server_args`` and ``server_env`` give
    each process (by index) more ``coloretto serve`` arguments and environment variables."""

    def __init__(
        self,
        directory: Path,
        database_url: str,
        *,
        size: int = 2,
        nginx: bool = False,
        bot_delay: float | Sequence[float] = 0.05,
        server_args: Mapping[int, Sequence[str]] | None = None,
        server_env: Mapping[int, Mapping[str, str]] | None = None,
    ) -> None:
        self.directory = directory
        self.database_url = database_url
        self.size = size
        self.want_nginx = nginx
        self.bot_delays = [bot_delay] * size if isinstance(bot_delay, int | float) else list(bot_delay)
        self.server_args = server_args or {}
        self.server_env = server_env or {}
        self.engine = database_engine(database_url)
        self.redis: RedisServer | None = None
        self.servers: list[ServeProcess] = []
        self.nginx: Nginx | None = None

    def start(self) -> Cluster:
        # what is missing skips the test (fails it under CI) before anything is changed or started
        redis_binary = require_redis_server()
        nginx_binary = require_nginx() if self.want_nginx else None
        reset_database(self.engine)
        self.redis = RedisServer(self.directory / "redis", redis_binary).start()
        self.servers = [
            ServeProcess(
                self.directory / f"server{i}",
                self.database_url,
                self.redis.url,
                bot_delay=self.bot_delays[i],
                args=self.server_args.get(i, ()),
                env=self.server_env.get(i),
            )
            for i in range(self.size)
        ]
        # launched together: they migrate the empty database at once (one waits on the other's lock)
        for server in self.servers:
            server.launch()
        for server in self.servers:
            server.wait_ready()
        if nginx_binary is not None:
            self.nginx = Nginx(self.directory / "nginx", [s.port for s in self.servers], nginx_binary).start()
        return self

    def stop(self) -> None:
        if self.nginx is not None:
            self.nginx.stop()
        for server in self.servers:
            server.stop()
        if self.redis is not None:
            self.redis.stop()
            self.redis = None
        self.engine.dispose()

    def lease_holder(self, game_id: str) -> str | None:
        """The process id in the game's Redis lease (None: no process runs it)."""
        import redis

        assert self.redis is not None
        client = redis.Redis.from_url(self.redis.url, socket_timeout=5)
        try:
            value = client.get(f"coloretto:lease:{game_id}")
        finally:
            client.close()
        return value.decode() if isinstance(value, bytes) else None

    def server_of(self, process_id: str) -> ServeProcess:
        (server,) = [s for s in self.servers if s.process_id == process_id]
        return server

    def __enter__(self) -> Cluster:
        if self.servers:  # started already (by the servers fixture)
            return self
        try:
            return self.start()
        except BaseException:
            self.stop()
            raise

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()


class Servers:
    """What the ``servers`` fixture hands a test: real servers, each stopped at the end."""

    def __init__(self, directories: pytest.TempPathFactory) -> None:
        self.directories = directories
        self.started: list[ServeProcess | Cluster] = []

    def one(self, directory: Path | None = None, **options: Any) -> ServeProcess:
        """One server, started: the options of :class:`ServeProcess`."""
        server = ServeProcess(directory or self.directories.mktemp("server"), **options)
        self.started.append(server)
        return server.start()

    def cluster(self, directory: Path | None, database_url: str, **options: Any) -> Cluster:
        """A Redis, server processes on PostgreSQL, nginx if asked: the options of :class:`Cluster`."""
        cluster = Cluster(directory or self.directories.mktemp("cluster"), database_url, **options)
        self.started.append(cluster)
        return cluster.start()

    def stop_all(self) -> None:
        for started in reversed(self.started):
            started.stop()
        self.started.clear()
