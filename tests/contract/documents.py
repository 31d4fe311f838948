"""The contract documents, and the JSON Schemas msgspec derives from the wire Structs.

``openapi.yaml`` (HTTP) and ``asyncapi.yaml`` (WebSocket) are written by hand and
committed; their ``components/schemas`` must be exactly what msgspec generates for
the wire Structs. After a change to ``clients/python/minesweeper/wire.py`` run::

    python -m tests.contract.documents          # rewrite the schemas in both documents
    python -m tests.contract.documents --check  # only report what differs

Rewriting replaces every validation keyword with msgspec's and keeps what the
documents add for readers: ``title``, ``description``, ``examples`` and the like.

msgspec's schemas are first made portable, without changing what they accept, so
that client generators read them as they are: a type several fields share (``Status``,
``PresetName``, ...) becomes one component that those fields reference, so a generator
makes one type of it and not one per field; ``items: false`` after a closed
``prefixItems`` becomes the prefix's types (nothing can follow it: ``maxItems``); an
``anyOf`` of enums becomes one enum, and an enum of one value a ``const``; and
``default`` goes (generators read it as "always present"), so each description says
the default instead. Then come the rules msgspec cannot express and
the handlers enforce (``RULES``): the shapes of a new game.
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
import msgspec.inspect
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
    """The Structs of a union of messages (a lone Struct is a union of one)."""
    return list(typing.get_args(union)) or [union]


# Each socket's messages: (what the service sends, what a client sends).
SOCKETS = {
    "game": (wire.ServerMessage, wire.ClientMessage),
    "player": (wire.PlayerServerMessage, wire.PlayerClientMessage),
    "match": (wire.MatchServerMessage, wire.MatchClientMessage),
}


def live_messages() -> list[type[msgspec.Struct]]:
    found: list[type[msgspec.Struct]] = []
    for unions in SOCKETS.values():
        for union in unions:
            found += [t for t in members(union) if t not in found]
    return found


def live_only() -> list[type[msgspec.Struct]]:
    """Message types of the WebSockets that never appear in an HTTP body."""
    shared = {wire.Diff}
    return [t for t in live_messages() if t not in shared]


def http_roots() -> list[type[msgspec.Struct]]:
    """The Structs of request and response bodies (the move answer ``Diff`` included)."""
    live = set(live_only())
    return [t for t in wire_structs() if t not in live]


def live_roots() -> list[type[msgspec.Struct]]:
    return live_messages()


def msgspec_schemas(roots: Iterable[Any]) -> dict[str, Schema]:
    """msgspec's own schemas for ``roots`` and everything they contain, keyed by name."""
    _, components = msgspec.json.schema_components(list(roots), ref_template=REF)
    return components


def generated(roots: Iterable[Any]) -> dict[str, Schema]:
    """What a document's ``components/schemas`` must hold for ``roots``, annotations aside:
    msgspec's schemas made portable, with the shared types as components and the rules."""
    shared = shared_schemas()
    out: dict[str, Schema] = {}
    for name, schema in msgspec_schemas(roots).items():
        out[name] = share(tidy(schema), shared) | RULES.get(name, {})
    used = {ref.rsplit("/", 1)[1] for schema in out.values() for ref in _refs(schema)}
    out.update({name: shared[name] for name in SHARED if name in used})
    return out


def openapi_schemas() -> dict[str, Schema]:
    return generated(http_roots())


def asyncapi_schemas() -> dict[str, Schema]:
    return generated(live_roots())


def tags(union: Any) -> dict[str, str]:
    """A tagged union's tag values -> the names of its member schemas."""
    if not typing.get_args(union):
        info = msgspec.inspect.type_info(union)
        assert isinstance(info, msgspec.inspect.StructType) and info.tag is not None
        return {str(info.tag): union.__name__}
    (schema,), _ = msgspec.json.schema_components([union], ref_template=REF)
    mapping: dict[str, str] = schema["discriminator"]["mapping"]
    return {tag: ref.rsplit("/", 1)[1] for tag, ref in mapping.items()}


# ---- what the documents add to msgspec's schemas -----------------------------------------

# Types of the wire (minesweeper.wire) that several fields share, by their names there.
SHARED = ("PresetName", "FirstClick", "Status", "Outcome", "EndedBy", "MoveAction", "Mark",
          "HintKind", "ChangedCell", "PlayerName", "HeldReason", "RatingMode", "RecentKind",
          "MatchMode", "OnMine", "MatchStatus", "SeatStatus", "MatchChange", "SeekStatus")

