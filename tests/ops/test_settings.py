"""Settings: declared once, read from flags and the environment, checked with a clear
message, listed by ``--help`` and by the README's table exactly as declared."""

from __future__ import annotations

import asyncio
import json
import re
import subprocess
import sys
from pathlib import Path

import httpx
import psutil
import pytest
import websockets

from service import config
from service.config import SETTINGS, Config, SettingError, read
from tests.support.servers import ROOT, ServiceProcess, free_port


def run_service(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``python -m service`` with only ``env`` set: for the runs that stop before serving."""
    return subprocess.run(
        [sys.executable, "-m", "service", *args], cwd=ROOT, capture_output=True, text=True,
        env={"PATH": "/usr/bin:/bin", **(env or {})}, timeout=60,
    )


def test_every_field_of_config_is_a_setting_with_a_meaning() -> None:
    assert [s.field for s in SETTINGS] == list(Config.__struct_fields__)
    for s in SETTINGS:
        assert s.meaning and s.env == s.field.upper() and s.flag.startswith("--")
        # The default is what reading nothing gives, and it reads back as itself.
        assert getattr(read({}), s.field) == s.default
        if s.shown:
            assert getattr(read({s.env: s.shown}), s.field) == s.default, s.env


def test_values_are_coerced_from_text() -> None:
    c = read({"PORT": "9000", "REDIS_CLUSTER": "true", "DATA_DIR": "/srv/games",
              "RATE_LIMIT": "2.5", "LOG_LEVEL": "DEBUG", "CORS_ORIGINS": " https://a.example, ",
              "FORWARDED_ALLOW_IPS": "10.0.0.0/8, 192.0.2.7,2001:db8::/32",
              "HEARTBEAT_SECONDS": "0.25"})
    assert c.port == 9000 and c.redis_cluster is True
    assert c.data_dir == Path("/srv/games") and c.rate_limit == 2.5 and c.log_level == "debug"
    assert c.cors_origins == ("https://a.example",)
    assert c.trusted_proxies == ["10.0.0.0/8", "192.0.2.7/32", "2001:db8::/32"]
    assert c.heartbeat_seconds == 0.25
    assert read({"REDIS_URL": "redis+cluster://127.0.0.1:7000"}).redis_cluster is True
    # Empty counts as unset, in the environment and as a flag.
    assert read({"PORT": ""}).port == 8000
    assert read({"REDIS_URL": "redis://r:6379"}, {"REDIS_URL": ""}).redis_url == ""


def test_a_flag_wins_over_the_environment() -> None:
    flags = config.flags_given(config.parser().parse_args(
        ["--port", "9001", "--no-redis-cluster", "--data-dir", "/d", "--workers", "3"]))
    assert flags == {"PORT": "9001", "REDIS_CLUSTER": "0", "DATA_DIR": "/d", "WORKERS": "3"}
    c = read({"PORT": "80", "REDIS_CLUSTER": "1", "HOST": "0.0.0.0"}, flags)
    assert (c.port, c.redis_cluster, c.data_dir, c.workers, c.host) == (
        9001, False, Path("/d"), 3, "0.0.0.0")


@pytest.mark.parametrize(("env", "message"), [
    ({"PORT": "eighty"}, "PORT must be a whole number from 0 to 65535, not 'eighty'"),
    ({"PORT": "70000"}, "PORT must be a whole number from 0 to 65535"),
    ({"WORKERS": "0"}, "WORKERS must be a whole number from 1 to 256, not '0'"),
    ({"RATE_LIMIT": "-1"}, "RATE_LIMIT must be 0 (off) or a number from 0.001 to 1000000"),
    # Numbers Redis's scripts or the event loop cannot take: infinite, not a number, or so
    # small that a bucket's expiry would not be a whole number Redis reads.
    ({"RATE_LIMIT": "inf"}, "RATE_LIMIT must be 0 (off) or a number from 0.001 to 1000000, "
                            "not 'inf'"),
    ({"MOVE_RATE_LIMIT": "Infinity"}, "MOVE_RATE_LIMIT must be 0 (off) or a number"),
    ({"REGISTER_RATE_LIMIT": "nan"}, "REGISTER_RATE_LIMIT must be 0 (off) or a number"),
    ({"AUTH_FAILURE_LIMIT": "1e-300"}, "AUTH_FAILURE_LIMIT must be 0 (off) or a number"),
    ({"RATE_LIMIT": "1e7"}, "RATE_LIMIT must be 0 (off) or a number from 0.001 to 1000000"),
    ({"HEARTBEAT_SECONDS": "inf"}, "HEARTBEAT_SECONDS must be a number above 0 and at most"),
    ({"SEEK_EXPIRY": "inf"}, "SEEK_EXPIRY must be a number from 1 to 86400, not 'inf'"),
    ({"SEEK_EXPIRY": "0.0001"}, "SEEK_EXPIRY must be a number from 1 to 86400"),
    ({"GAME_TTL": "99999999999999999999"}, "GAME_TTL must be a whole number from 1 to"),
    ({"WORKERS": "100000"}, "WORKERS must be a whole number from 1 to 256"),
    ({"MAX_CELLS": "1e12"}, "MAX_CELLS must be a whole number from 4 to"),
    ({"MAX_SOCKETS_PER_CLIENT": "1e12"}, "MAX_SOCKETS_PER_CLIENT must be a whole number"),
    ({"GAME_CACHE_MB": "1e12"}, "GAME_CACHE_MB must be a whole number from 0 to"),
    ({"REDIS_URL": "http://x"}, "REDIS_URL must start with redis://, rediss://, unix://"),
    ({"REDIS_URL": "localhost:6379"}, "REDIS_URL must start with redis://"),
    ({"LOG_LEVEL": "loud"}, "LOG_LEVEL must be one of"),
    ({"REDIS_CLUSTER": "maybe"}, "REDIS_CLUSTER must be 1 or 0"),
    ({"HEARTBEAT_SECONDS": "0"}, "HEARTBEAT_SECONDS must be a number above 0"),
    ({"FORWARDED_ALLOW_IPS": "*"}, "FORWARDED_ALLOW_IPS may not be *"),
    ({"FORWARDED_ALLOW_IPS": "10.0.0.1/8"}, "FORWARDED_ALLOW_IPS: 10.0.0.1/8 has host bits"),
    ({"FORWARDED_ALLOW_IPS": "ingress"}, "FORWARDED_ALLOW_IPS: 'ingress' does not appear"),
])
def test_a_bad_value_is_refused_with_its_name(env: dict[str, str], message: str) -> None:
    with pytest.raises(SettingError) as refused:
        read(env)
    assert message in str(refused.value)


def test_bad_values_stop_the_service_with_status_2() -> None:
    out = run_service(env={"PORT": "eighty"})
    assert out.returncode == 2
    assert "PORT must be a whole number from 0 to 65535, not 'eighty'" in out.stderr
    out = run_service("--port", "eighty")
    assert out.returncode == 2
    assert "--port must be a whole number from 0 to 65535, not 'eighty'" in out.stderr
    out = run_service("--workers", "2", env={"FORWARDED_ALLOW_IPS": "*"})
    assert out.returncode == 2 and "FORWARDED_ALLOW_IPS may not be *" in out.stderr
    out = run_service("--no-such-setting", "1")
    assert out.returncode == 2 and "unrecognized arguments: --no-such-setting" in out.stderr
    assert "Traceback" not in out.stderr


NOT_A_URL = "REDIS_URL is not a Redis URL the service can use: "
# Each was taken at start-up, and the service ended with a traceback and status 3 when it
# first connected.
BAD_URLS = [
    ("redis://localhost:notaport", "the port must be a number from 1 to 65535"),
    ("redis://h:99999/0", "the port must be a number from 1 to 65535"),
    ("redis://h:0/0", "the port must be a number from 1 to 65535"),
    ("redis://h/abc", "the path must be a database number such as /0"),
    ("redis://h/0?socket_timeout=abc", "Invalid value for 'socket_timeout'"),
    ("redis://h/0?sockettimeout=1", "no Redis connection takes the option 'sockettimeout'"),
    ("unix:///run/redis.sock?db=x", "Invalid value for 'db'"),
    ("redis+sentinel://h:26379", "a Sentinel URL is redis+sentinel://host:port"),
    ("redis+sentinel://h:x/primary", "a sentinel's port must be a number from 1 to 65535"),
    ("redis+sentinel://h:26379/primary/x", "the primary's database must be a number"),
    ("redis+cluster://127.0.0.1:6379/1", "a Redis Cluster has database 0 only, not 1"),
]


@pytest.mark.parametrize(("url", "message"), BAD_URLS, ids=[url for url, _ in BAD_URLS])
def test_a_redis_url_the_store_cannot_use_is_refused(url: str, message: str) -> None:
    with pytest.raises(SettingError) as refused:
        read({"REDIS_URL": url})
    assert NOT_A_URL + message in str(refused.value)


def test_a_redis_url_does_not_fit_the_cluster_setting() -> None:
    for url, message in [
        ("redis://h:6379/2", "a Redis Cluster has database 0 only, not 2"),
        ("unix:///run/redis.sock", "a Redis Cluster is not reached over a unix socket"),
        ("redis+sentinel://h:26379/primary", "a redis+sentinel:// URL names no cluster"),
    ]:
        with pytest.raises(SettingError) as refused:
            read({"REDIS_URL": url, "REDIS_CLUSTER": "1"})
        assert NOT_A_URL + message in str(refused.value)


def test_the_refusal_does_not_repeat_a_password() -> None:
    """A ``#`` in a password cuts the URL short there: what follows reads as a port."""
    for url in ("redis://app:Xq7#Zk9@h:6379/0", "redis+sentinel://app:Xq7#Zk9@h:26379/p",
                "redis://:Xq7/Zk9@h:6379/0"):
        with pytest.raises(SettingError) as refused:
            read({"REDIS_URL": url})
        said = str(refused.value)
        assert "Xq7" not in said and "Zk9" not in said and "must be percent-encoded" in said


def test_redis_urls_the_store_can_use_are_taken() -> None:
    for url in ("redis://h", "redis://h:6379/0", "redis://u:p%23w@h:6379/15", "redis://h/",
                "rediss://h:6380/1?ssl_cert_reqs=none", "redis://h/0?client_name=app",
                "unix:///run/redis.sock?db=2", "redis://[::1]:6379/0",
                "redis+sentinel://u:p@a:26379,b:26380/primary/2", "redis+sentinel://a/primary",
                "redis+cluster://h:7000", "redis+cluster://h:7000/0"):
        assert read({"REDIS_URL": url}).redis_url == url


@pytest.mark.parametrize(("env", "message"), [
    ({"RATE_LIMIT": "inf"}, "RATE_LIMIT must be 0 (off) or a number from 0.001 to 1000000"),
    ({"REDIS_URL": "http://x"}, "REDIS_URL must start with redis://"),
    ({"REDIS_URL": "redis://127.0.0.1:notaport"}, NOT_A_URL + "the port must be a number"),
    ({"REDIS_URL": "redis+sentinel://127.0.0.1:26379"}, NOT_A_URL + "a Sentinel URL is"),
    ({"REDIS_URL": "redis+cluster://127.0.0.1:6379/1"}, NOT_A_URL + "a Redis Cluster has"),
    # Found only once the service would listen: before, uvicorn ended with a traceback.
    ({"HOST": "999.1.1.1", "REDIS_URL": "redis://127.0.0.1:1/0"},
     "HOST '999.1.1.1' is not an address to listen on"),
], ids=["inf", "url", "port", "sentinel", "cluster-db", "host"])
def test_values_found_bad_at_start_up_stop_it_with_status_2(
    env: dict[str, str], message: str
) -> None:
    out = run_service(env={"PORT": str(free_port()), **env})
    assert out.returncode == 2, out.stderr
    assert message in out.stderr and "Traceback" not in out.stderr, out.stderr


def test_a_data_dir_that_cannot_hold_redis_stops_the_service_with_status_2(
    tmp_path: Path,
) -> None:
    a_file = tmp_path / "a-file"
    a_file.write_text("")
    cases = {
        str(a_file / "data"): "cannot be used: Not a directory",
        # A unix socket's path holds at most 107 bytes: the server could never listen.
        "/tmp/" + "x" * 110: "is too long: the embedded Redis's socket there would have a "
                             "path of 126 bytes, and at most 107 fit",
    }
    for data_dir, message in cases.items():
        out = run_service(env={"PORT": str(free_port()), "DATA_DIR": data_dir})
        assert out.returncode == 2, out.stderr
        assert f"DATA_DIR '{data_dir}' {message}" in out.stderr, out.stderr
        assert "Traceback" not in out.stderr
    assert not Path("/tmp/" + "x" * 110).exists()


def test_a_read_only_data_dir_stops_the_service_with_status_2(tmp_path: Path) -> None:
    """A read-only file system (mounted in a mount namespace of the service's own, which
    goes away with it): permissions alone do not stop a service run as root."""
    data_dir = tmp_path / "ro"
    data_dir.mkdir()
    mount = subprocess.run(["unshare", "-rm", "mount", "-t", "tmpfs", "-o", "ro", "tmpfs",
                            str(data_dir)], capture_output=True)
    if mount.returncode != 0:
        pytest.skip(f"no mount namespace here: {mount.stderr!r}")
    out = subprocess.run(
        ["unshare", "-rm", "sh", "-c", 'mount -t tmpfs -o ro tmpfs "$1" && exec "$2" -m service',
         "sh", str(data_dir), sys.executable],
        cwd=ROOT, capture_output=True, text=True, timeout=60,
        env={"PATH": "/usr/bin:/bin", "PORT": str(free_port()), "DATA_DIR": str(data_dir)},
    )
    assert out.returncode == 2, out.stderr
    assert f"DATA_DIR '{data_dir}' cannot be used: Read-only file system" in out.stderr
    assert "Traceback" not in out.stderr


def test_help_lists_every_setting_with_its_flag_and_default() -> None:
    out = run_service("--help")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    for s in SETTINGS:
        assert s.flag in text and s.env in text, s.env
        if s.shown:
            assert f"default {s.shown}" in text, s.env


def readme_settings() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    section = text[text.index("## Configuration"):]
    section = section[: section.index("\n## ", 1)]
    rows = [line for line in section.splitlines() if line.startswith("| `")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows]


def test_the_readme_table_matches_the_settings() -> None:
    rows = readme_settings()
    assert [row[0] for row in rows] == [f"`{s.env}`" for s in SETTINGS]
    for row, s in zip(rows, SETTINGS, strict=True):
        name, flag, default, meaning = row
        assert flag == f"`{s.flag}`", name
        if s.shown:
            assert default == f"`{s.shown}`", name
        else:
            assert re.match(r"(unset|none)\b", default), name
        assert meaning, name


async def test_the_service_runs_on_flags(redis_url: str) -> None:
    """Flags beat the environment, in the worker processes too (a quick heartbeat)."""
    port = free_port()
    args = ["--port", str(port), "--host", "127.0.0.1", "--redis-url", redis_url,
            "--workers", "2", "--heartbeat-seconds", "0.2"]
    # The environment says otherwise about all of these; the flags must win.
    env = {"PORT": str(free_port()), "REDIS_URL": "redis://127.0.0.1:1/0", "WORKERS": "1",
           "HEARTBEAT_SECONDS": "600"}
    with ServiceProcess(env, port=port, args=args) as svc:
        created = httpx.post(f"{svc.url}/games", json={"preset": "beginner"}).json()
        url = svc.url.replace("http://", "ws://") + f"/games/{created['game']['id']}/events"

        # Sockets spread over both workers: each must send heartbeats.
        sockets = [await websockets.connect(url) for _ in range(4)]
        try:
            seen = [json.loads(await asyncio.wait_for(ws.recv(), 30))["type"]
                    for ws in sockets for _ in range(2)]
        finally:
            for ws in sockets:
                await ws.close()
        assert seen.count("snapshot") == 4 and seen.count("heartbeat") == 4
        assert svc.proc is not None
        children = psutil.Process(svc.proc.pid).children()
        assert len([p for p in children if "spawn_main" in " ".join(p.cmdline())]) == 2


def test_a_misspelled_setting_is_warned_of_once(redis_url: str) -> None:
    """A variable that is no setting is ignored; one that looks like a setting misspelled
    is said once, in one line, with the setting it likely means."""
    env = {"REDIS_URL": redis_url, "LOG_LEVEL": "info", "WORKERS": "2",
           "REDIS_URI": "redis://elsewhere:6379/0", "LOGLEVEL": "debug",
           # Alike in part only, or a different thing: not a word about them.
           "REDIS_PORT": "6379", "REDIS_HOST": "elsewhere", "HOSTNAME": "box", "DATA": "x"}
    with ServiceProcess(env) as svc:
        said = [json.loads(line) for line in svc.output().splitlines()
                if line.startswith("{") and "not settings" in line]
        assert [(s["level"], s["message"]) for s in said] == [(
            "warning", "ignored, not settings: LOGLEVEL (did you mean LOG_LEVEL?), "
                       "REDIS_URI (did you mean REDIS_URL?)",
        )], svc.output()
        for name in ("REDIS_PORT", "REDIS_HOST", "HOSTNAME"):
            assert name not in svc.output()


def test_only_names_close_to_a_setting_count_as_misspelled() -> None:
    assert config.misspelled({
        "REDIS_URI": "x", "LOGLEVEL": "x", "redis_url": "x", "MAXCELLS": "x", "WORKER": "x",
        "REDIS_URL": "x", "PORT": "1", "REDIS_PORT": "x", "REDIS_PASSWORD": "x",
        "PROMETHEUS_MULTIPROC_DIR": "x", "MAX_WORKERS": "x", "XDG_DATA_DIRS": "x",
        "HOSTNAME": "x", "LC_ALL": "x", "DATA_DIRECTORY": "x", "PATH": "x", "CORS_ORIGIN": "",
    }) == {"REDIS_URI": "REDIS_URL", "LOGLEVEL": "LOG_LEVEL", "redis_url": "REDIS_URL",
           "MAXCELLS": "MAX_CELLS", "WORKER": "WORKERS"}
