"""The contract documents, and the JSON Schemas msgspec derives from the wire Structs.

``openapi.yaml`` (HTTP) and ``asyncapi.yaml`` (WebSocket) are written by hand and
committed; their ``components/schemas`` must be exactly what msgspec generates for
the wire Structs. After a change to ``clients/python/minesweeper/wire.py`` run::

    python -m tests.contract.documents          # rewrite the schemas in both documents
    python -m tests.contract.documents --check  # only report what differs

Rewriting replaces every validation keyword with msgspec's and keeps what the
documents add for readers: ``title``, ``description``, ``examples`` and the like.
"""

from __future__ import annotations

import argparse
import copy
import inspect
import sys
import typing
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec
import yaml

from service import wire

ROOT = Path(__file__).resolve().parents[2]
OPENAPI = ROOT / "openapi.yaml"
ASYNCAPI = ROOT / "asyncapi.yaml"
REF = "#/components/schemas/{name}"

# Keywords that only inform a reader; everything else constrains a value.
ANNOTATIONS = frozenset(
    {"title", "description", "examples", "example", "$comment", "deprecated", "readOnly",
     "writeOnly", "externalDocs"}
)
_SCHEMA = ("items", "additionalProperties", "not", "contains", "propertyNames", "if", "then",
           "else", "unevaluatedItems", "unevaluatedProperties", "additionalItems")
_SCHEMA_LIST = ("anyOf", "oneOf", "allOf", "prefixItems")
_SCHEMA_MAP = ("properties", "patternProperties", "$defs", "dependentSchemas")

Schema = dict[str, Any]


# ---- the wire types ----------------------------------------------------------------------


def wire_structs() -> list[type[msgspec.Struct]]:
    """Every Struct the service's wire module names (most are defined in the SDK's
    ``minesweeper.wire``, which it builds on), in definition order."""
    found = [
        obj for obj in vars(wire).values()
        if inspect.isclass(obj) and issubclass(obj, msgspec.Struct) and obj is not msgspec.Struct
    ]
    return sorted(found, key=lambda cls: (cls.__module__, inspect.getsourcelines(cls)[1]))


def members(union: Any) -> list[type[msgspec.Struct]]:
    return list(typing.get_args(union))


def live_only() -> list[type[msgspec.Struct]]:
    """Message types of the WebSocket that never appear in an HTTP body."""
    shared = {wire.Diff}
    return [t for t in members(wire.ServerMessage) + members(wire.ClientMessage)
            if t not in shared]


def http_roots() -> list[type[msgspec.Struct]]:
    """The Structs of request and response bodies (the move answer ``Diff`` included)."""
    live = set(live_only())
    return [t for t in wire_structs() if t not in live]


def live_roots() -> list[type[msgspec.Struct]]:
    return members(wire.ServerMessage) + members(wire.ClientMessage)


def generated(roots: Iterable[Any]) -> dict[str, Schema]:
    """msgspec's schemas for ``roots`` and everything they contain, keyed by name."""
    _, components = msgspec.json.schema_components(list(roots), ref_template=REF)
    return components


def openapi_schemas() -> dict[str, Schema]:
    return generated(http_roots())


def asyncapi_schemas() -> dict[str, Schema]:
    return generated(live_roots())


def tags(union: Any) -> dict[str, str]:
    """A tagged union's tag values -> the names of its member schemas."""
    (schema,), _ = msgspec.json.schema_components([union], ref_template=REF)
    mapping: dict[str, str] = schema["discriminator"]["mapping"]
    return {tag: ref.rsplit("/", 1)[1] for tag, ref in mapping.items()}


# ---- comparing and merging schemas -------------------------------------------------------


def _walk(schema: Any, fn: Any) -> Any:
    """Apply ``fn(key, value)`` to each subschema position of ``schema``."""
    if not isinstance(schema, dict):
        return schema
    out: Schema = {}
    for key, value in schema.items():
        if key in _SCHEMA:
            out[key] = fn(value)
        elif key in _SCHEMA_LIST and isinstance(value, list):
            out[key] = [fn(v) for v in value]
        elif key in _SCHEMA_MAP and isinstance(value, dict):
            out[key] = {name: fn(v) for name, v in value.items()}
        else:
            out[key] = value
    return out


