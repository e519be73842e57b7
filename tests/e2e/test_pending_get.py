"""`spiderduck get` tells "queued or in flight" from "never seen", over a metadata-api on NATS;
a forgotten URL (on the denylist) is never seen, queued or not."""
from __future__ import annotations

import json

from spiderduck.bus import streams as bus
from spiderduck.bus.claims import Claims
from spiderduck.bus.denylist import DENYLIST_LAG, Denylist
from spiderduck.fetcher.main import run_fetcher
from spiderduck.metadata_api.main import run_metadata_api
from support.cli import run_cli
from support.service import Client, RunningService, service_settings, wait_until


async def test_get_says_pending_for_queued_and_claimed_urls_only(tmp_path, nats_server, localweb):
    queued = localweb.page("queued.test", "/a", "<title>A</title>")
    claimed = localweb.url("claimed.test", "/b")
    never = localweb.url("never.test", "/c")
    settings = service_settings(tmp_path, nats_server.url)
    where = ["--set", f"nats_url={nats_server.url}", "--set", f"data_dir={tmp_path / 'cli'}",
             "--set", f"metadata_api.listen={settings.metadata_api.listen}"]
    # No scheduler: what is submitted stays queued.
    async with RunningService(settings, roles=(run_fetcher, run_metadata_api)), Client(settings) as client:
        code, out, err = await run_cli("submit", queued, *where)
        assert code == 0, err
        claim = await Claims(await bus.claim_bucket(client.js, settings.scheduler.claim_ttl),
                             owner="a-scheduler", ttl=settings.scheduler.claim_ttl).take(claimed)
        try:
            code, out, err = await run_cli("get", queued, claimed, never, "HTTP://QUEUED.test:" +
                                           queued.split(":")[2], *where)
        finally:
            await claim.release()
        assert code == 1, err                                  # some URLs have no record: exit 1
        rows = [json.loads(line) for line in out.splitlines()]
        code, again, err = await run_cli("get", claimed, *where)

        # A forgotten URL is never seen, though its submission's queued marker outlives it.
        gone = localweb.page("gone.test", "/d", "<title>D</title>")
        code, _, err = await run_cli("submit", gone, *where)
        assert code == 0, err
        denylist = await Denylist.open(client.js)
        try:
            await denylist.add([gone], reason="test", by="test")
        finally:
            await denylist.close()

        async def never_seen() -> bool:
            _, out, _ = await run_cli("get", gone, *where)
            return json.loads(out) == {"url": gone, "found": False}
        await wait_until(never_seen, 2 * DENYLIST_LAG + 10, "the forgotten URL answered as never seen")
    assert rows[0] == {"url": queued, "found": False, "pending": True}
    assert rows[1] == {"url": claimed, "found": False, "pending": True}
    assert rows[2] == {"url": never, "found": False}
    assert rows[3]["pending"] is True                      # the same URL in another form
    assert json.loads(again) == {"url": claimed, "found": False}    # released, and no record: not pending
