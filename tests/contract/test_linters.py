"""The documents pass the usual linters: ``asyncapi validate`` (the official CLI),
``redocly lint`` with its recommended rules and ``spectral lint`` with ``spectral:oas``.

No error; and no warning but those listed here, each with the reason no small change
removes it. A new finding of any severity above information fails.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.contract import documents as docs
from tests.contract.conftest import tool_env

pytestmark = pytest.mark.timeout(1800)

SOCKETS = ("/paths/~1games~1{game_id}~1events/get/responses",
           "/paths/~1players~1me~1events/get/responses",
           "/paths/~1matches~1{match_id}~1events/get/responses")
# (rule, where) -> why it stays
REDOCLY_ACCEPTED = {
    **{
        ("operation-2xx-response", f"#{socket}"):
            "a WebSocket upgrade succeeds with 101: there is no 2xx to document"
        for socket in SOCKETS
    },
    **{
        ("operation-4xx-response", f"#/paths/~1{path}/get/responses"):
            "takes no input and no rate limit: no client error can happen"
        for path in ("healthz", "readyz", "metrics")
    },
}
SPECTRAL_ACCEPTED = {
    ("operation-success-response", socket):
        "a WebSocket upgrade succeeds with 101: there is no 2xx or 3xx to document"
    for socket in SOCKETS
}


def run(tools: Path, command: list[str]) -> tuple[int, str]:
    done = subprocess.run(command, cwd=tools, env=tool_env(), capture_output=True, text=True,
                          timeout=600)
    return done.returncode, done.stdout + done.stderr


def json_after(output: str, opening: str) -> Any:
    """The JSON a tool printed among its own remarks: from the first line that opens it."""
    lines = output.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(opening))
    value, _ = json.JSONDecoder().raw_decode("\n".join(lines[start:]))
    return value


def test_asyncapi_validate(npm_tools: Path) -> None:
    code, output = run(npm_tools, ["asyncapi", "validate", str(docs.ASYNCAPI),
                                   "--diagnostics-format", "json", "--fail-severity", "warn"])
    assert code == 0, output
    assert "is valid" in output, output
    # severity: 0 error, 1 warning, 2 information, 3 hint
    findings = json_after(output, "[")
    serious = [f for f in findings if f["severity"] < 2]
    assert not serious, output


def test_redocly_lint_recommended(npm_tools: Path) -> None:
    code, output = run(npm_tools, ["redocly", "lint", str(docs.OPENAPI), "--extends", "recommended",
                                   "--format", "json"])
    problems = json_after(output, "{")["problems"]
    found = {(p["ruleId"], p["location"][0]["pointer"]): p["severity"] for p in problems}
    unexpected = {key: severity for key, severity in found.items()
                  if key not in REDOCLY_ACCEPTED or severity == "error"}
    assert not unexpected, json.dumps(problems, indent=1)
    assert code == 0, output
    assert set(found) == set(REDOCLY_ACCEPTED), "a listed warning is gone: drop it from the list"


def test_spectral_lint_oas(npm_tools: Path) -> None:
    code, output = run(npm_tools, ["spectral", "lint", "--ruleset", "spectral.yaml",
                                   "--format", "json", str(docs.OPENAPI)])
    findings = json_after(output, "[")
    found = {(f["code"], "/" + "/".join(p.replace("/", "~1") for p in f["path"])): f["severity"]
             for f in findings}
    unexpected = {key: severity for key, severity in found.items()
                  if severity < 2 and (key not in SPECTRAL_ACCEPTED or severity == 0)}
    assert not unexpected, json.dumps(findings, indent=1)
    assert code == 0, output
    assert {k for k, s in found.items() if s < 2} == set(SPECTRAL_ACCEPTED), (
        "a listed warning is gone: drop it from the list"
    )