def strip(schema: Any) -> Any:
    """``schema`` without its annotations: only what decides whether a value is valid."""
    if not isinstance(schema, dict):
        return schema
    bare = {k: v for k, v in schema.items() if k not in ANNOTATIONS}
    return _walk(bare, strip)


def merge(made: Any, written: Any) -> Any:
    """``made`` (from msgspec) carrying the annotations of ``written`` (from a document)."""
    if not isinstance(made, dict):
        return copy.deepcopy(made)
    old: Schema = written if isinstance(written, dict) else {}
    out: Schema = {}
    for key in ("title", "description"):
        if key in old or key in made:
            out[key] = copy.deepcopy(old.get(key, made.get(key)))
    for key, value in made.items():
        if key in ANNOTATIONS:
            continue
        before = old.get(key)
        if key in _SCHEMA:
            out[key] = merge(value, before)
        elif key in _SCHEMA_LIST and isinstance(value, list):
            listed = before if isinstance(before, list) and len(before) == len(value) else []
            out[key] = [merge(v, listed[i] if listed else None) for i, v in enumerate(value)]
        elif key in _SCHEMA_MAP and isinstance(value, dict):
            named = before if isinstance(before, dict) else {}
            out[key] = {name: merge(v, named.get(name)) for name, v in value.items()}
        else:
            out[key] = copy.deepcopy(value)
    for key in sorted(ANNOTATIONS - {"title", "description"}):
        if key in old:
            out[key] = copy.deepcopy(old[key])
        elif key in made:
            out[key] = copy.deepcopy(made[key])
    return out


def merged_components(made: dict[str, Schema], written: dict[str, Schema]) -> dict[str, Schema]:
    return {name: merge(schema, written.get(name)) for name, schema in made.items()}


def drift(made: dict[str, Schema], written: dict[str, Schema]) -> list[str]:
    """What differs between the generated and the written schemas, one line each."""
    lines = []
    for name in sorted(set(made) | set(written)):
        if name not in written:
            lines.append(f"{name}: missing from the document")
        elif name not in made:
            lines.append(f"{name}: in the document but not a wire type")
        elif strip(made[name]) != strip(written[name]):
            lines.append(f"{name}: differs from msgspec's schema")
    return lines


# ---- reading and writing YAML ------------------------------------------------------------


class _Loader(yaml.SafeLoader):
    """Safe YAML, with RFC 3339 strings kept as strings (they are, on the wire)."""


_Loader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load(path: Path) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.load(path.read_text(), Loader=_Loader)
    return doc


class _Dumper(yaml.SafeDumper):
    def increase_indent(self, flow: bool = False, indentless: bool = False) -> None:
        super().increase_indent(flow, False)

    def ignore_aliases(self, data: Any) -> bool:
        return True  # a repeated example is written out again, not as an anchor


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.ScalarNode:
    style = "|" if "\n" in data else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)


def _short(value: Any) -> bool:
    return value is None or isinstance(value, bool | int | float) or (
        isinstance(value, str) and "\n" not in value and len(value) < 60
    )


def _list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.SequenceNode:
    """Lists of short scalars on one line: enums, ``required``, cells."""
    flow = all(map(_short, data))
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


_Dumper.add_representer(str, _str)
_Dumper.add_representer(list, _list)


def dump(doc: dict[str, Any]) -> str:
    text: str = yaml.dump(doc, Dumper=_Dumper, sort_keys=False, width=96, allow_unicode=True)
    return text


# ---- the command -------------------------------------------------------------------------


def _documents() -> list[tuple[Path, dict[str, Schema]]]:
    return [(OPENAPI, openapi_schemas()), (ASYNCAPI, asyncapi_schemas())]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.contract.documents",
        description="Write the wire types' JSON Schemas into openapi.yaml and asyncapi.yaml.",
    )
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 on drift")
    args = parser.parse_args(argv)
    status = 0
    for path, made in _documents():
        doc = load(path)
        written = doc.setdefault("components", {}).get("schemas") or {}
        problems = drift(made, written)
        if args.check:
            for line in problems:
                print(f"{path.name}: {line}")
            status |= bool(problems)
            continue
        doc["components"]["schemas"] = merged_components(made, written)
        path.write_text(dump(doc))
        print(f"{path.name}: {len(made)} schemas written" + (f", {len(problems)} changed"
                                                            if problems else ""))
    return status


if __name__ == "__main__":
    sys.exit(main())
