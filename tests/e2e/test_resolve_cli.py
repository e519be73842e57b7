"""`spiderduck resolve URL [--refresh] [--timeout S] [--trace]`: without --trace, ResolveUrl on the
running service; with it, one URL through the service's pipeline in the command's process, on
real parts (NATS, a fetcher role holding leases, the stores, a local web): the trace names each
stage's decision, and the outcome is stored and announced as the service's."""
from __future__ import annotations

import io
import json
import pathlib
import re

import pytest
import yaml
from PIL import Image as PILImage

from spiderduck.cli.main import main as cli_main
from spiderduck.cli.nats_server import free_port
from spiderduck.fetcher.main import run_fetcher
from spiderduck.metadata_api.main import run_metadata_api
from support.cli import Proc, run_cli, up_config
from support.service import Client, RunningService, service_settings, wait_port

STAGES = ["Decoder", "HonestyChecker", "Notifier", "SightingRecorder", "CrawlDecider", "CrawlRecorder",
          "HonestySelector", "RedirectFollower", "FileReader", "RelatedFetcher", "PostProcessor"]


def png(width: int, height: int) -> bytes:
    out = io.BytesIO()
    PILImage.new("RGB", (width, height)).save(out, "PNG")
    return out.getvalue()


def stage_lines(out: str) -> dict[str, str]:
    """Each stage's header line by name; fails unless all of them come, in order."""
    found = re.findall(r"^(\d+)\. (\w+) +(.*)$", out, re.M)
    assert [(int(n), name) for n, name, _ in found] == list(enumerate(STAGES, 1)), out
    return {name: rest for _, name, rest in found}


async def resolve(settings, *args: str) -> tuple[int, str, str]:
    return await run_cli("resolve", *args, "--set", f"nats_url={settings.nats_url}",
                         "--set", f"data_dir={settings.data_dir}",
                         "--set", f"metadata_api.listen={settings.metadata_api.listen}")


async def test_a_redirect_traced_stored_and_announced_then_fresh(nats_server, localweb, tmp_path):
    image = localweb.page("cdn.test", "/logo.png", png(64, 64), content_type="image/png")
    page = localweb.page("news.test", "/a", '<html><head><title>Hello \x1b[31mthere</title>'
                         f'<meta property="og:image" content="{image}"></head><p>text</p></html>')
    moved = localweb.redirect("news.test", "/old", page)
    settings = service_settings(tmp_path, nats_server.url)
    async with RunningService(settings, roles=(run_fetcher, run_metadata_api)), \
            Client(settings) as client:
        code, out, err = await resolve(settings, moved, "--trace")
        assert code == 0, out + err
        lines = stage_lines(out)
        assert lines["Decoder"].startswith("next      -> 1 outcome")
        assert lines["CrawlDecider"].startswith("next      -> CRAWLED OK")
        assert lines["PostProcessor"].startswith("answered  -> CRAWLED OK")
        assert f"     task  url = '{moved}'\n" in out                 # the decider's canonical form
        assert f"     task  hops = 2\n           {moved} -> 301\n           {page} -> 200\n" in out
        assert "     out   record.share_count = 1\n" in out          # the sighting's share
        assert "     out   record.content_ref = 'spiderduck-" in out  # the crawl's WARC record
        assert "     out   record.image.width = 64\n" in out         # the related fetch's probe
        assert f"     answer CRAWLED, OK, key '{page}'\n" in out
        assert "       record.title = 'Hello \\x1b[31mthere'\n" in out   # escaped, not obeyed
        assert "<p>text" not in out and "\x1b" not in out               # no body, no escape
        assert re.search(r"own +\d+\.\dms  total +\d+\.\dms$", lines["RedirectFollower"])
        record = json.loads(out.splitlines()[-1])                # the record, as `get` prints it
        assert record["title"] == "Hello \x1b[31mthere" and record["share_count"] == 1
        assert record["final_url"] == page and record["redirects"][0]["http_status"] == 301
        assert err.strip().splitlines()[-1].startswith("CRAWLED OK in ")

        events = await client.events.wait_for(1)                 # announced, as by the service
        assert events[0]["url"] == moved and events[0]["resolution"] == "CRAWLED"
        stored, = await client.get([moved])                     # stored: GetUrlMetadata has it
        assert stored["title"] == record["title"] and stored["share_count"] == 1
        assert stored["content_ref"] == record["content_ref"]

        code, out, err = await resolve(settings, moved, "--trace")    # again: fresh, not fetched
        assert code == 0, out + err
        lines = stage_lines(out)
        assert lines["CrawlDecider"].startswith("answered  -> FRESH OK")
        for inner in STAGES[STAGES.index("CrawlDecider") + 1:]:
            assert lines[inner] == "not run", out
        assert f"     answer FRESH, OK, key '{page}'\n" in out
        assert "     out   record.share_count: 1 -> 2\n" in out
        assert len(localweb.hits_for("news.test", "/a")) == 1
        events = await client.events.wait_for(2)
        assert events[1]["resolution"] == "FRESH"

        code, out, err = await resolve(settings, moved)          # without --trace: ResolveUrl
        assert code == 0, err
        record = json.loads(out)                                 # the record only; a question, not a share
        assert len(out.splitlines()) == 1 and record["share_count"] == 2 and record["url"] == moved
        assert err.strip().splitlines()[-1].startswith("FRESH OK in ")


