"""Commands that talk to a running service: submit, get, watch, and resolve without --trace.

They go through the Python client (spiderduck.client), configured from the settings: the
metadata-api at metadata_api.listen, the service's NATS (nats_url, else the `up` running on
data_dir: cli.up_nats), its limits."""
from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
import time
from typing import Iterator

from google.protobuf import json_format

from spiderduck import client as sdclient
from spiderduck.bus import credentials as nats_auth
from spiderduck.bus import streams as bus
from spiderduck.cli.up_nats import with_up_nats
from spiderduck.core.config import Settings
from spiderduck.core.errors import ConfigError, SpiderDuckError
from spiderduck.rpc import tls as grpc_tls


class ServiceClient(sdclient.AsyncClient):
    """The library's client as the commands use it: the configured metadata-api, NATS and
    limits; NATS reached as the roles reach it (bus.connect), and SpiderDuck's streams made
    (as configured) before a first submission published straight (no metadata-api to queue
    it), so `submit` works before the service starts."""

    def __init__(self, settings: Settings, *, nats: bool = False, name: str = "spiderduck-cli",
                 token: str | None = None):
        tls = settings.tls
        grpc_tls.channel_credentials(tls)   # a key not of its certificate: one line naming the file
        if nats:
            settings = with_up_nats(settings)   # nats_url, else the NATS of a running `up`, as client
        super().__init__(settings.metadata_api.listen, settings.nats_url if nats else None,
                         max_urls=settings.metadata_api.max_urls,
                         resolve_timeout=settings.metadata_api.resolve_timeout + 5,
                         connect_timeout=settings.nats_connect_timeout,
                         queued_ttl=settings.streams.queued_ttl, source="cli", name=name,
                         token=token, tls_ca=tls.ca, tls_cert=tls.cert, tls_key=tls.key,
                         tls_server_name=tls.server_name)
        self.settings = settings

    async def _connect_nats(self):
        return await bus.connect(self.nats_url, name=self.name, timeout=self.connect_timeout,
                                 auth=nats_auth.nats_options(self.settings))

    async def _before_direct(self, js):
        s = self.settings
        await bus.ensure_streams(js, s.streams, replicas=s.nats_replicas)


TOKEN_ENV = "SPIDERDUCK_TOKEN"


