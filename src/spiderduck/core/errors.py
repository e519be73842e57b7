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

The others hang from the root beside the code that raises them, by library and role
(* retryable):
     core        urls.InvalidUrl, urls.InvalidDomain
     wire        record_migrations.Malformed (also a ValueError)
     stores      metadata.AnswerTooLarge
     bus         shards.MalformedLease, streams._Refused (told as a ConfigError)
     extract     pool.ExtractionTimeout, pool.ExtractionFailed, pool.PoolClosing*
     query       explainer.NeverSeen (also a LookupError), resolver.StillResolving*,
                 resolver.NeedsNats* (a BusError)
     scheduler   consumer.UrlTimeout*, stages.chain.StageFailed*
     fetcher     politeness.DomainHalted, guard.BlockedAddress; render: page.Crashed,
                 browser.BrowserFailed*, cdp.CdpError ── cdp.CdpClosed*
     web         api.ApiError and actions.ActionFailed (* on a 503; ApiError on a 504 too),
                 security.AdminRefused, feed.TooManyListeners*, feed.FeedClosed*
tests/core/test_error_root.py checks that every exception class of src/spiderduck (but the
client's, which installs alone with its own root) is under this one.

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
