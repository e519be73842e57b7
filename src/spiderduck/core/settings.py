"""The settings: one typed object, every default in this file, commented.

Declarations only: each section's dataclass (TLS's in src/spiderduck/core/settings_tls.py), its defaults, the words on each key and the
checks a section makes of itself (`__post_init__`). Reading them from the YAML file, the
environment and `--set` flags, durations such as 7d, and the errors of a bad value are
src/spiderduck/core/config.py's, which re-exports every name here (import from either).
"""
from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass, field

from spiderduck.core import oembed_providers
from spiderduck.core.errors import ConfigError
from spiderduck.core.settings_api import MAX_EXPLAIN_WORKERS, MetadataApiSettings, WebSettings
from spiderduck.core.settings_duration import DURATION, Duration
from spiderduck.core.settings_render import RenderSettings
from spiderduck.core.settings_retention import RetentionSettings
from spiderduck.core.settings_tls import CLIENT_AUTH, TlsSettings
from spiderduck.core.version import VERSION

__all__ = [
    "DURATION", "Duration", "MetadataApiSettings", "WebSettings", "FetcherSettings", "CLIENT_AUTH",
    "TlsSettings", "SchedulerSettings", "StreamSettings", "HTML_PARSERS", "DEFAULT_EMBED_HOSTS",
    "MAX_EMBED_HOSTS", "REMOVED_KEYS", "ProcessSettings", "RenderSettings", "RetentionSettings", "Settings",
]

# An Accept-Language header (RFC 9110 12.5.4): language ranges, each with an optional q-value.
_ACCEPT_LANGUAGE = re.compile(r"(?:(?:\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)(?:\s*;\s*q=(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?))?"
                              r"(?:\s*,\s*(?:\*|[A-Za-z]{1,8}(?:-[A-Za-z0-9]{1,8})*)(?:\s*;\s*q=(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?))?)*)?")
MAX_ACCEPT_LANGUAGE = 256
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
MAX_USER_AGENT = 512
_PRINTABLE_ASCII = re.compile(r"[\x20-\x7e]+")


