"""Issue 26, end to end: a canary in every secret-bearing setting is found nowhere the service or
the CLI prints or writes.

Each secret is a distinct canary (a key's canaries are the lines of its PEM body), kept where
an operator keeps it: a config file or a secret file, or SPIDERDUCK_TOKEN; never on a command
line. The real `spiderduck` command runs them at log_level DEBUG, through a normal start and
stop of `up`, failed connections (a NATS or a Cassandra that is not there), refusals (NATS
servers that refuse the credentials), a reconnect (a NATS with users and client certificates
restarted under connected roles), config errors, and the CLI failing against all of these.
No canary may appear in any process's stdout or stderr, any command line (`/proc/*/cmdline`,
what `ps` shows, sampled all along: nats-server and extraction workers included), any file
under a data_dir, or the web UI's pages and answers."""
from __future__ import annotations

import asyncio
import os
import ssl

import aiohttp
import pytest
import yaml

from spiderduck.cli.nats_server import EmbeddedNats, free_port
from support.canaries import (CONNECT_WITHIN, DEAD, FAIL_FAST, SPIDERDUCK, PsWatch, Run, Service, Up, World,
                              assert_files_clean, assert_ps_clean, assert_told_nothing, canary, run_all,
                              tls_client)

# nats_connect_timeout where no NATS is there: the first attempt is refused at once (its DEBUG
# line), and the error line comes when this runs out. With FAIL_FAST (1 s) each such run also
# waited out a second attempt, refused alike; 0.5 s (the pause between attempts) leaves one.
NO_NATS_WITHIN = 0.5


@pytest.fixture(scope="module")
def world(tmp_path_factory) -> World:
    return World(tmp_path_factory.mktemp("canaries"))


@pytest.fixture(scope="module")
def ps():
    watch = PsWatch()
    yield watch
    watch.stop()


@pytest.fixture(scope="module")
def up(world, ps):
    data_dir = world.data_dir("up")
    tree = {
        "data_dir": data_dir,
        "metadata_api": {"listen": f"127.0.0.1:{free_port()}", "tokens_file": world.tokens_file},
        "fetcher": {"listen": f"127.0.0.1:{free_port()}", "default_rate": 20, "connect_timeout": 1,
                    "allowed_networks": ["127.0.0.0/8"], "dns_overrides": {"*.test": "127.0.0.1"}},
        "web": {"listen": f"127.0.0.1:{free_port()}", "admin_token": world.admin_token,
                "tls_cert": world.web.cert, "tls_key": world.web.key},
        "tls": world.grpc_tls,
        "process": {"workers": 1},
        "robots_cache": f"memcached://alice:{world.robots_password}@{DEAD.format(free_port())}",
    }
    ignored = {"nats_user": "alice", "nats_password_file": world.password_file,
               "nats_nkey_seed": world.seed_file, "nats_creds": world.creds_file,
               "nats_token_file": world.token_file, **world.nats_tls}
    config = world.config("up", **tree, **ignored)
    service = Service(world, "up", "up", "--config", config)
    try:
        service.wait_for("serving every shard")
        service.wait_for("web UI on https://")
        yield Up(service, world.config("up-cli", **tree), data_dir,
                 f"https://{tree['web']['listen']}", tree)
    finally:
        service.kill()


