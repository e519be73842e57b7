"""Who may use the web UI when metadata_api.tokens_file is set, and what a browser may not make it do.

With a tokens file (the metadata API's own TokenFile, handed over: read once, reloaded as it
changes), every route but /static/ and /signin needs a token of that file:

    /api/v1/*, /oembed       Authorization: Bearer <token>; without it 401 JSON {"error": ...}
    /events, /healthz        the same header or the session cookie (a page's EventSource cannot
                             send a header); 401 JSON without
    /admin/*                 the session cookie (its Authorization header is web.admin_token's)
    pages (/, /url, ...)     the header or the session cookie; without, a redirect to /signin

POST /signin (a form, `token`) sets the cookie SESSION_COOKIE: HttpOnly, SameSite=Strict, Secure
when the UI serves TLS. Its value is a random session id, not the token: the server keeps which
token each id was signed in with (at most MAX_SESSIONS, for at most SESSION_TTL) and asks the
token file again on every request, so a token removed from the file (or changed) ends its
sessions at the file's next reload. Sessions die with the process. Tokens are compared in
constant time (TokenFile.name_of) and never logged: a sign-in is logged by the token's name.

Cross-site: a request that starts a crawl or changes anything (/api/v1/preview, /admin/*, any
method but GET and HEAD) that a browser marks as cross-site (`Sec-Fetch-Site: cross-site`, or an
`Origin` whose host is neither the listen address, localhost, nor in web.allowed_hosts) gets 403,
with or without tokens, before any token is looked at."""
from __future__ import annotations

import logging
import math
import secrets
import time
from typing import Callable, Protocol
from urllib.parse import urlencode, urlsplit

from aiohttp import web

from spiderduck.web.security import host_name

log = logging.getLogger("spiderduck.web")

SESSION_COOKIE = "spiderduck_session"
SESSION_TTL = 12 * 3600.0    # seconds a sign-in lasts
MAX_SESSIONS = 10_000        # sessions kept; past that, the oldest end
BEARER = "bearer "
OPEN_PATHS = ("/signin",)
COOKIE_ONLY = ("/admin/",)                 # their Authorization header is web.admin_token's
API = ("/api/", "/oembed")                 # the bearer header only
STREAMS = ("/events", "/healthz")          # answered as JSON, the cookie accepted too
ACTING = ("/api/v1/preview", "/admin/")    # start a crawl or change something, even on GET


class Tokens(Protocol):
    """What the web UI needs of the metadata API's TokenFile (spiderduck.metadata_api.auth)."""
    def name_of(self, token: str) -> str | None: ...


class Limit(Protocol):
    """What the web UI needs of ResolveUrl's RateLimit (spiderduck.metadata_api.auth)."""
    rate: float

    def allow(self, who: str) -> bool: ...


class Places(Protocol):
    """What the web UI needs of ResolveUrl's Places (spiderduck.metadata_api.places)."""
    def take(self, who: str) -> str | None: ...

    def give(self, who: str) -> None: ...


class AnyOf:
    """The tokens of several files as one (the metadata API's tokens_file and admin_tokens_file:
    an admin token is accepted wherever an ordinary one is)."""

    def __init__(self, *files: Tokens | None):
        self._files = [f for f in files if f is not None]

    def name_of(self, token: str) -> str | None:
        return next((name for f in self._files if (name := f.name_of(token)) is not None), None)


CALLER = web.RequestKey("caller", str)     # the name of the bearer token a request was let in by


class Sessions:
    """Session id -> the token it was signed in with, and when."""

    def __init__(self, tokens: Tokens, clock: Callable[[], float] = time.monotonic):
        self._tokens = tokens
        self._clock = clock
        self._by_id: dict[str, tuple[str, float]] = {}

    def start(self, token: str) -> str | None:
        """A new session id for a known token, else None."""
        name = self._tokens.name_of(token)
        if name is None:
            return None
        while len(self._by_id) >= MAX_SESSIONS:
            del self._by_id[next(iter(self._by_id))]
        sid = secrets.token_urlsafe(32)
        self._by_id[sid] = (token, self._clock())
        log.info("web: %r signed in", name)
        return sid

    def name_of(self, sid: str) -> str | None:
        """The token's name of a live session whose token the file still holds, else None."""
        held = self._by_id.get(sid)
        if held is None:
            return None
        token, started = held
        name = self._tokens.name_of(token)
        if name is None or self._clock() - started > SESSION_TTL:
            self._by_id.pop(sid, None)
            return None
        return name

    def token_of(self, sid: str) -> str | None:
        """The token a live session was signed in with (as name_of checks it), else None."""
        return self._by_id[sid][0] if self.name_of(sid) is not None else None

    def end(self, sid: str) -> None:
        self._by_id.pop(sid, None)


def bearer(request: web.Request) -> str:
    """The token of `Authorization: Bearer <token>` (the scheme in any case), else ""."""
    value = request.headers.get("Authorization", "")
    return value[len(BEARER):].strip() if value[:len(BEARER)].lower() == BEARER else ""


