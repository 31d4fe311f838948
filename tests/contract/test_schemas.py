"""The documents say exactly what the code does.

- ``components/schemas`` of openapi.yaml and asyncapi.yaml are msgspec's schemas of
  the wire Structs (annotations aside), and every wire Struct is in one of them;
- each operation's bodies are the Structs its handler decodes and encodes;
- openapi.yaml has a path for every route of the app, with the same methods, and no other;
- asyncapi.yaml has, on each socket's channel, one message per member of that socket's
  tagged unions, whose payload's ``type`` is its tag.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any, Literal

import msgspec
import pytest
from jsonschema import Draft202012Validator
from starlette.routing import Mount, Route, WebSocketRoute

from service import wire
from service.api.app import create_app
from service.config import Config
from tests.contract import documents as docs

PROBLEM = "application/problem+json"


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return docs.load(docs.OPENAPI)


@pytest.fixture(scope="module")
def asyncapi() -> dict[str, Any]:
    return docs.load(docs.ASYNCAPI)


def ref(name: str) -> dict[str, str]:
    return {"$ref": docs.REF.format(name=name)}


def resolve(doc: dict[str, Any], node: Any) -> Any:
    """Follow local ``$ref``s until a node that is not one."""
    while isinstance(node, dict) and set(node) == {"$ref"}:
        target: Any = doc
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        node = target
    return node


# ---- schemas ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "made"),
    [(docs.OPENAPI, docs.openapi_schemas), (docs.ASYNCAPI, docs.asyncapi_schemas)],
    ids=["openapi", "asyncapi"],
)
def test_schemas_are_msgspecs(path: Any, made: Any) -> None:
    written = docs.load(path)["components"]["schemas"]
    generated = made()
    assert set(written) == set(generated), "run: python -m tests.contract.documents"
    for name, schema in generated.items():
        assert docs.strip(written[name]) == docs.strip(schema), (
            f"{path.name}: {name} differs from minesweeper/wire.py; "
            "run: python -m tests.contract.documents"
        )


ROOTS = [(docs.OPENAPI, docs.http_roots), (docs.ASYNCAPI, docs.live_roots)]


@pytest.mark.parametrize(("path", "roots"), ROOTS, ids=["openapi", "asyncapi"])
def test_schemas_say_what_msgspec_says(path: Any, roots: Any) -> None:
    """With the shared types put back in place and the rules aside, each schema is
    msgspec's own, in the forms ``tidy`` writes (test_tidy_keeps_the_meaning)."""
    written = docs.load(path)["components"]["schemas"]
    for name, schema in docs.msgspec_schemas(roots()).items():
        own = {k: v for k, v in written[name].items() if k not in docs.RULES.get(name, {})}
        assert docs.strip(docs.inline(docs.strip(own), written)) == docs.strip(docs.tidy(schema)), (
            name
        )


PROBES: list[Any] = [
    None, True, 0, 1, -1, 1.5, "", "x", *["beginner", "zero", "won", "ready", "reveal", "pause",
    "flag", "question", "safe", "ok", "diff"], [], [1], [1, 2], [1, 2, "F"], [1, 2, "F", "F"],
    [1, 2, "F", 3], ["1", 2, "F"], [1, 2, 3], [1.0, 2, "#"], {}, {"x": 1},
]


@pytest.mark.parametrize("name", [*docs.SHARED, "Literal['ok']"])
def test_tidy_keeps_the_meaning(name: str) -> None:
    """Every value msgspec's schema of a shared type accepts, and only those, the
    document's accepts."""
    kind = Literal["ok"] if name == "Literal['ok']" else getattr(wire, name)
    own = msgspec.json.schema(kind)
    tidied = docs.tidy(own)
    for value in PROBES:
        assert Draft202012Validator(own).is_valid(value) == (
            Draft202012Validator(tidied).is_valid(value)
        ), (name, value)


