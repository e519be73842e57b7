"""Commands that talk to a running service: submit, get, watch, and resolve without --trace."""
from __future__ import annotations

import asyncio
import json
import sys
import time

import grpc
from google.protobuf import json_format

from common import bus, record_proto
from common.config import Settings
from common.errors import BusError, ConfigError, SpiderDuckError
from common.pending import mark_queued, queued_bucket
from common.tweets import fetchable, urls_in_tweet
from spiderduck.v1 import events_pb2, metadata_pb2, metadata_pb2_grpc


def _submissions(args) -> list[events_pb2.UrlSubmission]:
    options = {"source": "cli", "refresh": args.refresh}
    items = [events_pb2.UrlSubmission(url=u, **options) for u in args.urls]
    if args.tweet:
        items.append(events_pb2.UrlSubmission(tweet=args.tweet, **options))
    if args.file:
        try:
            with (sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")) as fh:
                items += [events_pb2.UrlSubmission(url=line.strip(), **options)
                          for line in fh if line.strip() and not line.startswith("#")]
        except OSError as exc:
            raise SpiderDuckError(f"cannot read {args.file}: {exc.strerror}") from exc
    if not items:
        raise SpiderDuckError("nothing to submit: give URLs, --file F or --tweet TEXT")
    return items


def _urls_of(item: events_pb2.UrlSubmission) -> list[str]:
    """The URLs a submission asks for, as the scheduler will read them (to mark them queued)."""
    if item.WhichOneof("payload") == "tweet":
        return [fetchable(u) for u in urls_in_tweet(item.tweet)]
    return [item.url]


async def _submit(settings: Settings, items, progress: bool) -> None:
    nc = await bus.connect(bus.nats_url(settings), name="spiderduck-submit",
                           timeout=settings.nats_connect_timeout)
    try:
        js = nc.jetstream()
        await bus.ensure_streams(js, settings.streams, replicas=settings.nats_replicas)
        queued = await queued_bucket(js, settings.streams.queued_ttl, replicas=settings.nats_replicas)
        headers = {"Content-Type": bus.PROTOBUF_CONTENT_TYPE}
        window = 256
        for start in range(0, len(items), window):
            batch = items[start:start + window]
            await mark_queued(queued, [u for item in batch for u in _urls_of(item)])   # before they go
            acks = [js.publish(bus.SUBMIT_SUBJECT, item.SerializeToString(), headers=headers)
                    for item in batch]
            try:
                await asyncio.gather(*acks)
            except Exception as exc:
                raise BusError(f"publish to {bus.SUBMIT_SUBJECT} failed: {exc}") from exc
            if progress:
                done = start + len(batch)
                bar = "#" * (30 * done // len(items))
                print(f"\r[{bar:<30}] {done}/{len(items)}", end="", file=sys.stderr, flush=True)
        if progress:
            print(file=sys.stderr)
    finally:
        await nc.close()


def cmd_submit(settings: Settings, args) -> int:
    items = _submissions(args)
    asyncio.run(_submit(settings, items, progress=bool(args.file)))
    print(f"submitted {len(items)}", file=sys.stderr)
    return 0


def _api_failed(address: str, exc: grpc.aio.AioRpcError) -> str:
    """Why a call to the metadata-api failed, with what to do when nothing answers."""
    hint = ("; start it (spiderduck up) or point at it with metadata_api.listen"
            if exc.code() == grpc.StatusCode.UNAVAILABLE else "")
    return f"metadata-api at {address}: {exc.code().name}: {exc.details()}{hint}"


async def _get(settings: Settings, urls: list[str]) -> list[dict]:
    address = settings.metadata_api.listen
    async with grpc.aio.insecure_channel(address) as channel:
        stub = metadata_pb2_grpc.MetadataServiceStub(channel)
        out = []
        limit = settings.metadata_api.max_urls
        for start in range(0, len(urls), limit):
            try:
                response = await stub.GetUrlMetadata(
                    metadata_pb2.GetUrlMetadataRequest(urls=urls[start:start + limit]), timeout=30)
            except grpc.aio.AioRpcError as exc:
                raise SpiderDuckError(_api_failed(address, exc)) from exc
            for result in response.results:
                if result.found:
                    out.append(record_proto.message_to_dict(result.metadata))
                elif result.pending:
                    out.append({"url": result.url, "found": False, "pending": True})
                else:
                    out.append({"url": result.url, "found": False})
        return out


async def _resolve(settings: Settings, url: str, refresh: bool, timeout: float | None):
    address = settings.metadata_api.listen
    async with grpc.aio.insecure_channel(address) as channel:
        stub = metadata_pb2_grpc.MetadataServiceStub(channel)
        call = stub.ResolveUrl(metadata_pb2.ResolveUrlRequest(url=url, refresh=refresh),
                               timeout=timeout if timeout else settings.metadata_api.resolve_timeout + 5)
        result = await call
        return result, dict(await call.trailing_metadata()).get("spiderduck-resolution", "")


def cmd_resolve_remote(settings: Settings, url: str, *, refresh: bool, timeout: float | None) -> int:
    """`resolve URL` without --trace: MetadataService.ResolveUrl on the running service. Prints
    the record as `get` does, and the resolution on stderr; exit 0 with an outcome, 2 for a URL
    it refuses, 1 when it could not answer (down, or still resolving past the deadline)."""
    address = settings.metadata_api.listen
    started = time.monotonic()
    try:
        result, resolution = asyncio.run(_resolve(settings, url, refresh, timeout))
    except grpc.aio.AioRpcError as exc:
        code = exc.code()
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            raise ConfigError(exc.details()) from None
        if code == grpc.StatusCode.DEADLINE_EXCEEDED:
            message = (f"still resolving after {time.monotonic() - started:.1f}s; the crawl goes on and "
                       f"its record will appear (spiderduck get {url})")
        else:
            message = _api_failed(address, exc)
        print(f"spiderduck resolve: {message}", file=sys.stderr)
        return 1
    sys.stdout.buffer.write((json_line(record_proto.message_to_dict(result.metadata)) + "\n")
                            .encode("utf-8", "replace"))
    sys.stdout.buffer.flush()
    status = metadata_pb2.Status.Name(result.metadata.status)
    print(f"{resolution} {status} in {time.monotonic() - started:.3f}s", file=sys.stderr)
    return 0


_JSON_CONTROLS = {c: f"\\u{c:04x}" for c in range(0x7f, 0xa0)}


def json_line(row: dict) -> str:
    """One record (or not-found row) as `get` prints it: protobuf's JSON mapping, one line.
    json.dumps escapes C0 controls; DEL and the C1 controls (the 8-bit CSI 0x9b drives a
    terminal) are escaped too, which is still the same JSON (they only occur inside strings)."""
    return json.dumps(row, ensure_ascii=False).translate(_JSON_CONTROLS)


def cmd_get(settings: Settings, args) -> int:
    for row in asyncio.run(_get(settings, args.urls)):
        print(json_line(row))
    return 0


async def _watch(settings: Settings, count: int | None, timeout: float | None) -> int:
    nc = await bus.connect(bus.nats_url(settings), name="spiderduck-watch",
                           timeout=settings.nats_connect_timeout)
    seen = 0
    done = asyncio.Event()

    async def on_message(msg):
        nonlocal seen
        event = events_pb2.UrlProcessed()
        event.ParseFromString(msg.data)
        print(json.dumps(json_format.MessageToDict(event, preserving_proto_field_name=True),
                         ensure_ascii=False), flush=True)
        seen += 1
        if count is not None and seen >= count:
            done.set()

    sub = await nc.subscribe(bus.PROCESSED_SUBJECT, cb=on_message)
    await nc.flush()                  # the server knows the subscription: nothing is missed now
    print(f"watching {bus.PROCESSED_SUBJECT}", file=sys.stderr, flush=True)
    try:
        await asyncio.wait_for(done.wait(), timeout)
    except asyncio.TimeoutError:
        pass
    finally:
        await sub.unsubscribe()
        await nc.close()
    return 0 if count is None or seen >= count else 1


def cmd_watch(settings: Settings, args) -> int:
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
    p.add_argument("urls", nargs="+", metavar="URL")
    p.set_defaults(run=cmd_get)
    p = sub.add_parser("watch", parents=[common], help="print UrlProcessed events as JSON lines")
    p.add_argument("--count", type=int, metavar="N", help="stop after N events (exit 1 if fewer came)")
    p.add_argument("--timeout", type=float, metavar="S", help="stop after S seconds")
    p.set_defaults(run=cmd_watch)
