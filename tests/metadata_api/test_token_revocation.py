"""Revocation fails closed: a tokens file that turns empty, missing or unreadable refuses every
token within the reload period, over real gRPC to a real MetadataService, and a good file again
lets the token back in. The ERROR said names the file, never a token."""
from __future__ import annotations

import asyncio
import logging
import os
import time

import grpc
import pytest

from spiderduck.cli.nats_server import free_port
from spiderduck.core.config import MetadataApiSettings, TlsSettings
from spiderduck.metadata_api import auth, server
from spiderduck.metadata_api.auth import metadata_guard
from spiderduck.rpc.server import GrpcServer
from spiderduck.stores.open import open_metadata_store
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc

TOKEN = "revocable-s3cret-token"
RELOAD = 0.3                     # the reload period in these tests (RELOAD_EVERY, shortened)


def empty(path):
    path.write_text("")


def deleted(path):
    path.unlink()


def directory(path):             # unreadable for root too, unlike chmod 000
    path.unlink()
    path.mkdir()


def not_utf8(path):
    path.write_bytes(b"frontend:\xff\xfe-not-text\n")


@pytest.fixture
async def api(tmp_path, monkeypatch):
    monkeypatch.setattr(auth, "RELOAD_EVERY", RELOAD)
    tokens = tmp_path / "tokens"
    tokens.write_text(f"frontend:{TOKEN}\n")
    store = await open_metadata_store(f"sqlite:///{tmp_path}/m.db")
    settings = MetadataApiSettings(tokens_file=str(tokens), resolve_rate=0)
    listen = f"127.0.0.1:{free_port()}"
    grpc_server = GrpcServer(listen, guards={server.SERVICE_NAME: metadata_guard(settings, TlsSettings())})
    server.register(grpc_server, store, settings)
    async with grpc_server, grpc.aio.insecure_channel(listen) as channel:
        yield tokens, metadata_pb2_grpc.MetadataServiceStub(channel)
    await store.close()


async def answer(stub) -> grpc.StatusCode:
    try:
        await stub.GetUrlMetadata(metadata_pb2.GetUrlMetadataRequest(urls=["http://a.test/"]),
                                  metadata=[("authorization", f"Bearer {TOKEN}")], timeout=10)
    except grpc.aio.AioRpcError as exc:
        return exc.code()
    return grpc.StatusCode.OK


async def until(stub, code: grpc.StatusCode, within: float) -> float:
    """Seconds until a call is answered `code`; fails past `within`."""
    start = time.monotonic()
    async with asyncio.timeout(within):
        while await answer(stub) is not code:
            await asyncio.sleep(0.02)
    return time.monotonic() - start


@pytest.mark.parametrize("spoil", [empty, deleted, directory, not_utf8])
async def test_a_spoiled_tokens_file_refuses_the_token_until_a_good_one_is_back(api, spoil, caplog):
    tokens, stub = api
    assert await answer(stub) is grpc.StatusCode.OK
    await asyncio.sleep(RELOAD)                     # the next call looks at the file again
    caplog.clear()
    with caplog.at_level(logging.INFO, logger="spiderduck.metadata_api"):
        spoil(tokens)
        assert await until(stub, grpc.StatusCode.UNAUTHENTICATED, within=RELOAD + 5) <= RELOAD + 1
        errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
        assert errors and str(tokens) in errors[0] and "every token is refused" in errors[0]
        for _ in range(3):                          # still refused, and said once, not each look
            await asyncio.sleep(RELOAD)
            assert await answer(stub) is grpc.StatusCode.UNAUTHENTICATED
        assert len([r for r in caplog.records if r.levelno == logging.ERROR]) == 1
        if tokens.is_dir():
            os.rmdir(tokens)
        tokens.write_text(f"frontend:{TOKEN}\n")
        await until(stub, grpc.StatusCode.OK, within=RELOAD + 5)
    assert TOKEN not in caplog.text and "read again: 1 tokens" in caplog.text
