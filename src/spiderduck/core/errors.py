"""The one root of SpiderDuck's errors.

    SpiderDuckError (retryable: bool)
     ├── ConfigError            bad settings; the command exits with a one-line reason
     ├── InvalidMessage         a submission that cannot be decoded (dead-lettered)
     ├── StoreError             a metadata or content store failed (retryable)
     ├── BusError               NATS failed (retryable)
     ├── FetcherUnavailable     no fetcher answered (retryable)
     ├── FetcherBusy            a fetcher refused a hop for now: the domain's queue is full or
     │                          its turn would come after the caller's deadline (RESOURCE_EXHAUSTED)
     ├── WrongFetcher           the fetcher asked does not own the domain's shard, or is gone
     │                          (FAILED_PRECONDITION, UNAVAILABLE): route the hop again
     └── DomainBusy             this scheduler already has its share of hops waiting on the
                                URL's domain; the message is deferred (re-queued), not failed

FetcherBusy and WrongFetcher are one name each from the fetcher to the scheduler: the fetcher
raises them itself (src/spiderduck/fetcher/politeness.py, src/spiderduck/fetcher/fetcher.py), src/spiderduck/fetcher/server.py sends them as
their gRPC codes and src/spiderduck/scheduler/fetcher_client.py reads those back as the same two; in `up`,
src/spiderduck/fetcher/local.py passes them on with the fetcher's address.

Third-party errors (grpc, nats, aiohttp, sqlite) are translated to these at the
adapter that calls the library, with `raise ... from`. Fetch outcomes are not
errors: they are `Status` values (spiderduck.core.status).
"""


class SpiderDuckError(Exception):
    retryable = False

    def __init__(self, message: str = "", *, retryable: bool | None = None):
        super().__init__(message)
        if retryable is not None:
            self.retryable = retryable


class ConfigError(SpiderDuckError):
    pass


class InvalidMessage(SpiderDuckError):
    pass


class StoreError(SpiderDuckError):
    retryable = True


class BusError(SpiderDuckError):
    retryable = True


class FetcherUnavailable(SpiderDuckError):
    retryable = True


class FetcherBusy(SpiderDuckError):
    retryable = True


class WrongFetcher(SpiderDuckError):
    retryable = True


class DomainBusy(SpiderDuckError):
    retryable = True
