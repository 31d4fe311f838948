"""One definition of each thing the SDK and the service share, or a test that the two
agree: the wire shapes, the words of the game, the problem codes, the two clients."""

from __future__ import annotations

import inspect
import typing

import minesweeper
import msgspec
import pytest
from minesweeper import errors, wire

from service import engine
from service import wire as service_wire
from service.engine import solver
from tests.clients import sync_client


def test_the_service_sends_the_sdk_shapes_themselves() -> None:
    for name in wire.__all__:
        assert getattr(service_wire, name) is getattr(wire, name), name
    structs = [obj for obj in vars(service_wire).values()
               if inspect.isclass(obj) and issubclass(obj, msgspec.Struct)]
    assert structs and all(cls.__module__ == wire.__name__ for cls in structs)


@pytest.mark.parametrize(
    ("on_the_wire", "in_the_engine"),
    [
        (wire.Status, engine.Status),
        (wire.Action, engine.Action),
        (wire.Mark, engine.Mark),
        (wire.PresetName, engine.PresetName),
        (wire.FirstClick, engine.FirstClick),
        (wire.HintKind, solver.HintKind),
        (wire.ChangedCell, engine.ChangedCell),
    ],
)
def test_the_engine_uses_the_words_of_the_wire(on_the_wire: object, in_the_engine: object) -> None:
    assert typing.get_args(in_the_engine) == typing.get_args(on_the_wire)


def test_presets_on_the_wire_are_the_engine_presets() -> None:
    assert list(typing.get_args(wire.PresetName)) == list(engine.PRESETS)


def test_one_error_class_per_problem_code() -> None:
    classes = {cls.code: cls for cls in vars(errors).values()
               if inspect.isclass(cls) and issubclass(cls, errors.ApiError) and cls.code}
    assert set(classes) == set(wire.PROBLEM_STATUSES)
    for code, cls in classes.items():
        assert getattr(minesweeper, cls.__name__) is cls
        problem = wire.Problem(title="t", status=wire.PROBLEM_STATUSES[code][0], code=code,
                               detail="d")
        assert type(errors.error_for(problem)) is cls
        # The class's documentation starts with its statuses.
        assert (cls.__doc__ or "").startswith("/".join(map(str, wire.PROBLEM_STATUSES[code])))


@pytest.mark.parametrize(
    ("status", "code"),
    [(400, "invalid_request"), (422, "invalid_request"), (404, "not_found"),
     (429, "rate_limited"), (503, "store_unavailable"), (409, None), (418, None)],
)
def test_a_status_alone_names_a_code_only_when_one_code_has_it(
    status: int, code: str | None
) -> None:
    assert wire.code_of_status(status) == code


def test_the_sync_client_is_written_from_the_async_one() -> None:
    made = sync_client.synchronous(sync_client.ASYNC.read_text())
    assert sync_client.SYNC.read_text() == made, "run: python -m tests.clients.sync_client"


def test_the_two_clients_have_the_same_methods() -> None:
    """Beyond the text: the generated class really has every method of the async one
    but the live ones, with the same signatures."""
    async_only = {"connect", "watch", "watch_match", "player_events"}
    renamed = {"__aenter__": "__enter__", "__aexit__": "__exit__", "aclose": "close"}
    asynchronous = {renamed.get(name, name): inspect.signature(fn)
                    for name, fn in vars(minesweeper.AsyncClient).items()
                    if callable(fn) and name not in async_only}
    # How long a live socket may stay silent: only the async client has sockets.
    init = asynchronous["__init__"]
    asynchronous["__init__"] = init.replace(parameters=[
        p for p in init.parameters.values() if p.name != "heartbeat_timeout"])
    synchronous = {name: inspect.signature(fn)
                   for name, fn in vars(minesweeper.Client).items() if callable(fn)}
    assert set(synchronous) == set(asynchronous)
    for name, signature in synchronous.items():
        assert str(signature).replace("AsyncClient", "Client") == str(asynchronous[name]) \
            .replace("AsyncClient", "Client"), name
