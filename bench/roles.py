"""The roles of a deployment on one machine, for bench/pipeline --roles: `spiderduck fetcher`,
`scheduler` and `metadata-api`, each its own process on one config, so every hop goes from the
scheduler to the fetcher over gRPC (over mutual TLS with the config's `tls`), as between pods.

    python bench/roles.py CONFIG

A signal (SIGINT, SIGTERM) is passed to every role; it exits when all have, with the first
non-zero status among them."""
from __future__ import annotations

import signal
import subprocess
import sys

ROLES = ("fetcher", "scheduler", "metadata-api")


def main() -> int:
    config = sys.argv[1]
    roles = [subprocess.Popen([sys.executable, "-m", "spiderduck.cli.main", role, "--config", config])
             for role in ROLES]

    def forward(signum, _frame) -> None:
        for proc in roles:
            if proc.poll() is None:
                proc.send_signal(signum)

    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, forward)
    codes = [proc.wait() for proc in roles]
    return next((code for code in codes if code), 0)


if __name__ == "__main__":
    sys.exit(main())