async def web_answers(world: World, up: Up) -> list[tuple[str, int, str]]:
    """What the web UI shows: its sign-in (with a token of metadata_api.tokens_file), each page and
    admin answer (what was asked, the status, the headers and body)."""
    wrong, right = (f"Bearer {token}" for token in (world.wrong_env_token, world.admin_token))
    asks = [("POST /signin", {"token": world.alice}, None), ("GET /", {}, None), ("GET /url?u=http://a.test/", {}, None),
            ("GET /url?u=http://never.test/", {}, None), ("GET /domains", {}, None), ("GET /healthz", {}, None),
            ("POST /admin/submit", {"u": "http://b.test/"}, None),
            ("POST /admin/submit", {"u": "http://b.test/"}, wrong),
            ("POST /admin/pause", {"domain": "b.test"}, wrong),
            ("POST /admin/submit", {"u": "http://b.test/"}, right),
            ("POST /admin/pause", {"domain": "b.test", "for": "1s"}, right)]
    answers = []
    async with aiohttp.ClientSession(connector=aiohttp.TCPConnector(ssl=tls_client(world)),
                                     cookie_jar=aiohttp.CookieJar(unsafe=True)) as http:   # the session cookie
        for ask, form, authorization in asks:
            method, path = ask.split()
            headers = {"Authorization": authorization} if authorization else {}
            async with http.request(method, up.web + path, data=form or None, headers=headers) as response:
                shown = "".join(f"{k}: {v}\n" for k, v in response.headers.items()) + await response.text()
                said = {None: "", wrong: " (a wrong token)", right: " (the admin token)"}[authorization]
                answers.append((ask + said, response.status, shown))
    return answers


async def test_up_serves_with_its_secrets_showing_none(world, ps, up):
    """A normal start (DEBUG), the web UI's pages and admin answers, the CLI beside it (right and
    wrong tokens, up's token, refused NATS credentials of every kind), and every file of
    data_dir while it serves: no canary; nor on any command line."""
    cli = up.cli
    right_token = ["--token-file", world.alice_token_file]
    runs = [
        Run("submit (up's token)", ["submit", "http://a.test/", "--config", cli], "submitted 1", 0),
        Run("get --token-file (right)", ["get", "http://a.test/", "--config", cli, *right_token],
            '"url": "http://a.test/"', None),
        Run("get SPIDERDUCK_TOKEN (right)", ["get", "http://a.test/", "--config", cli],
            '"url": "http://a.test/"', None, env={"SPIDERDUCK_TOKEN": world.bob}),
        Run("get --token-file (wrong)", ["get", "http://a.test/", "--config", cli, "--token-file",
                                         world.wrong_token_file], "UNAUTHENTICATED"),
        Run("get SPIDERDUCK_TOKEN (wrong)", ["get", "http://a.test/", "--config", cli], "UNAUTHENTICATED",
            env={"SPIDERDUCK_TOKEN": world.wrong_env_token}),
        Run("resolve --token-file (right)", ["resolve", "http://a.test/", "--timeout", "20", "--config", cli,
                                             *right_token], '"url": "http://a.test/"', 0),
        Run("domains list (mutual TLS)", ["domains", "list", "--config", cli], "", 0),
        Run("schema apply (SQLite)", ["schema", "apply", "--config", cli], "nothing to apply", 0),
        Run("get, tls.key not the certificate's",
            ["get", "http://a.test/", "--config", world.config("up-cli-other-key", **{
                **up.settings, "tls": {**world.grpc_tls, "key": world.other.key}}), *right_token],
            "is not the key of the certificate"),
    ]
    kinds = world.credential_kinds()
    del kinds["nats_tls_key"]     # not credentials: up's NATS has no TLS (the next test's has)
    for (kind, part), command in zip(kinds.items(), (["submit", "http://a.test/"], ["watch"]) * 2):
        runs.append(Run(f"{command[0]} with {kind}, refused by up's NATS",   # it takes only up's token
                        [*command, "--config", world.config(f"up-cli-{kind}", **{**up.settings, **part})],
                        "NATS at nats://127.0.0.1:"))
    await run_all(runs)
    assert_told_nothing(world, runs)
    [refused] = [run for run in runs if run.what == "submit with nats_password_file, refused by up's NATS"]
    assert "refused nats_user alice: Authorization Violation" in refused.err

    answers = await web_answers(world, up)
    assert not [(ask, world.found(shown)) for ask, _, shown in answers if world.found(shown)]
    statuses = [status for _, status, _ in answers]
    assert statuses == [200, 200, 200, 404, 200, 200, 401, 401, 401, 200, 200], answers
    read = assert_files_clean(world, up.data_dir)
    assert {"nats.password", "nats-users/scheduler", "nats.url", "up.lock", "metadata.db", "nats/nats-server.log",
            "nats/nats-server.conf"} <= set(read), read
    assert ps.showing("nats-server", "-c", up.data_dir), "up's nats-server never seen"
    assert ps.showing(SPIDERDUCK, "up", "--config"), "up never seen"
    assert_ps_clean(world, ps)


