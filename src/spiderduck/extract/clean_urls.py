"""Tracking parameters taken out of a URL: the record's `clean_url` and `removed_params`.

A separate field only: the URL we fetch, canonicalise and store is still the URL given.

    clean("https://youtu.be/abc?si=XyZ&t=42")  ->  ("https://youtu.be/abc?t=42", ("si",))

Which names are tracking comes from two places:
- `GLOBAL_PARAMS` below, in code: names whose meaning is the same on every host (utm_*, fbclid,
  gclid, msclkid, mc_eid, Instagram's `igshid`, Twitter's embed `ref_src`, ...), each with the
  reason it is tracking, removed on every host but where ClearURLs' global rules are excepted;
- the ClearURLs rules, kept as data in `clean_urls_rules.json` beside this module (what was taken
  and what was changed is listed there): their global list on every host, and the lists of about
  thirty big sites on their own hosts (YouTube and Spotify `si`, Twitter and X `s`, `t`, Reddit
  `share_id`, Amazon `pd_rd_*`, ...), with their exceptions.
A name that means tracking on one site and something else on others stays a site rule:
`NOT_GLOBAL` says why for the common ones (`si`, `s`, `t`, `feature`, `source`, `ref`, `tag`).

What we keep on purpose: referral and affiliate parameters (`ref`, `referrer`, Amazon's `tag`),
which credit the person who shared the link rather than follow the reader, and which often
select the page itself (`?ref=main` is a branch on code hosts), except where a site's own rules
name them (Amazon's `ref_`, Facebook's `*ref*` parameters); and everything no rule names, so
`id`, `p`, `v`, `q`, `page`, `lang`, `source` and YouTube's `t` (a timestamp) stay. Only query
and fragment parameters are removed: no path rewriting (Amazon's `/ref=...`), and redirect
links (`google.com/url?q=...`) are not unwrapped.

How a URL is read:
- only http(s) URLs that parse (WHATWG, through `ada_url`) are cleaned; anything else, or a URL
  with nothing to remove, comes back as given, with `()`;
- outside the removed parameters the URL is kept exactly as written: scheme, host, path and
  fragment, and the remaining parameters in their order and their own encoding (`a=1&b` stays
  `a=1&b`). When something is removed, empty parts (`&&`) go, and `?` goes if nothing remains;
- the query is split on `&` only; a parameter's name (before its first `=`) is matched both as
  written and percent-decoded (`+` is a space), ASCII case-insensitively: `UTM_Source`,
  `utm%5Fsource` and `utm_source` are one name. A name longer than 256 characters is never
  removed, so each pattern runs on at most 256 characters and a cleaning is linear in the URL;
- a fragment written as parameters (`#utm_source=x&utm_medium=y`: every `&`-part is `name=value`
  and no name holds `/` or `?`) is cleaned the same way, as ClearURLs does, and `#` goes if
  nothing remains; any other fragment (`#top`, `#/route?utm_source=x`, `#:~:text=...`) is kept;
- `removed_params` holds the removed names as written (not decoded), query first, then fragment,
  each spelling once: `?utm_source=a&UTM_SOURCE=b&utm_source=c` gives `("utm_source",
  "UTM_SOURCE")`.

Rule syntax (`clean_urls_rules.json`): each rule names a provider, the `hosts` it applies to,
its `params` (regular expressions, each matched against a whole name) and hosts it does not apply
to (`except`). A host entry is `host[/path]`: `*` is every host, `example.com` the host and its
subdomains, `google.*` google under any public suffix (`google.co.uk`, `news.google.de`); a path
`/a/b` matches `/a/b` and below (case-insensitively), `/**/a/b` those segments anywhere.

NOTICE: `clean_urls_rules.json` is derived from the ClearURLs Rules
(https://github.com/ClearURLs/Rules, data.min.json), Copyright (c) Kevin Roebert and the
ClearURLs contributors, licensed under the GNU Lesser General Public License v3.0; the derived
file is likewise LGPL-3.0. This module only reads it as data.
"""
from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote

import ada_url

from spiderduck.core.urls import FETCHABLE_SCHEMES, is_ip_literal, registrable_domain

__all__ = ["GLOBAL_PARAMS", "MAX_NAME_LENGTH", "NOT_GLOBAL", "RULES_FILE", "SOURCE", "clean"]

