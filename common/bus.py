"""NATS: subjects, streams, and the connection (DESIGN "Data flow")."""
from __future__ import annotations

import logging
import os

import nats
from nats.errors import Error as NatsError
from nats.js.api import KeyValueConfig, RetentionPolicy, StreamConfig
from nats.js.errors import BadRequestError, BucketNotFoundError

from common.config import Settings
from common.errors import BusError

log = logging.getLogger("spiderduck.bus")

URLS_STREAM = "SPIDERDUCK_URLS"
SUBMIT_SUBJECT = "spiderduck.urls.submit"
EVENTS_STREAM = "SPIDERDUCK_EVENTS"
EVENTS_SUBJECTS = "spiderduck.events.>"
PROCESSED_SUBJECT = "spiderduck.events.processed"
DEAD_STREAM = "SPIDERDUCK_DEAD"
DEAD_SUBJECT = "spiderduck.urls.dead"
SCHEDULER_DURABLE = "scheduler"
PROTOBUF_CONTENT_TYPE = "application/x-protobuf"
# On the parts of a split submission: when the producer published the original (epoch seconds).
SUBMITTED_AT_HEADER = "SpiderDuck-Submitted-At"
LEASE_BUCKET = "spiderduck_fetcher_leases"
EMBEDDED_URL_FILE = "nats.url"   # under data_dir: where `up` writes its embedded server's URL


def nats_url(settings: Settings) -> str:
    """settings.nats_url, else the embedded server `up` started, else the local default."""
    if settings.nats_url:
        return settings.nats_url
    try:
        with open(os.path.join(settings.data_dir, EMBEDDED_URL_FILE), encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return "nats://127.0.0.1:4222"


async def connect(url: str, name: str = "spiderduck"):
    try:
        return await nats.connect(url, name=name, connect_timeout=5, max_reconnect_attempts=-1,
                                  allow_reconnect=True)
    except (NatsError, OSError) as exc:
        raise BusError(f"cannot connect to NATS at {url}: {exc}") from exc


async def ensure_streams(js, *, events_max_age: float = 7 * 86400) -> None:
    """Create (or update) the streams SpiderDuck publishes to."""
    wanted = [
        StreamConfig(name=URLS_STREAM, subjects=[SUBMIT_SUBJECT],
                     retention=RetentionPolicy.WORK_QUEUE),
        StreamConfig(name=EVENTS_STREAM, subjects=[EVENTS_SUBJECTS],
                     retention=RetentionPolicy.LIMITS, max_age=events_max_age),
        StreamConfig(name=DEAD_STREAM, subjects=[DEAD_SUBJECT], retention=RetentionPolicy.LIMITS),
    ]
    for config in wanted:
        try:
            await js.add_stream(config)
        except BadRequestError:
            await js.update_stream(config)
        except NatsError as exc:
            raise BusError(f"cannot create stream {config.name}: {exc}") from exc


async def lease_bucket(js, ttl: float):
    """The KV bucket of shard leases; entries expire `ttl` seconds after their last write."""
    try:
        return await js.key_value(LEASE_BUCKET)
    except BucketNotFoundError:
        pass
    try:
        return await js.create_key_value(KeyValueConfig(bucket=LEASE_BUCKET, ttl=ttl, history=1))
    except BadRequestError:          # created by another fetcher meanwhile
        return await js.key_value(LEASE_BUCKET)
    except NatsError as exc:
        raise BusError(f"cannot open KV bucket {LEASE_BUCKET}: {exc}") from exc
