"""The commands on the client: `get --file` (a file, stdin, exit 1 when a URL has no record),
`extract --cases` (one JSON map, or JSON lines with --jsonl), and progress on stderr only when
it is a terminal. Real processes, a real nats-server and the service's roles on free ports."""
from __future__ import annotations

import asyncio
import fcntl
import json
import os
import pty
import select
import struct
import subprocess
import termios
import time

import orjson

from spiderduck.client import AsyncClient
from spiderduck.extract import extract_cases
from support.cli import CLI
from support.localweb import Gate
from support.service import RunningService, service_settings, wait_until
from support.extraction import EXTRACTION


async def cli(*args: str, stdin: str | None = None, timeout: float = 60) -> tuple[int, str, str]:
    """Run one command with `stdin` as its input: (exit code, stdout, stderr), both pipes."""
    proc = await asyncio.create_subprocess_exec(
        *CLI, *args, stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = await asyncio.wait_for(proc.communicate(stdin.encode() if stdin is not None else None),
                                      timeout)
    return proc.returncode, out.decode(), err.decode()


def with_terminal_stderr(*args: str, stdin: bytes = b"", timeout: float = 60) -> tuple[int, bytes, bytes]:
    """Run one command with stderr on a pseudo-terminal (stdout a pipe): (exit code, stdout,
    what the terminal got)."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))   # 24x100: a size
    proc = subprocess.Popen([*CLI, *args], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=slave)
    os.close(slave)
    proc.stdin.write(stdin)
    proc.stdin.close()
    terminal = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 65536)
            except OSError:             # EIO: the command closed the terminal (it exited)
                break
            if not chunk:
                break
            terminal += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    out = proc.stdout.read()
    proc.stdout.close()
    return proc.wait(timeout), out, terminal


def corpus(tmp_path, n: int = 3) -> str:
    """A cases file like ../shared/corpus/*/cases.json, of `n` small pages."""
    cases = []
    for i in range(n):
        (tmp_path / f"p{i}.html").write_text(
            f'<html lang="en"><head><title>Page {i}</title>'
            f'<meta property="og:description" content="About {i}."></head></html>')
        cases.append({"name": f"case-{i}", "url": f"http://site.test/{i}", "html": f"p{i}.html",
                      "expected": {}})
    path = tmp_path / "cases.json"
    path.write_text(json.dumps(cases))
    return str(path)


async def test_get_file_and_stdin_exit_1_when_any_url_has_no_record(nats_server, localweb, tmp_path):
    pages = [localweb.page("docs.test", f"/{n}", f"<title>Doc {n}</title>") for n in range(3)]
    gate = Gate("<title>Held</title>")
    held = localweb.route("held.test", "/", gate)
    never = localweb.url("never.test", "/")
    settings = service_settings(tmp_path, nats_server.url)
    where = ["--set", f"metadata_api.listen={settings.metadata_api.listen}",
             "--set", f"nats_url={nats_server.url}", "--set", f"data_dir={tmp_path / 'cli'}"]
    listing = tmp_path / "urls.txt"
    listing.write_text(f"# the docs\n\n{pages[0]}\n   \n{pages[1]}\n  # indented comment\n")
    async with RunningService(settings), AsyncClient(settings.metadata_api.listen) as client:
        for page in pages:
            assert (await client.resolve(page, timeout=20)).status == "OK"

        empty = tmp_path / "empty.txt"
        empty.write_text("# nothing\n\n")
        from_file, mixed, bare, *refused = await asyncio.gather(   # independent: all at once
            cli("get", "--file", str(listing), *where),
            cli("get", pages[2], "--file", "-", *where, stdin=f"{pages[0]}\n{never}\n"),
            cli("get", never, *where),
            cli("get", "--file", str(empty), *where),
            cli("get", "--file", str(tmp_path / "absent.txt"), *where))

        code, out, err = from_file
        assert (code, err) == (0, "")                              # all found; no progress off a tty
        assert [json.loads(line)["title"] for line in out.splitlines()] == ["Doc 0", "Doc 1"]
        code, out, err = mixed
        assert (code, err) == (1, "")                              # one has no record: exit 1
        rows = [json.loads(line) for line in out.splitlines()]
        assert [r.get("title") for r in rows] == ["Doc 2", "Doc 0", None]   # arguments first
        assert rows[2] == {"url": never, "found": False}
        code, out, err = bare                                      # URLs as arguments: the same
        assert code == 1 and json.loads(out) == {"url": never, "found": False}, err
        for (code, out, err), reason in zip(refused, ["nothing to get: give URLs or --file F",
                                                      "cannot read"]):
            assert code == 2 and out == "" and reason in err and len(err.splitlines()) == 1, err

        code, out, err = await cli("submit", "--file", "-", *where, stdin=f"{held}\n")
        assert (code, err) == (0, "submitted 1\n")                  # no progress bar off a tty
        await asyncio.wait_for(gate.asked.wait(), 30)              # being crawled now
        code, out, err = await cli("get", "--file", "-", *where, stdin=f"{pages[1]}\n{held}\n")
        assert code == 1, err                                      # pending counts as not found
        assert json.loads(out.splitlines()[1]) == {"url": held, "found": False, "pending": True}
        gate.opened.set()
        async def stored():                                        # done before the service stops
            return (await client.get([held]))[0].found
        await wait_until(stored, 30, "the held page's record")


async def test_extract_cases_prints_one_map_or_json_lines(tmp_path):
    cases = corpus(tmp_path)
    as_map, as_lines, misplaced, absent = await asyncio.gather(   # independent: all at once
        cli("extract", "--cases", cases),
        cli("extract", "--cases", cases, "--jsonl"),
        cli("extract", "--jsonl", "--url", "http://site.test/0", str(tmp_path / "p0.html")),
        cli("extract", "--cases", str(tmp_path / "absent.json")))
    code, out, err = as_map
    assert (code, err) == (0, "")                                  # quiet off a terminal
    result = json.loads(out)                                       # one document: json.load reads it
    assert list(result) == ["case-0", "case-1", "case-2"]
    assert result["case-1"]["title"] == "Page 1" and result["case-1"]["description"] == "About 1."
    assert out.encode() == orjson.dumps(extract_cases(cases, **EXTRACTION), option=orjson.OPT_INDENT_2) + b"\n"

    code, out, err = as_lines
    assert (code, err) == (0, "")
    lines = [json.loads(line) for line in out.splitlines()]
    assert [line["case"] for line in lines] == list(result)
    assert all({k: v for k, v in line.items() if k != "case"} == result[line["case"]] for line in lines)

    code, out, err = misplaced
    assert code == 2 and "--jsonl goes with --cases" in err
    code, out, err = absent
    assert code == 2 and "cannot read" in err and len(err.splitlines()) == 1


def test_progress_shows_on_a_terminal_and_never_on_stdout(tmp_path, nats_server):
    cases = corpus(tmp_path, n=4)
    code, out, terminal = with_terminal_stderr("extract", "--cases", cases, "--jsonl")
    assert code == 0, terminal
    assert len(out.splitlines()) == 4 and all(line.startswith(b'{"case":') for line in out.splitlines())
    assert b"/4" in terminal and b"case" in terminal, terminal       # tqdm's "n/4 ... case/s"

    urls = "".join(f"http://queue.test/{n}\n" for n in range(3)).encode()
    code, out, terminal = with_terminal_stderr(
        "submit", "--file", "-", "--set", f"nats_url={nats_server.url}",
        "--set", f"data_dir={tmp_path / 'cli'}", stdin=urls)
    assert code == 0 and out == b"", terminal
    assert b"/3" in terminal and b"submitted 3" in terminal, terminal