def api_token(args) -> str | None:
    """The metadata-api's bearer token for this command: the first line of --token-file F,
    else the environment's SPIDERDUCK_TOKEN, else none. Never an argument of its own (it would
    show in `ps`)."""
    path = getattr(args, "token_file", None)
    if path:
        try:
            with open(path, encoding="utf-8") as fh:
                token = fh.readline().strip()
        except (OSError, UnicodeDecodeError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
            raise SpiderDuckError(f"--token-file: cannot read {path}: {reason}") from None
        if not token:
            raise SpiderDuckError(f"--token-file: {path} is empty")
        return token
    return os.environ.get(TOKEN_ENV, "").strip() or None


def add_token_option(parser) -> None:
    parser.add_argument("--token-file", metavar="F",
                        help=f"a file holding the metadata-api's bearer token (metadata_api.tokens_file); "
                             f"else ${TOKEN_ENV}")


def progress_bar(total: int, what: str, enabled: bool = True):
    """A tqdm bar on stderr when stderr is a terminal (and `enabled`); otherwise a silent one
    that only counts. Nothing of it ever goes to stdout."""
    from tqdm import tqdm
    return tqdm(total=total, unit=what, file=sys.stderr, dynamic_ncols=True, leave=False,
                disable=not (enabled and sys.stderr.isatty()))


def out_line(line: str, bar) -> None:
    """One line on stdout, with the bar (if shown) kept below it."""
    if bar.disable:
        print(line)
    else:
        bar.write(line, file=sys.stdout)


def read_url_lines(path: str) -> list[str]:
    """The URLs of a file ('-': stdin): one per line; blank lines and #comments skipped."""
    try:
        with (sys.stdin if path == "-" else open(path, encoding="utf-8")) as fh:
            lines = [line.strip() for line in fh]
    except OSError as exc:
        raise SpiderDuckError(f"cannot read {path}: {exc.strerror}") from exc
    except UnicodeDecodeError as exc:
        raise SpiderDuckError(f"cannot read {path}: not UTF-8 text ({exc.reason})") from exc
    return [line for line in lines if line and not line.startswith("#")]


@contextlib.contextmanager
def _as_command_errors(settings: Settings) -> Iterator[None]:
    """The client's errors as the commands' (one line, exit 2)."""
    try:
        yield
    except sdclient.Error as exc:
        if exc.code is not None:
            raise SpiderDuckError(_api_failed(settings.metadata_api.listen, exc)) from None
        raise SpiderDuckError(str(exc)) from None


def _api_failed(address: str, exc: sdclient.Error) -> str:
    hint = ("; start it (spiderduck up) or point at it with metadata_api.listen (a server with TLS "
            "on needs tls.ca, and tls.cert and tls.key unless its tls.client_auth is none)"
            if exc.code == "UNAVAILABLE" else
            "; give the token with --token-file F or SPIDERDUCK_TOKEN" if exc.code == "UNAUTHENTICATED" else "")
    return f"metadata-api at {address}: {exc.code}: {exc.details}{hint}"


# --- submit ---------------------------------------------------------------------------------------

async def _submit(settings: Settings, urls: list[str], tweets: list[str], refresh: bool,
                  progress: bool) -> int:
    total = len(urls) + len(tweets)
    with progress_bar(total, "url", progress) as bar:
        async with ServiceClient(settings, nats=True, name="spiderduck-submit") as client:
            return await client.submit(urls, tweets=tweets, refresh=refresh,
                                       on_progress=lambda done: bar.update(done - bar.n))


def cmd_submit(settings: Settings, args) -> int:
    urls = list(args.urls) + (read_url_lines(args.file) if args.file else [])
    tweets = [args.tweet] if args.tweet else []
    if not urls and not tweets:
        raise SpiderDuckError("nothing to submit: give URLs, --file F or --tweet TEXT")
    with _as_command_errors(settings):
        count = asyncio.run(_submit(settings, urls, tweets, args.refresh, progress=bool(args.file)))
    print(f"submitted {count}", file=sys.stderr)
    return 0


# --- get ------------------------------------------------------------------------------------------

_JSON_CONTROLS = {c: f"\\u{c:04x}" for c in range(0x7f, 0xa0)}


def json_line(row: dict) -> str:
    """One record (or not-found row) as `get` prints it: protobuf's JSON mapping, one line.
    json.dumps escapes C0 controls; DEL and the C1 controls (the 8-bit CSI 0x9b drives a
    terminal) are escaped too, which is still the same JSON (they only occur inside strings)."""
    return json.dumps(row, ensure_ascii=False).translate(_JSON_CONTROLS)


async def _get(settings: Settings, urls: list[str], progress: bool, token: str | None) -> int:
    """Print each URL's row as its call is answered; how many were not found."""
    missing = 0
    with progress_bar(len(urls), "url", progress) as bar:
        async with ServiceClient(settings, token=token) as client:
            async for lookup in client.lookups(urls):
                out_line(json_line(lookup.to_dict()), bar)
                missing += not lookup.found
                bar.update(1)
    sys.stdout.flush()
    return missing


def cmd_get(settings: Settings, args) -> int:
    """`get URL... [--file F]`: one JSON line per URL; exit 1 when any URL has no record (found
    false, pending or not), 0 when all were found."""
    urls = list(args.urls) + (read_url_lines(args.file) if args.file else [])
    if not urls:
        raise SpiderDuckError("nothing to get: give URLs or --file F")
    with _as_command_errors(settings):
        missing = asyncio.run(_get(settings, urls, progress=bool(args.file), token=api_token(args)))
    return 1 if missing else 0


# --- resolve (without --trace) --------------------------------------------------------------------

async def _resolve(settings: Settings, url: str, refresh: bool,
                   timeout: float | None, token: str | None) -> sdclient.Resolution:
    async with ServiceClient(settings, token=token) as client:
        return await client.resolve(url, timeout if timeout else None, refresh=refresh)


def cmd_resolve_remote(settings: Settings, url: str, *, refresh: bool, timeout: float | None,
                       token: str | None = None) -> int:
    """`resolve URL` without --trace: MetadataService.ResolveUrl on the running service. Prints
    the record as `get` does, and the resolution on stderr; exit 0 with an outcome, 2 for a URL
    it refuses, 1 when it could not answer (down, or still resolving past the deadline)."""
    address = settings.metadata_api.listen
    started = time.monotonic()
    try:
        answer = asyncio.run(_resolve(settings, url, refresh, timeout, token))
    except sdclient.InvalidUrl as exc:
        raise ConfigError(exc.details or str(exc)) from None
    except sdclient.StillResolving:
        message = (f"still resolving after {time.monotonic() - started:.1f}s; the crawl goes on and "
                   f"its record will appear (spiderduck get {url})")
        print(f"spiderduck resolve: {message}", file=sys.stderr)
        return 1
    except sdclient.Error as exc:
        message = _api_failed(address, exc) if exc.code is not None else str(exc)
        print(f"spiderduck resolve: {message}", file=sys.stderr)
        return 1
    sys.stdout.buffer.write((json_line(answer.to_dict()) + "\n").encode("utf-8", "replace"))
    sys.stdout.buffer.flush()
    print(f"{answer.resolution} {answer.status} in {time.monotonic() - started:.3f}s", file=sys.stderr)
    return 0


# --- watch ----------------------------------------------------------------------------------------

async def _watch(settings: Settings, count: int | None, timeout: float | None) -> int:
    seen = 0
    async with ServiceClient(settings, nats=True, name="spiderduck-watch") as client:
        async with client.events() as events:       # subscribed: nothing is missed from here on
            print(f"watching {bus.PROCESSED_SUBJECT}", file=sys.stderr, flush=True)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout):
                    async for event in events:
                        print(json.dumps(json_format.MessageToDict(event, preserving_proto_field_name=True),
                                         ensure_ascii=False), flush=True)
                        seen += 1
                        if count is not None and seen >= count:
                            break
    return 0 if count is None or seen >= count else 1


