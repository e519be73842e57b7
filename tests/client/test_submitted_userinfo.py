"""A URL's userinfo never reaches the submissions stream (issue 38): the client library and the
service's own encoder (the web UI's submit form, ResolveUrl, stale refreshes) publish the URL
without `user:password@`, so the password is not kept in NATS even until a scheduler drops it at
intake. Checked on a real nats-server, reading back what the stream stored."""
from __future__ import annotations

import json

import nats
import pytest

from conftest import shared_path
from spiderduck.bus import streams as bus
from spiderduck.bus import submissions
from spiderduck.bus.streams import SUBMIT_SUBJECT
from spiderduck.client import AsyncClient, keys
from spiderduck.cli.nats_server import free_port
from spiderduck.core import config, urls

SECRET = "PASSW0RD"


async def _stored(js) -> list:
    """Every message the submissions stream holds."""
    name = await js.find_stream_name_by_subject(SUBMIT_SUBJECT)
    info = await js.stream_info(name)
    return [await js.get_msg(name, seq) for seq in range(info.state.first_seq, info.state.last_seq + 1)]


async def test_neither_the_client_nor_the_service_publishes_a_password(nats_server):
    settings = config.load(env={}, overrides={"nats_url": nats_server.url})
    nc = await nats.connect(nats_server.url)
    try:
        js = nc.jetstream()
        await bus.ensure_streams(js, settings.streams)
        async with AsyncClient(f"127.0.0.1:{free_port()}", nats_url=nats_server.url) as client:
            assert await client.submit([f"http://alice:{SECRET}@host.test/login?x=1",
                                        f"https://:{SECRET}@host.test\\back"]) == 2
        await submissions.publish(js, submissions.encode(f"http://bob:{SECRET}@host.test/form"))
        stored = await _stored(js)
        assert len(stored) == 3
        assert not [m.data for m in stored if SECRET.encode() in m.data], stored
        decoded = [submissions.decode_submission(m.data, m.headers).urls[0] for m in stored]
        assert decoded == ["http://host.test/login?x=1", "https://host.test/back", "http://host.test/form"]
    finally:
        await nc.close()


def _vectors() -> list[str]:
    path = shared_path("testdata", "urltestdata.json")
    cases = json.loads(path.read_text(encoding="utf-8"))
    return [c["input"] for c in cases if isinstance(c, dict) and "@" in c.get("input", "")]


@pytest.mark.parametrize("ada", [True, False], ids=["with-ada", "without-ada"])
def test_the_clients_rule_keeps_no_userinfo_the_services_would_drop(monkeypatch, ada):
    """Over the WHATWG vectors with an "@": with ada-url the client's URL is the service's;
    without it (the client installed alone) no password the service would drop survives."""
    inputs = _vectors() + [f"http://alice:{SECRET}@host.test/", f"HTTP://a:{SECRET}@H.test:81/p@q?r@s#t@u"]
    assert len(inputs) > 20
    if not ada:
        monkeypatch.setattr(keys, "ada_url", None)
    for url in inputs:
        ours, theirs = keys.without_userinfo(url), urls.without_userinfo(url)
        if ada:
            assert ours == theirs, url
        else:                     # the same rule as the service's where ada-url cannot parse
            assert ours == urls._USERINFO.sub(r"\1", url, count=1), url
    if not ada:
        assert keys.without_userinfo(f"http://alice:{SECRET}@host.test/") == "http://host.test/"
