"""Every Redis key the service uses, and nothing else builds one.

Every key of a game carries the hash tag ``{<id>}``, so the whole game lives in one
Redis Cluster slot and one Lua script can touch all of it. A leaderboard's keys
share their own tag, as do a client's rate-limit buckets.
"""

# ---- a game ---------------------------------------------------------------------------------


def game(game_id: str) -> str:
    """The hash: write counter, snapshot, token hash, player, successor, daily date..."""
    return f"ms:{{{game_id}}}:game"


def events(game_id: str) -> str:
    """The stream of the game's diffs (entry id ``<version>-0``) and resets."""
    return f"ms:{{{game_id}}}:events"


def idempotency(game_id: str, key: str) -> str:
    return f"ms:{{{game_id}}}:idem:{key}"


def channel(game_id: str) -> str:
    """The pub/sub channel that carries the stream's entries to live subscribers."""
    return f"ms:{{{game_id}}}:live"


def game_id_of_channel(name: str) -> str:
    return name[name.index("{") + 1 : name.index("}")]


# ---- rate limits ----------------------------------------------------------------------------


def client_requests(address: str) -> str:
    """The bucket of every request from a client address."""
    return f"ms:{{rl:{address}}}:requests"


def client_failures(address: str) -> str:
    """The bucket of a client address's failed tokens and unknown games (same tag as
    :func:`client_requests`, so one script call takes both)."""
    return f"ms:{{rl:{address}}}:failures"


def token_moves(token_hash: bytes) -> str:
    """The bucket of the moves made with one game token."""
    return f"ms:{{rl:{token_hash[:12].hex()}}}:moves"


# ---- leaderboards and daily boards ----------------------------------------------------------


def leaderboard_times(board: str) -> str:
    """A leaderboard's sorted set: game ids by time."""
    return f"ms:{{lb:{board}}}:times"


def leaderboard_entries(board: str) -> str:
    """A leaderboard's hash: game id -> the entry's details."""
    return f"ms:{{lb:{board}}}:entries"


def daily_secret() -> str:
    """The key that turns a date into a daily board's seed."""
    return "ms:secret:daily"
