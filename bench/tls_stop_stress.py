"""Stress of `up` serving mutual TLS: many handshakes in parallel while the machine is loaded,
the server's certificate files replaced on disk meanwhile, then SIGTERM in the middle of it.
Not part of the suite: it looks for a rare hang (issue 38's first rotation, reverted in c73b2a5:
an `up` with TLS refused a handshake and then did not stop on SIGTERM within 30 s).

    .venv/bin/python bench/tls_stop_stress.py --runs 30 --parallel 3 --load 2

Each run: a CA and certificates (tests/support/certs.py), `bin/spiderduck up` with tls.cert, tls.key
and tls.ca on free ports; then `--handshakers` threads making TLS connections to the metadata API
as fast as they can (a full mutual TLS handshake, a TCP connect closed at once, a ClientHello
left half way), one thread calling gRPC health checks over fresh TLS channels (wait_for_ready,
10 s: a failure while serving is a refused handshake or a hung server), and, with --rotate, the
server's files replaced every 0.2 s (another certificate of the same CA, written beside and
renamed in place; up looks every --reload-interval seconds). After --serve
seconds, SIGTERM while all of that goes on. A run fails when a health check failed while up was
serving, or up took more than --stop-timeout seconds to exit (then its threads' native stacks
are written next to the report by gdb, when installed, and it is killed).
--load N starts N processes spinning on the CPU for the whole stress.

Prints one line per run, then `runs N, failures F (refused R, hung H)`; exit status 1 on a failure.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing
import os
import pathlib
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import grpc  # noqa: E402
from grpc_health.v1 import health_pb2, health_pb2_grpc  # noqa: E402

from spiderduck.cli.nats_server import free_port, port_open  # noqa: E402


def spin() -> None:
    while True:
        pass


def handshakes(port: int, pki: dict, until: threading.Event, counts: dict, which: int) -> None:
    context = ssl.create_default_context(cafile=pki["ca"])
    context.load_cert_chain(pki["client.crt"], pki["client.key"])
    context.set_alpn_protocols(["h2"])
    n = which
    while not until.is_set():
        n += 1
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=5) as raw:
                kind = n % 3
                if kind == 0:              # a whole mutual TLS handshake
                    with context.wrap_socket(raw, server_hostname="localhost"):
                        counts["full"] += 1
                elif kind == 1:            # connect, close at once (a port probe)
                    counts["probe"] += 1
                else:                      # a ClientHello, then gone
                    raw.setblocking(False)
                    incoming, outgoing = ssl.MemoryBIO(), ssl.MemoryBIO()
                    obj = context.wrap_bio(incoming, outgoing, server_hostname="localhost")
                    try:
                        obj.do_handshake()
                    except ssl.SSLWantReadError:
                        pass
                    raw.sendall(outgoing.read())
                    counts["half"] += 1
        except OSError:
            counts["error"] += 1


def health_checks(address: str, pki: dict, until: threading.Event, failures: list) -> int:
    read = lambda name: pathlib.Path(pki[name]).read_bytes()  # noqa: E731
    credentials = grpc.ssl_channel_credentials(read("ca"), read("client.key"), read("client.crt"))
    done = 0
    while not until.is_set():
        with grpc.secure_channel(address, credentials,
                                 options=[("grpc.ssl_target_name_override", "localhost")]) as channel:
            try:
                health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10,
                                                          wait_for_ready=True)
                done += 1
            except grpc.RpcError as exc:
                if not until.is_set():
                    failures.append(f"{exc.code().name}: {exc.details()}")
    return done


def make_pki(work: str) -> dict[str, str]:
    """A CA; the server's files at fixed paths (server.crt, server.key, ca.crt); a client's; and
    a second server certificate of the same CA to rotate to."""
    from support.certs import TestCA
    ca = TestCA(f"{work}/pki")
    first, second, client = ca.issue("server"), ca.issue("server2"), ca.issue("client")
    live = pathlib.Path(work, "live")
    live.mkdir()
    for source, name in ((first.cert, "server.crt"), (first.key, "server.key"), (ca.ca, "ca.crt")):
        shutil.copyfile(source, live / name)
    return {"folder": str(live), "ca": ca.ca, "client.crt": client.cert, "client.key": client.key,
            "pairs": [(first.cert, first.key), (second.cert, second.key)]}


def rotate(pki: dict, until: threading.Event) -> int:
    """The server's files replaced in turn by the two certificates (each written beside and
    renamed in place, the key first)."""
    folder, n = pki["folder"], 0
    while not until.wait(0.2):
        cert, key = pki["pairs"][n % 2 ^ 1]
        for source, name in ((key, "server.key"), (cert, "server.crt")):
            shutil.copyfile(source, f"{folder}/.{name}.new")
            os.replace(f"{folder}/.{name}.new", f"{folder}/{name}")
        n += 1
    return n


def one_run(number: int, args) -> tuple[str, str]:
    """('ok' | 'refused' | 'hung' | 'exit', a line saying what happened)."""
    work = tempfile.mkdtemp(prefix=f"tls-stress-{number}-")
    try:
        pki = make_pki(work)
        folder = pki["folder"]
        api, fetcher, web = free_port(), free_port(), free_port()
        command = [str(ROOT / "bin" / "spiderduck"), "up",
                   "--set", f"tls.cert={folder}/server.crt", "--set", f"tls.key={folder}/server.key",
                   "--set", f"tls.ca={folder}/ca.crt", "--set", f"data_dir={work}/var",
                   "--set", f"metadata_api.listen=127.0.0.1:{api}", "--set", f"fetcher.listen=127.0.0.1:{fetcher}",
                   "--set", f"web.listen=127.0.0.1:{web}", "--set", f"metrics_listen=127.0.0.1:{free_port()}",
                   "--set", f"tls.reload_interval={args.reload_interval}"]
        log = open(f"{work}/up.log", "w")
        up = subprocess.Popen(command, cwd=work, stdout=log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 90
        while not port_open("127.0.0.1", api):
            if up.poll() is not None or time.monotonic() > deadline:
                up.kill()
                return "exit", f"run {number}: up did not start ({up.poll()}): {_tail(work)}"
            time.sleep(0.05)
        until, stopped = threading.Event(), threading.Event()
        counts = {"full": 0, "probe": 0, "half": 0, "error": 0}
        failures: list[str] = []
        threads = [threading.Thread(target=handshakes, args=(api, pki, stopped, counts, i), daemon=True)
                   for i in range(args.handshakers)]
        threads.append(threading.Thread(target=health_checks, args=(f"127.0.0.1:{api}", pki, until, failures),
                                        daemon=True))
        if args.rotate:
            threads.append(threading.Thread(target=rotate, args=(pki, stopped), daemon=True))
        for thread in threads:
            thread.start()
        time.sleep(args.serve)                 # the bench's own pacing: serve, then stop
        until.set()
        started = time.monotonic()
        up.send_signal(signal.SIGTERM)
        try:
            up.wait(args.stop_timeout)
            took = time.monotonic() - started
        except subprocess.TimeoutExpired:
            dump = f"{args.report}/hung-{number}-{up.pid}.txt"
            if shutil.which("gdb"):
                subprocess.run(["gdb", "-p", str(up.pid), "-batch", "-ex", "thread apply all bt"],
                               stdout=open(dump, "w"), stderr=subprocess.STDOUT, timeout=120)
            shutil.copy(f"{work}/up.log", f"{args.report}/hung-{number}-up.log")
            up.kill()
            up.wait()
            stopped.set()
            return "hung", f"run {number}: up still running {args.stop_timeout:g}s after SIGTERM ({dump}) {counts}"
        finally:
            stopped.set()
        log.close()
        rotations = pathlib.Path(work, "up.log").read_text().count("serves the new certificate")
        done = f"stopped in {took:.1f}s (exit {up.returncode}); {rotations} server rotations; handshakes {counts}"
        if failures:
            shutil.copy(f"{work}/up.log", f"{args.report}/refused-{number}-up.log")
            return "refused", f"run {number}: {done}; {len(failures)} health checks failed: {failures[:3]}"
        return "ok", f"run {number}: {done}"
    finally:
        shutil.rmtree(work, ignore_errors=True)


def _tail(work: str) -> str:
    try:
        return pathlib.Path(work, "up.log").read_text()[-1500:]
    except OSError:
        return ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--parallel", type=int, default=2, help="runs at once")
    parser.add_argument("--load", type=int, default=2, help="CPU spinning processes")
    parser.add_argument("--handshakers", type=int, default=8, help="handshaking threads per run")
    parser.add_argument("--serve", type=float, default=3.0, help="seconds of handshakes before SIGTERM")
    parser.add_argument("--stop-timeout", type=float, default=30.0)
    parser.add_argument("--rotate", action="store_true", help="replace the server's files every 0.2 s")
    parser.add_argument("--reload-interval", type=float, default=0.3, help="up's tls.reload_interval")
    parser.add_argument("--report", default=tempfile.gettempdir(), help="where hung runs' stacks go")
    args = parser.parse_args()
    spinners = [multiprocessing.Process(target=spin, daemon=True) for _ in range(args.load)]
    for process in spinners:
        process.start()
    tally: dict[str, int] = {}
    try:
        with concurrent.futures.ThreadPoolExecutor(args.parallel) as pool:
            for outcome, line in pool.map(lambda n: one_run(n, args), range(1, args.runs + 1)):
                tally[outcome] = tally.get(outcome, 0) + 1
                print(line, flush=True)
    finally:
        for process in spinners:
            process.terminate()
    failed = args.runs - tally.get("ok", 0)
    print(f"runs {args.runs}, failures {failed} (refused {tally.get('refused', 0)}, hung {tally.get('hung', 0)}, "
          f"did not start {tally.get('exit', 0)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
