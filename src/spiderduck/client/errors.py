"""The client's errors: never a raw gRPC or NATS one."""
from __future__ import annotations


# --- errors ---------------------------------------------------------------------------------------

class Error(Exception):
    """Base of the errors this client raises.

    `code` is the gRPC status name the service answered with ("UNAVAILABLE", ...), or None when
    no gRPC call failed (NATS, configuration); `details` is what the service said."""

    def __init__(self, message: str, *, code: str | None = None, details: str = ""):
        super().__init__(message)
        self.code = code
        self.details = details


class Unavailable(Error):
    """Nothing answered: the metadata-api is down or unreachable, it did not answer in time,
    NATS cannot be reached, or a publish was not confirmed."""


class InvalidUrl(Error, ValueError):
    """The URL was refused: `resolve`'s by the service (not a fetchable URL, ...), or, before
    any call, a URL given to `resolve`, `get` or `lookups` that is not text (str, UTF-8). A URL
    `get` cannot read is answered not found; `get` refused as a whole is a ServiceError."""


class StillResolving(Error, TimeoutError):
    """`resolve` reached its deadline while the URL was still being crawled. The crawl goes on:
    its record will appear in `get`. `url` is the URL, `elapsed` the seconds waited."""

    def __init__(self, message: str, *, url: str, elapsed: float, code: str | None = None,
                 details: str = ""):
        super().__init__(message, code=code, details=details)
        self.url = url
        self.elapsed = elapsed


class NotConfigured(Error):
    """The client lacks what the call needs (`submit` and `events` need `nats_url`), or what it
    was given does not work: a credentials or TLS file that cannot be read, or credentials the
    NATS server refuses. Trying again will not help; the settings must change."""


class ServiceError(Error):
    """Any other refusal by the service: too many calls at once or too large an answer
    (RESOURCE_EXHAUSTED), ResolveUrl on a metadata-api without NATS (FAILED_PRECONDITION), a
    GetUrlMetadata request refused as a whole (INVALID_ARGUMENT, `details` says why), ..."""
