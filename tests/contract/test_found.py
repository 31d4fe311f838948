"""Requests that once got an answer the document does not allow, kept as plain tests.

Generated requests find these only by chance; here they run every time.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import httpx
import pytest
from websockets.sync.client import connect


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


# JSON Schema counts a number with a zero fraction as an integer, and so does the document.
@pytest.mark.parametrize("number", ["4.0", "4e0", "0.4e1", "4.000"])
def test_an_integral_number_is_an_integer(http: httpx.Client, number: str) -> None:
    created = http.post("/games", content='{"width": 9.0, "height": 9e0, "mines": 1e1}',
                        headers={"Content-Type": "application/json"})
    assert created.status_code == 201, created.text
    assert (created.json()["game"]["width"], created.json()["game"]["mines"]) == (9, 10)
    game_id, token = created.json()["game"]["id"], created.json()["token"]
    auth = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}
    diff = http.post(f"/games/{game_id}/flag", content=f'{{"x": {number}, "y": 0}}', headers=auth)
    assert diff.status_code == 200, diff.text
    assert diff.json()["cells"] == [[4, 0, "F"]]


@pytest.mark.parametrize("body", ['{"x": 4.5, "y": 0}', '{"x": 1e400, "y": 0}',
                                  '{"x": "4", "y": 0}', '{"x": true, "y": 0}'])
def test_a_fraction_is_not_an_integer(http: httpx.Client, body: str) -> None:
    created = http.post("/games").json()
    answer = http.post(f"/games/{created['game']['id']}/reveal", content=body,
                       headers={"Authorization": f"Bearer {created['token']}",
                                "Content-Type": "application/json"})
    assert answer.status_code == 422, answer.text
    assert answer.json()["code"] == "invalid_request"


def test_an_integral_number_is_an_integer_on_the_socket(contract_server: str) -> None:
    created = httpx.post(f"{contract_server}/games", timeout=10).json()
    url = contract_server.replace("http://", "ws://") + f"/games/{created['game']['id']}/events"
    with connect(url) as ws:
        assert json.loads(ws.recv(timeout=10))["type"] == "snapshot"
        ws.send(json.dumps({"type": "auth", "token": created["token"]}))
        ws.send('{"type": "flag", "x": 2.0, "y": 3e0, "id": 1.0}')
        message = json.loads(ws.recv(timeout=10))
        while message["type"] != "result":  # the diff goes to this subscriber too
            message = json.loads(ws.recv(timeout=10))
        assert message["id"] == 1
        assert message["diff"]["cells"] == [[2, 3, "F"]]


@pytest.mark.parametrize("name", ["openapi.yaml", "asyncapi.yaml"])
def test_the_documents_as_text_for_who_asks(http: httpx.Client, name: str) -> None:
    """Generated clients read text/* but often not application/yaml."""
    as_text = http.get(f"/{name}", headers={"Accept": "text/plain"})
    assert as_text.status_code == 200
    assert as_text.headers["content-type"] == "text/plain; charset=utf-8"
    as_yaml = http.get(f"/{name}", headers={"Accept": "application/yaml, text/plain"})
    assert as_yaml.headers["content-type"] == "application/yaml"
    assert as_text.content == as_yaml.content
