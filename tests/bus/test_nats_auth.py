"""NATS credentials and TLS (spiderduck.bus.credentials, bus.connect's `auth`) against real nats-servers
that require them: a user and password, a token, an nkey user, client certificates, and a
.creds file in operator mode (JWTs made here). For each, the right credentials connect, and
wrong or no credentials are refused at once with one line that names what was tried but
holds no secret. The roles and the CLI take the same settings."""
from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import os
import time
from dataclasses import dataclass, field

import nats
import nkeys
import pytest

from spiderduck.bus import credentials as nats_auth
from spiderduck.bus import streams as bus
from spiderduck.cli import up_nats
from spiderduck.cli.nats_server import EmbeddedNats
from spiderduck.cli.up_lock import UpLock
from spiderduck.client import AsyncClient, NotConfigured
from spiderduck.core import config
from spiderduck.core.errors import ConfigError
from spiderduck.fetcher.main import run_fetcher
from spiderduck.metadata_api.main import run_metadata_api
from spiderduck.scheduler.worker import run_scheduler
from support.certs import TestCA
from support.cli import run_cli
from support.service import RunningService, service_settings

CANARY = "c4nary-" + base64.b32encode(os.urandom(10)).decode().lower()   # a secret that must not leak


def write(path, text: str) -> str:
    path.write_text(text)
    return str(path)


# --- operator mode: JWTs signed with nkeys, as nsc makes them -------------------------------------

def keypair(prefix: int) -> tuple[bytes, nkeys.KeyPair]:
    seed = nkeys.encode_seed(os.urandom(32), prefix)
    return seed, nkeys.from_seed(bytearray(seed))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def nats_jwt(issuer: nkeys.KeyPair, subject: nkeys.KeyPair, kind: str, claims: dict) -> str:
    """A NATS JWT (v2) of `kind` for `subject`, signed by `issuer` (ed25519-nkey)."""
    header = _b64(json.dumps({"typ": "JWT", "alg": "ed25519-nkey"}).encode())
    body = {"iat": int(time.time()), "iss": issuer.public_key.decode(), "name": kind,
            "sub": subject.public_key.decode(), "nats": {**claims, "type": kind, "version": 2}}
    body["jti"] = base64.b32encode(hashlib.sha256(json.dumps(body).encode()).digest()).decode().rstrip("=")
    payload = _b64(json.dumps(body).encode())
    return f"{header}.{payload}.{_b64(issuer.sign(f'{header}.{payload}'.encode()))}"


UNLIMITED = {"subs": -1, "data": -1, "payload": -1, "imports": -1, "exports": -1, "wildcards": True,
             "conn": -1, "leaf": -1}
JETSTREAM = {"mem_storage": -1, "disk_storage": -1, "streams": -1, "consumer": -1}


