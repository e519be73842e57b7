"""A Fetcher served over real gRPC on a free loopback port, as a FetcherService stub sees it."""
from __future__ import annotations

import contextlib

import grpc

from spiderduck.fetcher import server
from spiderduck.rpc.server import GrpcServer
from spiderduck.v1 import fetcher_pb2_grpc


@contextlib.asynccontextmanager
async def served(fetcher):
    """A FetcherServiceStub calling `fetcher` (opened) through a GrpcServer on 127.0.0.1:0."""
    grpc_server = GrpcServer("127.0.0.1:0")
    server.register(grpc_server, fetcher)
    address = grpc_server.bind()
    async with grpc_server, grpc.aio.insecure_channel(address) as channel:
        yield fetcher_pb2_grpc.FetcherServiceStub(channel)
