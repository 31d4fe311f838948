"""The documents are valid: OpenAPI 3.1 by its validator, AsyncAPI 3.0 by structure,
every schema by JSON Schema 2020-12, every example by its schema, and the service
serves the committed files."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator, FormatChecker
from openapi_spec_validator import OpenAPIV31SpecValidator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from tests.contract import documents as docs

DOC_URI = "urn:contract:document"
HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@pytest.fixture(scope="module")
def openapi() -> dict[str, Any]:
    return docs.load(docs.OPENAPI)


@pytest.fixture(scope="module")
def asyncapi() -> dict[str, Any]:
    return docs.load(docs.ASYNCAPI)


def validator(doc: dict[str, Any], schema: Any) -> Draft202012Validator:
    """Validates against ``schema``, whose ``#/...`` references point into ``doc``."""
    registry: Registry[Any] = Registry().with_resource(DOC_URI, DRAFT202012.create_resource(doc))
    if isinstance(schema, dict) and set(schema) == {"$ref"}:
        schema = {"$ref": DOC_URI + schema["$ref"]}
    else:
        schema = {"$id": DOC_URI, **schema} if isinstance(schema, dict) else schema
    return Draft202012Validator(schema, registry=registry, format_checker=FormatChecker())


def check(doc: dict[str, Any], schema: Any, value: Any, where: str) -> None:
    errors = [e.message for e in validator(doc, schema).iter_errors(value)]
    assert not errors, f"{where}: {errors}"


