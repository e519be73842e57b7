"""Reading back what the content store wrote to disk: every gzip member of its WARC files."""
from __future__ import annotations

import zlib
from pathlib import Path

from spiderduck.stores.content import read_warc_record


def gzip_members(data: bytes) -> list[bytes]:
    members = []
    while data:
        d = zlib.decompressobj(wbits=31)
        d.decompress(data)
        used = len(data) - len(d.unused_data)
        members.append(data[:used])
        data = d.unused_data
    return members


def warc_records(folder: Path) -> list[tuple[dict[str, str], bytes]]:
    """(WARC headers, block) of every record in the folder's .warc.gz files, file by file."""
    return [read_warc_record(m) for path in sorted(folder.glob("*.warc.gz"))
            for m in gzip_members(path.read_bytes())]