async def test_up_stops_having_shown_no_secret(world, ps, up):
    assert await asyncio.to_thread(up.service.stop) == 0, up.service.text[-3000:]
    text = up.service.text
    assert not world.found(text)
    assert "up starting with config" in text and " DEBUG " in text, text[-3000:]
    assert "set, but nats_url is not" in text        # the NATS credentials it ignores: named only
    assert "robots.txt memcached" in text             # the memcached that is not there: tried
    assert_files_clean(world, up.data_dir)
    assert not os.path.exists(os.path.join(up.data_dir, "nats.password"))
    assert not os.path.exists(os.path.join(up.data_dir, "nats-users"))
    assert_ps_clean(world, ps)


# --- a NATS with users and client certificates: refusals, and a reconnect ---------------------------

def users_and_tls(world: World) -> str:
    """nats-server config: TLS with client certificates of the test CA, and three users (a
    password from a file, one in nats_url, an nkey)."""
    return (f'tls {{ cert_file: "{world.nats_server.cert}", key_file: "{world.nats_server.key}", '
            f'ca_file: "{world.ca}", verify: true }}\n'
            f'authorization {{ users = [ {{user: alice, password: "{world.nats_password}"}}, '
            f'{{user: bob, password: "{world.url_password}"}}, {{nkey: {world.nkey_public}}} ] }}\n')


