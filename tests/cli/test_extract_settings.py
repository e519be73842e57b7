"""`spiderduck extract` extracts as the scheduler does, with the settings it was started with:
process.parser and the robots meta named by fetcher.user_agent's product token (before issue 37
it read the default user agent's token, whatever fetcher.user_agent said)."""
from __future__ import annotations

import json

from spiderduck.cli.main import main

PAGE = (b'<html><head><title>T</title><meta name="spiderduck" content="noarchive">'
        b'<meta name="quackbot" content="noindex"></head><body><p>x</p></body></html>')
QUACKBOT = "fetcher.user_agent=QuackBot/2.1 (+https://quack.test/bot)"


def _extract(capsysbinary, *args: str) -> list[dict]:
    assert main(["extract", *args]) == 0
    return [json.loads(line) for line in capsysbinary.readouterr().out.splitlines()]


def test_the_robots_meta_read_is_the_configured_user_agents(tmp_path, capsysbinary):
    page = tmp_path / "page.html"
    page.write_bytes(PAGE)
    [default] = _extract(capsysbinary, "--url", "http://site.test/", str(page))
    [quack] = _extract(capsysbinary, "--set", QUACKBOT, "--url", "http://site.test/", str(page))
    assert default["robots_directives"] == ["noarchive"]
    assert quack["robots_directives"] == ["noindex"]


def test_cases_are_extracted_with_the_configured_user_agent(tmp_path, capsysbinary):
    (tmp_path / "page.html").write_bytes(PAGE)
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"name": "one", "url": "http://site.test/", "html": "page.html"}]))
    [quack] = _extract(capsysbinary, "--set", QUACKBOT, "--cases", str(cases), "--jsonl")
    assert quack["robots_directives"] == ["noindex"] and quack["title"] == "T"
