"""The Lua scripts' source: each lives in a ``.lua`` file beside the module that runs it."""

from __future__ import annotations

from importlib.resources import files


def source(name: str) -> str:
    return files(__package__).joinpath(name).read_text()