async def test_roles_ride_out_a_nats_restart_and_refusals_show_no_secret(world, ps):
    """A fetcher (nats_user + nats_password_file), a scheduler (a password in nats_url) and a
    metadata-api (an nkey seed), each with a client certificate (nats_tls_key) and gRPC TLS, at
    DEBUG: connected, the NATS stopped and started again under them, reconnected, stopped. Then
    the same NATS refusing each kind of wrong credentials, to roles and the CLI, and roles that
    got in failing on a store (a Cassandra that is not there, a WebHDFS URL with a password)."""
    store = str(world.root / "nats-users")          # the test's server, not the service's
    server = EmbeddedNats(store, config=users_and_tls(world)).start()
    nats_at = f"nats://127.0.0.1:{server.port}"
    fetcher_listen = f"127.0.0.1:{free_port()}"
    common = {**world.nats_tls, "tls": world.grpc_tls}
    roles = {
        "fetcher": ("serving leased shards", world.config(
            "fetcher", data_dir=world.data_dir("fetcher"), nats_url=nats_at, nats_user="alice",
            nats_password_file=world.password_file, fetcher={"listen": fetcher_listen},
            robots_cache=f"memcached://alice:{world.robots_password}@{DEAD.format(free_port())}", **common)),
        "scheduler": ("scheduler pipeline", world.config(
            "scheduler", data_dir=world.data_dir("scheduler"),
            nats_url=f"nats://bob:{world.url_password}@127.0.0.1:{server.port}",
            scheduler={"fetchers": [fetcher_listen]}, process={"workers": 1}, **common)),
        "metadata-api": ("web UI on https://", world.config(
            "metadata-api", data_dir=world.data_dir("metadata-api"), nats_url=nats_at,
            nats_nkey_seed=world.seed_file,
            metadata_api={"listen": f"127.0.0.1:{free_port()}", "tokens_file": world.tokens_file},
            web={"listen": f"127.0.0.1:{free_port()}", "admin_token": world.admin_token,
                 "tls_cert": world.web.cert, "tls_key": world.web.key}, **common)),
    }
    running = {name: Service(world, name, name, "--config", config) for name, (_, config) in roles.items()}
    try:
        for name, (ready, _) in roles.items():
            await running[name].wait_for_async(ready)
        await asyncio.to_thread(server.stop)
        await asyncio.to_thread(server.start)                         # the same port
        for service in running.values():
            await service.wait_for_async(f"reconnected to 127.0.0.1:{server.port}")
        signed_in = {"nats_url": nats_at, "nats_user": "alice", "nats_password_file": world.password_file,
                     **world.nats_tls}
        refusals = [
            Run("fetcher, a wrong password in nats_url", ["fetcher", "--config", world.config(
                "wrong-url", nats_url=f"nats://alice:{world.wrong_url_password}@127.0.0.1:{server.port}",
                data_dir=world.data_dir("wrong"), **world.nats_tls)],
                "refused the client certificate "),
            Run("submit, a wrong nats_password_file", ["submit", "http://a.test/", "--config", world.config(
                "wrong-password", **{**signed_in, "nats_password_file": world.wrong_password_file})],
                "refused nats_user alice with the client certificate"),
            Run("watch, nats_token_file", ["watch", "--config", world.config(
                "wrong-token", nats_url=nats_at, nats_token_file=world.token_file, **world.nats_tls)],
                "refused the token of "),
            Run("submit, an unknown nats_nkey_seed", ["submit", "http://a.test/", "--config", world.config(
                "wrong-seed", nats_url=nats_at, nats_nkey_seed=world.stranger_seed_file, **world.nats_tls)],
                "refused the nkey seed of "),
            Run("scheduler, nats_creds", ["scheduler", "--config", world.config(
                "wrong-creds", nats_url=nats_at, nats_creds=world.creds_file,
                data_dir=world.data_dir("wrong"), **world.nats_tls)],
                "refused the nats_creds of "),
            Run("scheduler in, Cassandra not there", ["scheduler", "--config", world.config(
                "scheduler-cassandra", **signed_in, data_dir=world.data_dir("wrong"),
                metadata_store=world.cassandra(free_port(), password_file=True))],
                "cassandra connect to 127.0.0.1:"),
            Run("scheduler in, a WebHDFS URL with a password", ["scheduler", "--config", world.config(
                "scheduler-hdfs", **signed_in, data_dir=world.data_dir("wrong"),
                content_store=f"hdfs://carol:{world.hdfs_password}@namenode/spiderduck?user=carol")],
                "content_store: 'hdfs://carol:<set>@namenode/spiderduck?user=carol': no user or password"),
            Run("resolve --trace in, Cassandra not there", ["resolve", "http://a.test/", "--trace", "--config",
                world.config("resolve-cassandra", **signed_in, data_dir=world.data_dir("wrong"),
                             metadata_store=world.cassandra(free_port()))],
                "cassandra connect to 127.0.0.1:", 1),
        ]
        await run_all(refusals)
        assert_told_nothing(world, refusals)
        assert_ps_clean(world, ps)
        assert ps.showing(SPIDERDUCK, "fetcher", "--config") and ps.showing("spiderduck.extract.worker")
        # Stopped side by side (each one's stop waits on its own, e.g. the scheduler's open pull).
        codes = dict(zip(running, await asyncio.gather(
            *(asyncio.to_thread(service.stop) for service in running.values()))))
    finally:
        for service in running.values():
            service.kill()
        server.stop()
    shown = {name: world.found(service.text) for name, service in running.items()}
    assert shown == {name: [] for name in running}
    assert codes == {name: 0 for name in running}, "\n\n".join(
        f"{name} exited {code}:\n{running[name].text[-4000:]}" for name, code in codes.items() if code != 0)
    assert all("disconnected; reconnecting" in service.text for service in running.values())
    assert_files_clean(world, world.data_dir("fetcher"), world.data_dir("scheduler"),
                       world.data_dir("metadata-api"), world.data_dir("wrong"))
    assert_ps_clean(world, ps)


# --- nothing there: failed connections ---------------------------------------------------------------