@dataclass(frozen=True)
class FetcherSettings:
    listen: str = "127.0.0.1:50052"   # gRPC address of FetcherService
    id: str = ""                      # this fetcher's name in logs and leases; empty = host:pid
    user_agent: str = f"SpiderDuck/{VERSION} (+https://github.com/spiderduck/spiderduck)"
    accept_language: str = "en-US,en;q=0.9"  # Accept-Language of page requests (every HTML hop); "" = none
                                      # (a rendered page's requests carry it too, and its scripts
                                      # see its languages in navigator.languages)
    browser_user_agent: str = ("Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
                               "Chrome/143.0.0.0 Safari/537.36")  # User-Agent of the browser profile
                                      # (FetchRequest.profile "browser": issue 43's second look, as a person's
                                      # browser), a current desktop Chrome's; its Chrome version and platform
                                      # also make the sec-ch-ua headers sent with it (none for a UA that is not
                                      # Chrome's). Printable ASCII, at most 512 characters
    default_rate: float = 1.0         # requests per second per domain
    rate_overrides: dict[str, float] = field(default_factory=dict)  # domain -> requests per second
    max_redirects: int = 10           # hops followed after the first before TOO_MANY_REDIRECTS
    max_body_bytes: int = 2_097_152   # body bytes read per response; the rest is cut off
    file_head_bytes: int = 65_536     # body bytes read of a page hop whose answer is not HTML (a file: PDF,
                                      # audio, video, image); max_body_bytes when that is less. The File
                                      # Reader asks for more by Range requests only where the format needs them
    file_max_requests: int = 3        # requests per file at most (its first GET included; redirects and
                                      # robots.txt aside): the head, then Range requests (issue 41)
    connect_timeout: Duration = 5.0   # seconds to open a connection
    total_timeout: Duration = 20.0    # seconds for one whole request, body included
    queue_size: int = 1000            # waiting requests per domain; more is RESOURCE_EXHAUSTED, and so
                                      # is a request whose turn would come after its caller's deadline
    # Politeness per domain: the next start waits the longest of 1/rate, Crawl-delay,
    # Retry-After and back-off (src/spiderduck/fetcher/pacing.py); the outcome window pauses or halts
    # a failing domain (src/spiderduck/fetcher/domain_health.py).
    max_crawl_delay: Duration = 30.0  # robots.txt Crawl-delay is obeyed up to this many seconds
    max_retry_after: Duration = 300.0  # Retry-After (on 429 and 503) is obeyed up to this many seconds
    backoff_base: Duration = 1.0      # seconds held after a connection error, timeout, DNS error, 5xx or 429
    backoff_factor: float = 2.0       # each further such error in a row multiplies the back-off by this
    backoff_max: Duration = 60.0      # the back-off never exceeds this; a healthy answer resets it
    backoff_jitter: float = 0.5       # up to this fraction of the back-off is added at random
    error_window: Duration = 60.0     # seconds of outcomes kept per domain (status counts, error rate)
    pause_error_ratio: float = 0.10   # more errors than this over the window pauses the domain ...
    pause_min_requests: int = 10      # ... once at least this many outcomes were seen since the last pause
    pause_for: Duration = 60.0        # seconds an automatic pause lasts (and `domains pause` without --for)
    halt_after_failures: int = 50     # errors in a row that halt a domain until `spiderduck domains resume`
    vulture_interval: Duration = 60.0  # seconds between sweeps for idle domain queues and host entries
    domain_idle_after: Duration = 300.0  # a domain queue (or a host's Crawl-delay) unused this long is evicted
    allowed_networks: list[str] = field(default_factory=list)  # CIDRs exempt from the private-address block
    dns_overrides: dict[str, str] = field(default_factory=dict)  # host glob -> IP, e.g. {"*.test": 127.0.0.1}
    robots_ttl: Duration = 86_400.0   # seconds a fetched robots.txt is trusted (RFC 9309: at most 24 h)
    robots_error_ttl: Duration = 600.0  # seconds an unreachable/5xx robots.txt (disallow all) is cached
    robots_max_bytes: int = 512_000   # robots.txt bytes read (RFC 9309: at least 500 KiB)
    robots_cache_size: int = 10_000   # hosts kept in the in-process robots cache (LRU)
    robots_store_timeout: Duration = 0.5  # seconds per memcached call (robots_cache); slower is a miss
    shards: int = 1024                # domain shards (see DESIGN "Ownership of domain queues")
    lease_ttl: Duration = 10.0        # seconds a shard lease lives without renewal (KV bucket TTL)
    lease_margin: Duration = 3.0      # stop serving a shard this long before its lease could expire
    advertise: str = ""               # address schedulers dial for this fetcher; empty = listen
    allowed_callers: list[str] = field(default_factory=list)  # client identities (a certificate's first
                                      # DNS subjectAltName, else its CN) that may call FetcherService;
                                      # empty = any verified client. Needs tls with client_auth require
    admin_callers: list[str] = field(default_factory=list)  # ... that may call FetcherAdmin; empty = any
                                      # verified client
    max_rate: float = 100.0           # requests per second: the most a domain's rate may be set to
                                      # (SetDomainRate above it is INVALID_ARGUMENT)
    max_concurrent_calls: int = 2048  # gRPC calls served at once (queued or fetching, admin, health);
                                      # more are RESOURCE_EXHAUSTED, which schedulers retry after a
                                      # wait. 2048: eight schedulers' max_in_flight (256) on one fetcher

    def __post_init__(self) -> None:
        if len(self.accept_language) > MAX_ACCEPT_LANGUAGE or not _ACCEPT_LANGUAGE.fullmatch(self.accept_language):
            raise ConfigError(f"fetcher.accept_language: {self.accept_language[:80]!r} is not an Accept-Language "
                              f"value (language tags with q-values, e.g. 'de-DE,de;q=0.9', at most "
                              f"{MAX_ACCEPT_LANGUAGE} characters; '' sends none)")
        if _CONTROL.search(self.user_agent):
            raise ConfigError("fetcher.user_agent: control characters (a line break, a tab) cannot be sent in a header")
        if len(self.browser_user_agent) > MAX_USER_AGENT or not _PRINTABLE_ASCII.fullmatch(self.browser_user_agent):
            raise ConfigError(f"fetcher.browser_user_agent: {self.browser_user_agent[:80]!r} is not a User-Agent "
                              f"value (printable ASCII, no line break, 1 to {MAX_USER_AGENT} characters)")
        if self.file_head_bytes < 1:
            raise ConfigError(f"fetcher.file_head_bytes: {self.file_head_bytes} must be at least 1")
        if self.file_max_requests < 1:
            raise ConfigError(f"fetcher.file_max_requests: {self.file_max_requests} must be at least 1 (the first GET)")
        if self.max_concurrent_calls < 1:
            raise ConfigError(f"fetcher.max_concurrent_calls: {self.max_concurrent_calls} must be at least 1")
        if not self.max_rate > 0:
            raise ConfigError(f"fetcher.max_rate: {self.max_rate:g} must be positive (requests per second)")
        for network in self.allowed_networks:
            try:   # host bits are accepted (10.0.0.1/8 is 10.0.0.0/8), as src/spiderduck/fetcher/guard.py reads them
                ipaddress.ip_network(network, strict=False)
            except ValueError:
                raise ConfigError(f"fetcher.allowed_networks: bad value {network!r}: not an IP network "
                                  "in CIDR notation (e.g. 10.0.0.0/8)") from None


