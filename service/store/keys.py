"""Redis key names. Every key of a game carries the hash tag ``{<id>}`` so the whole
game lives in one Redis Cluster slot and one Lua script can touch all of it."""


def game(game_id: str) -> str:
    return f"ms:{{{game_id}}}:game"


def events(game_id: str) -> str:
    return f"ms:{{{game_id}}}:events"


def idempotency(game_id: str, key: str) -> str:
    return f"ms:{{{game_id}}}:idem:{key}"


def channel(game_id: str) -> str:
    return f"ms:{{{game_id}}}:live"


def game_id_of_channel(name: str) -> str:
    return name[name.index("{") + 1 : name.index("}")]