async def test_without_trace_it_asks_the_running_service(nats_server, localweb, tmp_path):
    import asyncio
    from aiohttp import web

    page = localweb.page("news.test", "/r", "<title>R</title>")

    async def slow(request):
        await asyncio.sleep(3)
        return web.Response(text="<title>Slow</title>", content_type="text/html")
    late = localweb.route("slow.test", "/", slow)
    # No related fetches: slow.test's would each take the 3 s too, and the stop would wait them out.
    settings = service_settings(tmp_path, nats_server.url, min_refresh_interval="0s",
                                **{"process.related_fetches": False})
    async with RunningService(settings), Client(settings) as client:
        runs = [await resolve(settings, page), await resolve(settings, page),
                await resolve(settings, page, "--refresh")]
        slow_run = await resolve(settings, late, "--timeout", "0.5")
        traced_refresh = await resolve(settings, page, "--trace", "--refresh", "--set", "min_refresh_interval=0s")
    assert [code for code, _, _ in runs] == [0, 0, 0], runs
    assert [err.strip().split()[0] for _, _, err in runs] == ["CRAWLED", "FRESH", "REVALIDATED"]
    assert {json.loads(out)["title"] for _, out, _ in runs} == {"R"}
    assert slow_run[0] == 1 and "still resolving after" in slow_run[2] and f"spiderduck get {late}" in slow_run[2]
    assert traced_refresh[0] == 0 and traced_refresh[2].strip().splitlines()[-1].startswith("REVALIDATED OK")
    assert len(localweb.hits_for("news.test", "/r")) == 3               # the first, and two refreshes
    assert client.events.for_url(page)[0]["resolution"] == "REVALIDATED"   # only --trace announces


async def test_an_invalid_url_is_rejected_recorded_and_announced(nats_server, tmp_path):
    settings = service_settings(tmp_path, nats_server.url)
    async with Client(settings) as client:
        code, out, err = await resolve(settings, "mailto:x", "--trace")
        assert code == 0, out + err                              # an outcome: exit 0
        lines = stage_lines(out)
        assert lines["CrawlDecider"].startswith("answered  -> REJECTED INVALID_URL")
        assert all(lines[inner] == "not run" for inner in STAGES[STAGES.index("CrawlDecider") + 1:]), out
        assert "     answer REJECTED, INVALID_URL, key 'mailto:x'\n" in out
        assert "     out   record.share_count = 1\n" in out
        assert json.loads(out.splitlines()[-1])["status"] == "INVALID_URL"
        events = await client.events.wait_for(1)
        assert events[0]["url"] == "mailto:x" and events[0]["resolution"] == "REJECTED"


