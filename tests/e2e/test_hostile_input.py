"""Bad input never crashes a worker and never loses a URL: each gets a clear status or a dead letter."""
from __future__ import annotations

import json

from support.service import Client, RunningService, service_settings


async def test_bad_input_gets_a_clear_status_and_the_worker_keeps_going(tmp_path, nats_server, localweb):
    good = localweb.page("fine.test", "/", "<title>Still working</title>")
    # A public-looking page that redirects into the private network: refused on that hop.
    to_private = localweb.redirect("fine.test", "/jump", "http://192.168.7.7/admin")
    settings = service_settings(tmp_path, nats_server.url, **{
        # private.test resolves to a private address; nothing is ever sent there.
        "fetcher.dns_overrides": {"*.test": "127.0.0.1", "private.test": "10.20.30.40"}})
    cases = {
        "http://exa mple.test/": "INVALID_URL",
        "ftp://files.test/file.txt": "INVALID_URL",
        "javascript:alert(1)": "INVALID_URL",
        "http://private.test/admin": "BLOCKED_ADDRESS",
        "http://169.254.169.254/latest/meta-data/": "BLOCKED_ADDRESS",
        "http://[::ffff:192.168.1.1]/": "BLOCKED_ADDRESS",
        to_private: "BLOCKED_ADDRESS",
    }
    async with RunningService(settings), Client(settings) as client:
        await client.publish(b'{"url": ')                     # malformed JSON
        await client.publish(b"\xff\xfe\x00garbage")           # not text, not marked protobuf
        await client.publish(json.dumps({"tweet": "no links here"}))
        for url in cases:
            await client.submit_url(url)
        await client.submit_url(good)
        await client.events.wait_for(len(cases) + 1, timeout=60)
        records = await client.get([*cases, good])
        dead = await client.dead_letters()

    for (url, status), record in zip(cases.items(), records):
        assert record is not None, url
        assert record["status"] == status, (url, record)
        assert record.get("error"), url
        [event] = client.events.for_url(url)
        assert event["status"] == status
    assert records[-1]["status"] == "OK" and records[-1]["title"] == "Still working"
    jump = records[list(cases).index(to_private)]
    assert jump["redirects"] == [{"url": to_private, "http_status": 301}]
    assert jump["final_url"] == "http://192.168.7.7/admin"
    reasons = sorted(d["reason"] for d in dead)
    assert len(reasons) == 3, reasons
    assert any("malformed JSON" in r for r in reasons)
    assert any("no URL" in r for r in reasons)
    assert any("UTF-8" in r for r in reasons)