async def test_failed_connections_show_no_secret(world, ps):
    """Roles, `up` and the CLI with every secret, against a NATS, a Cassandra, a metadata-api
    and a fetcher that are not there (nats_connect_timeout NO_NATS_WITHIN): one line each, no canary."""
    dead_nats = f"nats://127.0.0.1:{free_port()}"
    data_dir = world.data_dir("nothing-there")
    everything = {"data_dir": data_dir, "tls": world.grpc_tls, "nats_connect_timeout": NO_NATS_WITHIN,
                  "metadata_api": {"listen": DEAD.format(free_port()), "tokens_file": world.tokens_file},
                  "fetcher": {"listen": DEAD.format(free_port())},
                  "web": {"admin_token": world.admin_token, "listen": ""}}

    def config(name: str, **tree) -> str:
        return world.config(f"dead-{name}", **{**everything, **tree})

    with_password = config("url-password", nats_url=f"nats://alice:{world.url_password}@{dead_nats[7:]}")
    with_token = config("url-token", nats_url=f"nats://{world.url_token}@{dead_nats[7:]}")
    cannot = "cannot connect to NATS at nats://"
    runs = [
        Run("fetcher, a password in nats_url", ["fetcher", "--config", with_password], f"{cannot}alice:<set>@"),
        Run("scheduler, a token in nats_url", ["scheduler", "--config", with_token], f"{cannot}<set>@"),
        Run("submit, a password in nats_url", ["submit", "http://a.test/", "--config", with_password],
            f"{cannot}alice:<set>@"),
        Run("up, Cassandra not there", ["up", "--config", config(
            "up-cassandra", data_dir=world.data_dir("nothing-there-up"), nats_connect_timeout=CONNECT_WITHIN,
            metadata_store=world.cassandra(free_port()))], "cassandra connect to 127.0.0.1:"),
        Run("schema apply, Cassandra not there", ["schema", "apply", "--config", config(
            "schema-cassandra", metadata_store=world.cassandra(free_port()))], "cassandra connect to 127.0.0.1:"),
        Run("schema apply, Cassandra not there (password_file)", ["schema", "apply", "--config", config(
            "schema-cassandra-file", metadata_store=world.cassandra(free_port(), password_file=True))],
            "cassandra connect to 127.0.0.1:"),
        Run("get --token-file, no metadata-api", ["get", "http://a.test/", "--config", config("cli"),
                                                  "--token-file", world.alice_token_file], "UNAVAILABLE"),
        Run("resolve --token-file, no metadata-api", ["resolve", "http://a.test/", "--config", config("cli"),
                                                      "--token-file", world.wrong_token_file], "UNAVAILABLE", 1),
        Run("domains list, no fetcher", ["domains", "list", "--config", config("cli")], "UNAVAILABLE"),
    ]
    for (kind, part), command in zip(world.credential_kinds().items(),
                                     (["fetcher"], ["submit", "http://a.test/"]) * 3):
        runs.append(Run(f"{command[0]}, {kind}", [*command, "--config", config(
            f"{command[0]}-{kind}", nats_url=dead_nats, **part)], cannot))
    await run_all(runs)
    assert_told_nothing(world, runs)
    assert_files_clean(world, data_dir, world.data_dir("nothing-there-up"))
    assert_ps_clean(world, ps)


# --- config errors ------------------------------------------------------------------------------------

