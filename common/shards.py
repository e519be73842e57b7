"""Domains onto shards (DESIGN "Ownership of domain queues")."""
from __future__ import annotations

import hashlib


def shard_of(domain: str, shards: int) -> int:
    """A stable shard number in [0, shards) for a registrable domain."""
    digest = hashlib.blake2b(domain.lower().encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % shards
