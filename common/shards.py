"""Domains onto shards (DESIGN "Ownership of domain queues")."""
from __future__ import annotations

import hashlib
import re

SHARD_KEY = "shard.{:05d}"          # a lease's key in the KV bucket spiderduck_fetcher_leases
MEMBER_KEY = "member.{}"            # a live fetcher's key in the same bucket
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
