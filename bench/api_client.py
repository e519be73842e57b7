"""The load generator of bench/api, run in its own process: GetUrlMetadata calls at a server.

    python bench/api_client.py ADDRESS URL_FILE --mode closed --batch 1 --concurrency 32 --seconds 5
    python bench/api_client.py ADDRESS URL_FILE --mode rate --rate 1000 --seconds 5

closed: `concurrency` calls always in flight, as fast as the server answers.
rate: calls started at a fixed rate whatever the answers (an open loop), for latency.
--tls DIR: over mutual TLS, with DIR's ca.crt, client.crt and client.key (bench/api --tls);
--token T: each call carries `authorization: Bearer T`.
Prints one JSON line: calls, urls, seconds, errors, p50_ms, p99_ms.
"""
from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import time

import grpc
import uvloop

from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc


def percentile(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(p / 100 * (len(ordered) - 1))))] if ordered else 0.0


async def run(args) -> dict:
    with open(args.url_file, encoding="utf-8") as fh:
        urls = [line.strip() for line in fh if line.strip()]
    requests = [metadata_pb2.GetUrlMetadataRequest(urls=[urls[(i * args.batch + j) % len(urls)]
                                                         for j in range(args.batch)])
                for i in range(len(urls))]
    latencies: list[float] = []
    errors = 0
    calls = 0
    options = [("grpc.max_receive_message_length", 64 << 20)]
    metadata = (("authorization", f"Bearer {args.token}"),) if args.token else None
    if args.tls:
        def read(name: str) -> bytes:
            with open(os.path.join(args.tls, name), "rb") as fh:
                return fh.read()
        credentials = grpc.ssl_channel_credentials(read("ca.crt"), read("client.key"), read("client.crt"))
        channel = grpc.aio.secure_channel(args.address, credentials, options=options)
    else:
        channel = grpc.aio.insecure_channel(args.address, options=options)
    async with channel:
        stub = metadata_pb2_grpc.MetadataServiceStub(channel)
        for request in requests[:20]:                          # warm up the connection
            await stub.GetUrlMetadata(request, timeout=10, metadata=metadata)
        pick = itertools.cycle(requests)
        started = time.perf_counter()
        end = started + args.seconds

        async def one(request) -> None:
            nonlocal errors, calls
            t0 = time.perf_counter()
            try:
                response = await stub.GetUrlMetadata(request, timeout=10, metadata=metadata)
                if len(response.results) != args.batch or not response.results[0].found:
                    errors += 1
            except grpc.aio.AioRpcError:
                errors += 1
            latencies.append(time.perf_counter() - t0)
            calls += 1

        if args.mode == "closed":
            async def loop() -> None:
                while time.perf_counter() < end:
                    await one(next(pick))
            await asyncio.gather(*(loop() for _ in range(args.concurrency)))
        else:
            tasks = set()
            n = 0
            while (now := time.perf_counter()) < end:
                due = started + n / args.rate
                if due > now:
                    await asyncio.sleep(due - now)
                task = asyncio.create_task(one(next(pick)))
                tasks.add(task)
                task.add_done_callback(tasks.discard)
                n += 1
            await asyncio.gather(*tasks)
        seconds = time.perf_counter() - started
    return {"calls": calls, "urls": calls * args.batch, "seconds": seconds, "errors": errors,
            "p50_ms": percentile(latencies, 50) * 1000, "p99_ms": percentile(latencies, 99) * 1000}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("address")
    ap.add_argument("url_file")
    ap.add_argument("--mode", choices=("closed", "rate"), default="closed")
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--concurrency", type=int, default=32)
    ap.add_argument("--rate", type=float, default=1000.0)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--tls", metavar="DIR", help="mutual TLS with DIR/ca.crt, client.crt, client.key")
    ap.add_argument("--token", metavar="T", help="bearer token sent with each call")
    args = ap.parse_args()
    print(json.dumps(uvloop.run(run(args))), flush=True)


if __name__ == "__main__":
    main()
