"""bench/explain: ExplainUrl's latency on a stored page of the corpus's median size (issue 30's
target: under 50 ms), against GetUrlMetadata of the same URL and a bare grpc.aio server answering
the same Explanation's bytes from memory, in the same run and process, interleaved call by call.

The page (../shared/corpus/metascraper, the median by size) is stored as the pipeline stores it:
its record in SQLite, its response in a WARC content store. The metadata API's servicer serves
it over a real socket with one extraction worker (metadata_api.explain_workers = 1), warmed
before timing. It prints the median, p90 and p99 in ms of each, and ExplainUrl's median over the
bare server's. Also the record's size with and without its provenance (mean over the corpus).
Exits 0 with a message, measuring nothing, when ../shared is absent.
"""
from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import pathlib
import statistics
import sys
import tempfile
import time

import grpc

import tree  # noqa: E402
tree.use_this_tree()
from spiderduck.cli.nats_server import free_port
from spiderduck.wire import record_proto
from spiderduck.core.config import MetadataApiSettings
from spiderduck.query.explainer import Explainer
from spiderduck.extract import extract_page
from spiderduck.rpc.server import GrpcServer
from spiderduck.core.record import UrlRecord, with_page
from spiderduck.core.status import Status
from spiderduck.stores.content import FetchedContent
from spiderduck.stores.open import open_metadata_store
from spiderduck.stores.warc_files import WarcFileStore
from spiderduck.metadata_api import server
from spiderduck.v1 import metadata_pb2, metadata_pb2_grpc

ROOT = pathlib.Path(__file__).resolve().parent.parent
CORPUS = ROOT.parent / "shared" / "corpus" / "metascraper"
SERVICE = "spiderduck.v1.MetadataService"
# process.parser and the robots token of fetcher.user_agent, both the defaults: the records are
# extracted, and re-extracted by ExplainUrl, alike.
EXTRACTION = {"parser": "selectolax", "robots_token": "spiderduck"}


def record_of(case: dict, body: bytes) -> UrlRecord:
    page = extract_page(body, case["url"], case.get("content_type"), **EXTRACTION)
    return dataclasses.replace(UrlRecord(url=case["url"], status=Status.OK, final_url=case["url"],
                                         canonical_url=case["url"], fetched_at=time.time()), **with_page(page))


def provenance_size(cases: list[dict]) -> tuple[float, float]:
    """Mean stored record bytes over the corpus, without and with provenance."""
    without = with_ = 0
    for case in cases:
        rec = record_of(case, (CORPUS / case["html"]).read_bytes())
        with_ += len(record_proto.to_bytes(rec))
        without += len(record_proto.to_bytes(dataclasses.replace(rec, provenance=())))
    return without / len(cases), with_ / len(cases)


async def bare_server(answer: bytes) -> tuple[grpc.aio.Server, str]:
    async def explain(request, context) -> bytes:
        return answer
    srv = grpc.aio.server()
    srv.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {
        "ExplainUrl": grpc.unary_unary_rpc_method_handler(
            explain, request_deserializer=metadata_pb2.ExplainUrlRequest.FromString,
            response_serializer=lambda data: data)}),))
    address = f"127.0.0.1:{free_port()}"
    srv.add_insecure_port(address)
    await srv.start()
    return srv, address


async def run(calls: int) -> None:
    cases = json.loads((CORPUS / "cases.json").read_text(encoding="utf-8"))
    by_size = sorted(cases, key=lambda c: (CORPUS / c["html"]).stat().st_size)
    case = by_size[len(by_size) // 2]
    body = (CORPUS / case["html"]).read_bytes()
    url = case["url"]
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_metadata_store(f"sqlite:///{tmp}/m.db")
        content = WarcFileStore(f"{tmp}/warc")
        ref = await content.append(FetchedContent(url, 200, (("Content-Type", "text/html; charset=utf-8"),),
                                                  body, time.time()))
        await store.put(url, dataclasses.replace(record_of(case, body), content_ref=ref), [url])
        explainer = Explainer(store, content, workers=1, budget=2.0, **EXTRACTION)
        listen = f"127.0.0.1:{free_port()}"
        ours = GrpcServer(listen)
        server.register(ours, store, MetadataApiSettings(), explainer=explainer)
        async with ours, grpc.aio.insecure_channel(listen) as channel:
            stub = metadata_pb2_grpc.MetadataServiceStub(channel)
            request = metadata_pb2.ExplainUrlRequest(url=url)
            answer = await stub.ExplainUrl(request, timeout=60)          # starts the worker
            assert not answer.note, answer.note
            bare, bare_address = await bare_server(answer.SerializeToString())
            async with grpc.aio.insecure_channel(bare_address) as bare_channel:
                bare_stub = metadata_pb2_grpc.MetadataServiceStub(bare_channel)
                get = metadata_pb2.GetUrlMetadataRequest(urls=[url])
                ways = {"bare": lambda: bare_stub.ExplainUrl(request),
                        "GetUrlMetadata": lambda: stub.GetUrlMetadata(get),
                        "ExplainUrl": lambda: stub.ExplainUrl(request)}
                times: dict[str, list[float]] = {name: [] for name in ways}
                for n in range(calls + 20):
                    for name, call in ways.items():
                        start = time.perf_counter()
                        await call()
                        if n >= 20:                                      # warm-up
                            times[name].append((time.perf_counter() - start) * 1000)
            await bare.stop(None)
        await explainer.close()
        await content.close()
        await store.close()
    print(f"page: {case['name']} ({len(body):,} bytes, the corpus's median of {len(cases)}); "
          f"{calls} calls each, interleaved; {sum(len(f.rejected) for f in answer.fields)} values that lost")
    for name, ms in times.items():
        ms.sort()
        print(f"  {name:<15} median {statistics.median(ms):7.2f} ms   p90 {ms[int(len(ms) * 0.9)]:7.2f}   "
              f"p99 {ms[int(len(ms) * 0.99)]:7.2f}")
    ratio = statistics.median(times["ExplainUrl"]) / statistics.median(times["bare"])
    print(f"  ExplainUrl / bare: {ratio:.1f}x (target: ExplainUrl under 50 ms)")
    without, with_ = provenance_size(cases)
    print(f"record size, mean over the corpus: {without:,.0f} B without provenance, {with_:,.0f} B with "
          f"(+{(with_ - without) / without * 100:.2f}%)")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--calls", type=int, default=200)
    args = ap.parse_args()
    if not CORPUS.exists():
        print(f"{CORPUS} not found: the corpus is read from ../shared beside the repo; nothing measured")
        return 0
    asyncio.run(run(args.calls))
    return 0


if __name__ == "__main__":
    sys.exit(main())
