"""The `metadata_api` and `web` sections of the settings (src/spiderduck/core/settings.py
re-exports them): the query API's gRPC server and the web UI beside it."""
from __future__ import annotations

from dataclasses import dataclass, field

from spiderduck.core.errors import ConfigError
from spiderduck.core.settings_duration import Duration

MAX_EXPLAIN_WORKERS = 16


@dataclass(frozen=True)
class MetadataApiSettings:
    listen: str = "127.0.0.1:50051"   # gRPC address of MetadataService
    max_urls: int = 300               # URLs per GetUrlMetadata call; more is INVALID_ARGUMENT
    max_response_bytes: int = 4_194_304   # an answer larger is RESOURCE_EXHAUSTED (gRPC clients'
                                      # default receive limit is 4 MiB)
    max_concurrent_calls: int = 64    # calls served at once; more are RESOURCE_EXHAUSTED at once,
                                      # so answers in memory stay under this x max_response_bytes
    resolve_timeout: Duration = 30.0  # the longest a ResolveUrl call waits for a crawl (its own
                                      # deadline, if shorter, counts)
    max_concurrent_resolves: int = 1000  # ResolveUrl calls (and the web UI's /api/v1/preview) waiting
                                      # at once (apart from max_concurrent_calls); more are
                                      # RESOURCE_EXHAUSTED (HTTP 429) at once
    max_resolves_per_caller: int = 100  # of those places, the most one caller (a token's name, else a
                                      # client certificate's identity, else the peer's address) holds
                                      # at once, gRPC and HTTP together; more is RESOURCE_EXHAUSTED
    tokens_file: str = ""             # a file of `name:token` lines; set = every MetadataService call
                                      # needs gRPC metadata `authorization: Bearer <token>`
                                      # (else UNAUTHENTICATED); empty = no token asked
    resolve_rate: float = 50.0        # ResolveUrl calls per second per caller (a token's name, else
                                      # a client certificate's identity); over it RESOURCE_EXHAUSTED;
                                      # 0 = no bound
    max_concurrent_queueing: int = 256  # submissions asked for on spiderduck.urls.queue (the client's
                                      # submit) marked queued and published at once; more wait
    explain_workers: int = 1          # extraction worker processes in which ExplainUrl re-runs the
                                      # extraction on a stored page (process.parser, within
                                      # process.extract_timeout), started at the first call; 0 = it
                                      # explains from the stored record alone
    admin_tokens_file: str = ""       # a file of `name:token` lines (as tokens_file, read again when
                                      # it changes) of the admins: their token may Forget,
                                      # ListForgotten and Unforget, and passes wherever a tokens_file
                                      # token does; empty = no admin token
    admin_callers: list[str] = field(default_factory=list)  # client-certificate identities (first DNS
                                      # subjectAltName, else CN; tls.client_auth require) that are
                                      # admins too; with neither this nor admin_tokens_file, only a
                                      # caller on loopback (or a unix socket) is an admin
    max_forget_reason_chars: int = 1000  # a Forget's reason longer than this is INVALID_ARGUMENT
    forget_wait: Duration = 2.0     # how long a Forget waits between putting the URLs on the
                                      # denylist and removing them, so every scheduler has seen the
                                      # list first (the denylist reaches them within 2 s): a crawl
                                      # written meanwhile is then removed too. Shorter risks it

    def __post_init__(self):
        if self.max_resolves_per_caller < 1:
            raise ConfigError(f"metadata_api.max_resolves_per_caller: {self.max_resolves_per_caller} "
                              "must be at least 1")
        if not 0 <= self.explain_workers <= MAX_EXPLAIN_WORKERS:
            raise ConfigError(f"metadata_api.explain_workers: {self.explain_workers} is not 0 to "
                              f"{MAX_EXPLAIN_WORKERS}")
        if self.forget_wait < 0:
            raise ConfigError(f"metadata_api.forget_wait: {self.forget_wait} must not be negative")


@dataclass(frozen=True)
class WebSettings:
    listen: str = "127.0.0.1:8080"    # HTTP address of the web UI (lookup, cards, domains, /healthz),
                                      # served by `up` and the metadata-api; empty = off
    admin_token: str = ""             # bearer token of the admin actions (submit, refresh, pause,
                                      # resume, set-rate); empty = those actions are off
    admin_token_file: str = ""        # a file holding that token instead (read at start, never logged)
    recent: int = 50                  # latest processed URLs the lookup page lists
    max_live_clients: int = 100       # live lists (server-sent events) open at once; more get 503
    max_url_chars: int = 8192         # a longer URL asked for is refused (400)
    max_concurrent_pages: int = 32    # /url and /domains pages built at once (store reads, calls to
                                      # the fetchers); more are answered 503 at once
    tls_cert: str = ""                # PEM certificate (chain): serve the web UI over HTTPS ...
    tls_key: str = ""                 # ... with this PEM private key; both or neither
    allowed_hosts: list[str] = field(default_factory=list)  # Host header names the UI answers besides
                                      # its listen address and localhost (DNS rebinding: others get
                                      # 421); on a non-loopback listen the check applies once this is set,
                                      # on a loopback listen always

    def __post_init__(self):
        if self.admin_token and self.admin_token_file:
            raise ConfigError("web.admin_token and web.admin_token_file: set one or neither")
