"""A record's `embed_html`, as the extraction stages make it: the rule is common.embeds (the web UI
rebuilds a stored iframe by it too, against the allowed hosts in force when it shows a card)."""
from __future__ import annotations

from common.embeds import HTML_MAX, first_player, from_oembed_html, from_player, host_allowed, may_embed

__all__ = ["host_allowed", "from_oembed_html", "from_player", "first_player", "may_embed", "HTML_MAX"]