def _nodes(node: Any, at: str = "#") -> Iterator[tuple[str, dict[str, Any]]]:
    if isinstance(node, dict):
        yield at, node
        for key, value in node.items():
            yield from _nodes(value, f"{at}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _nodes(value, f"{at}/{i}")


@pytest.mark.parametrize("path", [docs.OPENAPI, docs.ASYNCAPI], ids=["openapi", "asyncapi"])
def test_each_choice_is_a_shared_type(path: Any) -> None:
    """A generator makes a type of every enum: each is a component of its own, which
    every field of that type references, so that clients get one type per idea."""
    doc = docs.load(path)
    enums = {at: node["enum"] for at, node in _nodes(doc) if isinstance(node.get("enum"), list)}
    assert enums and all(at.rsplit("/", 1)[1] in docs.SHARED for at in enums), enums
    assert all(at.startswith("#/components/schemas/") for at in enums), enums
    assert len({tuple(values) for values in enums.values()}) == len(enums), enums
    used = {ref.rsplit("/", 1)[1] for _, node in _nodes(doc)
            for ref in [node.get("$ref")] if isinstance(ref, str)}
    assert {at.rsplit("/", 1)[1] for at in enums} <= used


@pytest.mark.parametrize("path", [docs.OPENAPI, docs.ASYNCAPI], ids=["openapi", "asyncapi"])
def test_defaults_are_told_not_declared(path: Any) -> None:
    """Generators read ``default`` as "always present" (openapi-typescript makes such a
    request field required); so no schema declares one, and each description says it."""
    doc = docs.load(path)
    schemas = doc["components"]["schemas"]
    assert not [at for at, node in _nodes(schemas) if "default" in node]
    roots = docs.http_roots() if path == docs.OPENAPI else docs.live_roots()
    for name, schema in docs.msgspec_schemas(roots).items():
        for field, spec in schema.get("properties", {}).items():
            if spec.get("default") is not None:
                told = schemas[name]["properties"][field].get("description", "")
                assert f"`{spec['default']}`".lower() in told.lower(), (name, field)


def test_every_wire_struct_is_documented(
    openapi: dict[str, Any], asyncapi: dict[str, Any]
) -> None:
    documented = set(openapi["components"]["schemas"]) | set(asyncapi["components"]["schemas"])
    missing = [t.__name__ for t in docs.wire_structs() if t.__name__ not in documented]
    assert not missing


def test_annotations_do_not_hide_constraints() -> None:
    """``strip`` keeps every validation keyword, including in nested and listed schemas."""
    schema = {
        "title": "T", "description": "d", "type": "object",
        "properties": {"title": {"type": "string", "description": "a field named title"}},
        "anyOf": [{"examples": [1], "minimum": 0}],
        "items": {"description": "x", "maxLength": 3},
    }
    assert docs.strip(schema) == {
        "type": "object", "properties": {"title": {"type": "string"}},
        "anyOf": [{"minimum": 0}], "items": {"maxLength": 3},
    }


# ---- bodies of each operation ----------------------------------------------------------------

MOVE_ERRORS = {"400", "401", "403", "404", "409", "412", "413", "422", "429", "503"}
CHANGE_ERRORS = {"401", "403", "404", "409", "429", "503"}
# (method, path) -> (request body Struct or None, {status: response Struct}, error statuses)
BODIES: dict[tuple[str, str], tuple[str | None, dict[str, str], set[str]]] = {
    ("post", "/games"): (
        "NewGame", {"201": "CreatedGame"}, {"400", "401", "413", "422", "429", "503"}
    ),
    ("get", "/games/{game_id}"): (None, {"200": "GameView"}, {"404", "429", "503"}),
    ("post", "/games/{game_id}/reveal"): ("Cell", {"200": "Diff"}, MOVE_ERRORS),
    ("post", "/games/{game_id}/flag"): ("FlagCell", {"200": "Diff"}, MOVE_ERRORS),
    ("post", "/games/{game_id}/chord"): ("Cell", {"200": "Diff"}, MOVE_ERRORS),
    ("post", "/games/{game_id}/pause"): (None, {"200": "Diff"}, CHANGE_ERRORS),
    ("post", "/games/{game_id}/resume"): (None, {"200": "Diff"}, CHANGE_ERRORS),
    ("post", "/games/{game_id}/hint"): (None, {"200": "Hint"}, CHANGE_ERRORS),
    ("post", "/games/{game_id}/reset"): (
        None, {"201": "CreatedGame"}, {"401", "403", "404", "409", "429", "503"}
    ),
    ("get", "/games/{game_id}/replay"): (None, {"200": "Replay"}, {"404", "409", "429", "503"}),
    ("get", "/leaderboards/{preset}"): (None, {"200": "Leaderboard"}, {"404", "422", "429", "503"}),
    ("post", "/players"): (
        "NewPlayer", {"201": "CreatedPlayer"}, {"400", "409", "413", "422", "429", "503"}
    ),
    ("get", "/players/me"): (None, {"200": "PlayerView"}, {"401", "429", "503"}),
    ("patch", "/players/me"): (
        "PlayerRename", {"200": "PlayerView"}, {"400", "401", "409", "413", "422", "429", "503"}
    ),
    ("get", "/players/{player_id}"): (None, {"200": "PlayerView"}, {"404", "429", "503"}),
    ("post", "/matches"): (
        "NewMatch", {"201": "CreatedMatch"}, {"400", "401", "409", "413", "422", "429", "503"}
    ),
    ("get", "/matches/{match_id}"): (None, {"200": "MatchView"}, {"401", "404", "429", "503"}),
    ("post", "/matches/{match_id}/join"): (
        None, {"200": "MatchView"}, {"401", "403", "404", "409", "429", "503"}
    ),
    ("post", "/matches/{match_id}/leave"): (
        None, {"200": "MatchView"}, {"401", "404", "409", "429", "503"}
    ),
    ("post", "/matches/{match_id}/rematch"): (
        None, {"200": "CreatedMatch", "201": "CreatedMatch"}, {"401", "404", "409", "429", "503"}
    ),
    ("post", "/matches/{match_id}/start"): (
        None, {"200": "MatchView"}, {"401", "403", "404", "409", "429", "503"}
    ),
    ("post", "/seeks"): (
        "NewSeek", {"201": "CreatedSeek"}, {"400", "401", "409", "413", "422", "429", "503"}
    ),
    ("get", "/seeks/{seek_id}"): (None, {"200": "SeekView"}, {"404", "429", "503"}),
    ("delete", "/seeks/{seek_id}"): (
        None, {"200": "SeekView"}, {"401", "403", "404", "429", "503"}
    ),
    ("get", "/ratings/race"): (None, {"200": "RatingList"}, {"422", "429", "503"}),
    ("get", "/healthz"): (None, {"200": "Health"}, set()),
    ("get", "/readyz"): (None, {"200": "Health"}, {"503"}),
}
# Who may call what: a game's changes take its token or its player's, the player's own
# endpoints the player's token, and a new game a player's token or none; the rest is
# public (``security: []``).
GAME_OR_PLAYER = [{"gameToken": []}, {"playerToken": []}]
SECURITY: dict[tuple[str, str], list[dict[str, list[str]]]] = {
    **{key: GAME_OR_PLAYER for key in BODIES if key[1].startswith("/games/{game_id}/")
       and key[0] == "post"},
    ("get", "/players/me"): [{"playerToken": []}],
    ("patch", "/players/me"): [{"playerToken": []}],
    ("post", "/games"): [{}, {"playerToken": []}],
    **{key: [{"playerToken": []}] for key in BODIES
       if key[1].startswith(("/matches", "/seeks")) and key[0] in ("post", "delete")},
    # A match's view shows a race seat's game to its own player, who sends their token.
    ("get", "/matches/{match_id}"): [{}, {"playerToken": []}],
}
# Where a token may be left out, but a wrong one is refused.
OPTIONAL_TOKEN = {("post", "/games"), ("get", "/matches/{match_id}")}
# Operations whose answers are not wire Structs: text, YAML, and the WebSocket upgrades.
NOT_STRUCTS = {
    ("get", "/metrics"), ("get", "/openapi.yaml"), ("get", "/asyncapi.yaml"),
    ("get", "/games/{game_id}/events"), ("get", "/players/me/events"),
    ("get", "/matches/{match_id}/events"),
}


def operations(doc: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method, path): op
        for path, item in doc["paths"].items()
        for method, op in item.items()
        if method in ("get", "post", "put", "patch", "delete")
    }