def _refuse_json(status: int, message: str) -> web.Response:
    # "ok"/"message" as the admin answers carry them, so the page's admin forms show it
    return web.json_response({"error": message, "ok": False, "message": message}, status=status,
                             headers={"WWW-Authenticate": "Bearer"} if status == 401 else None)


def token_check(tokens: Tokens, sessions: Sessions):
    """The middleware asking for a token of the file (see the module's text)."""
    @web.middleware
    async def check(request: web.Request, handler):
        path = request.path
        if path.startswith("/static/") or path in OPEN_PATHS:
            return await handler(request)
        given = "" if path.startswith(COOKIE_ONLY) else bearer(request)
        name = tokens.name_of(given) if given else None
        if name is not None:
            request[CALLER] = name
            return await handler(request)
        if not path.startswith(API) and sessions.name_of(request.cookies.get(SESSION_COOKIE, "")):
            return await handler(request)
        if path.startswith(API + STREAMS + COOKIE_ONLY):
            needs = ("a session (sign in at /signin)" if path.startswith(COOKIE_ONLY)
                     else "Authorization: Bearer <token> (a token of metadata_api.tokens_file)")
            return _refuse_json(401, f"{'a wrong token: ' if given else ''}this needs {needs}")
        back = request.rel_url.path_qs if request.method == "GET" else "/"
        raise web.HTTPSeeOther("/signin?" + urlencode({"next": back}))
    return check


def caller_of(request: web.Request) -> str:
    """Whose share of the resolve places a request takes: its bearer token's name, else its
    address in the form the metadata API names a gRPC peer by (ipv4:127.0.0.1, ipv6:[::1]), so
    one host known by no token is one caller over gRPC and HTTP alike."""
    named = request.get(CALLER)
    if named:
        return named
    host = request.remote or ""
    return f"ipv6:[{host}]" if ":" in host else f"ipv4:{host}"


def over_rate(request: web.Request, limit: Limit | None) -> web.Response | None:
    """429 with Retry-After when the request's bearer token is past metadata_api.resolve_rate (its
    bucket is ResolveUrl's: one per token across gRPC and HTTP), else None. A request let in by no
    token (no tokens file) is not bounded here, as ResolveUrl's callers known by nothing are not."""
    who = request.get(CALLER)
    if limit is None or who is None or limit.allow(who):
        return None
    message = f"caller {who!r} is over metadata_api.resolve_rate ({limit.rate:g} resolves a second)"
    return web.json_response({"error": message}, status=429,
                             headers={"Retry-After": str(max(1, math.ceil(1 / limit.rate)))})


def cross_site_check(listen_host: str, allowed_hosts: list[str]):
    """The middleware answering 403 to a cross-site request that would act (see the module's text)."""
    names = {listen_host.strip("[]").lower(), "localhost", *(h.strip().lower().rstrip(".") for h in allowed_hosts)}

    @web.middleware
    async def check(request: web.Request, handler):
        if request.method in ("GET", "HEAD") and not request.path.startswith(ACTING):
            return await handler(request)
        reason = ""
        if request.headers.get("Sec-Fetch-Site", "").strip().lower() == "cross-site":
            reason = "the browser marks it cross-site (Sec-Fetch-Site)"
        elif "Origin" in request.headers and _origin_host(request.headers["Origin"]) not in names:
            reason = f"its Origin {request.headers['Origin'][:100]!r} is not a host of web.allowed_hosts"
        if reason:
            return web.json_response({"error": f"refused: {reason}", "ok": False,
                                      "message": f"refused: {reason}"}, status=403)
        return await handler(request)
    return check


def _origin_host(origin: str) -> str:
    """The host of an Origin header ("null", or what is no origin: "", which no name matches)."""
    try:
        parts = urlsplit(origin.strip())
    except ValueError:
        return ""
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    return host_name(parts.netloc).rstrip(".")


def _safe_next(target: str) -> str:
    """Where to go after signing in: a path of this server only (never //host or a URL)."""
    if not target.startswith("/") or target.startswith(("//", "/\\")):
        return "/"
    return target


def handlers(sessions: Sessions | None, secure: bool, render):
    """GET and POST /signin. `render(request, status, **values)` renders signin.html."""
    async def form(request: web.Request) -> web.Response:
        if sessions is None:
            raise web.HTTPSeeOther("/")
        return render(request, 200, next=_safe_next(request.query.get("next", "/")), failed=False)

    async def sign_in(request: web.Request) -> web.Response:
        if sessions is None:
            raise web.HTTPSeeOther("/")
        posted = await request.post()
        target = _safe_next(str(posted.get("next", "/")))
        sid = sessions.start(str(posted.get("token", "")).strip())
        if sid is None:
            return render(request, 401, next=target, failed=True)
        response = web.Response(status=303, headers={"Location": target})
        response.set_cookie(SESSION_COOKIE, sid, path="/", httponly=True, samesite="Strict", secure=secure)
        return response
    return form, sign_in
