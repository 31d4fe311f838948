"""Responses rendered by msgspec: one class, one overridden method."""

from __future__ import annotations

from typing import Any

from starlette.responses import Response

from ..wire import json_encoder


class MsgspecResponse(Response):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        if isinstance(content, bytes):
            return content
        return json_encoder.encode(content)


class ProblemResponse(MsgspecResponse):
    media_type = "application/problem+json"
