"""Garbage bytes to every method of every gRPC service the running roles serve (issue 29): each
answers INVALID_ARGUMENT with a short reason naming the message, and never echoes internals.

The services are those each port's reflection lists, their methods read from the generated
descriptors, so a new service or method is covered without a change here."""
from __future__ import annotations

import re

import grpc
import pytest
from google.protobuf import descriptor_pool
from grpc_health.v1 import health_pb2  # noqa: F401 -- its descriptors, into the pool
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from spiderduck.cli.nats_server import free_port
from conftest import ROOT
from support.service import RunningService, service_settings, wait_port

GARBAGE = {
    "ff": b"\xff\xff\xff",                                  # a tag whose varint never ends
    "truncated-varint": b"\x08",                            # field 1, varint, and no value
    "huge-length": b"\x0a\xff\xff\xff\xff\x0f" + b"x" * 8,  # field 1, 4 GiB long, 8 bytes sent
}
INTERNALS = re.compile(r"Traceback|Exception|Error\(|DecodeError|<class|\.py\b|/")


async def served(channel) -> list[str]:
    stub = reflection_pb2_grpc.ServerReflectionStub(channel)
    async for answer in stub.ServerReflectionInfo(iter([reflection_pb2.ServerReflectionRequest(list_services="")]),
                                                  timeout=5):
        return [s.name for s in answer.list_services_response.service]
    raise AssertionError("reflection answered nothing")


async def garbage_call(channel, method, data: bytes) -> grpc.aio.AioRpcError:
    path = f"/{method.containing_service.full_name}/{method.name}"
    codec = {"request_serializer": None, "response_deserializer": None}
    with pytest.raises(grpc.aio.AioRpcError) as refused:
        if method.client_streaming:
            call = (channel.stream_stream if method.server_streaming else channel.stream_unary)(path, **codec)(
                iter([data]), timeout=5)
        else:
            call = (channel.unary_stream if method.server_streaming else channel.unary_unary)(path, **codec)(
                data, timeout=5)
        if method.server_streaming:
            async for _ in call:
                pass
        else:
            await call
    return refused.value


async def test_every_method_of_every_service_answers_garbage_invalid_argument(tmp_path, nats_server):
    settings = service_settings(tmp_path, nats_server.url, **{"scheduler.listen": f"127.0.0.1:{free_port()}"})
    pool = descriptor_pool.Default()
    answers, services = {}, set()
    async with RunningService(settings):
        await wait_port(settings.scheduler.listen)
        for role, address in (("metadata-api", settings.metadata_api.listen), ("fetcher", settings.fetcher.listen),
                              ("scheduler", settings.scheduler.listen)):
            async with grpc.aio.insecure_channel(address) as channel:
                for name in await served(channel):
                    services.add(name)
                    for method in pool.FindServiceByName(name).methods:
                        for kind, data in GARBAGE.items():
                            refused = await garbage_call(channel, method, data)
                            answers[(role, method.full_name, kind)] = (refused.code(), refused.details())

    ours = {s.full_name for path in sorted((ROOT / "src/spiderduck/v1").glob("*_pb2.py"))
            for s in pool.FindFileByName(f"spiderduck/v1/{path.name[:-len('_pb2.py')]}.proto").services_by_name.values()}
    assert ours and ours <= services, f"not served by any role: {ours - services}"
    assert {"grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= services
    wrong = {call: answer for call, answer in answers.items()
             if answer[0] is not grpc.StatusCode.INVALID_ARGUMENT or len(answer[1]) >= 200
             or INTERNALS.search(answer[1]) or not answer[1].startswith("malformed request: not a ")}
    assert not wrong, wrong
    assert answers[("fetcher", "spiderduck.v1.FetcherService.Fetch", "ff")][1].startswith(
        "malformed request: not a FetchRequest")
