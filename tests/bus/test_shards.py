"""The value of a shard lease in NATS KV: one encoder (fetchers), one decoder (schedulers)."""
from __future__ import annotations

import pytest

from spiderduck.bus.shards import LeaseValue, MalformedLease, decode_lease, encode_lease


@pytest.mark.parametrize("owner,address", [
    ("fetcher-1", "10.0.0.7:50052"),
    ("host:1234", "[::1]:50052"),
    ("fétcher \"ü\"", "fetcher-0.fetcher.default.svc:50052"),
])
def test_round_trip(owner, address):
    assert decode_lease(encode_lease(owner, address)) == LeaseValue(owner=owner, address=address)


def test_the_bytes_are_those_fetchers_already_write():
    # A keeper recognises its own lease by its bytes, and fetchers and schedulers of
    # different versions share the bucket: the encoding must not change.
    assert encode_lease("a", "h:1") == b'{"owner": "a", "address": "h:1"}'


def test_keys_added_later_are_ignored():
    assert decode_lease(b'{"owner": "a", "address": "h:1", "zone": "z"}') == LeaseValue("a", "h:1")


@pytest.mark.parametrize("value,says", [
    (None, "empty lease value"),
    (b"", "empty lease value"),
    (b"h:1", "is not JSON"),
    (b"\xff\xfe\x00", "is not JSON"),
    (b"[" * 100_000, "is not JSON"),              # nested past the recursion limit
    (b'"h:1"', "is not a JSON object"),
    (b'["a", "h:1"]', "is not a JSON object"),
    (b'{"owner": "a"}', "has no address"),
    (b'{"owner": "a", "address": ""}', "has no address"),
    (b'{"owner": "a", "address": 50052}', "has no address"),
    (b'{"address": "h:1"}', "has no owner"),
    (b'{"owner": null, "address": "h:1"}', "has no owner"),
])
def test_malformed_values_raise_a_clear_error(value, says):
    with pytest.raises(MalformedLease, match=says) as caught:
        decode_lease(value)
    assert len(str(caught.value)) < 300          # the value is shown cut short


@pytest.mark.parametrize("owner,address", [("", "h:1"), ("a", ""), ("a", None)])
def test_nothing_undecodable_is_written(owner, address):
    with pytest.raises(ValueError):
        encode_lease(owner, address)