@dataclass(frozen=True)
class SchedulerSettings:
    listen: str = ""                  # gRPC health/reflection for probes, e.g. 0.0.0.0:50053; empty = none
    fetchers: list[str] = field(default_factory=list)  # fetcher gRPC addresses; empty = fetcher.listen
    max_in_flight: int = 256          # URLs processed at once by one scheduler
    fetch_batch: int = 64             # messages pulled from JetStream per request
    max_ack_pending: int = 10_000     # URLs delivered and not yet acked, across ALL schedulers (the
                                      # consumer is shared): at least schedulers x max_in_flight, or
                                      # schedulers added by an autoscaler get no work; a scheduler
                                      # starting with a larger value raises the shared consumer's
    ack_wait: Duration = 60.0         # seconds JetStream waits for an ack before redelivering
    max_deliver: int = 5              # deliveries before a message is dead-lettered (a URL no fetcher
                                      # answered is recorded CONNECTION_ERROR on its last one instead)
    retry_delay: Duration = 5.0       # seconds before a failed message is redelivered
    recrawl_failed_after: Duration = 3600.0  # seconds a DNS/connection/timeout/5xx record stays fresh
    claim_ttl: Duration = 30.0        # a URL being crawled is claimed in NATS KV (one crawl at a time
                                      # across schedulers), renewed every third of this; a scheduler
                                      # that dies holding a claim loses it within this
    hop_timeout: Duration = 120.0     # seconds one hop may take, queueing and re-routing included
    url_timeout: Duration = 900.0     # seconds one delivery of a message may run (its whole chain,
                                      # extraction, stores, events); past it the run is cut and the
                                      # message fails that delivery (redelivered, or dead-lettered
                                      # on its last), so a hang never holds a URL forever; 0 = none
    max_hops_per_domain: int = 64     # hops in flight per domain from one scheduler (as many may wait)
    busy_retry: Duration = 1.0        # seconds a message for a busy domain is parked before retrying
    # One hop's retries within hop_timeout (src/spiderduck/scheduler/fetcher_client.py): a busy fetcher
    # (RESOURCE_EXHAUSTED) is retried after a jittered wait, a moved or gone fetcher (or a shard
    # with no owner) waits at most this long for its lease to change hands; the waits double
    # from hop_backoff_base up to hop_backoff_max.
    hop_backoff_base: Duration = 0.2  # seconds before a hop's first retry
    hop_backoff_max: Duration = 5.0   # the longest step between a hop's retries (a busy fetcher's
                                      # wait is half to 1.5x the step, at random)
    # An outage (the metadata or content store, or NATS, failing: a retryable StoreError or
    # BusError) is not the URL's fault, so it uses up none of max_deliver: the message stays
    # here (its slot held, heartbeats sent) and is retried in place, the waits doubling from
    # outage_backoff_base up to outage_backoff_max (with jitter), until it succeeds or a stop
    # hands it back. Only after outage_retry_for seconds of one delivery does the failure count
    # as a delivery (nak after retry_delay; dead-lettered on the last), so a persistent "store"
    # failure that is really the URL's still ends; 0 = retry an outage for as long as it lasts.
    outage_backoff_base: Duration = 0.5  # seconds before the first in-place retry after an outage failure
    outage_backoff_max: Duration = 15.0  # the longest wait between in-place retries
    outage_retry_for: Duration = 3600.0  # seconds one delivery retries an outage in place (0 = no limit)

    def __post_init__(self) -> None:
        if self.url_timeout and self.url_timeout < self.hop_timeout:
            raise ConfigError(f"scheduler.url_timeout: {self.url_timeout:g}s is shorter than one hop's "
                              f"hop_timeout ({self.hop_timeout:g}s); 0 turns it off")
        if self.max_ack_pending < max(self.max_in_flight, self.fetch_batch):
            raise ConfigError(f"scheduler.max_ack_pending: {self.max_ack_pending} is below one scheduler's "
                              f"max_in_flight ({self.max_in_flight}) or fetch_batch ({self.fetch_batch})")
        for name in ("outage_backoff_base", "outage_backoff_max", "hop_backoff_base", "hop_backoff_max"):
            if getattr(self, name) <= 0:
                raise ConfigError(f"scheduler.{name}: {getattr(self, name):g}s must be positive")


