"""The streams and buckets the service creates, against a real nats-server."""
from __future__ import annotations

import logging

import nats
import pytest
from nats.js.api import DiscardPolicy

from spiderduck.bus import streams as bus

from spiderduck.cli.nats_server import free_port
from spiderduck.core import config
from spiderduck.core.errors import BusError


async def test_stream_limits_come_from_config_and_are_updated_in_place(nats_server):
    nc = await nats.connect(nats_server.url)
    try:
        js = nc.jetstream()
        await bus.ensure_streams(js)                     # defaults first, as an older version did
        settings = config.load(env={}, overrides={
            "streams.urls_max_bytes": "1048576", "streams.events_max_age": "1d",
            "streams.events_max_bytes": "2097152", "streams.dead_max_age": "12h",
            "streams.dead_max_bytes": "4096"})
        await bus.ensure_streams(js, settings.streams)   # then the configured limits
        urls = (await js.stream_info(bus.URLS_STREAM)).config
        events = (await js.stream_info(bus.EVENTS_STREAM)).config
        dead = (await js.stream_info(bus.DEAD_STREAM)).config
        assert (urls.max_bytes, urls.discard) == (1 << 20, DiscardPolicy.NEW)
        assert (events.max_age, events.max_bytes) == (86400, 2 << 20)
        assert (dead.max_age, dead.max_bytes) == (43200, 4096)
        # A full URL stream refuses the producer; nothing queued is dropped.
        await js.publish(bus.SUBMIT_SUBJECT, b"x" * 700_000)
        with pytest.raises(nats.js.errors.APIError):
            await js.publish(bus.SUBMIT_SUBJECT, b"y" * 700_000)
        assert (await js.stream_info(bus.URLS_STREAM)).state.messages == 1
    finally:
        await nc.close()


async def test_replicas_beyond_one_need_a_cluster_and_say_so(nats_server):
    nc = await nats.connect(nats_server.url)
    try:
        with pytest.raises(BusError, match=r"cannot create stream SPIDERDUCK_URLS \(replicas 3\)"):
            await bus.ensure_streams(nc.jetstream(), replicas=3)
    finally:
        await nc.close()


async def test_connect_takes_the_first_live_server_of_a_list_and_gives_up_in_time(nats_server):
    dead = f"nats://127.0.0.1:{free_port()}"
    nc = await bus.connect(f"{dead}, {nats_server.url}", timeout=10)
    try:
        assert nc.is_connected
    finally:
        await nc.close()
    with pytest.raises(BusError, match=r"cannot connect to NATS at .* within 1s"):
        await bus.connect(dead, timeout=1)


async def test_a_dead_server_first_in_nats_url_is_passed_over_quietly(nats_server, caplog):
    dead = f"nats://127.0.0.1:{free_port()}"
    caplog.set_level(logging.DEBUG, logger="spiderduck.bus")
    # nats-py shuffles the servers it is given: connect until one try met the dead one first
    # (1 in 2 each time).
    for _ in range(20):
        nc = await bus.connect(f"{dead}, {nats_server.url}", timeout=10)
        try:
            assert nc.connected_url.port == nats_server.port
            await nc.jetstream().account_info()
        finally:
            await nc.close()
        if caplog.records:
            break
    refused = [r.getMessage() for r in caplog.records if r.name == "spiderduck.bus"]
    assert refused and all(m.startswith("NATS (spiderduck): ConnectionRefusedError") for m in refused), \
        refused
    # Noted at DEBUG only (the connection was made); never a traceback.
    assert all(r.levelno == logging.DEBUG and not r.exc_info for r in caplog.records), caplog.text


async def test_no_server_answering_is_one_line_naming_the_last_failure():
    dead = f"nats://127.0.0.1:{free_port()}"
    with pytest.raises(BusError) as failed:
        await bus.connect(f"{dead},{dead}", timeout=1.5)
    assert str(failed.value).startswith(f"cannot connect to NATS at {dead},{dead} within 1.5s: "
                                        "ConnectionRefusedError: ")
    assert "\n" not in str(failed.value)
