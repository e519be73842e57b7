"""What the embed tests (tests/extract/test_embeds.py, test_embed_players.py) build iframes from
and expect of them."""
from spiderduck.core.config import DEFAULT_EMBED_HOSTS
from spiderduck.extract import embeds

HOSTS = list(DEFAULT_EMBED_HOSTS)
YT = "https://www.youtube.com/embed/Abc123_-x"
TAIL = f'sandbox="{embeds.SANDBOX}" loading="lazy"></iframe>'   # what every iframe made ends with


def frame(src: str, extra: str = "") -> str:
    return f'<iframe src="{src}" {extra}></iframe>'