@dataclass(frozen=True)
class StreamSettings:
    """Limits of the JetStream streams the service creates; 0 = no limit. SPIDERDUCK_URLS refuses
    new URLs when full (producers see the error) rather than dropping queued ones; the others drop
    their oldest entries."""
    urls_max_age: Duration = 0.0      # seconds a submitted URL may wait in SPIDERDUCK_URLS
    urls_max_bytes: int = 0           # bytes SPIDERDUCK_URLS may hold; beyond it submits fail
    events_max_age: Duration = 7 * 86_400.0  # how long SPIDERDUCK_EVENTS keeps events for replay
    events_max_bytes: int = 0         # bytes SPIDERDUCK_EVENTS may hold (oldest dropped)
    dead_max_age: Duration = 30 * 86_400.0   # how long SPIDERDUCK_DEAD keeps dead letters
    dead_max_bytes: int = 0           # bytes SPIDERDUCK_DEAD may hold (oldest dropped)
    queued_ttl: Duration = 3600.0     # how long a URL submitted through SpiderDuck (submit, ResolveUrl)
                                      # shows as pending in GetUrlMetadata before a scheduler claims it


HTML_PARSERS = ("selectolax", "html5lib")      # process.parser: lexbor (fast), the reference
# process.embed_allow_hosts by default: the players of the major video, audio and social sites,
# each an iframe made to be embedded anywhere (not code playgrounds such as codepen.io, which frame
# anyone's scripts).
DEFAULT_EMBED_HOSTS = (
    "www.youtube.com", "www.youtube-nocookie.com", "player.vimeo.com", "open.spotify.com",
    "w.soundcloud.com", "embed.music.apple.com", "embed.podcasts.apple.com", "bandcamp.com",
    "player.twitch.tv", "clips.twitch.tv", "www.dailymotion.com", "geo.dailymotion.com",
    "www.tiktok.com", "www.instagram.com", "platform.twitter.com",
    "giphy.com", "www.loom.com", "fast.wistia.net", "embed.ted.com", "www.mixcloud.com")
_HOST_GLOB = re.compile(r"(?:\*\.)?(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?")
MAX_EMBED_HOSTS = 1000
# Keys that were, and what took their place: a config naming one is refused with these words.
REMOVED_KEYS = {
    "process.prefer_dates": "removed: published_time is always when the page was first published, "
                            "and modified_time when it was last modified (both are in the record)",
}