def _given(name: str) -> Schema:
    """The field ``name`` is present and not null."""
    return {"required": [name], "properties": {name: {"not": {"type": "null"}}}}


def _none(name: str) -> Schema:
    """The field ``name`` is absent or null."""
    return {"properties": {name: {"type": "null"}}}


# Rules the handlers enforce that a Struct cannot say, by schema name; each is added
# to msgspec's schema. tests/contract/test_rules.py checks them against the handlers.
# A ``then`` of several conditions lists them under ``allOf``: redocly's validator takes a
# schema with ``properties`` as closed to other fields unless it is a member of an allOf,
# and would misjudge the examples (and it counts an allOf of one condition as illogical).
_SIZES = ("width", "height", "mines")
_BOARD_RULES = [
    {
        "title": "A preset board",
        "description": "With `preset`, no size.",
        "if": _given("preset"),
        "then": {"allOf": list(map(_none, _SIZES))},
    },
    {
        "title": "A custom board",
        "description": "`width`, `height` and `mines` come together or not at all.",
        "if": {"anyOf": list(map(_given, _SIZES))},
        "then": {"allOf": list(map(_given, _SIZES))},
    },
]

RULES: dict[str, Schema] = {
    "NewGame": {
        "allOf": [
            {
                "title": "A daily board",
                "description": "With `daily`, the board is today's: no `preset`, size or `seed`, "
                               "and no `first_click` other than `zero`.",
                "if": _given("daily"),
                "then": {"allOf": [
                    *map(_none, ("preset", "width", "height", "mines", "seed")),
                    {"properties": {"first_click": {"const": "zero"}}},
                ]},
            },
            _BOARD_RULES[0],
            {
                "title": "A no-guess board",
                "description": "With `no_guess: true`, no `first_click` other than `zero`.",
                "if": {"required": ["no_guess"], "properties": {"no_guess": {"const": True}}},
                "then": {"properties": {"first_click": {"const": "zero"}}},
            },
            _BOARD_RULES[1],
        ],
    },
    "NewMatch": {"allOf": _BOARD_RULES},
}


def tidy(schema: Any) -> Any:
    """``schema`` with the same meaning in the forms generators read."""
    if not isinstance(schema, dict):
        return schema
    out = _walk(schema, tidy)
    out.pop("default", None)
    prefix = out.get("prefixItems")
    if out.get("items") is False and isinstance(prefix, list) and out.get("maxItems") == len(
        prefix
    ):
        # Nothing can follow the prefix, so ``items`` may say anything: the prefix's types,
        # for the generators and linters that read ``items`` but not ``prefixItems``.
        kinds = [kind for i, kind in enumerate(prefix) if kind not in prefix[:i]]
        out["items"] = kinds[0] if len(kinds) == 1 else {"anyOf": kinds}
    options = out.get("anyOf")
    if isinstance(options, list) and options and all(set(o) == {"enum"} for o in options):
        del out["anyOf"]  # one enum of every value, not a choice between enums
        out["enum"] = sorted({value for o in options for value in o["enum"]})
    enum = out.get("enum")
    if isinstance(enum, list) and len(enum) == 1:
        del out["enum"]  # one value: a constant, not a type of its own
        out["const"] = enum[0]
    return out


def shared_schemas() -> dict[str, Schema]:
    """The shared types' components, from their types in the wire module."""
    return {name: tidy(msgspec.json.schema(getattr(wire, name))) for name in SHARED}


def share(schema: Any, shared: dict[str, Schema]) -> Any:
    """``schema`` with each subschema that is a shared type replaced by a reference to it."""
    for name, body in shared.items():
        if schema == body:
            return {"$ref": REF.format(name=name)}
    return _walk(schema, lambda sub: share(sub, shared))


def inline(schema: Any, components: dict[str, Schema]) -> Any:
    """``schema`` with each reference to a shared type replaced by the type itself."""
    if isinstance(schema, dict) and set(schema) == {"$ref"}:
        name = schema["$ref"].rsplit("/", 1)[1]
        if name in SHARED:
            return inline(components[name], components)
    return _walk(schema, lambda sub: inline(sub, components))


def _refs(schema: Any) -> Iterable[str]:
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref":
                yield value
            else:
                yield from _refs(value)
    elif isinstance(schema, list):
        for value in schema:
            yield from _refs(value)


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
