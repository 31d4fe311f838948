"""The wire: every shape the service and its clients exchange, and nothing else.

Request bodies, responses and WebSocket messages as msgspec Structs, the words they
use (``Status``, ``Action``, ``Mark``, ...) and the problem codes. The service's
``service.wire`` builds on this module, so each shape is defined once; it imports
nothing but msgspec, so a client installs and type-checks without the service.
``openapi.yaml`` and ``asyncapi.yaml`` describe exactly these types.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Final, Literal

from msgspec import Meta, Struct, field

__all__ = [
    "PROBLEM_STATUSES",
    "Action",
    "Auth",
    "BoardStats",
    "Cell",
    "ChangedCell",
    "ChordMessage",
    "Clicks",
    "ClientMessage",
    "Coordinate",
    "CreatedGame",
    "CreatedMatch",
    "CreatedPlayer",
    "CreatedSeek",
    "Cursor",
    "CursorMessage",
    "DailyDate",
    "Diff",
    "EndedBy",
    "Error",
    "Fatal",
    "FirstClick",
    "FlagCell",
    "FlagMessage",
    "GameView",
    "Health",
    "Heartbeat",
    "Held",
    "HeldReason",
    "Hint",
    "HintKind",
    "Hinted",
    "Leaderboard",
    "LeaderboardEntry",
    "Mark",
    "MatchChange",
    "MatchClientMessage",
    "MatchHeartbeat",
    "MatchMode",
    "MatchServerMessage",
    "MatchSnapshot",
    "MatchStatus",
    "MatchUpdate",
    "MatchView",
    "Matched",
    "MineCount",
    "MoveAction",
    "NewGame",
    "NewMatch",
    "NewPlayer",
    "NewSeek",
    "OnMine",
    "Outcome",
    "PauseAction",
    "PlayedMove",
    "PlayerClientMessage",
    "PlayerHeartbeat",
    "PlayerId",
    "PlayerName",
    "PlayerRename",
    "PlayerServerMessage",
    "PlayerSnapshot",
    "PlayerStats",
    "PlayerView",
    "PresetName",
    "PresetStats",
    "Problem",
    "Progress",
    "Rating",
    "RatingEntry",
    "RatingList",
    "RatingMode",
    "RecentGame",
    "RecentKind",
    "Replay",
    "ReplayMove",
    "RequestId",
    "Reset",
    "Result",
    "RevealMessage",
    "Seat",
    "SeatPlayer",
    "SeatStatus",
    "Seed",
    "SeekStatus",
    "SeekView",
    "ServerMessage",
    "Size",
    "Snapshot",
    "Stats",
    "Status",
    "Timestamp",
    "code_of_status",
]

Status = Literal["ready", "playing", "won", "lost"]
Action = Literal["reveal", "flag", "chord"]
Mark = Literal["flag", "question", "none"]
PresetName = Literal["beginner", "intermediate", "expert"]
FirstClick = Literal["zero", "safe", "none"]
# A hinted cell: certainly safe, certainly a mine, or the safest guess.
HintKind = Literal["safe", "mine", "guess"]
PauseAction = Literal["pause", "resume"]
# What a diff can record: a move, the game being paused or resumed, or its match's
# end ending it as it stood (a seat out of time or resigned, a co-op game unfinished).
MoveAction = Literal[Action, PauseAction, "end"]
# How a finished game ended.
Outcome = Literal["won", "lost"]
# What ended a finished game: a player's move, or its match's end.
EndedBy = Literal["move", "match"]

Coordinate = Annotated[int, Meta(ge=0, le=1_000_000)]
Seed = Annotated[int, Meta(ge=0, le=2**63 - 1)]
Size = Annotated[int, Meta(ge=2, le=1_000_000)]
MineCount = Annotated[int, Meta(ge=1, le=1_000_000)]
# A player's name: unique ignoring case.
# "(?!\n)": Python's "$" also matches before a last newline, and "bob\n" is not "bob".
PlayerName = Annotated[
    str, Meta(min_length=2, max_length=20, pattern=r"^[A-Za-z0-9_\-]+(?!\n)$")
]
PlayerId = Annotated[str, Meta(pattern=r"^[0-9a-f]{32}$")]
# Why a human account's win was kept off the human leaderboards.
HeldReason = Literal["faster_than_human_records", "machine_cadence"]
# The modes that rate players.
RatingMode = Literal["race"]
# A match: every seat races its own copy of one board, or all seats play one game.
MatchMode = Literal["race", "coop"]
# What a revealed mine does in a match: costs time (a penalty), or ends the seat's game.
OnMine = Literal["penalty", "lose"]
MatchStatus = Literal["waiting", "countdown", "playing", "finished"]
SeatStatus = Literal["waiting", "playing", "won", "lost", "resigned"]
# What changed in a match, as its updates say.
MatchChange = Literal[
    "joined", "left", "countdown", "started", "progress", "finished", "resigned", "ended",
    "rematch",
]
SeekStatus = Literal["waiting", "matched", "expired", "cancelled"]
# What a player's recent entry was: a game, or a match.
RecentKind = Literal["game", "match"]
Timestamp = Annotated[str, Meta(extra_json_schema={"format": "date-time"})]
# A cell that changed: [x, y, chars]. ``chars`` is the cell's new character; in a change
# of more than 1,024 cells it may be a run, the new characters of (x, y) and of the
# cells right after it in row y. ``chars[i]`` goes to (x + i, y) either way.
ChangedCell = tuple[int, int, str]
RequestId = Annotated[str, Meta(max_length=64)] | int
DailyDate = Annotated[str, Meta(pattern=r"^\d{4}-\d{2}-\d{2}$")]


# ---- requests ---------------------------------------------------------------------------


class NewGame(Struct, forbid_unknown_fields=True, kw_only=True):
    """``POST /games``: a preset, or a custom ``width``/``height``/``mines``. The game
    belongs to the player whose token the request carries, if any."""

    preset: PresetName | None = None
    width: Size | None = None
    height: Size | None = None
    mines: MineCount | None = None
    seed: Seed | None = None
    first_click: FirstClick = "zero"
    no_guess: bool = False
    question_marks: bool = False
    # Today's shared board for this preset: the same mines for every player. In JSON
    # ``daily``; elsewhere ``daily`` is the date of such a board.
    daily_preset: PresetName | None = field(default=None, name="daily")


class NewMatch(Struct, forbid_unknown_fields=True, kw_only=True):
    """``POST /matches``: the mode and the board (a preset, or a custom size) every seat
    plays, a beginner board when neither is given; ``rated`` is for races only and
    defaults to true for them (a co-op match is never rated, whatever ``rated`` says)."""

    mode: MatchMode
    preset: PresetName | None = None
    width: Size | None = None
    height: Size | None = None
    mines: MineCount | None = None
    no_guess: bool = True
    seats: Annotated[int, Meta(ge=2, le=8)] = 2
    rated: bool | None = None
    on_mine: OnMine = "penalty"
    time_limit_s: Annotated[int, Meta(ge=5, le=3600)] = 600


class NewSeek(Struct, forbid_unknown_fields=True, kw_only=True):
    """``POST /seeks``: the kind of race a player wants an opponent for."""

    mode: Literal["race"] = "race"
    preset: PresetName = "beginner"
    no_guess: bool = True


class Cell(Struct, forbid_unknown_fields=True):
    """The body of ``reveal`` and ``chord``."""

    x: Coordinate
    y: Coordinate


class NewPlayer(Struct, forbid_unknown_fields=True, kw_only=True):
    """``POST /players``: without a ``name`` the service makes up a guest's name."""

    name: PlayerName | None = None
    bot: bool = False


