"""The extraction rules for what a page plays: its audio (og:audio, twitter:player:stream, <audio>)
and its video's duration (og:video:duration, video:duration, JSON-LD duration), with the
durations they are written in: seconds, or ISO 8601 (`PT1H2M3S`)."""
from __future__ import annotations

import math
import re
from typing import Any

from spiderduck.core.record import Audio, Video
from spiderduck.core.frozen import evolve
from spiderduck.extract import media, pictures, values
from spiderduck.extract.sources import Sources

# A duration longer than this (30 days, in milliseconds) is none: no page's media plays longer,
# and the record's field is an int64 that must not be a hostile page's 10^400.
MAX_DURATION_MS = 30 * 24 * 3600 * 1000
MAX_TYPE_CHARS = 100     # of a stated content type
MAX_URL_CHARS = pictures.MAX_URL_CHARS

_ISO_DURATION = re.compile(
    r"P(?:(?P<w>[0-9]{1,6}(?:[.,][0-9]{1,9})?)W)?(?:(?P<d>[0-9]{1,6}(?:[.,][0-9]{1,9})?)D)?"
    r"(?:T(?:(?P<h>[0-9]{1,9}(?:[.,][0-9]{1,9})?)H)?(?:(?P<m>[0-9]{1,9}(?:[.,][0-9]{1,9})?)M)?"
    r"(?:(?P<s>[0-9]{1,12}(?:[.,][0-9]{1,9})?)S)?)?$", re.I)
_SECONDS = re.compile(r"[0-9]{1,12}(?:\.[0-9]{1,9})?$")
_UNITS_S = {"w": 604_800, "d": 86_400, "h": 3_600, "m": 60, "s": 1}


def duration_ms(value: Any) -> int:
    """A duration in milliseconds from ISO 8601 (`PT1H2M3S`, `P1DT2H`, `PT90.5S`) or a number of
    seconds (`"150"`, 150, 150.5); 0 when it is neither, not positive, or over MAX_DURATION_MS."""
    if isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)):
        seconds = float(value)
    elif isinstance(value, str):
        text = value.strip()[:64]
        if _SECONDS.match(text):
            seconds = float(text)
        elif (m := _ISO_DURATION.match(text)) and any(m.groupdict().values()):
            seconds = sum(float(n.replace(",", ".")) * _UNITS_S[unit] for unit, n in m.groupdict().items() if n)
        else:
            return 0
    else:
        return 0
    if not math.isfinite(seconds) or seconds <= 0 or seconds > MAX_DURATION_MS / 1000:
        return 0                            # 1e306 s: its milliseconds overflow to infinity
    ms = round(seconds * 1000)
    return ms if ms <= MAX_DURATION_MS else 0


def seconds(value: Any) -> int:
    """`duration_ms` in whole seconds (at least 1 for any positive duration), 0 for none."""
    ms = duration_ms(value)
    return max(1, round(ms / 1000)) if ms else 0


# --- video ------------------------------------------------------------------------------------

VIDEO_TYPES = frozenset({"VideoObject", "Movie", "TVEpisode", "Clip", "Episode", "MusicVideoObject",
                         "BroadcastEvent"})
AUDIO_TYPES = frozenset({"AudioObject", "PodcastEpisode", "MusicRecording", "RadioEpisode", "AudioBook"})


def video_from(s: Sources) -> tuple[Video | None, str]:
    """The page's video (media.video) with its duration when the page states one, and where the
    video was read (`og:video`, `twitter:player:stream`), or (None, '')."""
    found = media.video(s)
    if found is None:
        return None, ""
    source = "og:video" if media._og_media(s, "og:video") else "twitter:player:stream"
    ms = (duration_ms(s.doc.meta("og:video:duration")) or duration_ms(s.doc.meta("video:duration"))
          or (duration_ms(s.graph.get("duration", VIDEO_TYPES)) if s.graph else 0))
    return (evolve(found, duration_ms=ms) if ms else found), source


# --- audio ------------------------------------------------------------------------------------

def audio_from(s: Sources) -> tuple[Audio | None, str]:
    """The page's audio and where it was read: its first og:audio (with its `:type`), else a
    twitter:player:stream that is a sound (its `:content_type` says so, or its name), else the
    first `<audio>`'s src (or its first `<source src>`); URLs absolute, http(s) only."""
    found = _audio(s)
    if found is None:
        return None, ""
    url, kind, source = found
    ms = duration_ms(s.doc.meta("music:duration")) or (
        duration_ms(s.graph.get("duration", AUDIO_TYPES)) if s.graph else 0)
    return Audio(url, kind, ms), source


def _audio(s: Sources) -> tuple[str, str, str] | None:
    """audio_from's (URL, type, source), its duration aside."""
    for found in media._og_media(s, "og:audio"):
        if len(found.url) <= MAX_URL_CHARS:
            return found.url, found.content_type[:MAX_TYPE_CHARS], "og:audio"
    url = values.absolute_url(s.doc.meta("twitter:player:stream"), s.base)
    kind = _type(s.doc.meta("twitter:player:stream:content_type"))
    if url and len(url) <= MAX_URL_CHARS and media.is_audio(url, kind):
        return url, kind, "twitter:player:stream"
    src, kind = s.doc.audio
    url = values.absolute_url(src, s.base)
    if url and len(url) <= MAX_URL_CHARS:
        return url, _type(kind), "<audio>"
    return None


def _type(value: str) -> str:
    return values.fold(value).lower()[:MAX_TYPE_CHARS]
