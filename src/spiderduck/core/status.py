"""The closed set of outcomes (the record's `status`), the transient ones, and the one mapping onto it."""
from __future__ import annotations

import enum


class Status(enum.IntEnum):
    """Mirrors spiderduck.v1.Status; values are the wire numbers."""
    STATUS_UNSPECIFIED = 0
    OK = 1
    ROBOTS_DISALLOWED = 2
    BLOCKED_ADDRESS = 3
    INVALID_URL = 4
    DNS_ERROR = 5
    CONNECTION_ERROR = 6
    TIMEOUT = 7
    TOO_MANY_REDIRECTS = 8
    TOO_LARGE = 9
    HTTP_ERROR = 10
    UNSUPPORTED_CONTENT = 11
    INTERSTITIAL = 12
    FORGOTTEN = 13          # on the denylist (MetadataService.Forget): never fetched, never stored


# No answer from the origin (no name, no connection, no answer in time): about the network
# more than the page, and may pass. Kept fresh for less long (scheduler.stages.crawl_decision), not
# remembered (scheduler.stages.related), held against the domain (fetcher.domain_health).
TRANSIENT = frozenset({Status.DNS_ERROR, Status.CONNECTION_ERROR, Status.TIMEOUT})


def status_for_http(code: int) -> Status:
    """What an HTTP answer of the final hop means for the record."""
    if 200 <= code < 300:
        return Status.OK
    return Status.HTTP_ERROR