HONESTY_MODES = ("off", "triggered", "all")


@dataclass(frozen=True)
class ProcessSettings:
    """The Post Processor: how a fetched page becomes the record."""
    parser: str = "selectolax"        # HTML parser: selectolax (lexbor) or html5lib (the reference)
    related_fetches: bool = True      # fetch the page's image (first bytes) and oEmbed, via the fetchers
    image_probe_bytes: int = 65_536   # bytes of the representative image read for its size and type
    oembed_max_bytes: int = 65_536    # bytes of an oEmbed document or a web app manifest read
    related_timeout: Duration = 5.0   # seconds all related fetches of one page may take together
    related_cache_size: int = 10_000  # images and oEmbed documents whose answers are remembered
    min_image_size: int = 50          # pixels: a page's image narrower or lower than this (an icon, a
                                      # tracking pixel) gives way to its next candidate; 0 = any size
                                      # read (the extraction leaves out sizes stated under 50 anyway)
    workers: int = 0                  # extraction worker processes; 0 = one per CPU this process may
                                      # use (affinity, capped by a container's CPU limit)
    extract_timeout: Duration = 2.0   # seconds one page's extraction may take; past it the worker is
                                      # killed and the page recorded as TIMEOUT (other pages never wait)
    meta_refresh_max_delay: Duration = 5.0  # a card-less page refreshing elsewhere within this (meta
                                      # refresh, Refresh header) is a redirect hop; 0 = none followed
    embed_allow_hosts: list[str] = field(default_factory=lambda: list(DEFAULT_EMBED_HOSTS))
                                      # hosts whose iframe a record's embed_html may hold: exact names, or
                                      # "*.example.com" for its subdomains; [] = no embeds; default:
                                      # DEFAULT_EMBED_HOSTS above
    oembed_providers: str = ""        # a JSON file of oEmbed providers in oembed.com's providers.json format,
                                      # for pages that link no oEmbed document: its providers are added
                                      # to the list shipped (oembed.com's), or replace the one of the same
                                      # provider_name or provider_url; checked at load (at most 4 MiB,
                                      # http(s) schemes with a host and endpoints); empty = the shipped list
    honesty: str = "triggered"        # the second look as a browser (issue 43, README "Preview honesty"):
                                      # off; triggered, a URL whose first fetch gives a reason to look (a hop
                                      # to another registrable domain, a meta refresh or script redirect, Vary
                                      # naming User-Agent or Cookie, a cookie set on a redirect, og:url or the
                                      # canonical URL on another registrable domain, an interstitial); all,
                                      # every URL crawled
    honesty_budget: float = 0.1       # in triggered mode, the share of the URLs crawled in any minute that
                                      # may be checked (0..1); a URL due past it is recorded unchecked
    honesty_timeout: Duration = 30.0  # seconds a browser's look at one URL may take, all its hops and its
                                      # extraction together; past it the URL is recorded unchecked

    def __post_init__(self) -> None:
        if self.parser not in HTML_PARSERS:
            raise ConfigError(f"process.parser: {self.parser!r} is not one of {', '.join(HTML_PARSERS)}")
        if self.workers < 0:
            raise ConfigError(f"process.workers: {self.workers} is negative (0 = one per CPU)")
        if self.min_image_size < 0:
            raise ConfigError(f"process.min_image_size: {self.min_image_size} is negative (0 = any size)")
        if self.extract_timeout <= 0:
            raise ConfigError(f"process.extract_timeout: {self.extract_timeout:g}s must be positive")
        if not self.meta_refresh_max_delay >= 0:
            raise ConfigError(f"process.meta_refresh_max_delay: {self.meta_refresh_max_delay:g}s is negative")
        if not isinstance(self.embed_allow_hosts, list) or len(self.embed_allow_hosts) > MAX_EMBED_HOSTS:
            raise ConfigError(f"process.embed_allow_hosts: a list of at most {MAX_EMBED_HOSTS} host names")
        for host in self.embed_allow_hosts:
            if not isinstance(host, str) or len(host) > 253 or not _HOST_GLOB.fullmatch(host):
                raise ConfigError(f"process.embed_allow_hosts: {str(host)[:80]!r} is not a lower-case host "
                                  f"name or *.domain glob")
        if self.honesty not in HONESTY_MODES:
            raise ConfigError(f"process.honesty: {self.honesty!r} is not one of {', '.join(HONESTY_MODES)}")
        if not self.honesty_timeout > 0:
            raise ConfigError(f"process.honesty_timeout: {self.honesty_timeout:g}s must be positive")
        if not 0 <= self.honesty_budget <= 1:
            raise ConfigError(f"process.honesty_budget: {self.honesty_budget!r} is not a share from 0 to 1")
        if self.oembed_providers:
            try:
                oembed_providers.read_file(self.oembed_providers)
            except oembed_providers.ProvidersError as exc:
                raise ConfigError(f"process.oembed_providers: {exc}") from None