async def test_config_errors_show_no_secret(world, ps):
    """A bad value beside the secrets, a tokens file with a bad line, a key that is not a key or
    not the certificate's, contradictory credentials, a store URL with a password and an error:
    the one line that says so shows no canary."""
    def config(name: str, **tree) -> str:
        base = {"data_dir": world.data_dir(f"bad-{name}"), "tls": world.grpc_tls, "process": {"workers": 1},
                "nats_connect_timeout": FAIL_FAST,
                "metadata_api": {"listen": f"127.0.0.1:{free_port()}", "tokens_file": world.tokens_file},
                "fetcher": {"listen": f"127.0.0.1:{free_port()}"},
                "web": {"listen": f"127.0.0.1:{free_port()}", "admin_token": world.admin_token,
                        "tls_cert": world.web.cert, "tls_key": world.web.key}}
        return world.config(f"bad-{name}", **{**base, **tree})

    cassandra = f"cassandra://carol:{world.cassandra_password}@127.0.0.1"
    runs = [
        Run("up, a bad value beside the secrets", ["up", "--config", config(
            "max-rate", fetcher={"max_rate": 0},
            nats_url=f"nats://alice:{world.url_password}@127.0.0.1:4222")], "fetcher.max_rate: 0 must be positive"),
        Run("up, a tokens file with a bad line", ["up", "--config", config(
            "tokens", metadata_api={"tokens_file": world.bad_tokens_file}, nats_connect_timeout=CONNECT_WITHIN)],
            "line 2: expected name:token"),
        Run("metadata-api, tls.key not the certificate's", ["metadata-api", "--config", config(
            "other-key", tls={**world.grpc_tls, "key": world.other.key})], "is not the key of the certificate"),
        Run("metadata-api, tls.key not a key", ["metadata-api", "--config", config(
            "not-a-key", tls={**world.grpc_tls, "key": world.not_a_key})], "is not an unencrypted PEM private key"),
        Run("metadata-api, web.tls_key not web.tls_cert's", ["metadata-api", "--config", config(
            "web-key", web={"listen": f"127.0.0.1:{free_port()}", "tls_cert": world.web.cert,
                            "tls_key": world.other.key})], "web.tls_key"),
        Run("fetcher, two kinds of NATS credentials", ["fetcher", "--config", config(
            "two-kinds", nats_url="nats://127.0.0.1:4222", nats_token_file=world.token_file,
            nats_nkey_seed=world.seed_file)], "not several"),
        Run("submit, nats_tls_key not nats_tls_cert's", ["submit", "http://a.test/", "--config", config(
            "nats-key", nats_url=f"nats://{world.url_token}@127.0.0.1:{free_port()}",
            **{**world.nats_tls, "nats_tls_key": world.other.key})], "cannot load"),
        Run("schema apply, a password in the URL and password_file", ["schema", "apply", "--config", config(
            "both-passwords", metadata_store=f"{cassandra}/ks?password_file={world.cassandra_password_file}")],
            "not both"),
        Run("schema apply, a bad port", ["schema", "apply", "--config", config(
            "port", metadata_store=f"{cassandra}:99999/ks")], "bad port"),
        Run("schema apply, an unknown option", ["schema", "apply", "--config", config(
            "option", metadata_store=f"{cassandra}/ks?passwd=x")], "unknown cassandra option"),
        Run("schema apply, no keyspace", ["schema", "apply", "--config", config(
            "keyspace", metadata_store=f"{cassandra}/")], "name a keyspace"),
        Run("metadata-api, an unsupported metadata_store", ["metadata-api", "--config", config(
            "scheme", metadata_store=f"mysql://carol:{world.cassandra_password}@db/ks")], "unsupported"),
    ]
    await run_all(runs)
    assert_told_nothing(world, runs)
    assert_files_clean(world, str(world.root / "data"))
    assert_ps_clean(world, ps)


async def test_a_config_file_yaml_cannot_read_shows_no_secret(world):
    runs = []
    for name, mark in (("tag", "!"), ("alias", "*")):
        path = world.configs / f"not-yaml-{name}.yaml"
        path.write_text(f"web:\n  admin_token: {mark}{world.secret(f'web.admin_token ({name})')}\n")
        runs.append(Run(f"get, admin_token {mark}...", ["get", "http://a.test/", "--config", str(path)]))
    await run_all(runs)
    for run in runs:            # the path taken (pytest.fail: not the failure this test expects)
        if run.exit != 2 or "is not valid YAML" not in run.err:
            pytest.fail(f"{run.what}: exit {run.exit}:\n{run.text[-3000:]}")
    assert not [(run.what, world.found(run.text)) for run in runs if world.found(run.text)]
