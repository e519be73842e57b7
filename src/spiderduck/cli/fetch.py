"""`spiderduck fetch URL`: one hop through a running fetcher, as the scheduler sends it.

    spiderduck fetch URL [--fetcher HOST:PORT] [--timeout S] [--body [--body-limit BYTES]]

It calls FetcherService.Fetch on the fetcher at --fetcher, else `fetcher.listen`, and prints
what the fetcher answered: the outcome (Status, HTTP code, error), the fetcher and the address it
connected to, the timing (waiting for the domain's turn, deciding robots.txt, at the origin; and
the whole call from here), the body's length and the response headers. --body prints the body
after them, at most --body-limit bytes. One hop: a redirect is shown, not followed. The fetcher
is as polite as for any hop (the domain's pace, robots.txt), and fetches only domains whose
shard it holds (`spiderduck up` holds them all; otherwise ask the owner with --fetcher).

Exit status: 0 when the fetcher answered, whatever the origin did; 2 for a bad URL, option or
config; 1 when no answer came (fetcher unreachable or too slow, not the domain's owner, busy).
"""
from __future__ import annotations

import asyncio
import datetime
import sys
import time

import grpc

from spiderduck.cli.text import printable
from spiderduck.core import urls
from spiderduck.core.config import Settings, TlsSettings, parse_duration
from spiderduck.core.errors import ConfigError, SpiderDuckError
from spiderduck.rpc.server import MAX_MESSAGE_BYTES
from spiderduck.rpc.tls import open_channel
from spiderduck.v1 import fetcher_pb2 as pb, fetcher_pb2_grpc

BODY_LIMIT = 64 * 1024
_STATUS = pb.FetchResponse.DESCRIPTOR.fields_by_name["status"].enum_type
_HINTS = {
    grpc.StatusCode.UNAVAILABLE: "; start one (spiderduck up, spiderduck fetcher) or name it "
                                 "with --fetcher HOST:PORT",
    grpc.StatusCode.FAILED_PRECONDITION: "; ask the fetcher holding the domain's shard "
                                         "(--fetcher HOST:PORT)",
}


def _address(settings: Settings, args) -> str:
    address = args.fetcher or settings.fetcher.listen
    host, _, port = address.rpartition(":")
    if not (host and port.isdigit() and 0 < int(port) < 65536):
        source = "--fetcher" if args.fetcher else "fetcher.listen"
        raise SpiderDuckError(f"{source}: expected HOST:PORT, got {address!r}")
    return address


def _timeout(settings: Settings, args) -> float:
    if args.timeout is None:
        return settings.scheduler.hop_timeout
    try:
        seconds = parse_duration(args.timeout)
    except ConfigError as exc:
        raise SpiderDuckError(f"--timeout: {exc}") from exc
    if not seconds > 0:
        raise SpiderDuckError(f"--timeout must be a positive duration, got {args.timeout!r}")
    return seconds


async def _fetch(address: str, url: str, timeout: float, tls: TlsSettings) -> pb.FetchResponse:
    options = [("grpc.max_receive_message_length", MAX_MESSAGE_BYTES)]
    async with open_channel(address, tls, options=options) as channel:
        stub = fetcher_pb2_grpc.FetcherServiceStub(channel)
        return await stub.Fetch(pb.FetchRequest(url=url, deadline_seconds=timeout), timeout=timeout)


def _report(url: str, address: str, r: pb.FetchResponse, seconds: float) -> str:
    status = _STATUS.values_by_number.get(r.status)
    outcome = status.name if status is not None else str(r.status)
    lines = [f"url:      {url}",
             f"status:   {outcome}" + (f", HTTP {r.http_status}" if r.http_status else "")]
    if r.error:
        lines.append(f"error:    {printable(r.error)}")
    lines.append(f"fetcher:  {printable(r.fetcher_id) or '?'} at {address}")
    if r.remote_address:
        lines.append(f"remote:   {printable(r.remote_address)}")
    if r.fetched_at:
        at = datetime.datetime.fromtimestamp(r.fetched_at, datetime.timezone.utc)
        lines.append(f"started:  {at.isoformat(timespec='milliseconds').replace('+00:00', 'Z')}")
    t = r.timing
    lines.append(f"timing:   queued {t.queued_seconds:.3f}s  robots {t.robots_seconds:.3f}s  "
                 f"origin {t.origin_seconds:.3f}s  (call {seconds:.3f}s)")
    lines.append(f"body:     {len(r.body)} bytes"
                 + (", truncated at the fetcher's cap (fetcher.max_body_bytes)" if r.truncated else ""))
    if r.headers:
        lines.append("headers:")
        lines += [f"  {printable(h.name)}: {printable(h.value)}" for h in r.headers]
    return "\n".join(lines) + "\n"


def cmd_fetch(settings: Settings, args) -> int:
    url = urls.canonicalize(args.url)           # InvalidUrl: a usage error, exit 2
    address, timeout = _address(settings, args), _timeout(settings, args)
    if args.body_limit < 0:
        raise SpiderDuckError(f"--body-limit must be 0 or more, got {args.body_limit}")
    started = time.monotonic()
    try:
        response = asyncio.run(_fetch(address, url, timeout, settings.tls))
    except grpc.aio.AioRpcError as exc:
        code = exc.code()
        if code is grpc.StatusCode.INVALID_ARGUMENT:
            raise SpiderDuckError(f"fetcher at {address}: {exc.details()}") from exc
        reason = (f"no answer within {timeout:g}s (--timeout)" if code is grpc.StatusCode.DEADLINE_EXCEEDED
                  else f"{code.name}: {exc.details()}{_HINTS.get(code, '')}")
        print(f"spiderduck fetch: fetcher at {address}: {reason}", file=sys.stderr)
        return 1
    out = sys.stdout.buffer
    out.write(_report(url, address, response, time.monotonic() - started).encode("utf-8", "replace"))
    if args.body:
        shown = response.body[:args.body_limit]
        out.write(b"\n" + shown)
        out.flush()
        if len(shown) < len(response.body):
            print(f"\n(body cut at {len(shown)} of {len(response.body)} bytes: see --body-limit)",
                  file=sys.stderr)
    out.flush()
    return 0


def add_commands(sub, common) -> None:
    p = sub.add_parser("fetch", parents=[common],
                       help="one hop through a running fetcher: status, headers, timing")
    p.add_argument("url", metavar="URL", help="an http(s) URL; a redirect is shown, not followed")
    p.add_argument("--fetcher", metavar="HOST:PORT", help="the fetcher to ask (default fetcher.listen)")
    p.add_argument("--timeout", metavar="S",
                   help="how long to wait, queueing included (seconds, or 30s, 2m); "
                        "default scheduler.hop_timeout")
    p.add_argument("--body", action="store_true", help="print the body after the headers")
    p.add_argument("--body-limit", type=int, default=BODY_LIMIT, metavar="BYTES",
                   help=f"print at most this much of the body (default {BODY_LIMIT})")
    p.set_defaults(run=cmd_fetch)
