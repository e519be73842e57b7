"""What a benchmark beside `spiderduck up` waits for before it submits: up's NATS admits it as the
user `client` (NATS by role), which may submit but not create streams, so it waits for the ones
up's roles make as they start."""
from __future__ import annotations

import asyncio
import time

from spiderduck.bus import streams as bus


async def streams_made(js, deadline: float) -> None:
    """Until the stream that takes submissions exists, or past `deadline` (time.monotonic) the
    last error."""
    while True:
        try:
            await js.find_stream_name_by_subject(bus.SUBMIT_SUBJECT)
            return
        except Exception:  # noqa: BLE001 -- nats-py's NotFoundError or a timeout: not yet
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.2)
