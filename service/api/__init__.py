"""The HTTP and WebSocket API: thin handlers over the engine and the store."""

from .app import create_app

__all__ = ["create_app"]
