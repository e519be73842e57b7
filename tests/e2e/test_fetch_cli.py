"""`spiderduck fetch URL`: one hop through a real fetcher role (leases in NATS, a local web);
exit 0 on any answer, 2 on bad input, 1 when no fetcher answers."""
from __future__ import annotations

import asyncio
import re
import socket

import pytest

from spiderduck.cli.main import main as cli_main
from spiderduck.cli.nats_server import free_port
from spiderduck.fetcher.main import run_fetcher
from support.cli import run_cli
from support.service import RunningService, service_settings

PAGE = "<html><title>Hello</title><p>" + "x" * 500 + "</p></html>"


async def fetch(*args: str) -> tuple[int, str, str]:
    for _ in range(20):
        code, out, err = await run_cli("fetch", *args)
        if "FAILED_PRECONDITION" not in err:      # else the fetcher has not taken its leases yet
            return code, out, err
        await asyncio.sleep(0.1)
    pytest.fail(err)


async def test_fetch_prints_status_headers_timing_and_the_body_on_request(nats_server, localweb, tmp_path):
    page = localweb.page("news.test", "/a", PAGE, headers={"X-Test": "one\u009b31m"})
    moved = localweb.redirect("news.test", "/old", page)
    settings = service_settings(tmp_path, nats_server.url, **{"fetcher.id": "fetcher-cli"})
    address = settings.fetcher.listen
    async with RunningService(settings, roles=(run_fetcher,)):
        code, out, err = await fetch(page, "--set", f"fetcher.listen={address}")
        assert code == 0, err
        assert f"url:      {page}\nstatus:   OK, HTTP 200\n" in out
        assert f"fetcher:  fetcher-cli at {address}\n" in out
        assert f"body:     {len(PAGE)} bytes\n" in out
        assert re.search(r"^timing:   queued \d+\.\d{3}s  robots \d+\.\d{3}s  origin \d+\.\d{3}s  "
                         r"\(call \d+\.\d{3}s\)$", out, re.M), out
        assert "\n  X-Test: one\\x9b31m\n" in out          # no terminal escape (8-bit CSI) gets through
        assert "<title>" not in out

        code, out, err = await fetch(page, "--fetcher", address, "--body", "--body-limit", "13")
        assert code == 0, err
        assert out.endswith("\n\n<html><title>") and f"body cut at 13 of {len(PAGE)} bytes" in err

        code, out, err = await fetch(moved, "--fetcher", address)      # one hop: not followed
        assert code == 0, err
        assert "status:   OK, HTTP 301\n" in out and f"\n  Location: {page}\n" in out
        assert len(localweb.hits_for("news.test", "/a")) == 2

        code, out, err = await fetch("http://10.1.2.3/", "--fetcher", address)   # an answer too
        assert code == 0, err
        assert "status:   BLOCKED_ADDRESS\n" in out and "\nerror:    " in out


def test_no_answer_exits_1_and_bad_input_2_with_one_line(capsys):
    def run(*args: str) -> tuple[int, str]:
        capsys.readouterr()
        code = cli_main(["fetch", *args])
        return code, capsys.readouterr().err

    nobody = f"127.0.0.1:{free_port()}"
    code, err = run("http://news.test/", "--fetcher", nobody)
    assert code == 1 and f"fetcher at {nobody}: UNAVAILABLE" in err and "--fetcher HOST:PORT" in err
    assert len(err.strip().splitlines()) == 1, err
    code, err = run("http://news.test/", "--set", f"fetcher.listen={nobody}")
    assert code == 1 and f"fetcher at {nobody}: UNAVAILABLE" in err

    with socket.create_server(("127.0.0.1", 0)) as silent:        # connects, never answers
        port = silent.getsockname()[1]
        code, err = run("http://news.test/", "--fetcher", f"127.0.0.1:{port}", "--timeout", "0.3")
    assert code == 1 and "no answer within 0.3s (--timeout)" in err, err

    for args, reason in [
        (("ftp://news.test/",), "invalid URL 'ftp://news.test/': unsupported scheme ftp"),
        (("http://[::1",), "invalid URL 'http://[::1': cannot be parsed"),
        (("http://news.test/", "--fetcher", "news.test"), "--fetcher: expected HOST:PORT, got 'news.test'"),
        (("http://news.test/", "--set", "fetcher.listen=:80"), "fetcher.listen: expected HOST:PORT"),
        (("http://news.test/", "--timeout", "soon"), "--timeout: not a duration"),
        (("http://news.test/", "--timeout", "0"), "--timeout must be a positive duration"),
        (("http://news.test/", "--body-limit", "-1"), "--body-limit must be 0 or more"),
    ]:
        code, err = run(*args)
        assert code == 2 and err.startswith("spiderduck fetch: ") and reason in err, (args, err)
        assert len(err.strip().splitlines()) == 1, err
    with pytest.raises(SystemExit) as usage:
        cli_main(["fetch"])
    assert usage.value.code == 2 and "URL" in capsys.readouterr().err
