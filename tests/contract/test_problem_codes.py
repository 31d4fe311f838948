"""Every problem ``code`` the service can send is documented, and nothing else is: the
list in README, ``Problem.code`` in both documents, openapi's table of errors, and the
SDK's ``PROBLEM_STATUSES`` name the codes the service's source raises."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from service import wire
from service.api import problems
from tests.contract import documents as docs

ROOT = Path(__file__).resolve().parents[2]
SERVICE = ROOT / "service"
# ``ApiError(409, "match_full", ...)``: a literal status, then a literal code.
RAISED = re.compile(r'\bApiError\(\s*(\d{3})\s*,\s*"([a-z_]+)"')
ANY_CALL = re.compile(r"\bApiError\(")
# An engine error class's ``code = "game_over"``.
ENGINE_CODE = re.compile(r'^\s+code = "([a-z_]+)"$', re.M)
# The codes the SDK has no class for: not a client's doing, nothing to handle but retry.
SERVER_FAULTS = {"internal_error"}
CODE = re.compile(r"`([a-z_]+)`")


def source_codes() -> set[str]:
    """The codes the service's source can answer with."""
    codes = set(problems._STATUS_CODE.values())
    for path in SERVICE.rglob("*.py"):
        text = path.read_text()
        literal = RAISED.findall(text)
        codes |= {code for _, code in literal}
        if path != SERVICE / "api" / "problems.py":
            # Elsewhere every call names its code literally, so the pattern sees them all.
            assert len(ANY_CALL.findall(text)) == len(literal), path
    codes |= set(ENGINE_CODE.findall((SERVICE / "engine" / "errors.py").read_text()))
    return codes


def listed(text: str) -> set[str]:
    return set(CODE.findall(text))


def test_the_source_raises_what_the_sdk_knows() -> None:
    codes = source_codes()
    assert {"invalid_request", "not_started", "match_full", "internal_error"} <= codes
    assert codes - SERVER_FAULTS == set(wire.PROBLEM_STATUSES)


def test_readme_lists_every_code() -> None:
    readme = (ROOT / "README.md").read_text()
    found = re.search(r"Errors are `application/problem\+json` with\s+a stable `code`:(.*?)\.\n",
                      readme, re.S)
    assert found, "README's list of problem codes"
    assert listed(found.group(1)) == source_codes()


def _problem_code(doc: dict[str, Any]) -> str:
    text: str = doc["components"]["schemas"]["Problem"]["properties"]["code"]["description"]
    return text


def test_problem_code_lists_every_code_in_both_documents() -> None:
    for path in (docs.OPENAPI, docs.ASYNCAPI):
        assert listed(_problem_code(docs.load(path))) == source_codes(), path.name


def test_openapis_error_table_lists_every_code() -> None:
    description: str = docs.load(docs.OPENAPI)["info"]["description"]
    rows = [line.split("|") for line in description.splitlines()
            if re.match(r"\| \d{3} \|", line)]
    assert rows, "openapi's table of errors"
    assert set().union(*(listed(row[2]) for row in rows)) == source_codes()
