"""What `get` and `resolve` answer: small frozen dataclasses around the record."""
from __future__ import annotations

import dataclasses
from typing import Any

from google.protobuf import json_format

from spiderduck.v1 import metadata_pb2
from spiderduck.v1.metadata_pb2 import UrlMetadata


# --- results --------------------------------------------------------------------------------------

def _record_dict(record: UrlMetadata) -> dict[str, Any]:
    """A record as `spiderduck get` prints it: protobuf's JSON mapping, proto field names
    (spiderduck.wire.record_proto.message_to_dict)."""
    return json_format.MessageToDict(record, preserving_proto_field_name=True)


@dataclasses.dataclass(frozen=True)
class Lookup:
    """What `get` answered for one URL.

    `found`: the service has a record for it (a shortener link, a redirect hop and the final
    URL all give the final page's record; a URL that was seen and failed has one too, with
    `status` saying why). `pending`: no record yet, but the URL is queued or being crawled.
    `record` is the `spiderduck.v1.UrlMetadata` when found, else None; its `url` is the URL
    asked for. Treat it as read-only."""

    url: str
    found: bool
    pending: bool
    record: UrlMetadata | None

    @property
    def status(self) -> str | None:
        """The record's status name ("OK", "HTTP_ERROR", ...), None when not found."""
        return str(metadata_pb2.Status.Name(self.record.status)) if self.record is not None else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON object `spiderduck get` prints for this URL: the record, or
        {"url": ..., "found": false} (with "pending": true when it is queued or in flight)."""
        if self.found and self.record is not None:
            return _record_dict(self.record)
        if self.pending:
            return {"url": self.url, "found": False, "pending": True}
        return {"url": self.url, "found": False}


@dataclasses.dataclass(frozen=True)
class Resolution:
    """What `resolve` answered: the URL's record, fresh enough, and how it was had.

    `resolution` is the name of a `spiderduck.v1.Resolution`: "CRAWLED" (fetched now), "FRESH"
    (a fresh record, no fetch), "JOINED" (a crawl already in flight), "REJECTED" (not fetched:
    invalid, blocked, ...), "REVALIDATED" (fetched again, unchanged) or "STALE" (an expired OK
    record, while a refresh re-fetches it). `record` is the `spiderduck.v1.UrlMetadata`, its
    `url` the URL asked for."""

    url: str
    resolution: str
    record: UrlMetadata

    @property
    def status(self) -> str:
        """The record's status name ("OK", "ROBOTS_DISALLOWED", ...)."""
        return str(metadata_pb2.Status.Name(self.record.status))

    def to_dict(self) -> dict[str, Any]:
        """The record as `spiderduck resolve` prints it (as `get` does)."""
        return _record_dict(self.record)