async def test_no_fetcher_answering_exits_1_with_the_trace_up_to_the_failure(nats_server, tmp_path):
    settings = service_settings(tmp_path, nats_server.url)
    nobody = f"127.0.0.1:{free_port()}"
    code, out, err = await resolve(settings, "http://news.test/", "--trace",
                                   "--set", f"scheduler.fetchers=[{nobody}]",
                                   "--set", "scheduler.hop_timeout=0.5")
    assert code == 1, out + err
    assert "spiderduck resolve: not resolved: FetcherUnavailable: fetch http://news.test/" in err
    lines = stage_lines(out)
    assert lines["RedirectFollower"].startswith("raised    -> ! FetcherUnavailable")
    assert "     error FetcherUnavailable: fetch http://news.test/: no answer within 0.5s" in out
    assert lines["CrawlDecider"].startswith("next      -> ! FetcherUnavailable (inside)")
    assert lines["PostProcessor"] == "not run"


async def test_resolve_beside_a_running_up_uses_its_nats_stores_and_fetcher(localweb, tmp_path):
    page = localweb.page("blog.test", "/post", "<html><title>Beside up</title></html>")
    config = up_config(tmp_path, process={"workers": 1})
    up = Proc(tmp_path, "up", "--config", config)
    try:
        await up.wait_log("serving every shard")
        code, out, err = await run_cli("resolve", page, "--trace", "--config", config)
        assert code == 0, out + err
        assert stage_lines(out)["CrawlDecider"].startswith("next      -> CRAWLED OK")
        assert f"           {page} -> 200\n" in out          # through `up`'s fetcher (no leases)
        await wait_port(yaml.safe_load(pathlib.Path(config).read_text())["metadata_api"]["listen"])
        code, out, err = await run_cli("get", page, "--config", config)    # in `up`'s store
        assert code == 0 and json.loads(out)["title"] == "Beside up", out + err
        await up.stop()
    finally:
        up.kill()


def test_bad_input_exits_2_and_no_nats_1_with_one_line(capsys, monkeypatch, tmp_path):
    monkeypatch.delenv("SPIDERDUCK_NATS_URL", raising=False)

    def run(*args: str) -> tuple[int, str]:
        capsys.readouterr()
        code = cli_main(["resolve", *args, "--set", f"data_dir={tmp_path}"])
        return code, capsys.readouterr().err

    code, err = run("http://news.test/", "--trace")              # no nats_url, no `up` running
    assert code == 1 and err.startswith("spiderduck resolve: no NATS to use"), err
    assert len(err.strip().splitlines()) == 1, err
    nobody = f"127.0.0.1:{free_port()}"
    code, err = run("http://news.test/", "--set", f"metadata_api.listen={nobody}")   # no service
    assert code == 1 and err.startswith(f"spiderduck resolve: metadata-api at {nobody}: UNAVAILABLE"), err
    assert len(err.strip().splitlines()) == 1, err
    dead = f"nats://127.0.0.1:{free_port()}"
    code, err = run("http://news.test/", "--trace", "--set", f"nats_url={dead}",
                    "--set", "nats_connect_timeout=0.5")
    assert code == 1 and f"not resolved: BusError: cannot connect to NATS at {dead}" in err, err
    assert len(err.strip().splitlines()) == 1, err

    for args, reason in [
        (("",), "URL is empty"),
        (("http://news.test/", "--timeout", "0"), "--timeout 0: give a number of seconds above 0"),
        (("http://news.test/", "--set", "nats_connect_timeout=soon"), "nats_connect_timeout"),
        (("http://news.test/", "--set", "nats_url"), "--set expects key.path=value"),
    ]:
        code, err = run(*args)
        assert code == 2 and err.startswith("spiderduck resolve: ") and reason in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err
    with pytest.raises(SystemExit) as usage:
        cli_main(["resolve", "http://news.test/", "--bogus"])
    assert usage.value.code == 2 and "--bogus" in capsys.readouterr().err
