"""The spans of the scheduler's store calls for one URL, with traces on (src/spiderduck/core/telemetry.py).

    with store_span("metadata get", self._store, url):
        stored = await self._store.get(url)

Each call a stage makes to the metadata store (`metadata get`, `metadata put`, `metadata
add_share`) or the content store (`content append`, `content read`) is a CLIENT span, a child
of the stage's, with `url.full` (the URL the call is for) and `db.system`: `sqlite` or
`cassandra` for the metadata store, `warc` (WARC files on disk) or `hdfs` for the content store,
`other` for any other (tests' own stores). The spans are made here, at the scheduler's call
sites, not in src/spiderduck/stores (which the metadata API shares). Off, `store_span` is
telemetry.OFF, and nothing is gathered.
"""
from __future__ import annotations

import contextlib
import functools

from opentelemetry.trace import SpanKind

from spiderduck.core import telemetry

# A store's db.system, by the name of its class (or of a class it derives from): looked up by
# name so that the scheduler need not import every backend (Cassandra's driver) to name it.
_SYSTEMS = (("Sqlite", "sqlite"), ("Cassandra", "cassandra"), ("WarcFile", "warc"), ("Hdfs", "hdfs"))


@functools.cache
def db_system(kind: type) -> str:
    """`sqlite`, `cassandra`, `warc`, `hdfs`, or `other`, for a store of class `kind`."""
    for klass in kind.__mro__:
        for prefix, system in _SYSTEMS:
            if klass.__name__.startswith(prefix):
                return system
    return "other"


def store_span(name: str, store: object, url: str) -> contextlib.AbstractContextManager:
    """The span of one call to `store` for `url` (telemetry.OFF when traces are off)."""
    if not telemetry.enabled():
        return telemetry.OFF
    return telemetry.span(name, kind=SpanKind.CLIENT,
                          attributes={"db.system": db_system(type(store)), "url.full": url})
