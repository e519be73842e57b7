"""Commands that run roles: up, fetcher, scheduler, metadata-api."""
from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import secrets
import signal

import uvloop

from spiderduck.bus import credentials as nats_auth
from spiderduck.bus import permissions
from spiderduck.cli import logs, up_nats
from spiderduck.cli.nats_server import EmbeddedNats, free_port, port_open, reap_orphan, write_private
from spiderduck.cli.up_lock import UpLock
from spiderduck.core import metrics
from spiderduck.core import telemetry
from spiderduck.core.config import Settings
from spiderduck.core.errors import ConfigError
from spiderduck.fetcher.local import LocalTransport
from spiderduck.fetcher.main import run_fetcher
from spiderduck.metadata_api.main import run_metadata_api
from spiderduck.scheduler.fetcher_client import GrpcTransport
from spiderduck.scheduler.worker import run_scheduler
from spiderduck.core.frozen import evolve

NATS_PORT = 4222          # NATS's usual port: up's embedded server takes it when it is free
log = logging.getLogger("spiderduck")
CANCEL_WAIT = 2.0     # seconds cancelled roles get to unwind after shutdown_grace


async def run_metadata_api_and_web(settings: Settings, stop: asyncio.Event) -> None:
    """The metadata-api role as the command runs it: the metadata API, and with web.listen set
    the web UI beside it, from the same store and NATS (web.main), up once the API serves and
    stopped after it."""
    beside = None
    if settings.web.listen:
        from spiderduck.web.main import open_web      # the pages' modules load only when they are served
        beside = open_web
    await run_metadata_api(settings, stop, beside=beside)


async def run_scheduler_role(settings: Settings, stop: asyncio.Event) -> None:
    """The scheduler role of a deployment: its file:// content log is its own pod's, which the
    metadata API's Forget cannot reach, so it erases forgotten URLs from it itself."""
    await run_scheduler(settings, stop, erase_forgotten_content=True)


ROLES = {"fetcher": run_fetcher, "scheduler": run_scheduler_role, "metadata-api": run_metadata_api_and_web}
# The roles that need a NATS: with no nats_url set, the one of the `up` running on data_dir
# (cli.up_nats). The metadata-api uses NATS only where nats_url is set.
NEEDS_NATS = {"fetcher", "scheduler"}


async def run_roles(settings: Settings, roles, stop: asyncio.Event | None = None) -> None:
    """Run role coroutines until `stop` is set (or, without one, SIGINT/SIGTERM).

    Each role stops itself within settings.shutdown_grace: intake first, then what is in
    flight is finished or handed back. A role still running at the grace is cancelled. A
    second signal exits the process at once (children die with it: see nats_server).
    If one role fails, the others are stopped and its error is raised."""
    if stop is None:
        stop = asyncio.Event()
        _on_signals(stop)
    metrics.serve(settings.metrics_listen)
    tasks = [asyncio.create_task(role(settings, stop)) for role in roles]
    try:
        done, _ = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
        for task in done:
            if task.exception() is not None:
                raise task.exception()
    finally:
        stop.set()
        _, late = await asyncio.wait(tasks, timeout=settings.shutdown_grace)
        if late:
            log.warning("%d role(s) still stopping after shutdown_grace (%gs): cancelled",
                        len(late), settings.shutdown_grace)
            for task in late:
                task.cancel()
            await asyncio.wait(late, timeout=CANCEL_WAIT)
        for task in tasks:                 # retrieved, so none is logged as never retrieved
            if task.done() and not task.cancelled():
                task.exception()


def _on_signals(stop: asyncio.Event) -> None:
    """First SIGINT/SIGTERM: stop gracefully. Second: exit now, with 130 (as for Ctrl-C)."""
    loop = asyncio.get_running_loop()

    def handle(sig: signal.Signals) -> None:
        if stop.is_set():
            log.warning("%s again: exiting now", sig.name)
            logging.shutdown()
            os._exit(130)
        log.info("%s: stopping (at most shutdown_grace); %s again exits at once", sig.name, sig.name)
        stop.set()

    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(sig, handle, sig)


GC_YOUNG_THRESHOLD = 10_000   # allocations between young collections (Python's default: 700)


def serve(coro) -> None:
    """Run a service's coroutine on uvloop: bench/pipeline measured it 4% faster than asyncio's
    own loop under the same load (268 against 259 URLs/s, 265 against 256), main process CPU 5%
    lower.

    The garbage collector: what is loaded by now (modules, classes, tables) lives as long as the
    process, so it is frozen out of every later collection, and young collections run every
    GC_YOUNG_THRESHOLD allocations instead of 700 (a URL's objects mostly die young either way).
    Measured in `up` during a bench/pipeline burst: 4.3% of its CPU was the collector (296
    young, 27 middle and 2 full collections in 31 s, 87 ms each full one over 136,000 objects)."""
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])
    with asyncio.Runner(loop_factory=uvloop.new_event_loop) as runner:
        runner.run(coro)


def private_data_dir(settings: Settings) -> None:
    """Everything this process (and the nats-server and workers it starts) writes is its
    user's only: files 0600 and folders 0700 (umask 077), data_dir itself 0700."""
    os.umask(0o077)
    try:
        os.chmod(settings.data_dir, 0o700)
    except FileNotFoundError:
        pass                   # made when first needed, under that umask
    except OSError as exc:
        log.warning("cannot make %s private (0700): %s", settings.data_dir, exc.strerror)


def _one_role(name: str):
    def run(settings: Settings, args) -> int:
        private_data_dir(settings)
        logs.setup(settings.log_level)
        logs.log_settings(settings, name)
        if name in NEEDS_NATS:
            settings = up_nats.with_up_nats(settings, name)
        shutdown_traces = telemetry.setup(settings.telemetry, name)
        try:
            serve(run_roles(settings, [ROLES[name]]))
        finally:
            shutdown_traces()       # what is batched goes out before the process ends
        return 0
    return run


