"""The rules openapi.yaml adds to msgspec's schemas (``documents.RULES``) are the
service's: a new-game body is accepted exactly when the document admits it.

Bodies are drawn from every combination of the fields that decide the shape of a new
game (each absent, null or set), on boards that can always be made, so that a refusal
can only come from the shape.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from jsonschema import Draft202012Validator
from referencing import Registry
from referencing.jsonschema import DRAFT202012

from tests.contract import documents as docs

DOC_URI = "urn:contract:openapi"
ABSENT = object()


def field(*values: Any) -> st.SearchStrategy[Any]:
    return st.sampled_from([ABSENT, None, *values])


BODIES = st.fixed_dictionaries({
    "preset": field("beginner", "expert"),
    "daily": field("beginner"),
    "width": field(9, 12),
    "height": field(9),
    "mines": field(10),
    "seed": field(7),
    "first_click": st.sampled_from([ABSENT, "zero", "safe", "none"]),
    "no_guess": st.sampled_from([ABSENT, False, True]),
}).map(lambda body: {k: v for k, v in body.items() if v is not ABSENT})


@pytest.fixture(scope="module")
def new_game() -> Draft202012Validator:
    doc = docs.load(docs.OPENAPI)
    registry: Registry[Any] = Registry().with_resource(DOC_URI, DRAFT202012.create_resource(doc))
    ref = DOC_URI + docs.REF.format(name="NewGame")
    return Draft202012Validator({"$ref": ref}, registry=registry)


@pytest.fixture(scope="module")
def http(contract_server: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=contract_server, timeout=30) as client:
        yield client


@settings(max_examples=300, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=BODIES)
def test_a_new_game_is_made_exactly_when_the_document_admits_it(
    new_game: Draft202012Validator, http: httpx.Client, body: dict[str, Any]
) -> None:
    admitted = new_game.is_valid(body)
    answer = http.post("/games", json=body)
    assert answer.status_code == (201 if admitted else 422), (body, answer.text)


def test_every_shape_is_drawn(new_game: Draft202012Validator) -> None:
    """The bodies above are not all of one kind: each rule both admits and refuses some."""
    shapes = [{}, {"preset": "expert"}, {"width": 9, "height": 9, "mines": 10},
              {"daily": "beginner"}, {"no_guess": True}]
    refused = [{"preset": "expert", "width": 9}, {"width": 9, "height": 9},
               {"daily": "beginner", "seed": 7}, {"daily": "beginner", "first_click": "safe"},
               {"daily": "beginner", "preset": "expert"}, {"no_guess": True, "first_click": "none"},
               {"width": 9, "height": None, "mines": 10}]
    assert all(new_game.is_valid(body) for body in shapes)
    assert not any(new_game.is_valid(body) for body in refused)
