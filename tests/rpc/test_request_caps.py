"""What a spiderduck.rpc.server server receives, over a real socket: a server naming no cap (health
checking and reflection alone, as the scheduler's) takes DEFAULT_MAX_REQUEST_BYTES; a service's
cap, or its method's, refuses a larger request RESOURCE_EXHAUSTED, and the server goes on."""
from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from spiderduck.cli.nats_server import free_port
from spiderduck.rpc.server import DEFAULT_MAX_REQUEST_BYTES, GrpcServer

HEALTH = "grpc.health.v1.Health"


async def check(listen: str, service: str) -> grpc.StatusCode:
    async with grpc.aio.insecure_channel(listen) as channel:
        try:
            await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        except grpc.aio.AioRpcError as exc:
            return exc.code()
    return grpc.StatusCode.OK


async def test_a_server_naming_no_cap_takes_the_default():
    listen = f"127.0.0.1:{free_port()}"
    async with GrpcServer(listen):
        assert await check(listen, "") is grpc.StatusCode.OK
        assert await check(listen, "x" * DEFAULT_MAX_REQUEST_BYTES) is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert await check(listen, "") is grpc.StatusCode.OK


@pytest.mark.parametrize("caps", [{HEALTH: 1000, "other.Service": 100_000},
                                  {f"/{HEALTH}/Check": 1000, HEALTH: 100_000}],
                         ids=["service", "method-over-service"])
async def test_a_request_over_its_own_cap_is_refused_under_the_servers_largest(caps):
    listen = f"127.0.0.1:{free_port()}"
    async with GrpcServer(listen, request_caps=caps) as grpc_server:
        assert grpc_server.max_request_bytes == 100_000
        assert await check(listen, "x" * 900) is grpc.StatusCode.NOT_FOUND       # under: answered
        assert await check(listen, "x" * 2000) is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert await check(listen, "") is grpc.StatusCode.OK