def cmd_watch(settings: Settings, args) -> int:
    with _as_command_errors(settings):
        return asyncio.run(_watch(settings, args.count, args.timeout))


def add_commands(sub, common) -> None:
    p = sub.add_parser("submit", parents=[common], help="publish URLs to spiderduck.urls.submit")
    p.add_argument("urls", nargs="*", metavar="URL")
    p.add_argument("--file", metavar="F", help="one URL per line ('-' for stdin)")
    p.add_argument("--tweet", metavar="TEXT", help="a tweet whose URLs to resolve")
    p.add_argument("--refresh", action="store_true",
                   help="re-fetch even a fresh record (at most once per min_refresh_interval)")
    p.set_defaults(run=cmd_submit)
    p = sub.add_parser("get", parents=[common], help="GetUrlMetadata; one JSON object per line")
    p.add_argument("urls", nargs="*", metavar="URL")
    p.add_argument("--file", metavar="F",
                   help="also the URLs of F, one per line ('-' for stdin; blank lines and #comments "
                        "skipped); exit 1 if any has no record")
    add_token_option(p)
    p.set_defaults(run=cmd_get)
    p = sub.add_parser("watch", parents=[common], help="print UrlProcessed events as JSON lines")
    p.add_argument("--count", type=int, metavar="N", help="stop after N events (exit 1 if fewer came)")
    p.add_argument("--timeout", type=float, metavar="S", help="stop after S seconds")
    p.set_defaults(run=cmd_watch)
