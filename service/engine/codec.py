"""The stored form of a game: MessagePack of the array-like Game struct."""

from __future__ import annotations

import msgspec

from .game import Game

_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(Game)


def encode(game: Game) -> bytes:
    return _encoder.encode(game)


def decode(data: bytes) -> Game:
    return _decoder.decode(data)