class PlayerRename(Struct, forbid_unknown_fields=True):
    """``PATCH /players/me``."""

    name: PlayerName


class FlagCell(Struct, forbid_unknown_fields=True):
    """The body of ``flag``: without ``mark`` the cell's mark cycles."""

    x: Coordinate
    y: Coordinate
    mark: Mark | None = None


# ---- responses --------------------------------------------------------------------------


class Clicks(Struct):
    reveal: int
    flag: int
    chord: int
    total: int
    useful: int


class Stats(Struct):
    clicks: Clicks
    hints: int
    assisted: bool
    bbbv: int | None
    bbbv_done: int
    bbbv_per_second: float | None
    efficiency: float | None
    # The 3BV a shared board's start opened for the player (a daily board's, a match's):
    # in ``bbbv_done``, but not the player's, so left out of 3BV/s and efficiency.
    bbbv_given: int = 0


class Held(Struct):
    """Why a human account's win stays off the human leaderboards: no person plays that fast."""

    reason: HeldReason
    detail: str


class GameView(Struct):
    id: str
    version: int
    status: Status
    width: int
    height: int
    mines: int
    mines_left: int
    preset: PresetName | None
    first_click: FirstClick
    no_guess: bool
    question_marks: bool
    paused: bool
    # The player the game belongs to, and the name they had when it was made.
    player_id: str | None
    player: str | None
    daily: DailyDate | None
    # The game a reset started from this one, once it was reset.
    next_id: str | None
    held: Held | None
    board: list[str]
    created_at: Timestamp
    started_at: Timestamp | None
    ended_at: Timestamp | None
    # Null while the game is on; ``"match"`` when its match's end stopped it (a seat out
    # of time or resigned, a co-op game unfinished), however many mines it had hit.
    ended_by: EndedBy | None
    elapsed_ms: int
    server_time: Timestamp
    stats: Stats
    # Whether a win of this game goes on a leaderboard (unless ``held``): a player's game
    # of a preset, no chosen seed, no hint, no pause on its clock, and on a daily board
    # the player's first game of the day.
    ranked: bool = False


