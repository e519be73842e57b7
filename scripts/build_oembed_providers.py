"""Write src/spiderduck/extract/oembed_providers.json, the oEmbed providers SpiderDuck ships, from a
checkout of https://github.com/iamcal/oembed (the source of https://oembed.com/providers.json),
and LICENSES/oembed-MIT.txt, its licence, beside it.

    git clone https://github.com/iamcal/oembed /tmp/oembed
    python scripts/build_oembed_providers.py /tmp/oembed            # (re)write both files
    python scripts/build_oembed_providers.py /tmp/oembed --check    # exit 1 when they differ

It does what the checkout's build.js does (`npm run build`): every providers/*.yml, in file-name
order, each provider as written, without the endpoints' docs_url, example_urls and notes. Two
changes, both for a lookup by host: a scheme that is no http(s) URL with a host (`spotify:*`)
is left out, and so is an endpoint whose URL is not http(s). The result must pass
spiderduck.core.oembed_providers.parse, as an operator's process.oembed_providers must. The
commit read is written to stdout; name it in the commit that updates the files.
"""
from __future__ import annotations

import argparse
import json
import pathlib
import subprocess
import sys

import yaml

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from spiderduck.core import oembed_providers  # noqa: E402

OUTPUT = ROOT / "src" / "spiderduck" / "extract" / "oembed_providers.json"
LICENCE = ROOT / "LICENSES" / "oembed-MIT.txt"
DROPPED = ("docs_url", "example_urls", "notes")


def build(checkout: pathlib.Path) -> str:
    """providers.json's text from the checkout's providers/*.yml."""
    providers = []
    for path in sorted((checkout / "providers").glob("*.yml")):
        for entry in yaml.safe_load(path.read_text(encoding="utf-8")) or ():
            endpoints = []
            for endpoint in entry.get("endpoints") or ():
                endpoint = {k: v for k, v in endpoint.items() if k not in DROPPED}
                if "schemes" in endpoint:
                    endpoint["schemes"] = [s for s in endpoint["schemes"] if oembed_providers.split_scheme(s)]
                if str(endpoint.get("url", "")).lower().startswith(("http://", "https://")):
                    endpoints.append(endpoint)
            providers.append({**entry, "endpoints": endpoints})
    text = json.dumps(providers, indent=1, ensure_ascii=False) + "\n"
    oembed_providers.parse(text)        # what SpiderDuck reads, it can read
    return text


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkout", type=pathlib.Path, help="a checkout of github.com/iamcal/oembed")
    parser.add_argument("--check", action="store_true", help="exit 1 when the files differ from the checkout's")
    args = parser.parse_args(argv)
    text, licence = build(args.checkout), (args.checkout / "LICENSE").read_text(encoding="utf-8")
    if args.check:
        stale = [p for p, t in ((OUTPUT, text), (LICENCE, licence)) if not p.is_file() or p.read_text() != t]
        for path in stale:
            print(f"{path.relative_to(ROOT)} differs from {args.checkout}", file=sys.stderr)
        return 1 if stale else 0
    OUTPUT.write_text(text, encoding="utf-8")
    LICENCE.parent.mkdir(exist_ok=True)
    LICENCE.write_text(licence, encoding="utf-8")
    commit = subprocess.run(["git", "-C", str(args.checkout), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    print(f"wrote {OUTPUT.relative_to(ROOT)} ({len(json.loads(text))} providers) and "
          f"{LICENCE.relative_to(ROOT)} from iamcal/oembed at {commit}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
