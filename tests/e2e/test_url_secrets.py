"""A URL's userinfo (`user:password@`) against the whole service (issue 38): submitted on NATS, asked
of ResolveUrl over gRPC and of the web UI's /api/v1/preview, or met in a redirect's Location, it is
dropped at intake. The origin never gets an `Authorization` made of it, and the record, its event,
the content log's WARC-Target-URI, the answers and the logs carry the URL without it."""
from __future__ import annotations

import json
import logging

import aiohttp
from aiohttp import web

from spiderduck.cli.nats_server import free_port
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc
from support.service import Client, RunningService, service_settings, wait_port, wait_until
from support.warc import warc_records

SECRETS = ("alice", "PASSW0RD", "bob", "HUNTER2", "carol", "S3CRET", "dave", "PA55")


def _clean(text: str) -> bool:
    return not any(s in text for s in SECRETS)


async def test_userinfo_is_never_sent_kept_or_announced(tmp_path, nats_server, localweb, caplog):
    caplog.set_level(logging.DEBUG)
    authorizations = []

    def page(title: str):
        async def handler(request):
            authorizations.append(request.headers.get("Authorization"))
            return web.Response(text=f"<title>{title}</title>", content_type="text/html")
        return handler
    login = localweb.route("host.test", "/login", page("Login"))
    landing = localweb.route("host.test", "/landing", page("Landing"))
    resolved = localweb.route("host.test", "/resolved", page("Resolved"))
    previewed = localweb.route("host.test", "/previewed", page("Previewed"))
    moved = localweb.redirect("host.test", "/moved", landing.replace("http://", "http://bob:HUNTER2@"))
    listen = f"127.0.0.1:{free_port()}"
    settings = service_settings(tmp_path, nats_server.url, **{"web.listen": listen})

    async with RunningService(settings), Client(settings) as client, aiohttp.ClientSession() as http:
        await client.submit_url(login.replace("http://", "http://alice:PASSW0RD@"))
        await client.publish(moved.replace("http://", "http://alice:PASSW0RD@"))      # a bare URL
        events = await client.events.wait_for(2, timeout=30)

        stub = metadata_pb2_grpc.MetadataServiceStub(client.channel)
        answer = await stub.ResolveUrl(metadata_pb2.ResolveUrlRequest(
            url=resolved.replace("http://", "http://carol:S3CRET@")), timeout=30)
        await wait_port(listen)
        async with http.get(f"http://{listen}/api/v1/preview",
                            params={"url": previewed.replace("http://", "http://dave:PA55@")}) as response:
            assert response.status == 200
            preview = await response.json()
        records = await client.get([login, moved, resolved, previewed])

        async def logged():
            targets = {h.get("WARC-Target-URI") for h, _ in warc_records(tmp_path / "var" / "content")}
            return targets if {login, landing, resolved, previewed} <= targets else None
        targets = await wait_until(logged, 10, "every page in the content log")

    assert len(authorizations) == 4 and authorizations == [None] * 4    # no Authorization: Basic
    assert {e["url"] for e in events} == {login, moved}
    assert {(e["canonical_url"], e["metadata"]["url"], e["metadata"]["final_url"]) for e in events} == {
        (login, login, login), (landing, moved, landing)}
    assert all(_clean(json.dumps(e)) for e in events)
    assert [(r["url"], r["final_url"]) for r in records] == [
        (login, login), (moved, landing), (resolved, resolved), (previewed, previewed)]
    assert _clean(json.dumps(records))
    assert (answer.url, answer.metadata.url, answer.metadata.title) == (resolved, resolved, "Resolved")
    assert _clean(str(answer))
    assert (preview["url"], preview["title"]) == (previewed, "Previewed") and _clean(json.dumps(preview))
    assert _clean(" ".join(sorted(t for t in targets if t)))
    assert _clean(caplog.text)
