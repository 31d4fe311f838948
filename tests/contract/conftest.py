"""A service process of its own for the contract tests, and the npm tools they run.

schemathesis sends thousands of requests, many of them failures on purpose; with
the rate limits on they would soon all be 429s, and would use up the limits of
every other test talking to the session's server from the same address. This
process runs on the session's Redis with the limits off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.servers import running_service

NO_LIMITS = {
    "RATE_LIMIT": "0", "MOVE_RATE_LIMIT": "0", "AUTH_FAILURE_LIMIT": "0", "REGISTER_RATE_LIMIT": "0"
}


@pytest.fixture(scope="session")
def contract_server(redis_url: str) -> Iterator[str]:
    with running_service(redis_url, **NO_LIMITS) as svc:
        yield svc.url


# ---- the npm tools (tools/package.json) ------------------------------------------------------

TOOLS = Path(__file__).with_name("tools")
# The oldest node every locked package runs on (@redocly/cli: 20.19).
NODE = (20, 19)


def tool_env() -> dict[str, str]:
    """The environment the npm tools run in: no telemetry, no update checks, nothing
    written outside the repository."""
    return {
        **os.environ,
        "PATH": os.pathsep.join([str(TOOLS / "node_modules" / ".bin"),
                                 str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "ASYNCAPI_METRICS_CONFIG_PATH": str(TOOLS / "asyncapi-analytics.json"),
        "REDOCLY_TELEMETRY": "off",
        "REDOCLY_SUPPRESS_UPDATE_NOTICE": "true",
        "NO_UPDATE_NOTIFIER": "1",
        "npm_config_update_notifier": "false",
        "npm_config_cache": str(TOOLS / ".npm-cache"),
    }


@pytest.fixture(scope="session")
def npm_tools() -> Path:
    """The tools folder with its packages installed from the lockfile.

    ``.ci/run`` installs them first (``npm ci``); a tree where they are missing or older
    than the lockfile gets them installed here. Without node and npm, or with a node older
    than the tools need, the tests skip, saying so.
    """
    missing = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if missing:
        pytest.skip(f"{' and '.join(missing)} not installed: the npm linters and generators "
                    "cannot run (apt-get install nodejs npm)")
    version = subprocess.run(["node", "-p", "process.versions.node"], capture_output=True,
                             text=True, check=True, timeout=60).stdout.strip()
    if tuple(int(part) for part in version.split(".")[:2]) < NODE:
        pytest.skip(f"node {version} is older than the {NODE[0]}.{NODE[1]} the npm linters "
                    "and generators need (tools/package-lock.json)")
    installed = TOOLS / "node_modules" / ".package-lock.json"
    lock = TOOLS / "package-lock.json"
    if not installed.exists() or installed.stat().st_mtime < lock.stat().st_mtime:
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=TOOLS, env=tool_env(),
                       check=True, timeout=1800)
    return TOOLS