# Tracking on every host: what each name is. "name*" is every name starting so ("utm_source").
# Only names a vendor documents and appends to links wherever they lead; never one that selects
# what a page shows.
GLOBAL_PARAMS: dict[str, str] = {
    "utm_*": "Google Analytics campaign tags (source, medium, campaign, term, content, id)",
    "mtm_*": "Matomo campaign tags",
    "pk_campaign": "Matomo (Piwik) campaign name", "pk_kwd": "Matomo (Piwik) campaign keyword",
    "pk_source": "Matomo (Piwik) campaign source", "pk_medium": "Matomo (Piwik) campaign medium",
    "_ga": "Google Analytics client id carried across domains", "_gl": "Google Analytics cross-domain linker",
    "gclid": "Google Ads click id", "dclid": "Google Display & Video 360 click id",
    "gbraid": "Google Ads click id (iOS app to web)", "wbraid": "Google Ads click id (iOS web to app)",
    "gad_source": "Google Ads: the ad network a click came from",
    "srsltid": "Google Merchant Center's tag on shopping results",
    "fbclid": "Facebook click id, added to every link leaving Facebook",
    "igshid": "Instagram share id, added to links shared from the app, whatever their host",
    "igsh": "Instagram share id (its newer name)",
    "ref_src": "Twitter's embed marker (ref_src=twsrc^tfw), added to every link of an embedded tweet",
    "msclkid": "Microsoft Advertising click id", "twclid": "X (Twitter) Ads click id",
    "ttclid": "TikTok Ads click id", "li_fat_id": "LinkedIn Ads click id", "epik": "Pinterest Ads click id",
    "yclid": "Yandex Direct click id", "wickedid": "Wicked Reports click id",
    "s_cid": "Adobe Analytics campaign code",
    "mc_cid": "Mailchimp campaign id", "mc_eid": "Mailchimp subscriber id",
    "_hsenc": "HubSpot email tracking", "_hsmi": "HubSpot email message id",
    "__hstc": "HubSpot visitor cookie carried across domains", "__hssc": "HubSpot session cookie carried across domains",
    "__hsfp": "HubSpot browser fingerprint carried across domains",
    "mkt_tok": "Marketo email tracking token", "_kx": "Klaviyo email subscriber id",
    "oly_anon_id": "Omeda newsletter reader id", "oly_enc_id": "Omeda newsletter subscriber id",
    "vero_id": "Vero email subscriber id", "vero_conv": "Vero email conversion tracking",
    "_branch_match_id": "Branch deep-link click id",
}

# Names that are tracking on some sites only, and left to their rules: why each is not global.
NOT_GLOBAL: dict[str, str] = {
    "si": "a share id on YouTube and Spotify, but two letters that mean a section, an index or a size elsewhere",
    "s": "a share marker on X and Twitter, a search query on most sites (WordPress's ?s=)",
    "t": "a share marker on X, a timestamp on YouTube, a tab or topic elsewhere",
    "feature": "a share marker on YouTube, a feature or section elsewhere",
    "source": "Medium's feed marker, but it selects what many pages show",
    "src": "Twitter's search marker, an image or a feed elsewhere",
    "ref": "credits whoever shared the link, and is a branch on code hosts (?ref=main)",
    "tag": "Amazon's affiliate tag credits the sharer; a tag's page elsewhere",
}

# Data derived from ClearURLs Rules (LGPL-3.0); see the NOTICE above and the file's "about".
RULES_FILE = Path(__file__).with_name("clean_urls_rules.json")
MAX_NAME_LENGTH = 256

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class _Place:
    """One `host[/path]` entry of the rules."""

    host: str              # "" for every host
    any_suffix: bool       # "google.*": `host` is matched against the host less its public suffix
    path: str              # "" for any path, else lower-case, no trailing "/"
    anywhere: bool         # "/**/a": the segments may start anywhere in the path

    @classmethod
    def read(cls, entry: str) -> _Place:
        host, slash, path = entry.strip().lower().partition("/")
        path = (slash + path).rstrip("/")
        anywhere = path.startswith("/**/")
        if anywhere:
            path = path[3:]
        if host == "*":
            return cls("", False, path, anywhere)
        any_suffix = host.endswith(".*")
        return cls(host.removesuffix(".*"), any_suffix, path, anywhere)

    def holds_host(self, host: str, stem: str) -> bool:
        """`stem` is `host` less its public suffix."""
        if not self.host:
            return True
        name = stem if self.any_suffix else host
        return name == self.host or name.endswith("." + self.host)

    def holds_path(self, path: str) -> bool:
        """`path` is lower-case."""
        if not self.path:
            return True
        if self.anywhere:
            return self.path + "/" in path + "/"
        return path == self.path or path.startswith(self.path + "/")


@dataclass(frozen=True)
class _Rule:
    provider: str
    hosts: tuple[_Place, ...]
    excepts: tuple[_Place, ...]
    names: re.Pattern[str]


# ClearURLs writes most names as `(?:%3F)?name` (the name may follow an encoded "?"). Factored out
# of the union, each branch starts with a literal, which the regex engine rejects at one glance.
_AFTER_ENCODED_QUESTION_MARK = "(?:%3F)?"


def _union(params: list[str]) -> re.Pattern[str]:
    """One pattern that fully matches a name when one of `params` does, ASCII case-insensitively."""
    prefix = _AFTER_ENCODED_QUESTION_MARK
    prefixed = [f"(?:{p.removeprefix(prefix)})" for p in params if p.startswith(prefix)]
    branches = [f"(?:{p})" for p in params if not p.startswith(prefix)]
    if prefixed:
        branches.append(f"{prefix}(?:{'|'.join(prefixed)})")
    return re.compile("|".join(branches), re.IGNORECASE | re.ASCII)


