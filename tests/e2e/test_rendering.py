"""Issue 31 through the whole service, real Chromium: with render.enabled, a page whose static
HTML is an empty shell is rendered by the fetcher and its record made from the DOM (fetch_mode
rendered, in the record and its event), the DOM logged as a WARC conversion record after the
static response; a page that states its card is never rendered; and a shell whose scripts reach
for an address outside fetcher.allowed_networks never reaches it."""
from __future__ import annotations

import glob
import io
import os

from prometheus_client import REGISTRY
from warcio.archiveiterator import ArchiveIterator

from support.browser import skip_without_chromium
from support.render_sites import ORIGIN_HOST, sites
from support.service import Client, RunningService, service_settings


def renders(outcome: str) -> float:
    return REGISTRY.get_sample_value("spiderduck_renders_total", {"outcome": outcome}) or 0


async def test_shells_are_rendered_and_nothing_else(tmp_path, nats_server):
    skip_without_chromium()
    async with sites() as site:
        shell, canary, static = site.origin("/shell"), site.origin("/canary"), site.origin("/media")
        settings = service_settings(tmp_path, nats_server.url, **{
            "fetcher.allowed_networks": [f"{ORIGIN_HOST}/32"], "render.enabled": True,
            "render.timeout": "8s", "process.related_fetches": False})
        before = renders("ok")
        async with RunningService(settings), Client(settings) as client:
            for url in (shell, canary, static):
                await client.submit_url(url)
            events = {e["url"]: e for e in await client.events.wait_for(3, timeout=60)}
            got = dict(zip((shell, canary, static), await client.get([shell, canary, static])))

    # The shell: its record is of the DOM its scripts made, and says so, as its event does.
    assert (got[shell]["status"], got[shell]["fetch_mode"], got[shell]["title"]) == ("OK", "rendered", "Rendered Title")
    assert events[shell]["fetch_mode"] == "rendered"
    assert site.hits["/app.js"] >= 1 and site.hits["/data.json"] >= 1
    # A page that states its own content in its static HTML (text, a title set by a script that
    # is not needed to read it) is read statically.
    assert got[static]["fetch_mode"] == "static"
    # The canary page ran in the browser, and nothing it asked for left the guard.
    assert got[canary]["fetch_mode"] == "rendered" and got[canary]["title"] == "canary page"
    assert sum(site.canary_hits.values()) == 0, site.canary_hits
    assert renders("ok") - before == 2

    # The content log: the static response, then the rendered DOM as a conversion record of it.
    records = []
    for path in sorted(glob.glob(os.path.join(settings.data_dir, "**", "*.warc.gz"), recursive=True)):
        with open(path, "rb") as fh:
            for r in ArchiveIterator(io.BytesIO(fh.read())):
                records.append((r.rec_type, r.rec_headers.get_header("WARC-Target-URI"),
                                r.rec_headers.get_header("WARC-Record-ID"),
                                r.rec_headers.get_header("WARC-Refers-To"), r.content_stream().read()))
    response = next(r for r in records if r[0] == "response" and r[1] == shell)
    conversion = next(r for r in records if r[0] == "conversion" and r[1] == shell)
    assert conversion[3] == response[2] and b"Rendered Title" in conversion[4]
    assert b"Rendered Title" not in response[4]
    assert not any(r[0] == "conversion" and r[1] == static for r in records)


def _browsers() -> list[int]:
    """Pids of the processes running with a renderer's profile (src/spiderduck/fetcher/render/browser.py)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if b"spiderduck-render-" in fh.read():
                    found.append(int(pid))
        except OSError:
            continue
    return found


async def test_ctrl_c_of_up_leaves_no_browser_behind(tmp_path, nats_server):
    """`up` with render on, stopped with SIGINT while a page is being rendered (one that loops
    forever): it exits in its grace, and no browser process outlives it."""
    import asyncio
    import signal
    import time

    import yaml

    from support.cli import Proc

    skip_without_chromium()
    assert not _browsers(), "a browser of another test is still running"
    async with sites() as site:
        settings = service_settings(tmp_path, nats_server.url)
        config = tmp_path / "render.yaml"
        config.write_text(yaml.safe_dump({
            "data_dir": settings.data_dir, "nats_url": settings.nats_url, "shutdown_grace": 3,
            "metadata_api": {"listen": settings.metadata_api.listen},
            "fetcher": {"listen": settings.fetcher.listen, "allowed_networks": [f"{ORIGIN_HOST}/32"]},
            "render": {"enabled": True, "timeout": "60s"}, "process": {"workers": 1}}))
        async with Client(settings) as client:
            up = Proc(tmp_path, "up", "--config", str(config))
            try:
                await client.submit_url(site.origin("/loop"))
                deadline = time.monotonic() + 60
                while not (_browsers() and site.hits["/loop"]):       # the page is in the browser
                    assert up.proc.poll() is None, up.stderr[-3000:]
                    assert time.monotonic() < deadline, up.stderr[-3000:]
                    await asyncio.sleep(0.05)
                took = await up.stop(signal.SIGINT, 15)
            finally:
                up.kill()
    assert up.proc.returncode == 0 and "Traceback" not in up.stderr, up.stderr[-3000:]
    assert took < 15
    deadline = time.monotonic() + 5
    while _browsers():
        assert time.monotonic() < deadline, f"browser processes outlived `up`: {_browsers()}"
        await asyncio.sleep(0.05)
