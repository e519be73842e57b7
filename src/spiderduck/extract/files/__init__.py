"""A file's card from a few byte ranges (issue 41): what a PDF, an image, an audio track or a
video says of itself, read from as few bytes as its format allows.

    next_range(content_type, url, have) -> (start, end) | None   the next Range to fetch (inclusive)
    file_card(content_type, url, have) -> FileCard                 never raises; bounded work

`have` is a FileBytes: the file's declared size and the parts read so far (the head, offset 0,
first). The scheduler's File Reader (src/spiderduck/scheduler/stages/file_ranges.py) asks
next_range after each request, at most fetcher.file_max_requests in all, and hands the parts to
file_card in an extraction worker.
"""
from __future__ import annotations

from dataclasses import dataclass

from spiderduck.core.record import Audio, Document, FieldSource, Image, Video
from spiderduck.extract.files import names

__all__ = ["FileBytes", "FileCard", "next_range", "file_card"]


@dataclass(frozen=True)
class FileBytes:
    total: int                                  # the declared size (Content-Length, Content-Range total); 0 unknown
    parts: tuple[tuple[int, bytes], ...] = ()   # (offset, bytes) read so far, the head (offset 0) first


@dataclass(frozen=True)
class FileCard:
    medium: str = "file"                        # image, audio, video, document or file
    title: str = ""
    author: str = ""
    published_time: str = ""                    # RFC 3339
    modified_time: str = ""                     # RFC 3339
    image: Image | None = None
    audio: Audio | None = None
    video: Video | None = None
    document: Document | None = None
    provenance: tuple[FieldSource, ...] = ()    # one per filled field
    incomplete: bool = False                    # fields the format keeps lay in bytes not read


def next_range(content_type: str, url: str, have: FileBytes) -> tuple[int, int] | None:
    """The byte range (start, end inclusive) that would give fields the parts read so far lack;
    None when they are complete or no range would add to them."""
    return None


def file_card(content_type: str, url: str, have: FileBytes) -> FileCard:
    """The card of the file's parts read so far. Never raises."""
    title = names.title_from_url(url)
    return FileCard(title=title, provenance=(FieldSource("title", "derived"),) if title else ())