def refs(node: Any, at: str = "#") -> Iterator[tuple[str, str]]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "$ref" and isinstance(value, str):
                yield at, value
            else:
                yield from refs(value, f"{at}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from refs(value, f"{at}/{i}")


def pointer(doc: dict[str, Any], ref: str) -> Any:
    assert ref.startswith("#/"), f"only local references: {ref}"
    node: Any = doc
    for part in ref[2:].split("/"):
        part = part.replace("~1", "/").replace("~0", "~")
        assert isinstance(node, dict) and part in node, f"{ref} does not resolve"
        node = node[part]
    return node


# ---- OpenAPI -------------------------------------------------------------------------------


def test_openapi_is_valid(openapi: dict[str, Any]) -> None:
    errors = [e.message for e in OpenAPIV31SpecValidator(openapi).iter_errors()]
    assert not errors
    assert openapi["openapi"].startswith("3.1.")


def test_openapi_references_resolve(openapi: dict[str, Any]) -> None:
    for _, ref in refs(openapi):
        pointer(openapi, ref)


def test_operation_ids_are_unique(openapi: dict[str, Any]) -> None:
    ids = [op["operationId"] for item in openapi["paths"].values()
           for method, op in item.items() if method in HTTP_METHODS]
    assert len(ids) == len(set(ids))


def _examples(doc: dict[str, Any]) -> Iterator[tuple[str, Any, Any]]:
    """(where, schema, example) for every example of ``doc``."""
    for name, schema in doc["components"]["schemas"].items():
        for i, example in enumerate(schema.get("examples", [])):
            yield f"schemas/{name}/examples/{i}", docs.REF.format(name=name), example

    def media(node: Any, at: str) -> Iterator[tuple[str, Any, Any]]:
        if isinstance(node, dict):
            if "schema" in node and ("example" in node or "examples" in node):
                if "example" in node:
                    yield at, node["schema"], node["example"]
                for key, example in (node.get("examples") or {}).items():
                    if isinstance(node["examples"], dict):
                        yield f"{at}/examples/{key}", node["schema"], example["value"]
            for key, value in node.items():
                if key not in ("schemas", "examples", "example"):
                    yield from media(value, f"{at}/{key}")
        elif isinstance(node, list):
            for i, value in enumerate(node):
                yield from media(value, f"{at}/{i}")

    yield from media({k: v for k, v in doc.items() if k != "components"}, "#")
    yield from media(doc["components"], "#/components")


def test_openapi_examples_are_valid(openapi: dict[str, Any]) -> None:
    seen = 0
    for where, schema, example in _examples(openapi):
        schema = {"$ref": schema} if isinstance(schema, str) else schema
        if schema.get("type") == "string" and isinstance(example, str):
            seen += 1
            continue
        check(openapi, schema, example, where)
        seen += 1
    assert seen > 20


# ---- AsyncAPI ------------------------------------------------------------------------------


def test_asyncapi_structure(asyncapi: dict[str, Any]) -> None:
    assert asyncapi["asyncapi"] == "3.0.0"
    info = asyncapi["info"]
    assert isinstance(info["title"], str) and isinstance(info["version"], str)
    allowed = {"asyncapi", "id", "info", "servers", "defaultContentType", "channels",
               "operations", "components"}
    assert set(asyncapi) <= allowed
    for server in asyncapi.get("servers", {}).values():
        assert {"host", "protocol"} <= set(server)
    for _, ref in refs(asyncapi):
        pointer(asyncapi, ref)

    channels = asyncapi["channels"]
    for channel in channels.values():
        address = channel["address"]
        assert set(re.findall(r"{(\w+)}", address)) == set(channel.get("parameters", {}))
        for param in channel.get("parameters", {}).values():
            assert set(param) <= {"enum", "default", "description", "examples", "location"}
        for message in channel["messages"].values():
            assert set(message) == {"$ref"} and message["$ref"].startswith("#/components/messages/")

    for name, op in asyncapi["operations"].items():
        assert op["action"] in ("send", "receive"), name
        channel_ref = op["channel"]["$ref"]
        assert channel_ref.startswith("#/channels/")
        channel_messages = f"{channel_ref}/messages/"
        for message in op["messages"]:
            assert message["$ref"].startswith(channel_messages), (name, message)
        if "reply" in op:
            reply_channel = op["reply"]["channel"]["$ref"]
            for message in op["reply"]["messages"]:
                assert message["$ref"].startswith(f"{reply_channel}/messages/")

    for key, message in asyncapi["components"]["messages"].items():
        assert message["name"] == key
        payload = message["payload"]
        assert set(payload) == {"schemaFormat", "schema"}
        assert payload["schema"]["$ref"].startswith("#/components/schemas/")
        for example in message.get("examples", []):
            assert set(example) <= {"name", "summary", "headers", "payload"}


def test_asyncapi_examples_are_valid(asyncapi: dict[str, Any]) -> None:
    seen = 0
    for where, schema, example in _examples(asyncapi):
        check(asyncapi, {"$ref": schema}, example, where)
        seen += 1
    for key, message in asyncapi["components"]["messages"].items():
        for i, example in enumerate(message.get("examples", [])):
            check(asyncapi, message["payload"]["schema"], example["payload"],
                  f"messages/{key}/examples/{i}")
            seen += 1
    assert seen > 10


@pytest.mark.parametrize("path", [docs.OPENAPI, docs.ASYNCAPI], ids=["openapi", "asyncapi"])
def test_schemas_are_json_schema_2020_12(path: Any) -> None:
    for name, schema in docs.load(path)["components"]["schemas"].items():
        Draft202012Validator.check_schema(schema)
        assert "$schema" not in schema, name


@pytest.mark.parametrize("path", [docs.OPENAPI, docs.ASYNCAPI], ids=["openapi", "asyncapi"])
def test_documents_are_as_the_tool_writes_them(path: Any) -> None:
    """Edits by hand keep the layout that ``python -m tests.contract.documents`` writes."""
    assert path.read_text() == docs.dump(docs.load(path)), (
        f"{path.name} is laid out by hand: run python -m tests.contract.documents"
    )


# ---- served --------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [docs.OPENAPI, docs.ASYNCAPI], ids=["openapi", "asyncapi"])
def test_the_service_serves_the_documents(live_server: str, path: Any) -> None:
    answer = httpx.get(f"{live_server}/{path.name}", timeout=10)
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/yaml")
    assert answer.content == path.read_bytes()
