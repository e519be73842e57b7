"""What format a file is, from its first bytes and its declared content type.

The magic bytes decide where they can (an `application/octet-stream` PDF is a PDF); the declared
type picks between readings the bytes leave open (an MP4 that is audio only, a WebM of sound) and
names the format where the bytes say nothing a reader knows.
"""
from __future__ import annotations

from spiderduck.core.fetch import declared_type

PDF, IMAGE, MP3, MP4, OGG, FLAC, WAV, EBML = "pdf", "image", "mp3", "mp4", "ogg", "flac", "wav", "ebml"

# What a format's file is called when the declared type is generic.
CONTENT_TYPES = {PDF: "application/pdf", MP3: "audio/mpeg", OGG: "audio/ogg", FLAC: "audio/flac",
                 WAV: "audio/wav"}
_AUDIO_BRANDS = (b"M4A ", b"M4B ", b"M4P ", b"F4A ", b"F4B ")
_IMAGE_BRANDS = (b"avif", b"avis", b"heic", b"heix", b"mif1", b"msf1")
_DECLARED = {"application/pdf": PDF, "application/x-pdf": PDF, "audio/mpeg": MP3, "audio/mp3": MP3,
             "audio/ogg": OGG, "audio/opus": OGG, "audio/vorbis": OGG, "application/ogg": OGG,
             "video/ogg": OGG, "audio/flac": FLAC, "audio/x-flac": FLAC, "audio/wav": WAV,
             "audio/x-wav": WAV, "audio/wave": WAV, "audio/vnd.wave": WAV, "video/mp4": MP4,
             "audio/mp4": MP4, "audio/x-m4a": MP4, "audio/m4a": MP4, "video/quicktime": MP4,
             "video/webm": EBML, "audio/webm": EBML, "video/x-matroska": EBML,
             "audio/x-matroska": EBML}


declared = declared_type     # the media type alone, lower-case (core.fetch)


def kind(content_type: str, head: bytes) -> str:
    """The format of the file whose first bytes are `head`: one of the names above, '' unknown."""
    if head.startswith(b"%PDF-") or b"%PDF-" in head[:1024]:
        return PDF
    if head[4:8] == b"ftyp":
        return IMAGE if head[8:12] in _IMAGE_BRANDS else MP4
    if head[4:8] in (b"moov", b"mdat", b"free", b"wide", b"skip") and declared(content_type) in _DECLARED:
        return MP4
    if head.startswith(b"\x1a\x45\xdf\xa3"):
        return EBML
    if head.startswith(b"OggS"):
        return OGG
    if head.startswith(b"fLaC"):
        return FLAC
    if head.startswith(b"RIFF") and head[8:12] == b"WAVE":
        return WAV
    if head.startswith(b"ID3"):
        # an ID3v2 tag also leads some FLAC files; the bytes after it tell, the type otherwise
        return FLAC if declared(content_type) in ("audio/flac", "audio/x-flac") else MP3
    if _is_image(head) or (b"<svg" in head[:4096].lower() and _may_be_svg(content_type)):
        return IMAGE
    if len(head) >= 2 and head[0] == 0xFF and head[1] & 0xE0 == 0xE0 and head[1] & 0x06:
        return MP3                                   # an MPEG audio frame's sync, layer set
    name = _DECLARED.get(declared(content_type), "")
    if not name and declared(content_type).startswith("image/"):
        return IMAGE
    return name


def _is_image(head: bytes) -> bool:
    return (head.startswith((b"\xff\xd8\xff", b"\x89PNG\r\n\x1a\n", b"GIF87a", b"GIF89a", b"BM"))
            or (head.startswith(b"RIFF") and head[8:12] == b"WEBP"))


def _may_be_svg(content_type: str) -> bool:
    """An SVG is told by its markup only when its type allows it: declared SVG, a generic type, or
    none (a text file or JSON quoting `<svg` is not an image)."""
    kind = declared(content_type)
    return kind in ("", "image/svg+xml", "application/octet-stream", "binary/octet-stream", "application/xml",
                    "text/xml")


def is_audio_mp4(content_type: str, head: bytes) -> bool:
    """Whether an ISO media file is sound alone by its brand or its declared type (a video track,
    when its moov shows one, still makes it a video)."""
    return head[8:12] in _AUDIO_BRANDS or declared(content_type).startswith("audio/")
