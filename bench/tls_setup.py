"""What the benchmarks' --tls runs need: a CA and certificates made in the run (PEM), and a
tokens file, in one folder, as bench/api_client.py, bench/bare_api.py and the service read them."""
from __future__ import annotations

import os
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
BENCH_TOKEN = "bench-token-0"


def make_tls(work: str) -> str:
    """A folder with ca.crt, server.crt/key (naming 127.0.0.1 and localhost), client.crt/key and
    `tokens` (bench:BENCH_TOKEN)."""
    sys.path.insert(0, str(ROOT / "tests"))
    from support.certs import TestCA
    folder = os.path.join(work, "tls")
    ca = TestCA(folder)
    for role, issued in (("server", ca.issue("server")), ("client", ca.issue("client", dns=["bench"]))):
        os.replace(issued.cert, os.path.join(folder, f"{role}.crt"))
        os.replace(issued.key, os.path.join(folder, f"{role}.key"))
    os.replace(ca.ca, os.path.join(folder, "ca.crt"))
    with open(os.path.join(folder, "tokens"), "w") as fh:
        fh.write(f"bench:{BENCH_TOKEN}\n")
    return folder


def tls_settings(folder: str, *, tokens: bool = True) -> list[str]:
    """The service's --set values for mutual TLS (and bearer tokens) from make_tls's folder."""
    out = [f"tls.cert={folder}/server.crt", f"tls.key={folder}/server.key", f"tls.ca={folder}/ca.crt"]
    return out + ([f"metadata_api.tokens_file={folder}/tokens"] if tokens else [])
