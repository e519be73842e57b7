"""Which fields of a record a crawl changed, by their JSON names (UrlProcessed.changed_fields).

Compared as `get` prints them (spiderduck.wire.record_proto.to_dict), so a field is "changed" exactly when
a subscriber comparing two JSON records would see it change: structured data by its decoded
value, times as RFC 3339, an image as a whole. The fields every crawl renews (`fetched_at`,
`expires_at`), those that are not the page's (`url`: the URL asked for; `share_count`,
`first_seen`: counted across sightings), where the raw content is logged (`content_ref`) and how
the fields were read (`provenance`; `fetch_mode`, static or rendered: how the preview was
obtained, not the preview) are left out. A first crawl changed every field it filled.
"""
from __future__ import annotations


from spiderduck.core.record import UrlRecord
from spiderduck.v1 import metadata_pb2
from spiderduck.wire import record_proto
from spiderduck.core.frozen import evolve

BOOKKEEPING = frozenset({"url", "share_count", "first_seen", "fetched_at", "expires_at", "content_ref",
                         # where fields were read explains them; a source that changed while the
                         # value did not changes no preview
                         "provenance",
                         # how the page was read (static or rendered), likewise: the preview it
                         # gave is compared field by field
                         "fetch_mode"})
_ORDER = {f.name: f.number for f in metadata_pb2.UrlMetadata.DESCRIPTOR.fields}


def changed_fields(old: UrlRecord | None, new: UrlRecord) -> tuple[str, ...]:
    """The JSON names of the fields that differ between `old` and `new`, in field-number order.

    Structured data is compared apart, decoded only when both records have it and its bytes
    differ (decoding is most of the cost of to_dict, and a first crawl needs none)."""
    after = record_proto.to_dict(_without_structured_data(new))
    before = record_proto.to_dict(_without_structured_data(old)) if old is not None else {}
    names = {k for k in after.keys() | before.keys()
             if k not in BOOKKEEPING and after.get(k) != before.get(k)}
    if not _same_structured_data(old.structured_data if old is not None else None, new.structured_data):
        names.add("structured_data")
    return tuple(sorted(names, key=_ORDER.__getitem__))


def _without_structured_data(rec: UrlRecord) -> UrlRecord:
    return evolve(rec, structured_data=None) if rec.structured_data else rec


def _same_structured_data(old, new) -> bool:
    if not old or not new:
        return not old and not new
    wire = getattr(old, "wire", None)
    if wire is not None and wire == getattr(new, "wire", None):
        return True
    return record_proto.structured_json(old) == record_proto.structured_json(new)
