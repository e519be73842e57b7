"""The web UI's Forget (issue 39): the metadata API's forget (metadata_api.forgetting.Forgetter, handed
over in-process as the store is), from a form.

    GET  /forget          the form: URLs (one a line) or a domain, a reason, a box to confirm
    POST /admin/forget    form urls=..., domain=D, reason=TEXT, confirm=yes; JSON {ok, message, counts}

Besides what every admin action needs (web.security: `Authorization: Bearer <web.admin_token>`,
which a browser never sends on its own, so no other site can make it forget; and, with
metadata_api.tokens_file, a signed-in session), Forget needs an admin as MetadataService.Forget
does: a session signed in with a token of metadata_api.admin_tokens_file or, with neither it nor
metadata_api.admin_callers set, a browser on loopback. Anyone else gets 403. The reason and
the confirmation are required; the forget is audited by the Forgetter (the caller's name)."""
from __future__ import annotations

import logging
from typing import Any, Protocol, Sequence

from aiohttp import web

from spiderduck.core import urls
from spiderduck.core.errors import SpiderDuckError
from spiderduck.core.urls import is_loopback_host
from spiderduck.web.actions import ActionFailed
from spiderduck.web.signin import SESSION_COOKIE, Sessions, Tokens, caller_of

log = logging.getLogger("spiderduck.web")


class Forgets(Protocol):
    """What the web UI needs of the metadata API's Forgetter: what it removed, as counts (records,
    content_records, events); a SpiderDuckError when a part failed (it names the part)."""
    async def forget(self, urls: Sequence[str], domain: str = "", *, reason: str, by: str) -> Any: ...


def admin_of(request: web.Request, sessions: Sessions | None, admin_tokens: Tokens | None,
             loopback_only: bool) -> str | None:
    """The Forget admin making `request` (the name of its session's admin token, or, when no
    admin is configured, the loopback address it came from), else None."""
    if sessions is not None and admin_tokens is not None:
        token = sessions.token_of(request.cookies.get(SESSION_COOKIE, ""))
        name = admin_tokens.name_of(token) if token else None
        if name is not None:
            return name
    if loopback_only and is_loopback_host(request.remote or ""):
        return caller_of(request)
    return None


def refusal(sessions: Sessions | None, loopback_only: bool) -> str:
    if loopback_only:
        return ("forgetting is for an admin: with no metadata_api.admin_tokens_file nor "
                "metadata_api.admin_callers, only from this host (loopback)")
    if sessions is None:
        return ("forgetting is for an admin: sign in with a token of metadata_api.admin_tokens_file "
                "(the web UI signs in when metadata_api.tokens_file is set), or use `spiderduck forget`")
    return "forgetting is for an admin: sign in (/signin) with a token of metadata_api.admin_tokens_file"


def _domain(text: str) -> str:
    """The registrable domain the form names itself, else ActionFailed(400) saying why."""
    try:
        return urls.forgettable_domain(text)
    except urls.InvalidDomain as exc:
        raise ActionFailed(400, f"domain: {exc}") from None


def _plural(n: int, what: str) -> str:
    return f"{n} {what}{'' if n == 1 else 's'}"


async def forget(forgetter: Forgets | None, form, *, by: str, max_urls: int) -> dict:
    """The forget a form asks for, checked, done: the JSON answer, or ActionFailed."""
    asked = [urls.without_userinfo(line.strip()) for line in str(form.get("urls", "")).splitlines()
             if line.strip()]
    domain = _domain(str(form.get("domain", "")).strip())
    reason = str(form.get("reason", "")).strip()
    if not asked and not domain:
        raise ActionFailed(400, "nothing to forget: give URLs (one a line) or a domain")
    if len(asked) > max_urls:
        raise ActionFailed(400, f"{len(asked)} URLs; at most {max_urls} at once (metadata_api.max_urls)")
    if not reason:
        raise ActionFailed(400, "a reason is required (a ticket, a request's number): the audit log keeps it")
    if str(form.get("confirm", "")) != "yes":
        raise ActionFailed(400, "confirm first: a forget removes for good what SpiderDuck holds of them")
    if forgetter is None:
        raise ActionFailed(503, "forgetting needs NATS (the denylist is kept there), and this "
                                "metadata-api has none (set nats_url)")
    try:
        removed = await forgetter.forget(asked, domain, reason=reason, by=by)
    except SpiderDuckError as exc:
        raise ActionFailed(503, f"{exc} (the same forget can be sent again)") from None
    what = " and ".join(filter(None, [_plural(len(asked), "URL") if asked else "",
                                      f"domain {domain}" if domain else ""]))
    message = (f"forgot {what}: removed {_plural(removed.records, 'record')}, "
               f"{_plural(removed.content_records, 'content-log record')}, {_plural(removed.events, 'event')}")
    return {"ok": True, "message": message, "records": removed.records,
            "content_records": removed.content_records, "events": removed.events}
