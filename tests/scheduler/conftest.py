"""Fixtures of the scheduler tests: a JetStream on a private nats-server, with our streams."""
from __future__ import annotations

import nats
import pytest

from common import bus


@pytest.fixture
async def bus_js(nats_server):
    """(connection, JetStream context) with SpiderDuck's streams created."""
    nc = await nats.connect(nats_server.url)
    js = nc.jetstream()
    await bus.ensure_streams(js)
    yield nc, js
    await nc.close()