@dataclass(frozen=True)
class TelemetrySettings:
    otlp_endpoint: str = ""           # host:port of an OTLP gRPC receiver (an OpenTelemetry collector)
                                      # that gets each role's trace spans; empty = off (no spans made)
    service_name: str = ""            # the spans' resource service.name; empty = spiderduck-<role>
                                      # (spiderduck-scheduler, spiderduck-fetcher, spiderduck-up, ...)
    redact_query_params: list[str] = field(default_factory=lambda: [
        "AWSAccessKeyId", "Signature", "sig", "X-Goog-Signature",   # OpenTelemetry's url.query list
        "token", "session", "password", "passwd", "key", "secret", "code", "auth"])
                                      # a URL in a span has the value of each query parameter whose
                                      # lower-cased name contains one of these (lower-cased) as REDACTED

    def __post_init__(self) -> None:
        if not isinstance(self.redact_query_params, list) or not all(
                isinstance(n, str) and n.strip() for n in self.redact_query_params):
            raise ConfigError("telemetry.redact_query_params: a list of non-empty parameter names")


@dataclass(frozen=True)
class Settings:
    data_dir: str = "./var"           # where embedded state lives (NATS JetStream, SQLite, WARC files)
    nats_url: str = ""                # empty: `spiderduck up` starts an embedded nats-server; several
                                      # servers of one cluster: comma-separated
    nats_replicas: int = 1            # replicas of every stream and KV bucket the service creates
    nats_connect_timeout: Duration = 30.0  # seconds to reach NATS at start before giving up
    # NATS credentials and TLS (src/spiderduck/bus/credentials.py), for every role, the CLI and the client;
    # at most one of creds, nkey seed, user and token. Secrets come from files, never the config.
    nats_creds: str = ""              # a .creds file (user JWT and nkey seed, NATS decentralised auth)
    nats_nkey_seed: str = ""          # a file holding an nkey seed (SU...), for an nkey user
    nats_user: str = ""               # user name, with its password in nats_password_file (`up`'s
                                      # own NATS: user client, password in data_dir/nats.password)
    nats_password_file: str = ""      # a file holding nats_user's password
    nats_token_file: str = ""         # a file holding a token
    nats_tls_ca: str = ""             # PEM bundle the NATS servers' certificates must chain to (turns TLS on)
    nats_tls_cert: str = ""           # PEM client certificate, for a NATS server that verifies clients ...
    nats_tls_key: str = ""            # ... and its PEM private key
    shutdown_grace: Duration = 10.0   # seconds a stop (SIGINT/SIGTERM) may take; URLs still in
                                      # flight then are handed back to the stream (nak)
    metadata_store: str = ""          # sqlite:///PATH or cassandra://h1,h2:9042/keyspace; empty = sqlite under data_dir
    content_store: str = ""           # file://PATH or hdfs://namenode:9870/path?user=U; empty = files under data_dir
    robots_cache: str = ""            # memcached://host:11211 ; empty = in-process only
    recrawl_after: Duration = 7 * 86_400.0  # seconds a record stays fresh when its page states no
                                      # lifetime (accepts 7d, 12h, 30m, 45s)
    min_recrawl_after: Duration = 3600.0  # a lifetime the origin states (Cache-Control s-maxage or
                                      # max-age, Expires; no-cache counts as 0) is held at least this
    max_recrawl_after: Duration = 30 * 86_400.0  # ... and at most this
    min_refresh_interval: Duration = 60.0  # a refresh (submitted with refresh: true) re-fetches a URL
                                      # at most once this long: a record younger is answered FRESH
    serve_stale_for: Duration = 86_400.0  # an OK record expired less than this long ago is answered
                                      # STALE at once while one refresh re-fetches it; 0 = re-fetch first
    log_level: str = "INFO"
    metrics_listen: str = ""          # host:port serving Prometheus /metrics, e.g. 0.0.0.0:9090; empty = off
    metrics_domain_series: int = 100  # spiderduck_fetcher_queue_depth shows this many domains, the
                                      # deepest queues (one series each; the total is spiderduck_fetcher_queued)
    metadata_api: MetadataApiSettings = field(default_factory=MetadataApiSettings)
    fetcher: FetcherSettings = field(default_factory=FetcherSettings)
    scheduler: SchedulerSettings = field(default_factory=SchedulerSettings)
    process: ProcessSettings = field(default_factory=ProcessSettings)
    streams: StreamSettings = field(default_factory=StreamSettings)
    web: WebSettings = field(default_factory=WebSettings)
    tls: TlsSettings = field(default_factory=TlsSettings)
    telemetry: TelemetrySettings = field(default_factory=TelemetrySettings)
    render: RenderSettings = field(default_factory=RenderSettings)
    retention: RetentionSettings = field(default_factory=RetentionSettings)

    def __post_init__(self) -> None:
        # Absolute, so the CLI finds a running `up` (its nats.url) from any working directory.
        object.__setattr__(self, "data_dir", os.path.abspath(self.data_dir))
        if self.min_recrawl_after > self.max_recrawl_after:
            raise ConfigError(f"min_recrawl_after ({self.min_recrawl_after:g}s) is more than "
                              f"max_recrawl_after ({self.max_recrawl_after:g}s)")
        for key in ("allowed_callers", "admin_callers"):
            if getattr(self.fetcher, key) and not self.tls.require_client_cert:
                raise ConfigError(f"fetcher.{key}: callers are told by their client certificates, so it "
                                  "needs tls.cert, tls.key and tls.ca with tls.client_auth require")
        if bool(self.web.tls_cert) != bool(self.web.tls_key):
            raise ConfigError("web.tls_cert and web.tls_key: set both or neither")
        if not 1 <= self.nats_replicas <= 5:
            raise ConfigError(f"nats_replicas: bad value {self.nats_replicas!r}: JetStream keeps 1 to 5 "
                              "replicas (and more than 1 needs a NATS cluster)")

    @property
    def drain_seconds(self) -> float:
        """Of shutdown_grace, the part work in flight may take to finish after a stop; the rest
        is for handing back what remains and closing stores, servers and connections."""
        return self.shutdown_grace * 0.7

    @property
    def handback_seconds(self) -> float:
        """The rest of shutdown_grace: for handing back claims and leases, and closing."""
        return self.shutdown_grace - self.drain_seconds

    @property
    def metadata_store_url(self) -> str:
        return self.metadata_store or f"sqlite:///{os.path.join(self.data_dir, 'metadata.db')}"

    @property
    def content_store_url(self) -> str:
        return self.content_store or f"file://{os.path.join(self.data_dir, 'content')}"

    @property
    def extraction_workers(self) -> int:
        """process.workers, or one per CPU this process may use (its cgroup's quota counts)."""
        from spiderduck.core.cpus import usable_cpus
        return self.process.workers or usable_cpus()

    @property
    def fetcher_addresses(self) -> list[str]:
        return list(self.scheduler.fetchers) or [self.fetcher.listen]
