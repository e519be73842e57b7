"""A Python client of a running SpiderDuck: look records up, resolve a URL, submit URLs, and
follow what the service processed.

    from spiderduck.client import Client

    with Client("127.0.0.1:50051", nats_url="nats://127.0.0.1:4222") as spiderduck:
        for lookup in spiderduck.get(["https://example.com/", "https://t.co/abc"]):
            print(lookup.url, lookup.record.title if lookup.found else "not found")
        answer = spiderduck.resolve("https://example.com/", timeout=10)   # crawled if need be
        print(answer.resolution, answer.status, answer.record.title)
        spiderduck.submit(["https://example.com/a", "https://example.com/b"])

`AsyncClient` is the same client for asyncio code: the same methods as coroutines, and
`events()`, an async iterator of the `UrlProcessed` events the service publishes:

    from spiderduck.v1 import events_pb2

    async with AsyncClient(nats_url="nats://127.0.0.1:4222") as spiderduck:
        async with spiderduck.events() as events:         # subscribed from here on
            await spiderduck.submit(["https://example.com/a"])
            async for event in events:                    # spiderduck.v1.events_pb2.UrlProcessed
                print(event.url, events_pb2.Resolution.Name(event.resolution))

What talks to what:

- `get` and `resolve` call MetadataService (`GetUrlMetadata`, `ResolveUrl`) over gRPC at
  `metadata`, the service's `metadata_api.listen` ("127.0.0.1:50051" by default). `get` sends
  at most `max_urls` URLs per call (the server's `metadata_api.max_urls`, 300 by default) and
  makes as many calls as it needs; told by the server that it takes fewer, it asks again in
  calls of that many.
- `submit` sends each URL as a protobuf `spiderduck.v1.UrlSubmission` (header `Content-Type:
  application/x-protobuf`) as a request on `spiderduck.urls.queue`: the service's metadata-api
  marks it queued in the KV bucket `spiderduck_url_queued` (so `get` says `pending` for it at
  once, as for `spiderduck submit`), publishes it to the JetStream subject
  `spiderduck.urls.submit` and answers once stored; with no metadata-api answering, `submit`
  publishes to `spiderduck.urls.submit` itself, unmarked. It needs `nats_url`: the NATS the
  service uses (`spiderduck up` writes the URL of its embedded one to `var/nats.url`, and the
  password of the user `client` to `var/nats.password`: pass `nats_user="client",
  nats_password_file="var/nats.password"`); a comma-separated list names the servers of one
  cluster.
- A deployment's security settings have the service's config names: `token` (the metadata-api's
  bearer token), `tls_ca`, `tls_cert`, `tls_key`, `tls_server_name` (gRPC TLS), and
  `nats_creds`, `nats_nkey_seed`, `nats_user` + `nats_password_file`, `nats_token_file`,
  `nats_tls_ca`, `nats_tls_cert`, `nats_tls_key` (NATS); see AsyncClient.
- `events()` is a core NATS subscription to `spiderduck.events.processed`: it sees the events
  published while it is subscribed, nothing from before, and at most once each (a publish that
  failed over between NATS nodes may show twice). They are buffered as they come (at most
  10,000 unread; past that the oldest are dropped, and counted in the stream's `dropped`), so
  a reader may give up waiting (a timeout) without losing one. For an exact record, with
  replay, consume the JetStream stream `SPIDERDUCK_EVENTS` instead.

Errors are the client's own, never raw gRPC or NATS ones: `Unavailable` (nothing answered),
`InvalidUrl` (the service refused the URL given to `resolve`, or a URL is not text),
`StillResolving` (the deadline of `resolve` passed; the crawl goes on, and its record will
appear in `get`), `NotConfigured` (`submit` or `events` without `nats_url`) and `ServiceError`
(any other refusal, such as a `get` call refused as a whole), all subclasses of `Error`. A call
on a closed client, or cut short by closing it, raises `Error` itself.

`Client` runs an `AsyncClient` on an event loop of its own, in a background thread, so it works
from plain scripts and from any thread (calls from several threads at once are fine). Close
either with `close()`, or use it as a (async) context manager; closing a `Client` cancels the
calls other threads are still in.

The package: `names` (the service's subjects and defaults), `errors`, `results` (Lookup,
Resolution), `aio` (AsyncClient), `events` (EventStream) and `sync` (Client, EventIterator).
It needs only grpcio, protobuf, nats-py and `spiderduck.v1`, never the service's own code.
`keys` defines a URL's key for both (a program that writes queued markers itself computes it
there, with ada-url); `submit` leaves the markers to the service.
"""
from __future__ import annotations

from spiderduck.client.aio import AsyncClient
from spiderduck.client.errors import (Error, InvalidUrl, NotConfigured, ServiceError, StillResolving,
                                      Unavailable)
from spiderduck.client.events import EventStream
from spiderduck.client.names import (CLOSE_CALLS_TIMEOUT, DEFAULT_METADATA, MAX_URLS, PROCESSED_SUBJECT,
                                     PROTOBUF_CONTENT_TYPE, PUBLISH_WINDOW, QUEUED_TTL, RESOLUTION_KEY,
                                     SUBMIT_SUBJECT)
from spiderduck.client.results import Lookup, Resolution
from spiderduck.client.sync import Client, EventIterator
from spiderduck.v1.events_pb2 import UrlProcessed
from spiderduck.v1.metadata_pb2 import UrlMetadata

__all__ = [
    "AsyncClient", "Client", "Error", "EventIterator", "EventStream", "InvalidUrl", "Lookup",
    "NotConfigured", "Resolution", "ServiceError", "StillResolving", "Unavailable",
    "UrlMetadata", "UrlProcessed",
    # the service's names and defaults it uses
    "CLOSE_CALLS_TIMEOUT", "DEFAULT_METADATA", "MAX_URLS", "PROCESSED_SUBJECT", "PROTOBUF_CONTENT_TYPE",
    "PUBLISH_WINDOW", "QUEUED_TTL", "RESOLUTION_KEY", "SUBMIT_SUBJECT",
]