class CreatedGame(Struct):
    game: GameView
    token: str


class PlayedMove(Struct, omit_defaults=True):
    """The move behind a diff; ``pause``, ``resume`` and ``end`` name no cell, and
    ``mark`` is there when a flag move set a mark rather than cycling it."""

    action: MoveAction
    x: int | None
    y: int | None
    at: Timestamp
    mark: Mark | None = None


class Diff(Struct, tag="diff", tag_field="type"):
    """A change's answer over HTTP and the live message for it: the same bytes.

    ``cells`` lists the cells a move changed (a big change compact, as runs: see
    ``ChangedCell``); a pause or resume lists none, and
    ``paused`` tells a client to hide its board until a diff says otherwise.
    """

    version: int
    status: Status
    paused: bool
    move: PlayedMove
    cells: list[ChangedCell]
    mines_left: int
    started_at: Timestamp | None
    ended_at: Timestamp | None
    elapsed_ms: int
    # Only on the move that ends the game.
    stats: Stats | None = None
    # On a co-op match's game: the player who moved.
    by: str | None = None


class Hint(Struct):
    """A cell to play next: certainly safe, certainly a mine, or the safest guess."""

    x: int
    y: int
    kind: HintKind
    # The chance that the cell holds a mine: 0 or 1 when certain.
    mine_probability: float
    reason: str


class ReplayMove(Struct, omit_defaults=True):
    """One recorded change, with the cells it changed exactly as its diff listed them
    (runs too, when it listed them compact). ``action`` ``end``: the game's match ended it
    as it stood, or showed a race seat that lost on a mine the rest of the mines."""

    version: int
    action: MoveAction
    x: int | None
    y: int | None
    at: Timestamp
    cells: list[ChangedCell]
    mark: Mark | None = None


class Fatal(Struct):
    """The click that lost the game, and whether any cell was certainly safe before it."""

    x: int
    y: int
    forced_guess: bool


class Replay(Struct):
    """Everything needed to replay a finished game exactly."""

    id: str
    width: int
    height: int
    mines: int
    preset: PresetName | None
    first_click: FirstClick
    no_guess: bool
    question_marks: bool
    daily: DailyDate | None
    player_id: str | None
    player: str | None
    seed: int
    status: Outcome
    # Rows of the board: ``*`` a mine, ``.`` a safe cell.
    layout: list[str]
    # Cells opened for the player before the first move (the start of a daily board).
    opened: list[ChangedCell]
    moves: list[ReplayMove]
    # False when a very long game's oldest moves are no longer kept.
    complete: bool
    created_at: Timestamp
    started_at: Timestamp | None
    ended_at: Timestamp | None
    elapsed_ms: int
    stats: Stats
    fatal: Fatal | None


class LeaderboardEntry(Struct):
    rank: int
    player_id: str
    # The player's name now: a rename shows on every entry.
    player: str
    elapsed_ms: int
    bbbv: int
    bbbv_per_second: float
    # None on a daily board until its day is over: the game would show the board.
    game_id: str | None
    ended_at: Timestamp


class Leaderboard(Struct):
    preset: PresetName
    no_guess: bool
    # The bots' board, or the humans'.
    bot: bool
    date: DailyDate | None
    entries: list[LeaderboardEntry]


