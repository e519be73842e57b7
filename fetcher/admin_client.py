"""Asking every fetcher's FetcherAdmin at once now lives in common.fetcher_admin (the web UI may
not import the fetcher); its names are handed on here for `spiderduck domains` (cli.domains)."""
from __future__ import annotations

from common.fetcher_admin import CALL_TIMEOUT, Answers, Call, answers, ask_all, list_domains, pause, reason, resume, set_rate

__all__ = ["CALL_TIMEOUT", "Answers", "Call", "answers", "ask_all", "list_domains", "pause", "reason", "resume",
           "set_rate"]
