"""The scheduler's channels to fetchers after the scheduler's TLS files rotate on disk (issue 38):
a hop after the rotation dials again with the new certificate and CA, against a real TLS server."""
from __future__ import annotations

import os
import pathlib
import shutil

import pytest

from spiderduck.core.config import TlsSettings
from spiderduck.core.errors import FetcherUnavailable, WrongFetcher
from spiderduck.fetcher import server
from spiderduck.rpc.server import GrpcServer
from spiderduck.scheduler.fetcher_client import GrpcTransport
from spiderduck.v1 import fetcher_pb2_grpc
from support.certs import TestCA
from support.service import wait_until
from test_fetcher_client import Recording


def install(folder: pathlib.Path, cert: str, key: str, ca: str) -> None:
    for source, name in ((key, "client.key"), (cert, "client.crt"), (ca, "ca.crt")):
        shutil.copyfile(source, folder / f".{name}.new")
        os.replace(folder / f".{name}.new", folder / name)


async def hop(transport: GrpcTransport, address: str):
    return await transport.fetch(address, "http://a.test/", purpose="page", max_body_bytes=0, timeout=5)


async def test_a_hop_after_the_client_files_rotate_dials_with_the_new_ones(tmp_path):
    old, new = TestCA(tmp_path / "old"), TestCA(tmp_path / "new", name="New CA")
    fetcher_cert, old_scheduler, new_scheduler = new.issue("fetcher"), old.issue("scheduler"), new.issue("scheduler")
    live = tmp_path / "live"
    live.mkdir()
    install(live, old_scheduler.cert, old_scheduler.key, old.ca)
    mine = TlsSettings(cert=str(live / "client.crt"), key=str(live / "client.key"), ca=str(live / "ca.crt"),
                       reload_interval=0.1)
    grpc_server = GrpcServer("127.0.0.1:0", tls=TlsSettings(cert=fetcher_cert.cert, key=fetcher_cert.key, ca=new.ca))
    recording = Recording()
    grpc_server.add(fetcher_pb2_grpc.add_FetcherServiceServicer_to_server, recording, server.SERVICE_NAME)
    address = grpc_server.bind()
    transport = GrpcTransport(mine)
    async with grpc_server:
        try:
            with pytest.raises(WrongFetcher):                 # UNAVAILABLE: the old CA refused both ways
                await hop(transport, address)
            install(live, new_scheduler.cert, new_scheduler.key, new.ca)

            async def served():
                try:
                    return await hop(transport, address)
                except (WrongFetcher, FetcherUnavailable):
                    return None
            answered = await wait_until(served, 10, "a hop with the rotated files to be served")
        finally:
            await transport.close()
    assert answered.http_status == 304 and [r.url for r in recording.requests] == ["http://a.test/"]
