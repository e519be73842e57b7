#!/usr/bin/env python3
"""Look URLs up in a running SpiderDuck and print each one's record as a JSON line.

    bin/spiderduck up                                   # in another terminal
    .venv/bin/python examples/get_metadata.py https://example.com/ https://t.co/abc
    .venv/bin/python examples/get_metadata.py --file urls.txt --metadata 127.0.0.1:50051

Only stored records are read (GetUrlMetadata): nothing is fetched. A URL without a record
prints {"url": ..., "found": false} ("pending": true while it is queued or being crawled), and
the exit status is then 1.
"""
from __future__ import annotations

import argparse
import json
import sys

from spiderduck.client import Client, Error


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("urls", nargs="*", metavar="URL")
    parser.add_argument("--file", help="also the URLs of this file, one per line")
    parser.add_argument("--metadata", default="127.0.0.1:50051",
                        help="the metadata-api's address (metadata_api.listen)")
    args = parser.parse_args()
    urls = list(args.urls)
    if args.file:
        with open(args.file, encoding="utf-8") as fh:
            urls += [line.strip() for line in fh if line.strip() and not line.startswith("#")]
    if not urls:
        parser.error("give URLs or --file")
    try:
        with Client(args.metadata) as spiderduck:
            lookups = spiderduck.get(urls)       # any number: the client batches them
    except Error as exc:
        print(f"get_metadata: {exc}", file=sys.stderr)
        return 2
    for lookup in lookups:
        print(json.dumps(lookup.to_dict(), ensure_ascii=False))
    return 0 if all(lookup.found for lookup in lookups) else 1


if __name__ == "__main__":
    sys.exit(main())