def test_every_operation_is_checked(openapi: dict[str, Any]) -> None:
    assert set(operations(openapi)) == set(BODIES) | NOT_STRUCTS


@pytest.mark.parametrize("key", list(BODIES), ids=lambda k: f"{k[0].upper()} {k[1]}")
def test_operation_bodies(openapi: dict[str, Any], key: tuple[str, str]) -> None:
    op = operations(openapi)[key]
    body, answers, errors = BODIES[key]
    if body is None:
        assert "requestBody" not in op
    else:
        request = resolve(openapi, op["requestBody"])
        assert request["content"]["application/json"]["schema"] == ref(body)
    responses = {status: resolve(openapi, r) for status, r in op["responses"].items()}
    assert set(responses) == set(answers) | errors
    for status, name in answers.items():
        assert responses[status]["content"]["application/json"]["schema"] == ref(name)
    for status in errors:
        content = responses[status]["content"]
        assert list(content) == [PROBLEM], f"{status} is a problem"
        assert content[PROBLEM]["schema"] == ref("Problem")
        example = content[PROBLEM].get("example")
        if example is not None:
            assert example["status"] == int(status)


def test_error_headers(openapi: dict[str, Any]) -> None:
    for key, op in operations(openapi).items():
        for status, response in op["responses"].items():
            headers = resolve(openapi, response).get("headers", {})
            if status in ("429", "503"):
                assert "Retry-After" in headers, key
            if status == "401":
                assert "WWW-Authenticate" in headers, key
            if status == "201":
                assert "Location" in headers, key


