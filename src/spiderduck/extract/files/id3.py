"""ID3 tags: v2.2, v2.3 and v2.4 at a file's start (or in a WAV's `id3 ` chunk), v1 in its last
128 bytes. Only the title and the artist are read; a frame's size past the bytes read is clamped
to them, and at most FRAMES frames are looked at, whatever size the tag declares."""
from __future__ import annotations

FRAMES = 512
_TITLE = {b"TIT2", b"TT2"}
_ARTIST = {b"TPE1", b"TP1", b"TPE2", b"TP2"}


def syncsafe(data: bytes) -> int:
    return (data[0] & 0x7F) << 21 | (data[1] & 0x7F) << 14 | (data[2] & 0x7F) << 7 | (data[3] & 0x7F)


def v2_size(head: bytes, at: int = 0) -> int:
    """The whole size (header, frames, footer) of the ID3v2 tag at `at`; 0 when none."""
    h = head[at:at + 10]
    if len(h) < 10 or not h.startswith(b"ID3") or h[3] > 4 or any(b & 0x80 for b in h[6:10]):
        return 0
    return 10 + syncsafe(h[6:10]) + (10 if h[5] & 0x10 else 0)


def text(frame: bytes) -> str:
    """A text frame's first value, by its encoding byte."""
    if not frame:
        return ""
    encoding, body = frame[0], frame[1:]
    try:
        if encoding == 0:
            value = body.decode("latin-1")
        elif encoding == 1:
            value = body.decode("utf-16") if body[:2] in (b"\xff\xfe", b"\xfe\xff") else body.decode("utf-16-le")
        elif encoding == 2:
            value = body.decode("utf-16-be")
        elif encoding == 3:
            value = body.decode("utf-8", "replace")
        else:
            return ""
    except UnicodeDecodeError:
        value = body.decode("utf-16-le", "replace") if encoding in (1, 2) else ""
    return value.split("\x00", 1)[0].strip()[:1000]


def read_v2(data: bytes) -> dict[str, tuple[str, str]]:
    """{field: (value, source)} from the ID3v2 tag at the start of `data` (title, author)."""
    found: dict[str, tuple[str, str]] = {}
    if len(data) < 10 or not data.startswith(b"ID3"):
        return found
    version, flags = data[3], data[5]
    if version not in (2, 3, 4):
        return found
    end = min(len(data), v2_size(data) or 10)
    body = data[10:end]
    if flags & 0x80 and version < 4:                       # the whole tag unsynchronised
        body = body.replace(b"\xff\x00", b"\xff")
    at = 0
    if flags & 0x40 and version >= 3 and len(body) >= 4:   # an extended header
        at = (syncsafe(body[:4]) if version == 4 else int.from_bytes(body[:4], "big") + 4)
    id_len, header = (3, 6) if version == 2 else (4, 10)
    for _ in range(FRAMES):
        if at + header > len(body) or body[at] == 0:
            break
        ident = body[at:at + id_len]
        raw = body[at + id_len:at + id_len + (3 if version == 2 else 4)]
        size = syncsafe(raw) if version == 4 else int.from_bytes(raw, "big")
        frame = body[at + header:at + header + size]
        if version == 4 and len(body) >= at + header and body[at + 9:at + 10] and body[at + 9] & 0x02:
            frame = frame.replace(b"\xff\x00", b"\xff")     # this frame unsynchronised
        name = ident.decode("latin-1")
        if ident in _TITLE and "title" not in found and text(frame):
            found["title"] = (text(frame), f"id3:{name}")
        elif ident in _ARTIST and "author" not in found and text(frame):
            found["author"] = (text(frame), f"id3:{name}")
        if size <= 0:
            break
        at += header + size
    return found


def read_v1(tail: bytes) -> dict[str, tuple[str, str]]:
    """{field: (value, source)} from an ID3v1 tag in the last 128 bytes of `tail`."""
    tag = tail[-128:]
    found: dict[str, tuple[str, str]] = {}
    if len(tag) < 128 or not tag.startswith(b"TAG"):
        return found
    for name, field, lo, hi in (("title", "title", 3, 33), ("artist", "author", 33, 63)):
        value = tag[lo:hi].split(b"\x00", 1)[0].decode("latin-1").strip()
        if value:
            found[field] = (value, f"id3v1:{name}")
    return found
