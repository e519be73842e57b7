"""The denylist: forgotten URLs and domains (MetadataService.Forget), kept in the NATS KV bucket
`spiderduck_forgotten`. It survives restarts, every scheduler and metadata API shares it, and each
holds a mirror of it kept current by a watch of the bucket, so a change takes effect everywhere
within DENYLIST_LAG seconds, and a check on the per-URL path is a set lookup, never a NATS call.

INTERFACE ONLY (issue 39): the bodies are being written."""
from __future__ import annotations

import dataclasses
from typing import Iterable

BUCKET = "spiderduck_forgotten"
DENYLIST_LAG = 2.0          # seconds: a change is seen by every holder within this


@dataclasses.dataclass(frozen=True)
class Entry:
    url: str = ""           # a forgotten URL (spiderduck.stores.keys.lookup_key form), or "" for a domain
    domain: str = ""        # a forgotten registrable domain, or "" for a URL
    reason: str = ""
    by: str = ""            # who forgot it, as the audit log names the caller
    at: float = 0.0         # epoch seconds


class Denylist:
    """The mirror. Built from entries it is an offline list (tests, `spiderduck extract`);
    Denylist.open(js) binds it to the bucket and keeps it current until close()."""

    def __init__(self, entries: Iterable[Entry] = ()):
        raise NotImplementedError

    @classmethod
    async def open(cls, js, *, replicas: int = 1) -> "Denylist":
        """The bucket's list (the bucket made if missing), watched until close()."""
        raise NotImplementedError

    def forgotten(self, url: str, *, canonical: bool = False) -> bool:
        """Whether `url`, or its host's registrable domain, is on the list. `canonical`: the URL
        is already in lookup_key form (the scheduler's), so it is not canonicalized again."""
        raise NotImplementedError

    def entries(self) -> list[Entry]:
        """Every entry, oldest first."""
        raise NotImplementedError

    async def add(self, urls: Iterable[str], domain: str = "", *, reason: str = "", by: str = "") -> list[Entry]:
        """Put the URLs (lookup_key forms) and the domain on the list; returns the entries written.
        The local mirror has them when this returns."""
        raise NotImplementedError

    async def remove(self, urls: Iterable[str] = (), domain: str = "") -> int:
        """Take the URLs and the domain off the list; returns how many entries went."""
        raise NotImplementedError

    async def close(self) -> None:
        raise NotImplementedError
