"""robots.txt verdicts shared through a real memcached over TLS (memcacheds://).

Debian's memcached is built with TLS (`-Z`): each test starts one (milliseconds) that serves
TLS only, with a certificate made here by TestCA, through the shared fixture's MemcachedProcess
run by a wrapper that adds the TLS flags. A client that cannot verify the server, or a server
that does not speak TLS, is a miss and a logged failure, never an error of the fetch path.
"""
from __future__ import annotations

import logging
import os
import pathlib
import shlex

import pytest

from conftest import MemcachedProcess
from spiderduck.fetcher.robots.store import open_robots_store
from support.certs import Issued, TestCA

STORE_LOG = "spiderduck.fetcher.robots"


@pytest.fixture
def pki(tmp_path):
    return TestCA(tmp_path / "ca"), TestCA(tmp_path / "other", name="Another CA")


def tls_memcached(binary: str, folder: pathlib.Path, cert: Issued) -> MemcachedProcess:
    """A memcached serving TLS only with `cert`, started (the test stops it)."""
    wrapper = folder / f"memcached-tls-{os.urandom(4).hex()}"
    tls = shlex.quote(f"ssl_chain_cert={cert.cert},ssl_key={cert.key}")
    wrapper.write_text(f'#!/bin/sh\nexec {shlex.quote(binary)} "$@" -Z -o {tls}\n')
    wrapper.chmod(0o755)
    return MemcachedProcess(str(wrapper)).start()


@pytest.fixture
def server(memcached_binary, tmp_path, pki):
    process = tls_memcached(memcached_binary, tmp_path, pki[0].issue("memcached"))
    yield process
    process.stop()


def url(server: MemcachedProcess, ca: str, host: str = "127.0.0.1") -> str:
    return f"memcacheds://{host}:{server.port}?ca={ca}"


async def miss_logged(store, caplog) -> str:
    """Assert a get through `store` is a miss with one failure; the warning it logged."""
    caplog.set_level(logging.WARNING, logger=STORE_LOG)
    try:
        assert await store.get("http://a.test") is None
        assert store.errors == 1
    finally:
        await store.close()
    [warning] = [r.getMessage() for r in caplog.records if r.name == STORE_LOG]
    return warning


async def test_verdicts_are_shared_over_tls(server, pki):
    one = open_robots_store(url(server, pki[0].ca), timeout=2)
    two = open_robots_store(url(server, pki[0].ca, host="localhost"), timeout=2)
    try:
        await one.set("http://a.test", b"verdict", 60)
        assert await two.get("http://a.test") == b"verdict"
        assert one.errors == two.errors == 0
    finally:
        await one.close()
        await two.close()


async def test_a_server_certificate_from_another_ca_is_a_logged_miss(server, pki, caplog):
    store = open_robots_store(url(server, pki[1].ca), timeout=2)
    warning = await miss_logged(store, caplog)
    assert "failed the TLS handshake" in warning and "CERTIFICATE_VERIFY_FAILED" in warning


async def test_a_certificate_that_does_not_name_the_host_is_a_logged_miss(
        memcached_binary, tmp_path, pki, caplog):
    elsewhere = tls_memcached(memcached_binary, tmp_path, pki[0].issue("cache", dns=["cache.test"]))
    try:
        store = open_robots_store(url(elsewhere, pki[0].ca), timeout=2)
        warning = await miss_logged(store, caplog)
    finally:
        elsewhere.stop()
    assert "failed the TLS handshake" in warning and "not valid for '127.0.0.1'" in warning


async def test_a_plaintext_memcached_is_refused_by_the_tls_client(memcached_server, pki, caplog):
    store = open_robots_store(url(memcached_server, pki[0].ca), timeout=2)
    assert "failed the TLS handshake" in await miss_logged(store, caplog)


async def test_a_plaintext_client_gets_nothing_from_the_tls_memcached(server, caplog):
    store = open_robots_store(f"memcached://127.0.0.1:{server.port}", timeout=1)
    await miss_logged(store, caplog)
