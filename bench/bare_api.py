"""The bare baseline of bench/api: a grpc.aio server that answers GetUrlMetadata from a dict.

    python bench/bare_api.py PORT ANSWERS_FILE [TLS_DIR]

ANSWERS_FILE holds, for each URL, the serialized UrlMetadataResult that SpiderDuck itself answered
for it (JSON lines: {"url": ..., "result_hex": ...}). This server parses the request, looks each URL
up and joins the results into a GetUrlMetadataResponse: no store, no canonical form, no records.
Health checking and reflection are off. It runs on the same event loop as the service (uvloop)
and says "ready" on stdout once it listens. With TLS_DIR (server.crt, server.key, ca.crt) it serves
mutual TLS only, as SpiderDuck does with `tls` set: the baseline of bench/api --tls.
"""
from __future__ import annotations

import asyncio
import json
import os
import sys

import grpc
import uvloop

from spiderduck.v1 import metadata_pb2

SERVICE = "spiderduck.v1.MetadataService"


def _field(number: int, data: bytes) -> bytes:
    """A length-delimited protobuf field."""
    size, out = len(data), bytearray([number << 3 | 2])
    while size > 0x7F:
        out.append(size & 0x7F | 0x80)
        size >>= 7
    out.append(size)
    return bytes(out) + data


async def serve(port: int, answers: dict[str, bytes], tls_dir: str = "") -> None:
    async def get(request: metadata_pb2.GetUrlMetadataRequest, context) -> bytes:
        return b"".join(_field(1, answers[url]) for url in request.urls)

    server = grpc.aio.server(options=[("grpc.max_send_message_length", 64 << 20), ("grpc.so_reuseport", 0)])
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {
        "GetUrlMetadata": grpc.unary_unary_rpc_method_handler(
            get, request_deserializer=metadata_pb2.GetUrlMetadataRequest.FromString,
            response_serializer=lambda data: data)}),))
    if tls_dir:        # as ours with tls on: the server's certificate, clients' required (mutual TLS)
        def read(name: str) -> bytes:
            with open(os.path.join(tls_dir, name), "rb") as fh:
                return fh.read()
        server.add_secure_port(f"127.0.0.1:{port}", grpc.ssl_server_credentials(
            [(read("server.key"), read("server.crt"))], root_certificates=read("ca.crt"),
            require_client_auth=True))
    else:
        server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("ready", flush=True)
    await server.wait_for_termination()


def main() -> None:
    port, path = int(sys.argv[1]), sys.argv[2]
    tls_dir = sys.argv[3] if len(sys.argv) > 3 else ""
    answers = {}
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            answers[row["url"]] = bytes.fromhex(row["result_hex"])
    uvloop.run(serve(port, answers, tls_dir))


if __name__ == "__main__":
    main()
