"""Requests that once got an answer the document does not allow, kept as plain tests.

Generated requests find these only by chance; here they run every time.
"""

from __future__ import annotations

from collections.abc import Iterator

import httpx
import pytest


@pytest.fixture(scope="module")
def http(contract_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=contract_server, timeout=10) as client:
        yield client


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("OPTIONS", "/games", "POST"),
        ("GET", "/games", "POST"),
        ("GET", "/games/" + "0" * 32 + "/reveal", "POST"),
        ("DELETE", "/games/" + "0" * 32, "GET, HEAD"),
        ("POST", "/healthz", "GET, HEAD"),
    ],
)
def test_a_wrong_method_is_405_with_the_routes_allow(
    http: httpx.Client, method: str, path: str, allow: str
) -> None:
    answer = http.request(method, path)
    assert answer.status_code == 405
    assert set(answer.headers["allow"].split(", ")) == set(allow.split(", "))
    assert answer.headers["content-type"] == "application/problem+json"


def test_the_web_client_is_still_served(http: httpx.Client) -> None:
    answer = http.get("/")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/html")


@pytest.mark.parametrize("body", [b" ", b"\n", b"\t\r\n"])
def test_a_blank_body_is_not_json(http: httpx.Client, body: bytes) -> None:
    answer = http.post("/games", content=body, headers={"Content-Type": "application/json"})
    assert answer.status_code == 400
    assert answer.json()["code"] == "invalid_request"


def test_no_body_is_a_beginner_game(http: httpx.Client) -> None:
    answer = http.post("/games")
    assert answer.status_code == 201
    assert answer.json()["game"]["preset"] == "beginner"


@pytest.mark.parametrize(
    "query",
    [
        {"date": "\u0662\u0660\u0662\u0666-\u0661\u0661-\u0662\u0661"},  # Arabic-Indic digits
        {"limit": "\uff15"},  # a fullwidth 5
        {"limit": "0"},
        {"limit": "101"},
    ],
)
def test_leaderboard_queries_take_ascii_numbers(http: httpx.Client, query: dict[str, str]) -> None:
    answer = http.get("/leaderboards/beginner", params=query)
    assert answer.status_code == 422
    assert answer.json()["code"] == "invalid_request"