def creds_file(path, account: nkeys.KeyPair) -> str:
    """A .creds file (user JWT and seed) for a new user of `account`."""
    seed, user = keypair(nkeys.PREFIX_BYTE_USER)
    user_jwt = nats_jwt(account, user, "user", {"pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1})
    return write(path, f"-----BEGIN NATS USER JWT-----\n{user_jwt}\n------END NATS USER JWT------\n\n"
                       f"-----BEGIN USER NKEY SEED-----\n{seed.decode()}\n------END USER NKEY SEED------\n")


def operator_config(account: nkeys.KeyPair) -> str:
    """nats-server config trusting a new operator, with `account` (JetStream on) and a system
    account preloaded in a MEMORY resolver."""
    _, operator = keypair(nkeys.PREFIX_BYTE_OPERATOR)
    _, system = keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    accounts = {account: nats_jwt(operator, account, "account", {"limits": {**UNLIMITED, **JETSTREAM}}),
                system: nats_jwt(operator, system, "account", {"limits": UNLIMITED})}
    preload = ", ".join(f"{kp.public_key.decode()}: {json.dumps(jwt)}" for kp, jwt in accounts.items())
    return (f"operator: {json.dumps(nats_jwt(operator, operator, 'operator', {}))}\n"
            f"system_account: {system.public_key.decode()}\n"
            f"resolver: MEMORY\nresolver_preload: {{ {preload} }}\n")


# --- one server per kind of credentials -----------------------------------------------------------

@dataclass
class Setup:
    server_config: str
    right: dict                    # settings that connect
    wrong: dict                    # settings the server refuses
    refused_as: str                # what the refusal says
    server_kwargs: dict = field(default_factory=dict)


def setup_for(kind: str, tmp_path) -> Setup:
    if kind == "user":
        password = write(tmp_path / "password", CANARY + "\n")
        return Setup(f'authorization {{ users = [ {{user: alice, password: "{CANARY}"}} ] }}\n',
                     {"nats_user": "alice", "nats_password_file": password},
                     {"nats_user": "alice", "nats_password_file": write(tmp_path / "bad", "hunter2\n")},
                     "Authorization Violation")
    if kind == "token":
        return Setup("", {"nats_token_file": write(tmp_path / "token", CANARY + "\n")},
                     {"nats_token_file": write(tmp_path / "bad", CANARY[::-1] + "\n")},
                     "Authorization Violation", {"token": CANARY})
    if kind == "nkey":
        seed, user = keypair(nkeys.PREFIX_BYTE_USER)
        other, _ = keypair(nkeys.PREFIX_BYTE_USER)
        return Setup(f"authorization {{ users = [ {{nkey: {user.public_key.decode()}}} ] }}\n",
                     {"nats_nkey_seed": write(tmp_path / "user.nk", seed.decode() + "\n")},
                     {"nats_nkey_seed": write(tmp_path / "other.nk", other.decode() + "\n")},
                     "Authorization Violation")
    if kind == "tls":
        ca = TestCA(tmp_path / "pki")
        server, client = ca.issue("nats"), ca.issue("crawler")
        return Setup(f'tls {{ cert_file: "{server.cert}", key_file: "{server.key}", ca_file: "{ca.ca}", '
                     "verify: true }\n",
                     {"nats_tls_ca": ca.ca, "nats_tls_cert": client.cert, "nats_tls_key": client.key},
                     {"nats_tls_ca": ca.ca},                     # no client certificate
                     "TLS: ")
    assert kind == "creds"
    _, account = keypair(nkeys.PREFIX_BYTE_ACCOUNT)
    _, stranger = keypair(nkeys.PREFIX_BYTE_ACCOUNT)                # an account the server does not know
    return Setup(operator_config(account), {"nats_creds": creds_file(tmp_path / "user.creds", account)},
                 {"nats_creds": creds_file(tmp_path / "stranger.creds", stranger)},
                 "Authorization Violation")


KINDS = ["user", "token", "nkey", "tls", "creds"]


def settings_with(tmp_path, **nats_keys):
    return config.load(env={}, overrides={"data_dir": str(tmp_path / "var"), **nats_keys})


async def connect(server: EmbeddedNats, settings, timeout: float = 10):
    return await bus.connect(server.url, name="test", timeout=timeout, auth=nats_auth.nats_options(settings))


def assert_refused(exc: BaseException, server: EmbeddedNats, said: str) -> None:
    text = str(exc)
    assert text.startswith(f"NATS at {server.url} refused ") and said in text, text
    assert CANARY not in text and CANARY[::-1] not in text and "\n" not in text, text


@pytest.mark.parametrize("kind", KINDS)
async def test_right_credentials_connect_and_wrong_or_none_are_refused_at_once(kind, tmp_path, caplog):
    setup = setup_for(kind, tmp_path)
    with EmbeddedNats(str(tmp_path / "nats"), config=setup.server_config, **setup.server_kwargs) as server:
        assert os.stat(os.path.join(server.store_dir, "nats-server.conf")).st_mode & 0o777 == 0o600
        nc = await connect(server, settings_with(tmp_path, **setup.right))
        try:
            await nc.jetstream().account_info()         # in, with JetStream
        finally:
            await nc.close()
        for wrong in (setup.wrong, {}):
            started = time.monotonic()
            with pytest.raises(ConfigError) as refused:
                await connect(server, settings_with(tmp_path, **wrong), timeout=30)
            assert time.monotonic() - started < 10      # refused at once, not retried to the timeout
            assert_refused(refused.value, server, setup.refused_as if wrong else "")
        assert "refused no credentials (nats_creds, " in str(refused.value)
    assert CANARY not in caplog.text


async def test_contradictory_or_unreadable_credentials_are_config_errors_naming_the_key(tmp_path):
    with pytest.raises(ConfigError, match="nats_user and nats_password_file: give both or neither"):
        nats_auth.nats_options(settings_with(tmp_path, nats_user="alice"))
    with pytest.raises(ConfigError, match="give one of nats_creds, nats_token_file, not several"):
        nats_auth.nats_options(settings_with(tmp_path, nats_creds="a.creds", nats_token_file="t"))
    missing = str(tmp_path / "missing-token")
    with EmbeddedNats(str(tmp_path / "nats"), token=CANARY) as server:
        with pytest.raises(ConfigError, match=f"nats_token_file: cannot read {missing}: "):
            await connect(server, settings_with(tmp_path, nats_token_file=missing))


async def test_every_role_takes_the_nats_settings(tmp_path, localweb):
    """The roles connect with the configured token (a URL goes through all three), and each
    one fails at start, with the refusal, when the token is wrong."""
    page = localweb.page("auth.test", "/", "<title>Behind a token</title>")
    token_file = write(tmp_path / "token", CANARY + "\n")
    with EmbeddedNats(str(tmp_path / "nats"), token=CANARY) as server:
        settings = service_settings(tmp_path, server.url, nats_token_file=token_file)
        async with RunningService(settings):
            nc = await nats.connect(server.url, token=CANARY)
            try:
                processed = await nc.subscribe(bus.PROCESSED_SUBJECT)
                await nc.jetstream().publish(bus.SUBMIT_SUBJECT, page.encode())
                await processed.next_msg(timeout=30)
            finally:
                await nc.close()
        wrong = service_settings(tmp_path, server.url, nats_token_file=write(tmp_path / "bad", "nope\n"))
        for role in (run_fetcher, run_scheduler, run_metadata_api):
            with pytest.raises(ConfigError) as refused:
                await asyncio.wait_for(role(wrong, asyncio.Event()), 30)
            assert_refused(refused.value, server, "refused the token of ")


async def test_the_cli_takes_the_nats_settings(tmp_path):
    setup = setup_for("user", tmp_path)
    with EmbeddedNats(str(tmp_path / "nats"), config=setup.server_config) as server:
        common = ["--set", f"nats_url={server.url}", "--set", "nats_user=alice"]
        code, out, err = await run_cli("submit", "http://a.test/", *common,
                                       "--set", f"nats_password_file={setup.right['nats_password_file']}")
        assert code == 0, err
        code, out, err = await run_cli("submit", "http://a.test/", *common,
                                       "--set", f"nats_password_file={setup.wrong['nats_password_file']}")
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert f"NATS at {server.url} refused nats_user alice: Authorization Violation" in err, err
        assert CANARY not in err


def test_the_users_of_up_are_used_only_where_its_nats_is(tmp_path):
    """No nats_url and an `up` holding data_dir's lock: its NATS, as its user `client` (the CLI
    beside it) or as a role's own user (a role started beside it, resolve --trace). Password
    files left with no `up` running, a NATS named by nats_url, or credentials of one's own:
    never up's users."""
    data_dir = tmp_path / "var"
    (data_dir / up_nats.ROLE_PASSWORDS_DIR).mkdir(parents=True)
    (data_dir / up_nats.CLIENT_PASSWORD_FILE).write_text(CANARY + "\n")
    (data_dir / up_nats.ROLE_PASSWORDS_DIR / "scheduler").write_text(CANARY[::-1] + "\n")
    (data_dir / up_nats.EMBEDDED_URL_FILE).write_text("nats://127.0.0.1:4999\n")

    def options(user="client", **kv):            # as the CLI and the roles it starts get them
        return nats_auth.nats_options(up_nats.with_up_nats(settings_with(tmp_path, **kv), user))

    assert nats_auth.nats_options(settings_with(tmp_path)).user is None        # no `up`: stale
    with pytest.raises(ConfigError, match="no NATS to use"):
        options()
    with UpLock(str(data_dir)):
        client = options()
        assert (client.user, client.password_file, client.token_file) == (
            "client", str(data_dir / "nats.password"), None)
        assert client.connect_kwargs() == {"user": "client", "password": CANARY}
        assert options("scheduler").connect_kwargs() == {"user": "scheduler", "password": CANARY[::-1]}
        assert nats_auth.nats_options(settings_with(tmp_path)).user is None    # common reads no up file
        assert up_nats.up_credentials(str(data_dir)) == {"user": "client", "password": CANARY}
        assert options(nats_url="nats://n1:4222").user is None
        mine = options(nats_user="alice", nats_password_file="pw")
        assert (mine.user, mine.password_file) == ("alice", "pw")


@pytest.mark.parametrize("kind", KINDS)
async def test_the_client_takes_the_same_nats_settings(kind, tmp_path):
    setup = setup_for(kind, tmp_path)
    with EmbeddedNats(str(tmp_path / "nats"), config=setup.server_config, **setup.server_kwargs) as server:
        nc = await connect(server, settings_with(tmp_path, **setup.right))
        try:
            await bus.ensure_streams(nc.jetstream())
        finally:
            await nc.close()
        async with AsyncClient(nats_url=server.url, connect_timeout=30, **setup.right) as client:
            assert await client.submit(["http://a.test/"]) == 1
        async with AsyncClient(nats_url=server.url, connect_timeout=30, **setup.wrong) as client:
            with pytest.raises(NotConfigured) as refused:
                await client.submit(["http://a.test/"])
        assert_refused(refused.value, server, setup.refused_as)


async def test_with_nats_tls_configured_a_server_without_tls_gets_no_credentials(tmp_path):
    """nats-py upgrades to TLS only when the server asks: a plaintext server (an impostor on the
    address, or a misconfigured one) would be sent the password in the clear. With nats_tls_ca
    set, such a server is refused before CONNECT, at once, with one line."""
    ca = TestCA(tmp_path / "pki")
    password = write(tmp_path / "password", CANARY + "\n")
    plain_config = 'authorization { users = [ { user: "alice", password: "%s" } ] }\n' % CANARY
    with EmbeddedNats(str(tmp_path / "nats"), config=plain_config) as server:
        settings = settings_with(tmp_path, nats_user="alice", nats_password_file=password, nats_tls_ca=ca.ca)
        started = time.monotonic()
        with pytest.raises(ConfigError) as refused:
            await connect(server, settings, timeout=30)
        assert time.monotonic() - started < 10
        assert_refused(refused.value, server, "does not offer TLS")
        client = AsyncClient(nats_url=server.url, nats_user="alice", nats_password_file=password,
                             nats_tls_ca=ca.ca, connect_timeout=30)
        with pytest.raises(NotConfigured, match="does not offer TLS"):
            await client.submit(["http://a.test/"])
        await client.close()
        # Without nats_tls_ca the same credentials work: the refusal is TLS's, not the password's.
        nc = await connect(server, settings_with(tmp_path, nats_user="alice", nats_password_file=password))
        await nc.close()