@contextlib.contextmanager
def embedded_nats(settings: Settings):
    """Yield settings whose nats_url names a running server, starting one if none is set.

    The server admits one user per role of spiderduck.bus.permissions, each with only its
    role's permissions and a password made here (cli.up_nats.password_path: data_dir/nats.password
    for `client`, what programs beside `up` use; data_dir/nats-users/<role> for each role; 0600,
    given to the server in a 0600 config file, not on its command line, where `ps` would show
    it). The settings yielded connect as `client`; run_up gives each role its own user. The
    caller holds data_dir's lock, so a nats-server still running on this store is an orphan of
    an `up` that was killed: it is stopped first, never run twice. Ours dies with this process,
    however it ends."""
    if settings.nats_url:
        yield settings
        return
    ignored = nats_auth.configured_credentials(settings) + [
        key for key in ("nats_password_file", "nats_tls_ca", "nats_tls_cert", "nats_tls_key")
        if getattr(settings, key)]
    if ignored:
        log.warning("%s: set, but nats_url is not: `up` starts its own NATS, which takes its own "
                    "users (%s) and no TLS", ", ".join(ignored), up_nats.password_path(settings.data_dir))
    store = os.path.join(settings.data_dir, "nats")
    orphan = reap_orphan(store)
    if orphan is not None:
        log.warning("stopped nats-server pid %d left running on %s by an earlier `up`", orphan, store)
    passwords = {role: secrets.token_urlsafe(32) for role in permissions.ROLES}
    written = [up_nats.password_path(settings.data_dir, role) for role in passwords]
    os.makedirs(os.path.dirname(written[-1]), mode=0o700, exist_ok=True)
    for path, password in zip(written, passwords.values()):
        write_private(path, password + "\n")
    marker = up_nats.url_path(settings.data_dir)
    server = None
    try:
        server = _started_nats(store, passwords)
        write_private(marker, server.url + "\n")
        cleared = {key: "" for key in ignored}        # ignored credentials: up's users take their place
        yield up_nats.as_user(evolve(settings, **{**cleared, "nats_url": server.url}),
                              permissions.CLIENT)
    finally:
        for path in (marker, *written):
            with contextlib.suppress(OSError):
                os.remove(path)
        with contextlib.suppress(OSError):
            os.rmdir(os.path.dirname(written[-1]))
        if server is not None:
            server.stop()


def _started_nats(store: str, users: dict[str, str]) -> EmbeddedNats:
    """`up`'s nats-server, started: on NATS's usual port when it is free (where a newcomer's
    tools look), else, or when another program takes that port first, on a free one. Never
    another program's server: EmbeddedNats.start knows its own by name."""
    if not port_open("127.0.0.1", NATS_PORT):
        server = EmbeddedNats(store, port=NATS_PORT, die_with_parent=True, users=users)
        try:
            return server.start()
        except ConfigError as exc:
            server.stop()
            log.info("NATS's usual port %d was taken as up started its own (%s): using a free port",
                     NATS_PORT, exc)
    server = EmbeddedNats(store, port=free_port(), die_with_parent=True, users=users)
    try:
        return server.start()
    except BaseException:
        server.stop()
        raise


def cmd_up(settings: Settings, args) -> int:
    private_data_dir(settings)
    logs.setup(settings.log_level)
    with UpLock(settings.data_dir), embedded_nats(settings) as settings:
        logs.log_settings(settings, "up")
        logs.warn_if_open(settings)
        shutdown_traces = telemetry.setup(settings.telemetry, "up")
        try:
            serve(run_up(settings))
        finally:
            shutdown_traces()
    return 0


async def run_up(settings: Settings, stop: asyncio.Event | None = None) -> None:
    """The roles of `spiderduck up`: one fetcher holding every shard, whose hops the scheduler
    hands over in-process (LocalTransport), and the metadata API with the web UI. On stop the
    fetcher outlives the scheduler's drain: the URLs in flight finish their fetches rather than
    fail them."""
    fetcher = asyncio.get_running_loop().create_future()
    transport = LocalTransport(settings.fetcher.listen, fetcher, GrpcTransport(settings.tls))
    drained = asyncio.Event()

    async def scheduler(settings: Settings, stop: asyncio.Event) -> None:
        try:
            await run_scheduler(settings, stop, static_routing=True, transport=transport)
        finally:
            drained.set()

    async def fetcher_role(settings: Settings, stop: asyncio.Event) -> None:
        await run_fetcher(settings, drained, hold_all_shards=True, on_ready=fetcher.set_result)

    await run_roles(settings, [as_role("fetcher", fetcher_role), as_role("metadata-api", run_metadata_api_and_web),
                               as_role("scheduler", scheduler)], stop)


def as_role(user: str, role):
    """`role` connecting to `up`'s NATS as its own user (cli.up_nats.as_user), when `up` started
    that NATS (with nats_url set, every role uses the credentials configured)."""
    async def run(settings: Settings, stop: asyncio.Event) -> None:
        if settings.nats_user == permissions.CLIENT and running_own_nats(settings):
            settings = up_nats.as_user(settings, user)
        await role(settings, stop)
    return run


def running_own_nats(settings: Settings) -> bool:
    return settings.nats_password_file == up_nats.password_path(settings.data_dir)


def add_commands(sub, common) -> None:
    p = sub.add_parser("up", parents=[common],
                       help="everything in one process on embedded defaults")
    p.set_defaults(run=cmd_up)
    for name in ROLES:
        p = sub.add_parser(name, parents=[common], help=f"run the {name} role alone")
        p.set_defaults(run=_one_role(name))
