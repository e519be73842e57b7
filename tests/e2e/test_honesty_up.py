"""Issue 43's "Done when", through a real `spiderduck up` and real servers: on a test web of cloaking
techniques and honest pages (support/cloaking_web.py: 26 cloaked URLs of more than 20 techniques,
52 honest pages with the issue's near-misses), in `process.honesty: all` mode every cloaked URL's
record ends `differs` with the differences its technique makes, every honest one `consistent`
(the goals: at least 98% of the cloaked found, at most 1% of the honest disputed), each check
announced by a processed event naming `honesty`, and a `differs` published on
spiderduck.events.disputed. In `triggered` mode a cloak behind a shortener (a hop to another
registrable domain) and one that says `Vary: User-Agent` are checked and found, and a plain
article is not checked: its record has no `honesty`, and no browser asked its site."""
from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from urllib.parse import urlsplit

import nats
from google.protobuf.message import DecodeError

from spiderduck.bus import streams as bus
from spiderduck.cli import up_nats
from spiderduck.v1 import events_pb2

from support.cli import Proc, run_cli, start_up, up_config
from support.cloaking_web import Case, CloakingWeb
from support.service import Events

DISPUTED_SUBJECT = "spiderduck.events.disputed"
CHECK_WAIT = 120.0        # seconds for every URL's second look, all submitted at once, on a busy machine
EVENT_WAIT = 60.0
DETECTED_GOAL = 0.98      # of the cloaked URLs, at least this share `differs`
FALSE_ALARM_GOAL = 0.01   # of the honest pages, at most this share `differs`


class Watch:
    """What a program beside `up` sees as the user `client`: every UrlProcessed, and every message
    published on the disputed subject."""

    def __init__(self, data_dir: Path):
        self.data_dir = str(data_dir)
        self.events = Events()
        self.disputed: list[bytes] = []

    async def __aenter__(self) -> "Watch":
        url = Path(up_nats.url_path(self.data_dir)).read_text().strip()
        self.nc = await nats.connect(url, allow_reconnect=False, **up_nats.up_credentials(self.data_dir))
        await self.nc.subscribe(bus.PROCESSED_SUBJECT, cb=self.events.on_message)
        await self.nc.subscribe(DISPUTED_SUBJECT, cb=self._on_disputed)
        await self.nc.flush()
        return self

    async def __aexit__(self, *exc) -> None:
        await self.nc.close()

    async def _on_disputed(self, msg) -> None:
        self.disputed.append(msg.data)

    def checks(self, url: str) -> list[dict]:
        """The processed events of `url` (as submitted) that announce its honesty check."""
        return [e for e in self.events.items if url in (e.get("url"), e.get("canonical_url"))
                and "honesty" in e.get("changed_fields", [])]

    async def wait(self, what: str, missing, up: Proc, timeout: float) -> None:
        """Until `missing()` (the URLs still awaited) is empty; fails naming them after `timeout`."""
        deadline = time.monotonic() + timeout
        while left := missing():
            assert up.proc.poll() is None, f"`up` exited {up.proc.returncode}:\n{up.stderr[-3000:]}"
            assert time.monotonic() < deadline, (f"after {timeout:g}s no {what} for {len(left)} URLs:\n"
                                                 + "\n".join(left[:30]) + f"\n`up` log:\n{up.stderr[-3000:]}")
            await asyncio.sleep(0.1)

    async def checked(self, urls: list[str], up: Proc, timeout: float = CHECK_WAIT) -> None:
        await self.wait("processed event naming honesty", lambda: [u for u in urls if not self.checks(u)], up, timeout)

    async def processed(self, urls: list[str], up: Proc, timeout: float = EVENT_WAIT) -> None:
        await self.wait("processed event", lambda: [u for u in urls if not self.events.for_url(u)], up, timeout)

    def disputed_names(self) -> list[set[str]]:
        """The URLs each disputed message names (a UrlProcessed: its url, canonical, record and final URLs)."""
        named = []
        for data in self.disputed:
            try:
                event = events_pb2.UrlProcessed.FromString(data)
                named.append({event.url, event.canonical_url, event.metadata.url, event.metadata.final_url} - {""})
            except DecodeError:
                named.append(set())
        return named


async def submit(config: str, urls: list[str]) -> None:
    code, out, err = await run_cli("submit", *urls, "--config", config)
    assert code == 0, out + err


async def records(config: str, urls: list[str]) -> dict[str, dict]:
    """`spiderduck get` of `urls`: each URL's record as it prints it (protobuf's JSON, proto names)."""
    code, out, err = await run_cli("get", *urls, "--config", config)
    rows = [json.loads(line) for line in out.splitlines() if line.strip()]
    got = {row["url"]: row for row in rows}
    assert set(got) == set(urls) and all(row.get("found", True) for row in rows), (code, out[-3000:], err[-3000:])
    return got


def verdict_of(row: dict) -> tuple[str, frozenset[str]]:
    honesty = row.get("honesty") or {}
    return honesty.get("verdict", "(none)"), frozenset(honesty.get("differences", ()))


