"""Every Redis key the service uses, and nothing else builds one.

Every key of a game carries the hash tag ``{<id>}``, so the whole game lives in one
Redis Cluster slot and one Lua script can touch all of it. A player's keys share the
tag ``{p:<id>}``, the names of all players the tag ``{names}`` (so a name is claimed
and released in one script), a leaderboard's keys their own tag, as do a client's
rate-limit buckets.
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



# ---- a player -------------------------------------------------------------------------------


def player(player_id: str) -> str:
    """The hash: token hash, bot, creation time, and the counters of the player's stats."""
    return f"ms:{{p:{player_id}}}:player"


def player_recent(player_id: str) -> str:
    """The list of the player's last finished games, newest first."""
    return f"ms:{{p:{player_id}}}:recent"


def player_pending(player_id: str) -> str:
    """On a cluster: the games whose ending may not be counted yet (sorted set, by time)."""
    return f"ms:{{p:{player_id}}}:pending"


def player_counted(player_id: str) -> str:
    """The games already counted in the player's stats (on a cluster) and the matches
    already in their recent list (sorted set, by time)."""
    return f"ms:{{p:{player_id}}}:counted"


def player_seat(player_id: str) -> str:
    """The one unfinished match the player sits in: ``"<match id> <since ms>"``, expiring
    with the match's life."""
    return f"ms:{{p:{player_id}}}:seat"


def player_channel(player_id: str) -> str:
    """The pub/sub channel of the player's socket."""
    return f"ms:{{p:{player_id}}}:live"


def name_owners() -> str:
    """The hash: a name in lower case -> the id of the player who has it."""
    return "ms:{names}:owners"


def player_names() -> str:
    """The hash: a player's id -> their name as they wrote it."""
    return "ms:{names}:names"


# ---- rate limits ----------------------------------------------------------------------------


def client_requests(address: str) -> str:
    """The bucket of every request from a client address."""
    return f"ms:{{rl:{address}}}:requests"


def client_failures(address: str) -> str:
    """The bucket of a client address's failed tokens and unknown games (same tag as
    :func:`client_requests`, so one script call takes both)."""
    return f"ms:{{rl:{address}}}:failures"


def token_moves(token_hash: bytes) -> str:
    """The bucket of the moves made with one token (a game's or a player's)."""
    return f"ms:{{rl:{token_hash[:12].hex()}}}:moves"


def client_registrations(address: str) -> str:
    """The bucket of the players registered from a client address."""
    return f"ms:{{rl:{address}}}:registrations"


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


def daily_go(board: str, player_id: str) -> str:
    """Set once a player has started a daily board (``board`` names its day)."""
    return f"ms:dailygo:{board}:{player_id}"


# ---- matches, seeks and ratings -------------------------------------------------------------


def match(match_id: str) -> str:
    """The hash: write counter and the match's state (msgpack)."""
    return f"ms:{{m:{match_id}}}:match"


def match_events(match_id: str) -> str:
    """The stream of the match's updates (entry id ``<version>-0``)."""
    return f"ms:{{m:{match_id}}}:events"


def match_channel(match_id: str) -> str:
    """The pub/sub channel of the match's updates and its co-op cursors."""
    return f"ms:{{m:{match_id}}}:live"


def match_deadlines() -> str:
    """The sorted set of matches by the time something is due (their start or their end)."""
    return "ms:{deadlines}:matches"


def seek(seek_id: str) -> str:
    """A seek's hash; every seek shares the tag ``{seeks}``, so pairing is one script."""
    return f"ms:{{seeks}}:seek:{seek_id}"


def seek_pool(pool: str) -> str:
    """The sorted set of the waiting seeks of one kind (settings and bot or human), by rating."""
    return f"ms:{{seeks}}:pool:{pool}"


def player_seek(player_id: str) -> str:
    """The player's latest seek's id (on the seeks' slot, so that adding a seek and
    replacing the one before is one script)."""
    return f"ms:{{seeks}}:player:{player_id}"


def ratings(pool: str) -> str:
    """The hash: player id -> rating (msgpack ``[mu, sigma, games]``), per mode and pool."""
    return f"ms:{{r:{pool}}}:ratings"


def rating_top(pool: str) -> str:
    """The sorted set of a pool's players by rating."""
    return f"ms:{{r:{pool}}}:top"


def ratings_applied(pool: str) -> str:
    """The set of matches whose results a pool's ratings already hold."""
    return f"ms:{{r:{pool}}}:applied"


# ---- the service itself ---------------------------------------------------------------------


def readiness() -> str:
    """Written by the readiness check (and soon expired): whether Redis takes writes."""
    return "ms:{readiness}:write"