class BoardStats(Struct):
    """A player's finished games on one board kind. Bests count only wins that could be
    ranked (no hint, no pause, no chosen seed, not held)."""

    played: int
    won: int
    best_ms: int | None
    best_bbbv_per_s: float | None
    # Wins in a row, now and at best.
    streak: int
    best_streak: int


class PresetStats(Struct):
    classic: BoardStats
    no_guess: BoardStats


class PlayerStats(Struct):
    beginner: PresetStats
    intermediate: PresetStats
    expert: PresetStats


class Rating(Struct):
    rating: float
    deviation: float
    games: int
    #: Fewer than five rated races: the rating may still move far, and the player is
    #: not on ``GET /ratings/race`` yet.
    provisional: bool = False


class RecentGame(Struct):
    """One of a player's last finished games and matches: ``id`` is the game's id (its
    view and replay), or the match's (``GET /matches/{id}``) when ``kind`` is ``match``."""

    id: str
    kind: RecentKind
    preset: PresetName | None
    no_guess: bool
    daily: DailyDate | None
    result: Outcome
    elapsed_ms: int
    bbbv_per_second: float | None
    assisted: bool
    ended_at: Timestamp


class PlayerView(Struct):
    """A player as anybody may see them: never their token."""

    id: str
    name: str
    bot: bool
    created_at: Timestamp
    stats: PlayerStats
    ratings: dict[RatingMode, Rating]
    # Newest first, at most 20.
    recent: list[RecentGame]


class CreatedPlayer(Struct):
    player: PlayerView
    token: str


class SeatPlayer(Struct):
    id: str
    name: str
    # The player's race rating when they took the seat (null: not rated yet).
    rating: float | None


class Progress(Struct):
    """How far a seat got: counts only, never cells."""

    bbbv_done: int
    bbbv: int


class Seat(Struct):
    player: SeatPlayer
    status: SeatStatus
    progress: Progress
    # Mines revealed under the penalty rule; each adds 5 s to ``time_ms``.
    penalties: int
    # The seat's time with its penalties, once it finished.
    time_ms: int | None
    place: int | None
    rating_before: float | None
    rating_after: float | None
    # Co-op: always; race: only to the seat's own player until the match ends.
    game_id: str | None


class MatchView(Struct):
    id: str
    mode: MatchMode
    status: MatchStatus
    version: int
    width: int
    height: int
    mines: int
    preset: PresetName | None
    no_guess: bool
    rated: bool
    on_mine: OnMine
    time_limit_s: int
    created_at: Timestamp
    starts_at: Timestamp | None
    ends_at: Timestamp | None
    ended_at: Timestamp | None
    server_time: Timestamp
    seats: list[Seat]
    # How many seats it has (``NewMatch.seats``): it starts by itself when all are taken.
    capacity: int
    # The match the players play next, once one of them asked for it
    # (``POST /matches/{id}/rematch``); null until then.
    rematch_id: str | None
    # The finished match this one is the rematch of: only its players may sit down.
    rematch_of: str | None


class CreatedMatch(Struct):
    match: MatchView


class SeekView(Struct):
    id: str
    status: SeekStatus
    # The match a matched seek became.
    match_id: str | None


class CreatedSeek(Struct):
    seek: SeekView


class RatingEntry(Struct):
    rank: int
    player_id: str
    player: str
    rating: float
    deviation: float
    games: int


class RatingList(Struct):
    mode: RatingMode
    bot: bool
    entries: list[RatingEntry]


class Problem(Struct, omit_defaults=True):
    """RFC 9457 problem details with a stable ``code``."""

    title: str
    status: int
    code: str
    detail: str
    type: str = "about:blank"
    #: ``already_playing``: the match that holds the player, to go back to or leave.
    match_id: str | None = None


class Health(Struct):
    status: Literal["ok"]


# ---- live messages (WebSocket) ----------------------------------------------------------


class Snapshot(Struct, tag="snapshot", tag_field="type"):
    game: GameView


class Heartbeat(Struct, tag="heartbeat", tag_field="type"):
    """Sent when the game is quiet, so a client can tell it missed nothing."""

    version: int
    server_time: Timestamp


class Reset(Struct, tag="reset", tag_field="type"):
    """The game was reset: play goes on in the game ``next_id``."""

    next_id: str