def test_changes_need_the_token(openapi: dict[str, Any]) -> None:
    schemes = openapi["components"]["securitySchemes"]
    for scheme in ("gameToken", "playerToken"):
        assert schemes[scheme] == {**schemes[scheme], "type": "http", "scheme": "bearer"}
    for key, op in operations(openapi).items():
        assert op.get("security") == SECURITY.get(key, []), key
    # Whatever needs a token says what a missing one gets.
    for key, (_, _, errors) in BODIES.items():
        needs_one = key in SECURITY and {} not in SECURITY[key]
        assert needs_one == ("401" in errors and key not in OPTIONAL_TOKEN), key


@pytest.mark.parametrize("name", ["GameId", "PlayerId", "MatchId", "SeekId"])
def test_id_parameters(openapi: dict[str, Any], name: str) -> None:
    from service.api import requests

    param = openapi["components"]["parameters"][name]
    assert param["in"] == "path" and param["required"] is True
    pattern = param["schema"]["pattern"]
    for candidate in ("0" * 32, "a1" * 16, "A" * 32, "0" * 31, "0" * 33, "g" * 32, ""):
        documented = re.fullmatch(pattern.strip("^$"), candidate) is not None
        assert documented == (requests._GAME_ID.fullmatch(candidate) is not None), candidate


# ---- routes ----------------------------------------------------------------------------------