def _load(path: Path) -> tuple[tuple[_Rule, ...], dict]:
    data = json.loads(path.read_text(encoding="utf-8"))
    rules = []
    for entry in data["rules"]:
        params = entry["params"]
        for param in params:
            re.compile(param)               # a bad pattern names itself, not the whole union
        rules.append(_Rule(
            provider=entry["provider"],
            hosts=tuple(_Place.read(h) for h in entry["hosts"]),
            excepts=tuple(_Place.read(h) for h in entry.get("except", ())),
            names=_union(params),
        ))
    return tuple(rules), data["source"]


def _global_rule(excepts: tuple[_Place, ...]) -> _Rule:
    """GLOBAL_PARAMS as a rule on every host, with the exceptions of ClearURLs' global rules."""
    names = [_AFTER_ENCODED_QUESTION_MARK
             + (re.escape(name[:-1]) + "[a-z0-9_]*" if name.endswith("*") else re.escape(name))
             for name in GLOBAL_PARAMS]
    return _Rule("GLOBAL_PARAMS", (_Place.read("*"),), excepts, _union(names))


_CLEARURLS_RULES, SOURCE = _load(RULES_FILE)
_RULES = (*_CLEARURLS_RULES, _global_rule(next(r.excepts for r in _CLEARURLS_RULES if r.provider == "globalRules")))


@functools.lru_cache(maxsize=4096)
def _rules_on(host: str) -> tuple[tuple[re.Pattern[str], tuple[_Place, ...], tuple[_Place, ...]], ...]:
    """The rules that may apply on `host`, each with its entries that name the host."""
    host = host.rstrip(".")
    stem = host
    if host and not is_ip_literal(host):
        suffix = registrable_domain(host).partition(".")[2]
        if suffix and host.endswith("." + suffix):
            stem = host[: -len(suffix) - 1]
    found = []
    for rule in _RULES:
        hosts = tuple(place for place in rule.hosts if place.holds_host(host, stem))
        if hosts:
            excepts = tuple(place for place in rule.excepts if place.holds_host(host, stem))
            found.append((rule.names, hosts, excepts))
    return tuple(found)


def _rules_for(host: str, path: str) -> tuple[re.Pattern[str], ...]:
    path = path.lower()
    return tuple(names for names, hosts, excepts in _rules_on(host)
                 if any(place.holds_path(path) for place in hosts)
                 and not any(place.holds_path(path) for place in excepts))


class _Names:
    """Decides whether a parameter name is tracking, once per distinct spelling."""

    def __init__(self, patterns: tuple[re.Pattern[str], ...]):
        self.patterns = patterns
        self.seen: dict[str, bool] = {}
        self.removed: dict[str, None] = {}      # an ordered set of the names as written

    def tracking(self, name: str) -> bool:
        verdict = self.seen.get(name)
        if verdict is None:
            verdict = self._match(name)
            self.seen[name] = verdict
        if verdict:
            self.removed.setdefault(name)
        return verdict

    def _match(self, name: str) -> bool:
        if not name or len(name) > MAX_NAME_LENGTH:
            return False
        if any(p.fullmatch(name) for p in self.patterns):
            return True
        if "%" in name or "+" in name:
            decoded = unquote(name.replace("+", " "), errors="replace")
            return any(p.fullmatch(decoded) for p in self.patterns)
        return False

    def strip(self, params: str) -> str | None:
        """`params` without the tracking ones, or None when none was."""
        parts = params.split("&")
        kept = [part for part in parts if not self.tracking(part.partition("=")[0])]
        if len(kept) == len(parts):
            return None
        return "&".join(part for part in kept if part)


def _written_as_params(fragment: str) -> bool:
    if "=" not in fragment:
        return False
    for part in fragment.split("&"):
        if part:
            name, eq, _ = part.partition("=")
            if not eq or "/" in name or "?" in name:
                return False
    return True


def clean(url: str) -> tuple[str, tuple[str, ...]]:
    """(the URL without tracking parameters, the names removed in order of appearance).
    A URL with none returns (url, ())."""
    head, hash_, fragment = url.partition("#")
    base, question, query = head.partition("?")
    fragment_params = bool(hash_) and _written_as_params(fragment)
    if not query and not fragment_params:
        return url, ()
    probe = _SURROGATE.sub("\ufffd", url) if not url.isascii() else url
    try:
        parts = ada_url.parse_url(probe, attributes=("protocol", "hostname", "pathname"))
    except (ValueError, UnicodeError):
        return url, ()
    if parts["protocol"].removesuffix(":") not in FETCHABLE_SCHEMES:
        return url, ()
    patterns = _rules_for(parts["hostname"], parts["pathname"])
    if not patterns:
        return url, ()
    names = _Names(patterns)
    new_query = names.strip(query) if query else None
    new_fragment = names.strip(fragment) if fragment_params else None
    if not names.removed:
        return url, ()
    out = base
    if new_query is None:
        out += question + query
    elif new_query:
        out += "?" + new_query
    if new_fragment is None:
        out += hash_ + fragment
    elif new_fragment:
        out += "#" + new_fragment
    return out, tuple(names.removed)