def problems_of(case: Case, row: dict, cloaking: CloakingWeb) -> list[str]:
    verdict, differences = verdict_of(row)
    honesty = row.get("honesty") or {}
    out = []
    if row.get("status") != "OK":
        out.append(f"first record {row.get('status')} {row.get('error', '')}"[:80])
    if case.cloaked and (verdict != "differs" or not case.expect_differences <= differences):
        out.append("cloak not found" if verdict != "differs" else "differences missing")
    if not case.cloaked and verdict != "consistent":
        out.append("honest page not consistent")
    landed = urlsplit(honesty.get("browser_final_url", "")).hostname
    if case.browser_host and verdict != "(none)" and landed != case.browser_host:
        out.append(f"browser ended on {landed}, not {case.browser_host}")
    if verdict != "(none)" and not honesty.get("checked_at"):
        out.append("no checked_at")
    at = urlsplit(case.url)
    visits = [v for v in cloaking.visits_to(at.hostname) if v.path.split("?")[0] == at.path]
    if not any(v.browser for v in visits):
        out.append("no request with a browser's User-Agent reached the site")
    elif visits[0].browser:
        out.append("the browser asked before the crawler")
    return out


def table(cases: list[Case], rows: dict[str, dict], cloaking: CloakingWeb, only_bad: bool) -> str:
    lines = [f"{'case':30} {'kind':7} {'expected':38} got"]
    for case in cases:
        verdict, differences = verdict_of(rows[case.url])
        bad = problems_of(case, rows[case.url], cloaking)
        if bad or not only_bad:
            expected = f"differs {sorted(case.expect_differences)}" if case.cloaked else "consistent"
            lines.append(f"{case.name:30} {'cloaked' if case.cloaked else 'honest':7} {expected:38} {verdict} "
                         f"{sorted(differences)} {'; '.join(bad)}  [{case.technique}]")
    return "\n".join(lines)


async def test_every_cloak_differs_and_every_honest_page_is_consistent_in_all_mode(tmp_path, localweb):
    cloaking = CloakingWeb(localweb)
    cases = cloaking.build()
    cloaked, honest = [c for c in cases if c.cloaked], [c for c in cases if not c.cloaked]
    assert len(cloaked) >= 15 and len(honest) >= 30
    config = up_config(tmp_path, process={"honesty": "all", "honesty_budget": 1.0})
    up = await start_up(tmp_path, config)
    try:
        async with Watch(tmp_path / "var") as watch:
            await submit(config, [c.url for c in cases])                      # all at once
            await watch.checked([c.url for c in cases], up)
            rows = await records(config, [c.url for c in cases])

            # The goals of the issue, then each case on its own.
            found = sum(verdict_of(rows[c.url])[0] == "differs" for c in cloaked) / len(cloaked)
            alarms = sum(verdict_of(rows[c.url])[0] == "differs" for c in honest) / len(honest)
            report = (f"cloaked found {found:.1%} (goal >= {DETECTED_GOAL:.0%}), honest disputed {alarms:.1%} "
                      f"(goal <= {FALSE_ALARM_GOAL:.0%})\n{table(cases, rows, cloaking, only_bad=False)}")
            assert found >= DETECTED_GOAL and alarms <= FALSE_ALARM_GOAL, report
            bad = [c.name for c in cases if problems_of(c, rows[c.url], cloaking)]
            assert not bad, f"{len(bad)} cases wrong:\n{table(cases, rows, cloaking, only_bad=True)}"

            # A `differs` is published on the disputed subject; an honest page never is.
            names = {c.url: {c.url, rows[c.url].get("final_url", "")} - {""} for c in cases}

            async def disputed_cloak() -> bool:
                return any(named & names[c.url] for named in watch.disputed_names() for c in cloaked)
            deadline = time.monotonic() + EVENT_WAIT
            while not await disputed_cloak():
                assert time.monotonic() < deadline, f"no disputed message names a cloaked URL: {watch.disputed[:5]}"
                await asyncio.sleep(0.1)
            wrongly = [c.name for c in honest if any(named & names[c.url] for named in watch.disputed_names())]
            assert not wrongly, f"honest pages published as disputed: {wrongly}"
    finally:
        await up.stop()


async def test_triggered_mode_checks_a_cloak_with_a_reason_and_leaves_a_plain_article_alone(tmp_path, localweb):
    cloaking = CloakingWeb(localweb)
    cases = {c.name: c for c in cloaking.build()}
    # A hop to another registrable domain (a shortener), and `Vary: User-Agent`: reasons to look.
    cloaks = [cases["shortener_to_ua_cloak"], cases["vary_ua_title"]]
    article = cases["article_00"]
    config = up_config(tmp_path, process={"honesty": "triggered", "honesty_budget": 1.0})
    up = await start_up(tmp_path, config)
    try:
        async with Watch(tmp_path / "var") as watch:
            # The article first: had it been chosen, its check would have come before the cloaks'.
            await submit(config, [article.url])
            await watch.processed([article.url], up)
            await submit(config, [c.url for c in cloaks])
            await watch.checked([c.url for c in cloaks], up)
            rows = await records(config, [article.url] + [c.url for c in cloaks])
    finally:
        await up.stop()

    for cloak in cloaks:
        row = rows[cloak.url]
        assert row["status"] == "OK" and verdict_of(row)[0] == "differs", (cloak.name, row.get("honesty"))
        assert cloak.expect_differences <= verdict_of(row)[1], (cloak.name, row.get("honesty"))
    landed = urlsplit(rows[cloaks[0].url]["honesty"].get("browser_final_url", "")).hostname
    assert landed == cloaks[0].browser_host, rows[cloaks[0].url]["honesty"]

    assert rows[article.url]["status"] == "OK" and "honesty" not in rows[article.url], rows[article.url]
    assert not watch.checks(article.url)
    visits = cloaking.visits_to(urlsplit(article.url).hostname)
    assert visits and not any(v.browser for v in visits), [(v.path, v.user_agent) for v in visits]
