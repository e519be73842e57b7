#!/usr/bin/env python3
"""Resolve one URL now, then submit others and watch the service process them.

    bin/spiderduck up                                   # in another terminal
    .venv/bin/python examples/resolve_and_watch.py https://example.com/ https://example.org/a

The first URL is resolved with ResolveUrl (crawled unless a fresh record is stored); the others
are submitted to NATS, and their UrlProcessed events are printed as they come, one line each:
RESOLUTION STATUS URL 'title'. The NATS is --nats, else the one of the `spiderduck up` running
in this directory (var/nats.url), as the user `client` with the password `up` keeps in
var/nats.password (--nats-user, --nats-password-file; --nats-token-file for a NATS that takes a
token). Uses AsyncClient, the asyncio client.
"""
from __future__ import annotations

import argparse
import asyncio
import pathlib
import sys

from spiderduck.client import AsyncClient, Error
from spiderduck.v1 import events_pb2, metadata_pb2


def local_nats(data_dir: str = "var") -> str | None:
    """The NATS of the `spiderduck up` running on data_dir, if any."""
    marker = pathlib.Path(data_dir, "nats.url")
    return marker.read_text().strip() if marker.exists() else None


def local_password_file(data_dir: str = "var") -> str | None:
    """The file holding the password of the user `client` of that `up`'s NATS, if any."""
    password = pathlib.Path(data_dir, "nats.password")
    return str(password) if password.exists() else None


async def run(args: argparse.Namespace) -> int:
    first, others = args.urls[0], args.urls[1:]
    async with AsyncClient(args.metadata, nats_url=args.nats,
                           nats_token_file=args.nats_token_file, nats_user=args.nats_user,
                           nats_password_file=args.nats_password_file) as spiderduck:
        answer = await spiderduck.resolve(first, timeout=args.timeout)
        print(f"{answer.resolution} {answer.status} {first} {answer.record.title!r}", flush=True)
        if not others:
            return 0
        waiting = set(others)
        async with spiderduck.events() as events:          # subscribed: no event is missed
            await spiderduck.submit(others, source="examples/resolve_and_watch")
            try:
                async with asyncio.timeout(args.timeout):
                    async for event in events:
                        if event.url not in waiting:
                            continue                        # someone else's URL
                        waiting.discard(event.url)
                        print(f"{events_pb2.Resolution.Name(event.resolution)} "
                              f"{metadata_pb2.Status.Name(event.status)} {event.url} "
                              f"{event.metadata.title!r}", flush=True)
                        if not waiting:
                            break
            except TimeoutError:
                print(f"no event within {args.timeout:g}s for: {' '.join(sorted(waiting))}",
                      file=sys.stderr)
                return 1
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("urls", nargs="+", metavar="URL", help="the URL to resolve, then URLs to submit")
    parser.add_argument("--metadata", default="127.0.0.1:50051",
                        help="the metadata-api's address (metadata_api.listen)")
    parser.add_argument("--nats", default=local_nats(),
                        help="the service's NATS (default: ./var/nats.url of a running `up`)")
    parser.add_argument("--nats-user", help="NATS user (default: client, with the default --nats)")
    parser.add_argument("--nats-password-file", metavar="F",
                        help="a file holding that user's password (default: ./var/nats.password "
                             "with the default --nats)")
    parser.add_argument("--nats-token-file", metavar="F", help="a file holding a NATS token")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each step")
    args = parser.parse_args()
    if args.nats_user is None and args.nats_token_file is None and args.nats == local_nats():
        args.nats_password_file = local_password_file()
        args.nats_user = "client" if args.nats_password_file else None
    if len(args.urls) > 1 and not args.nats:
        parser.error("submitting needs --nats (or a `spiderduck up` running in this directory)")
    try:
        return asyncio.run(run(args))
    except Error as exc:
        print(f"resolve_and_watch: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
