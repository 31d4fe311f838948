"""Race ratings: Weng-Lin's Plackett-Luce model (``openskill``), made for free-for-all
results of any number of players, on a 1500 scale. Humans and bots are separate pools.

A rated race's changes are worked out once, by the change that ends it (they go in its
seats' ``rating_before``/``rating_after`` and deviations), and written to the pool by
:func:`apply`, which Redis takes once per match whoever calls it (``rate.lua``), on the
ratings as they are then.
"""

from __future__ import annotations

import msgspec
from openskill.models import PlackettLuce
from starlette.requests import Request
from starlette.responses import Response

from .. import wire
from ..store import MatchState, PlayerRecord
from . import backends, daily, views
from .backends import Backends
from .problems import ApiError
from .requests import now_ms, query_flag
from .responses import MsgspecResponse

MU = 1500.0
SIGMA = MU / 3
MODEL = PlackettLuce(mu=MU, sigma=SIGMA, beta=SIGMA / 2, tau=SIGMA / 100)
MAX_LIMIT = 100
# A rating is provisional until its player has this many rated races (lichess marks
# such a rating too): one lucky race says little, so the list ranks established ones.
ESTABLISHED_GAMES = 5


def pool(bot: bool) -> str:
    return f"race:{'bot' if bot else 'human'}"


def rated_together(bots: list[bool]) -> bool:
    """Players are rated against each other only within one pool."""
    return len(set(bots)) == 1


def shown(mu: float) -> float:
    return round(mu, 1)


def with_changes(
    state: MatchState, current: dict[str, tuple[float, float, int]],
    held: frozenset[int] = frozenset(),
) -> MatchState:
    """The finished race with every seat's rating before and after, from its place.
    The ``held`` seats (a human's win no person could play) are left out, as they are
    of the human leaderboards: the others are rated among themselves, and with fewer
    than two of them the race rates nobody."""
    rated = [i for i in range(len(state.seats)) if i not in held]
    if len(rated) < 2:
        return msgspec.structs.replace(state, rated=False)
    seats = list(state.seats)
    before = [current.get(seats[i].player_id, (MU, SIGMA, 0)) for i in rated]
    teams = [[MODEL.rating(mu=mu, sigma=sigma)] for mu, sigma, _ in before]
    ranks = [float(seats[i].place or len(seats)) for i in rated]
    after = MODEL.rate(teams, ranks=ranks)
    for i, old, new in zip(rated, before, after, strict=True):
        seats[i] = msgspec.structs.replace(
            seats[i], rating_before=old[0], rating_after=new[0].mu, deviation_before=old[1],
            deviation_after=new[0].sigma,
        )
    return msgspec.structs.replace(state, seats=tuple(seats))


async def apply(b: Backends, state: MatchState) -> None:
    """Write a finished rated race's changes to its pool (once, whoever calls). They
    go on the ratings as they are by then, which another race of the same player may
    have changed since this one's were worked out: both count."""
    if not state.rated or state.mode != "race" or state.status != "finished":
        return
    changes = [
        (s.player_id, s.rating_after - (s.rating_before or MU), s.deviation_before,
         s.deviation_after or SIGMA)
        for s in state.seats if s.rating_after is not None  # a held seat is not rated
    ]
    await b.matches.apply_ratings(pool(state.seats[0].bot), state.id, MU, changes,
                                  established=ESTABLISHED_GAMES)


async def rating_of(b: Backends, player_id: str, bot: bool) -> wire.Rating | None:
    found = (await b.matches.ratings(pool(bot), [player_id])).get(player_id)
    if found is None:
        return None
    mu, sigma, games = found
    return wire.Rating(rating=shown(mu), deviation=round(sigma, 1), games=games,
                       provisional=games < ESTABLISHED_GAMES)


async def player_view(
    b: Backends, player: PlayerRecord, *, public: bool = False
) -> wire.PlayerView:
    """The player's view, with their ratings: their own, or (``public``) anybody's."""
    rating = await rating_of(b, player.id, player.bot)
    today = daily.today(now_ms()) if public else None
    return views.player_view(player, {"race": rating} if rating else None, today=today)


async def race(request: Request) -> Response:
    """``GET /ratings/race``: the best rated players, ``?bot=true`` for the bots."""
    params = request.query_params
    unknown = set(params) - {"limit", "bot"}
    if unknown:
        raise ApiError(422, "invalid_request", f"unknown parameter {sorted(unknown)[0]!r}")
    raw = params.get("limit", "20")
    # Thousands of digits are no limit, and too many for int() (a ValueError, not a 422).
    if not (raw.isascii() and raw.isdigit()) or len(raw) > 6 or not 1 <= int(raw) <= MAX_LIMIT:
        raise ApiError(422, "invalid_request", f"limit takes 1 to {MAX_LIMIT}")
    bot = query_flag(request, "bot")
    b = backends.of(request)
    top = await b.matches.top(pool(bot), int(raw), established=ESTABLISHED_GAMES)
    names = await b.players.names_of([pid for pid, *_ in top])
    entries: list[wire.RatingEntry] = []
    for i, (pid, mu, sigma, games) in enumerate(top):
        rating = shown(mu)
        # Equal ratings, as shown, share a place (1, 2, 2, 4).
        tied = entries and entries[-1].rating == rating
        entries.append(wire.RatingEntry(
            rank=entries[-1].rank if tied else i + 1, player_id=pid,
            player=names.get(pid, ""), rating=rating, deviation=round(sigma, 1), games=games,
        ))
    return MsgspecResponse(wire.RatingList(mode="race", bot=bot, entries=entries))
