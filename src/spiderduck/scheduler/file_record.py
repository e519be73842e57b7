"""A file: a final answer that is not HTML (issue 41), as the File Reader
(stages/file_ranges.py) and the Post Processor (stages/record.py) both see it.

    media_type(result)         the declared media type, lower-case ('text/html' sniffed when untyped)
    is_file(task)              the chain ended in a 200 whose type is not HTML
    declared_size(result)      what the answer says the file's size is: a Content-Range's total,
                               else the Content-Length; 0 unknown
    FileCardJob                file_card(content_type, url, have) -> FileCard, run where pages are
                               extracted (ExtractionPool.file_card; in this process without a pool)
    with_card(record, final, have, card)   the record of a file from its card

A file's record is OK, with what its card says (spiderduck.extract.files: the title it states, or
one from its file name; its author, times, image, audio, video, document facts and medium),
`file_size` as declared (or the bytes read, when the whole body was read and none was declared)
and `content_length` the bytes read (head and ranges). It is `truncated` only when the card says
the fields lay in bytes not read (`incomplete`). It is TOO_LARGE only when the bytes read gave no
field at all (not even a title from the file's name) and the body was longer than what was read:
then nothing of it can be shown. A URL that is itself an image keeps the size and type its first
bytes say (spiderduck.extract.images.probe) when the card gives no image.
"""
from __future__ import annotations

from typing import Awaitable, Callable

from spiderduck.core import byte_ranges
from spiderduck.core.fetch import HTML_TYPES, FetchResult, declared_type, looks_like_html
from spiderduck.core.record import Image, UrlRecord, with_source
from spiderduck.core.status import Status
from spiderduck.extract import images
from spiderduck.extract.files import FileBytes, FileCard
from spiderduck.core.frozen import evolve
from spiderduck.scheduler.task import CrawlTask

PROBE_BYTES = 64 * 1024     # of an image file's head probed here, when its card (a worker's) gave no size

# file_card(content_type, url, have) -> the file's card (ExtractionPool.file_card). Never raises
# but for a timeout or a failed worker, which leave the card of the file's name.
FileCardJob = Callable[[str, str, FileBytes], Awaitable[FileCard]]
# next_range(content_type, url, have) -> the next (start, end) a card wants, or None
# (ExtractionPool.next_range); raises as FileCardJob does.
FileRangeJob = Callable[[str, str, FileBytes], Awaitable["tuple[int, int] | None"]]

_CARD_FIELDS = ("title", "author", "published_time", "modified_time", "image", "audio", "video", "document")


def media_type(result: FetchResult) -> str:
    """The answer's declared media type; 'text/html' when it declares none and its bytes are HTML."""
    kind = declared_type(result.header("content-type"))
    return "text/html" if not kind and looks_like_html(result.body) else kind


def is_file(task: CrawlTask) -> bool:
    """Whether the chain ended in a 200 whose type is not HTML (a file's answer)."""
    if not task.hops or task.failure is not None:
        return False
    final = task.hops[-1]
    return final.status is Status.OK and final.http_status == 200 and media_type(final) not in HTML_TYPES


def encoded(result: FetchResult) -> bool:
    """The answer came with a Content-Encoding (gzip, br, ...): its lengths and offsets are of
    the encoded bytes, not the file's."""
    return (result.header("content-encoding") or "identity").strip().lower() not in ("identity", "")


def declared_size(result: FetchResult) -> int:
    """The file's size as the answer declares it: a 206's Content-Range total, else a 200's
    Content-Length; 0 when it says none (or nothing believable), or when the answer was encoded
    (its Content-Length counts the compressed bytes)."""
    if encoded(result):
        return 0
    if result.http_status == 206:
        part = byte_ranges.content_range(result.header("content-range"))
        return part[2] if part is not None else 0
    return byte_ranges.declared_length(result.header("content-length")) or 0


def with_card(record: UrlRecord, final: FetchResult, have: FileBytes, card: FileCard) -> UrlRecord:
    """The record of a file (see the module's doc)."""
    read = sum(len(data) for _, data in have.parts)
    fields = {name: getattr(card, name) for name in _CARD_FIELDS if getattr(card, name)}
    medium = card.medium or "file"
    provenance = card.provenance
    if "image" not in fields and record.content_type.startswith("image/"):
        head = (have.parts[0][1] if have.parts else final.body)[:PROBE_BYTES]   # on the event loop: bounded
        info = images.probe(head) or images.ImageInfo(0, 0, "")     # unreadable headers: no size
        fields["image"] = Image(final.url, info.width, info.height, info.content_type or record.content_type)
        medium = "image" if medium == "file" else medium
    size = have.total or (read if not final.truncated else 0)
    if have.total:
        source = "Content-Range" if final.http_status == 206 or _from_ranges(final, have) else "Content-Length"
        provenance = with_source(provenance, "file_size", source)
    record = evolve(record, **fields, medium=medium, provenance=provenance, file_size=size,
                    content_length=read, status=Status.OK, truncated=card.incomplete)
    if not fields and final.truncated:
        return evolve(record, status=Status.TOO_LARGE, error=(
            f"the file gave nothing to show from the {read} bytes read (fetcher.file_head_bytes and "
            f"its ranges) of a larger body"))
    return record


def _from_ranges(final: FetchResult, have: FileBytes) -> bool:
    """Whether the size came from a range's Content-Range rather than the head's Content-Length."""
    return have.total != (byte_ranges.declared_length(final.header("content-length")) or 0)
