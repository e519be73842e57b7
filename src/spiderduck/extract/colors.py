"""The page's theme colours (`<meta name="theme-color">`, and the one for a dark scheme), as
`#rrggbb`: CSS colours normalised, anything else none."""
from __future__ import annotations

import re

from spiderduck.extract.sources import Sources

MAX_COLOR_CHARS = 64         # of a stated colour read; a longer one is none
MAX_THEME_METAS = 8          # theme-color metas read per page

_HEX = re.compile(r"#([0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})$")
_RGB = re.compile(r"rgba?\(([^()]*)\)$")
_COMPONENT = re.compile(r"([0-9]{1,3}(?:\.[0-9]{1,6})?|\.[0-9]{1,6})(%?)$")
_DARK = re.compile(r"prefers-color-scheme\s*:\s*dark")

# CSS named colours (a common subset; a name not here is none).
NAMED = dict(pair.split("=") for pair in """
black=000000 white=ffffff red=ff0000 green=008000 blue=0000ff yellow=ffff00 orange=ffa500 purple=800080
gray=808080 grey=808080 silver=c0c0c0 maroon=800000 olive=808000 lime=00ff00 aqua=00ffff cyan=00ffff
teal=008080 navy=000080 fuchsia=ff00ff magenta=ff00ff pink=ffc0cb brown=a52a2a gold=ffd700
indigo=4b0082 violet=ee82ee crimson=dc143c coral=ff7f50 tomato=ff6347 salmon=fa8072 khaki=f0e68c
beige=f5f5dc ivory=fffff0 lavender=e6e6fa turquoise=40e0d0 tan=d2b48c chocolate=d2691e
darkblue=00008b darkred=8b0000 darkgreen=006400 darkgray=a9a9a9 darkgrey=a9a9a9 lightgray=d3d3d3
lightgrey=d3d3d3 dimgray=696969 dimgrey=696969 whitesmoke=f5f5f5 gainsboro=dcdcdc rebeccapurple=663399
steelblue=4682b4 royalblue=4169e1 skyblue=87ceeb slategray=708090 slategrey=708090 orangered=ff4500
firebrick=b22222 forestgreen=228b22 seagreen=2e8b57 midnightblue=191970 dodgerblue=1e90ff
deepskyblue=00bfff hotpink=ff69b4 deeppink=ff1493 goldenrod=daa520 snow=fffafa linen=faf0e6
aliceblue=f0f8ff ghostwhite=f8f8ff mintcream=f5fffa honeydew=f0fff0 azure=f0ffff seashell=fff5ee
floralwhite=fffaf0 oldlace=fdf5e6
""".split())


def css_color(value: str) -> str:
    """A CSS colour as `#rrggbb` (lower case): `#rgb`, `#rgba`, `#rrggbb`, `#rrggbbaa` (the alpha
    dropped), a name of NAMED, `rgb()` / `rgba()` (numbers or percentages, commas or spaces);
    '' for anything else (hsl(), a variable, a number out of bounds, `transparent`)."""
    text = value.strip().lower()
    if not text or len(text) > MAX_COLOR_CHARS:
        return ""
    if m := _HEX.match(text):
        digits = m.group(1)
        if len(digits) <= 4:
            digits = "".join(c * 2 for c in digits[:3])
        return "#" + digits[:6]
    if text in NAMED:
        return "#" + NAMED[text]
    if m := _RGB.match(text):
        parts = [p for p in re.split(r"[\s,/]+", m.group(1).strip()) if p]
        if len(parts) not in (3, 4):
            return ""
        channels = [_channel(p) for p in parts[:3]]
        if any(c is None for c in channels):
            return ""
        return "#" + "".join(f"{c:02x}" for c in channels)
    return ""


def _channel(text: str) -> int | None:
    m = _COMPONENT.match(text)
    if not m:
        return None
    number = float(m.group(1))
    if m.group(2):
        number = number * 255 / 100
    return min(max(round(number), 0), 255)


def theme_colors_from(s: Sources) -> tuple[tuple[str, str], tuple[str, str]]:
    """((theme_color, source), (theme_color_dark, source)): the first theme-color meta that is no
    dark scheme's and normalises (`css_color`), and the first for `(prefers-color-scheme: dark)`;
    source `<meta name=theme-color>`, or '' when none."""
    light = dark = ""
    for n, m in enumerate(m for m in s.doc.metas if m.key == "theme-color"):
        if n == MAX_THEME_METAS or (light and dark):
            break
        media = m.media.lower()[:MAX_COLOR_CHARS * 2]
        if _DARK.search(media):
            dark = dark or css_color(m.content)
        else:                    # no media, a light scheme's, or another query
            light = light or css_color(m.content)
    source = "<meta name=theme-color>"
    return (light, source if light else ""), (dark, source if dark else "")