def served_routes() -> dict[str, set[str]]:
    app = create_app(Config(redis_url="redis://unused"))
    served: dict[str, set[str]] = {}
    for route in app.routes:
        if isinstance(route, Route):
            served[route.path] = {m.lower() for m in route.methods or ()} - {"head"}
        elif isinstance(route, WebSocketRoute):
            served[route.path] = {"get"}  # the upgrade request
        elif isinstance(route, Mount):
            continue  # the web client's files
        else:
            raise AssertionError(f"a route the contract does not know: {route!r}")
    return served


def test_every_route_is_documented_and_nothing_else(openapi: dict[str, Any]) -> None:
    documented = {
        path: {m for m in item if m in ("get", "post", "put", "patch", "delete")}
        for path, item in openapi["paths"].items()
    }
    assert documented == served_routes()


def test_path_parameters_are_documented(openapi: dict[str, Any]) -> None:
    for (method, path), op in operations(openapi).items():
        item = openapi["paths"][path]
        given = item.get("parameters", []) + op.get("parameters", [])
        params = [resolve(openapi, p) for p in given]
        in_path = {p["name"] for p in params if p["in"] == "path"}
        assert in_path == set(re.findall(r"{(\w+)}", path)), (method, path)
        assert all(p["required"] for p in params if p["in"] == "path")


# ---- live messages ---------------------------------------------------------------------------


def channel_operation(asyncapi: dict[str, Any], channel: str, action: str) -> dict[str, Any]:
    (operation,) = [
        op for op in asyncapi["operations"].values()
        if op["action"] == action and op["channel"]["$ref"] == f"#/channels/{channel}"
    ]
    return operation


LIVE = [(channel, union, action) for channel, unions in docs.SOCKETS.items()
        for union, action in zip(unions, ("send", "receive"), strict=True)]


@pytest.mark.parametrize(
    ("channel", "union", "action"), LIVE, ids=[f"{c}-{a}" for c, _, a in LIVE]
)
def test_messages_are_the_tagged_unions(
    asyncapi: dict[str, Any], channel: str, union: Any, action: str
) -> None:
    operation = channel_operation(asyncapi, channel, action)
    schemas = asyncapi["components"]["schemas"]
    payloads = {}
    for message_ref in operation["messages"]:
        message = resolve(asyncapi, resolve(asyncapi, message_ref))
        payload = message["payload"]
        assert payload["schemaFormat"] == "application/schema+json;version=draft-2020-12"
        name = payload["schema"]["$ref"].rsplit("/", 1)[1]
        tag = schemas[name]["properties"]["type"]["const"]
        payloads[tag] = payload["schema"]
    assert payloads == {tag: ref(name) for tag, name in docs.tags(union).items()}


def test_replies(asyncapi: dict[str, Any]) -> None:
    def replies(channel: str) -> set[str]:
        op = channel_operation(asyncapi, channel, "receive")
        return {resolve(asyncapi, resolve(asyncapi, m))["name"] for m in op["reply"]["messages"]}

    assert replies("game") == {"result", "error"}
    assert replies("player") == {"player", "error"}
    assert replies("match") == {"match", "error"}


def test_channels_are_the_websocket_routes(
    openapi: dict[str, Any], asyncapi: dict[str, Any]
) -> None:
    sockets = {r.path for r in create_app(Config(redis_url="redis://unused")).routes
               if isinstance(r, WebSocketRoute)}
    channels = asyncapi["channels"]
    assert {c["address"] for c in channels.values()} == sockets
    for channel in channels.values():
        assert set(channel.get("parameters", {})) == set(
            re.findall(r"{(\w+)}", channel["address"])
        )
        assert ("get", channel["address"]) in operations(openapi)
    game = channels["game"]
    since = game["bindings"]["ws"]["query"]["properties"]["since"]
    (documented,) = [
        p for p in operations(openapi)[("get", game["address"])]["parameters"]
        if p.get("name") == "since"
    ]
    assert docs.strip(since) == docs.strip(documented["schema"])