class Hinted(Struct, tag="hinted", tag_field="type"):
    """The player was given a hint: the game has had ``hints`` so far, and is assisted.

    Not a change of the game's version: it comes between diffs, and a client keeps the
    largest count it has seen (a view's ``stats.hints`` says the same)."""

    hints: int


class Result(Struct, tag="result", tag_field="type"):
    """The answer to a move sent over the socket, correlated by the client's ``id``."""

    id: RequestId | None
    diff: Diff


class Error(Struct, tag="error", tag_field="type"):
    id: RequestId | None
    problem: Problem


ServerMessage = Snapshot | Diff | Heartbeat | Reset | Hinted | Result | Error


class Auth(Struct, tag="auth", tag_field="type", forbid_unknown_fields=True):
    token: Annotated[str, Meta(max_length=128)]
    id: RequestId | None = None


class RevealMessage(Struct, tag="reveal", tag_field="type", forbid_unknown_fields=True):
    x: Coordinate
    y: Coordinate
    id: RequestId | None = None


class FlagMessage(Struct, tag="flag", tag_field="type", forbid_unknown_fields=True):
    x: Coordinate
    y: Coordinate
    mark: Mark | None = None
    id: RequestId | None = None


class ChordMessage(Struct, tag="chord", tag_field="type", forbid_unknown_fields=True):
    x: Coordinate
    y: Coordinate
    id: RequestId | None = None


ClientMessage = Auth | RevealMessage | FlagMessage | ChordMessage


class PlayerSnapshot(Struct, tag="player", tag_field="type"):
    """The player, on a player's socket: first, and again whenever they changed."""

    player: PlayerView


class PlayerHeartbeat(Struct, tag="heartbeat", tag_field="type"):
    """Sent when a player's socket is quiet."""

    server_time: Timestamp


class Matched(Struct, tag="matched", tag_field="type"):
    """A player's seek was paired: the match to play."""

    match_id: str


PlayerServerMessage = PlayerSnapshot | PlayerHeartbeat | Matched | Error
PlayerClientMessage = Auth


class MatchSnapshot(Struct, tag="match", tag_field="type"):
    """The match, first on its socket (and again after an ``auth``), as this socket's
    viewer may see it."""

    match: MatchView


class MatchUpdate(Struct, tag="match_update", tag_field="type"):
    """One change to the match, in version order: what changed, which seat, and the match
    as it is now. The match is over once ``match.status`` is ``"finished"``, on whichever
    update says so: the last seat's ``finished`` or ``resigned`` when every seat is done,
    ``ended`` when its time limit ends it, or the last seat's ``left`` before the start."""

    version: int
    change: MatchChange
    seat: int | None
    match: MatchView


class MatchHeartbeat(Struct, tag="heartbeat", tag_field="type"):
    """Sent when a match's socket is quiet."""

    version: int
    server_time: Timestamp


class Cursor(Struct, tag="cursor", tag_field="type"):
    """Where a co-op teammate points, relayed to the others (not stored)."""

    by: str
    x: int
    y: int


class CursorMessage(Struct, tag="cursor", tag_field="type", forbid_unknown_fields=True):
    """A co-op player's pointer, for the teammates."""

    x: Coordinate
    y: Coordinate


MatchServerMessage = MatchSnapshot | MatchUpdate | MatchHeartbeat | Cursor | Error
MatchClientMessage = Auth | CursorMessage


# ---- problems ---------------------------------------------------------------------------

#: Every problem ``code`` and the HTTP statuses it is answered with.
PROBLEM_STATUSES: Final[Mapping[str, tuple[int, ...]]] = {
    "invalid_request": (400, 405, 422),
    "unauthorized": (401,),
    "forbidden": (403,),
    "not_found": (404,),
    "game_over": (409,),
    "paused": (409,),
    "game_in_progress": (409,),
    "name_taken": (409,),
    "match_full": (409,),
    "match_started": (409,),
    "already_seated": (409,),
    "already_playing": (409,),
    "not_started": (409,),
    "not_seated": (409,),
    "version_conflict": (412,),
    "too_large": (413,),
    "rate_limited": (429,),
    "store_unavailable": (503,),
}


def code_of_status(status: int) -> str | None:
    """The code an error answer without a problem body stands for (a proxy's, say):
    the one code answered with ``status``, or ``None`` when none or several are."""
    codes = [code for code, statuses in PROBLEM_STATUSES.items() if status in statuses]
    return codes[0] if len(codes) == 1 else None
