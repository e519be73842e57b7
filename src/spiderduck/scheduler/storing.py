"""Storing an outcome's record: the key it is stored under, and the write of it with its aliases.

Both stages that write the metadata store use these: the Crawl Recorder (stages/crawl_record.py)
for a crawl, the Sighting Recorder (stages/sighting.py) for a rejection no crawl stored; the
Crawl Decider (stages/crawl_decision.py) keys the stored records it answers with."""
from __future__ import annotations


from spiderduck.core.record import UrlRecord
from spiderduck.scheduler.task import Outcome
from spiderduck.stores.metadata import MetadataStore
from spiderduck.wire.record_limits import bounded
from spiderduck.core.frozen import evolve


def record_key(record: UrlRecord) -> str:
    """The store key of a record: its chain's final URL (its own URL when it has none)."""
    return record.final_url or record.url


async def store_outcome(metadata: MetadataStore, outcome: Outcome, content_ref: str = "") -> Outcome:
    """The outcome with its record as stored, under its key and every URL of its chain.

    A store's put returns the record as written, not necessarily the stored first_seen and
    share count (spiderduck.stores.metadata): a record that renews one under the same key takes the
    renewed record's, when it has none of its own, so what is announced carries them."""
    # Bounded here, where every record is stored: what is stored is also what is announced.
    record = bounded(evolve(outcome.record, content_ref=content_ref))
    previous = outcome.task.previous
    if previous is not None and record_key(previous) == outcome.key:
        record = evolve(record, first_seen=record.first_seen or previous.first_seen,
                                     share_count=record.share_count or previous.share_count)
    aliases = {outcome.task.url, *record.chain} - {""}
    stored = await metadata.put(outcome.key, record, aliases)
    return evolve(outcome, record=stored)
