"""Domains onto shards (DESIGN "Ownership of domain queues")."""
from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass

from spiderduck.core.errors import SpiderDuckError

SHARD_KEY = "shard.{:05d}"          # a lease's key in the KV bucket spiderduck_fetcher_leases
MEMBER_KEY = "member.{}"            # a live fetcher's key in the same bucket; same value as its leases
_KEY_CHARS = re.compile(r"[^-/_=.a-zA-Z0-9]")


def shard_of(domain: str, shards: int) -> int:
    """A stable shard number in [0, shards) for a registrable domain."""
    digest = hashlib.blake2b(domain.lower().encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards


def member_key(member_id: str) -> str:
    return MEMBER_KEY.format(_KEY_CHARS.sub("_", member_id))


def shard_number(key: str) -> int | None:
    """N of a `shard.N` key, else None."""
    if not key.startswith("shard."):
        return None
    try:
        return int(key[len("shard."):])
    except ValueError:
        return None


# --- the value of a lease (and of a member key) ----------------------------------------
# JSON {"owner": ID, "address": HOST:PORT}, written by fetcher.ownership.LeaseKeeper and read by
# scheduler.routing.LeaseRouter. Keep the bytes stable: a keeper recognises its own lease by
# comparing values, and fetchers and schedulers of different versions share the bucket. Keys
# added later are ignored by decode_lease.

class MalformedLease(SpiderDuckError):
    """A lease value that is not {"owner": ID, "address": HOST:PORT}."""


@dataclass(frozen=True)
class LeaseValue:
    owner: str          # the holding fetcher's id (fetcher.id)
    address: str        # where schedulers dial it (fetcher.advertise, else its listen address)


def encode_lease(owner: str, address: str) -> bytes:
    if not (isinstance(owner, str) and owner and isinstance(address, str) and address):
        raise ValueError(f"a lease needs an owner and an address, got {owner!r}, {address!r}")
    return json.dumps({"owner": owner, "address": address}).encode()


def decode_lease(value: bytes | None) -> LeaseValue:
    """The holder named by a lease value; MalformedLease (saying what is wrong) for anything
    encode_lease cannot have written."""
    if not value:
        raise MalformedLease("empty lease value")
    shown = f"lease value {value[:100]!r}"
    try:
        data = json.loads(value)
    except (ValueError, RecursionError) as exc:     # UnicodeDecodeError is a ValueError
        raise MalformedLease(f"{shown} is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise MalformedLease(f"{shown} is not a JSON object")
    for name in ("owner", "address"):
        if not (isinstance(data.get(name), str) and data[name]):
            raise MalformedLease(f"{shown} has no {name} (a non-empty string)")
    return LeaseValue(owner=data["owner"], address=data["address"])
