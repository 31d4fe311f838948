"""Plain-text and ANSI rendering shared by the console commands."""

from __future__ import annotations

import os
import re
from datetime import datetime
from typing import TextIO

from .game import changed_count
from .wire import (
    BoardStats,
    Diff,
    GameView,
    Hint,
    Leaderboard,
    MatchStatus,
    MatchView,
    PlayerView,
    Replay,
    Seat,
    Stats,
)

RESET = "\x1b[0m"
# The classic colours of the numbers, then the marks.
STYLES = {
    "1": "\x1b[94m",
    "2": "\x1b[32m",
    "3": "\x1b[91m",
    "4": "\x1b[34m",
    "5": "\x1b[31m",
    "6": "\x1b[36m",
    "7": "\x1b[35m",
    "8": "\x1b[90m",
    "0": "\x1b[2m",
    "#": "\x1b[2m",
    "F": "\x1b[1;31m",
    "?": "\x1b[1;33m",
    "*": "\x1b[1m",
    "X": "\x1b[1;97;41m",
    "!": "\x1b[1;30;43m",
}


def use_colour(stream: TextIO) -> bool:
    """Colours on a terminal, unless ``NO_COLOR`` is set to something (no-color.org: an
    empty one does not count) or the terminal is a dumb one."""
    return stream.isatty() and not os.environ.get("NO_COLOR") and not dumb_terminal()


def dumb_terminal() -> bool:
    """Whether ``TERM`` says the terminal cannot move its cursor or clear its screen."""
    return os.environ.get("TERM") == "dumb"


def paint(char: str, colour: bool) -> str:
    style = STYLES.get(char) if colour else None
    return f"{style}{char}{RESET}" if style else char


REVERSE = "\x1b[7m"


def board_lines(
    board: list[str], colour: bool, mark: tuple[int, int] | None = None
) -> list[str]:
    """Rows to print; with colour, the cell ``mark`` (x, y) stands out in reverse video."""
    if not colour:
        return list(board)
    lines = []
    for y, row in enumerate(board):
        cells = [paint(c, True) for c in row]
        if mark is not None and mark[1] == y and 0 <= mark[0] < len(row):
            cells[mark[0]] = f"{REVERSE}{row[mark[0]]}{RESET}"
        lines.append("".join(cells))
    return lines


def millis(stamp: str) -> int:
    """An RFC 3339 timestamp from the service as Unix milliseconds."""
    return int(datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp() * 1000)


def seconds(ms: int) -> str:
    return f"{ms / 1000:.1f}s"


def record(ms: int) -> str:
    """A time that ranks (a best, a leaderboard's): to the millisecond, as timed."""
    return f"{ms / 1000:.3f}s"


def when(stamp: str) -> str:
    """An RFC 3339 timestamp from the service to the minute: ``2026-11-21 14:32``."""
    return stamp[:16].replace("T", " ")


def describe(view: GameView) -> str:
    kind = view.preset or "custom"
    return f"{kind} {view.width}x{view.height}, {view.mines} mines"


def status_line(view: GameView) -> str:
    status = f"{view.status} (paused)" if view.paused else view.status
    return (
        f"{status}  mines left {view.mines_left}  time {seconds(view.elapsed_ms)}  "
        f"version {view.version}"
    )


def diff_line(diff: Diff) -> str:
    move = diff.move
    where = f" {move.x},{move.y}" if move.x is not None and move.y is not None else ""
    if move.mark is not None:  # a flag move that set this mark rather than cycling
        where += f" ({move.mark})"
    count = changed_count(diff.cells)
    changed = f"{count} cell{'' if count == 1 else 's'}"
    if move.action == "pause":
        changed = "clock stopped, board hidden"
    elif move.action == "resume":
        changed = "clock running, board shown"
    elif move.action == "end":
        changed = "the match is over"
    elif not diff.cells:
        changed = "no change"
    return (
        f"v{diff.version} {move.action}{where}: {changed}  {diff.status}  "
        f"mines left {diff.mines_left}  time {seconds(diff.elapsed_ms)}"
    )


def outcome(view: GameView, *, watching: bool = False) -> str | None:
    """The end-of-game message, to the player or to someone ``watching``, or ``None``
    while the game goes on; :func:`stats_line` has the numbers."""
    if view.status not in ("won", "lost"):
        return None
    took = seconds(view.elapsed_ms)
    who = view.player or "The player"
    if view.ended_by == "match":  # time up, or the seat resigned: no mine ended it
        return f"The match is over: the board was not cleared in {took}."
    if view.status == "lost":
        if watching:
            return f"{who} hit a mine after {took}."
        return f"Boom! You hit a mine after {took}."
    return f"{who} won in {took}!" if watching else f"You won in {took}!"


def stats_line(stats: Stats) -> str:
    """Clicks, 3BV (cleared of the board's, after a loss), 3BV/s, efficiency, and whether
    hints were used: ``clicks 21 (17 useful)  3BV 16  3BV/s 1.42  efficiency 76%  unassisted``."""
    c = stats.clicks
    parts = [f"clicks {c.total} ({c.useful} useful)"]
    if stats.bbbv is not None:
        done = "" if stats.bbbv_done == stats.bbbv else f"{stats.bbbv_done}/"
        parts.append(f"3BV {done}{stats.bbbv}")
    if stats.bbbv_per_second is not None:
        parts.append(f"3BV/s {stats.bbbv_per_second:.2f}")
    if stats.efficiency is not None:
        parts.append(f"efficiency {stats.efficiency:.0%}")
    if stats.assisted:
        parts.append(f"assisted ({stats.hints} hint{'' if stats.hints == 1 else 's'})")
    else:
        parts.append("unassisted")
    return "  ".join(parts)


def hint_line(hint: Hint) -> str:
    """The hint in one sentence, its cell named as its reason names cells: ``(x, y)``."""
    what = {"safe": "is safe", "mine": "is a mine", "guess": "is the safest guess"}[hint.kind]
    return f"hint: ({hint.x}, {hint.y}) {what}: {hint.reason}"


_CELL = re.compile(r"\((\d+), (\d+)\)")


def named_cells(reason: str) -> set[tuple[int, int]]:
    """The cells a hint's reason names, as (x, y)."""
    return {(int(x), int(y)) for x, y in _CELL.findall(reason)}


def _offset(ms: int) -> str:
    return f"{ms / 1000:+.3f}s" if ms < 0 else f"{ms / 1000:.3f}s"


def replay_lines(replay: Replay) -> list[str]:
    """A finished game as text: what it was, every move with its time, the mines, the
    fatal click of a loss (a forced guess, or a mistake) and the stats."""
    r = replay
    kind = r.preset or "custom"
    head = f"game {r.id}  {kind} {r.width}x{r.height}, {r.mines} mines  {r.status}"
    if r.started_at is not None:
        head += f" in {seconds(r.elapsed_ms)}"
    details = [f"seed {r.seed}"]
    if r.player:
        details.insert(0, f"player {r.player}")
    if r.daily:
        details.append(f"daily board of {r.daily}")
    if r.no_guess:
        details.append("no-guess")
    if r.question_marks:
        details.append("question marks")
    lines = [head, "  ".join(details)]
    if r.opened:
        lines.append(f"{changed_count(r.opened)} cells were open at the start")
    # Times from the first reveal, when the clock started: flags before it come out negative.
    start = millis(r.started_at or r.created_at)
    lines.append(f"{len(r.moves)} move{'' if len(r.moves) == 1 else 's'} "
                 f"(time from the first reveal):")
    if not r.complete:
        lines.append("  (the oldest moves of this long game are no longer kept)")
    width = len(str(r.moves[-1].version)) if r.moves else 1
    for m in r.moves:
        where = f" {m.x},{m.y}" if m.x is not None and m.y is not None else ""
        if m.mark is not None:
            where += f" ({m.mark})"
        offset = _offset(millis(m.at) - start)
        lines.append(f"  v{m.version:<{width}}  {offset:>9}  {m.action}{where}")
    rows = [list(row) for row in r.layout]
    legend = "* mine, . safe"
    if r.fatal is not None:
        rows[r.fatal.y][r.fatal.x] = "X"
        legend += ", X the fatal click"
    lines.append(f"mines ({legend}):")
    lines += ["".join(row) for row in rows]
    if r.fatal is not None:
        f = r.fatal
        judged = (
            "a forced guess: no cell was certainly safe" if f.forced_guess
            else "a mistake: a cell was certainly safe"
        )
        lines.append(f"the fatal click at {f.x},{f.y} was {judged}")
    lines.append(stats_line(r.stats))
    return lines


def leaderboard_lines(board: Leaderboard) -> list[str]:
    kind = "no-guess" if board.no_guess else "classic"
    title = f"{board.preset}, {kind}{', bots' if board.bot else ''}"
    if board.date:
        title = f"daily board of {board.date}: {title}"
    lines = [f"{title}: best times"]
    if not board.entries:
        return [*lines, "no wins yet"]
    lines.append(f"{'rank':>4}  {'time':>9}  {'3BV':>4}  {'3BV/s':>6}  {'player':<24}  when")
    for e in board.entries:
        lines.append(
            f"{e.rank:>4}  {record(e.elapsed_ms):>9}  {e.bbbv:>4}  "
            f"{e.bbbv_per_second:>6.2f}  {e.player:<24}  {when(e.ended_at)}"
        )
    return lines


def _board_stats(name: str, b: BoardStats) -> str:
    best = record(b.best_ms) if b.best_ms is not None else "-"
    rate = f"{b.best_bbbv_per_s:.2f}" if b.best_bbbv_per_s is not None else "-"
    return (f"  {name:<22} {b.played:>6} {b.won:>5} {best:>9} {rate:>6} "
            f"{b.streak:>6} {b.best_streak:>5}")


def profile_lines(player: PlayerView) -> list[str]:
    """A player's profile: stats per board, then the last games."""
    kind = "bot" if player.bot else "player"
    lines = [f"{kind} {player.name} ({player.id}), since {when(player.created_at)}"]
    lines.append(f"  {'board':<22} {'played':>6} {'won':>5} {'best':>9} {'3BV/s':>6} "
                 f"{'streak':>6} {'best':>5}")
    for preset in ("beginner", "intermediate", "expert"):
        stats = getattr(player.stats, preset)
        lines.append(_board_stats(preset, stats.classic))
        lines.append(_board_stats(f"{preset} no-guess", stats.no_guess))
    for mode, rating in player.ratings.items():
        games = f"{rating.games} game{'' if rating.games == 1 else 's'}"
        if rating.provisional:
            games += ", provisional"
        lines.append(f"rating ({mode}): {rating.rating:.0f} +/- {rating.deviation:.0f}, {games}")
    if not player.recent:
        return [*lines, "no finished games yet"]
    lines.append("last games:")
    for r in player.recent:
        board: str = r.preset or "custom"
        if r.kind == "match":
            board = f"match, {board}"
        if r.no_guess:
            board += " no-guess"
        if r.daily:
            board += f" (daily {r.daily})"
        rate = f"  {r.bbbv_per_second:.2f} 3BV/s" if r.bbbv_per_second is not None else ""
        hinted = "  (hints)" if r.assisted else ""
        lines.append(f"  {when(r.ended_at)}  {r.result:<4}  {record(r.elapsed_ms):>9}  "
                     f"{board}{rate}{hinted}  {r.id}")
    return lines


# ---- matches ----------------------------------------------------------------------------


def describe_match(match: MatchView) -> str:
    """``rated race, expert 30x16, 99 mines, no-guess, 5 s a mine``."""
    kind = f"{'rated ' if match.rated else ''}{match.mode}"
    board = f"{match.preset or 'custom'} {match.width}x{match.height}, {match.mines} mines"
    rules = "no-guess" if match.no_guess else "guessing"
    mine = "5 s a mine" if match.on_mine == "penalty" else "a mine loses"
    return f"{kind}, {board}, {rules}, {mine}"


def rating(value: float | None) -> str:
    """A player's rating, or "new" for one without a rating yet (not "unrated", which is
    what a match that changes no rating is called)."""
    return "new" if value is None else f"{value:.0f}"


def _penalties(count: int) -> str:
    return f"{count} penalt{'y' if count == 1 else 'ies'}"


def _cut(value: str, width: int) -> str:
    """``value`` in at most ``width`` characters, ``~`` where it was cut."""
    return value if len(value) <= width else value[: max(width - 1, 0)] + "~"


def seat_line(
    seat: Seat, you: bool = False, *, match: MatchStatus = "playing", width: int | None = None
) -> str:
    """One seat while the ``match`` goes on, counts only:
    ``> ada                     1500   12/34  3BV  1 penalty    playing``; a seat the
    service counts as playing reads "ready" until the countdown is over. In fewer than
    ``width`` characters the line is compact (the name cut, no rating), the counts, the
    penalties and the status whole: ``> ada       12/34 3BV  1 pen.  playing``."""
    p = seat.progress
    status = "ready" if match == "countdown" and seat.status == "playing" else seat.status
    line = (
        f"{'>' if you else ' '} {seat.player.name:<20} {rating(seat.player.rating):>7}  "
        f"{p.bbbv_done:>4}/{p.bbbv:<4} 3BV  {_penalties(seat.penalties):<12} {status}"
    )
    if width is None or len(line) <= width:
        return line
    tail = f" {p.bbbv_done}/{p.bbbv} 3BV  {seat.penalties} pen.  {status}"
    room = max(width - 2 - len(tail), 4)
    return f"{'>' if you else ' '} {_cut(seat.player.name, room):<{room}}{tail}"


def rating_change(seat: Seat) -> str:
    """``1500 -> 1523 (+23)``; the rating alone when the match changed none."""
    before, after = seat.rating_before, seat.rating_after
    if before is None or after is None:
        return rating(seat.player.rating)
    return f"{before:.0f} -> {after:.0f} ({after - before:+.0f})"


def _rating_after(seat: Seat) -> str:
    """``1523 (+23)``; the rating alone when the match changed none."""
    before, after = seat.rating_before, seat.rating_after
    if before is None or after is None:
        return rating(seat.player.rating)
    return f"{after:.0f} ({after - before:+.0f})"


def result_lines(match: MatchView, you: str | None = None, width: int | None = None) -> list[str]:
    """The table at a match's end: places, times with penalties, rating changes;
    ``you`` (a player id) is marked. In fewer than ``width`` characters (a narrow
    terminal) the table is compact: names cut, the new rating and its change only."""
    seats = sorted(match.seats, key=lambda s: (s.place is None, s.place or 0))
    if width is not None and width < 72:
        return _compact_result_lines(match, seats, you, width)
    lines = [f"{match.mode} over: {describe_match(match)}"]
    if ended_by_time(match):
        lines.append(time_limit_line(match))
    lines.append(f"  {'place':>5}  {'player':<20} {'time':>9}  {'penalties':>9}  rating")
    for seat in seats:
        place = "-" if seat.place is None else str(seat.place)
        took = _took(match, seat)
        lines.append(
            f"{'>' if seat.player.id == you else ' '} {place:>5}  {seat.player.name:<20} "
            f"{took:>9}  {seat.penalties:>9}  {rating_change(seat)}"
        )
    return lines


def ended_by_time(match: MatchView) -> bool:
    """Whether ``match`` ended at its time limit, rather than when every seat was done:
    the service ends it then at its ``ends_at``."""
    return (match.status == "finished" and match.ended_at is not None
            and match.ends_at is not None and millis(match.ended_at) >= millis(match.ends_at))


def time_limit_line(match: MatchView) -> str:
    what = "the team's game over" if match.mode == "coop" else "places by progress"
    return f"time limit ({match.time_limit_s} s) reached: {what}"


def _took(match: MatchView, seat: Seat) -> str:
    """A seat's time, or how it ended without one: "time up" for a seat still playing
    when the time limit ended the match (not a mine, which loses only under "lose")."""
    if seat.time_ms is not None:
        return seconds(seat.time_ms)
    if seat.status == "lost" and match.on_mine == "penalty" and ended_by_time(match):
        return "time up"
    return seat.status


def _compact_result_lines(
    match: MatchView, seats: list[Seat], you: str | None, width: int
) -> list[str]:
    rows = []
    for seat in seats:
        place = "-" if seat.place is None else str(seat.place)
        took = _took(match, seat)
        rows.append((seat.player.id == you, place, seat.player.name, took,
                     str(seat.penalties), _rating_after(seat)))
    took_w = max([4, *(len(r[3]) for r in rows)])
    rating_w = max([6, *(len(r[5]) for r in rows)])
    # mark, place, name, time, penalties, rating: what is left is the name's
    name_w = max(width - (1 + 2 + 1 + 1 + took_w + 1 + 3 + 1 + rating_w), 4)
    lines = [_cut(f"{match.mode} over: {describe_match(match)}", width)]
    if ended_by_time(match):
        line = time_limit_line(match)
        lines.append(_cut(line if len(line) <= width else line.replace(
            f" ({match.time_limit_s} s)", ""), width))
    lines.append(f"  # {'player':<{name_w}} {'time':>{took_w}} {'pen':>3} rating")
    for mine, place, name, took, penalties, after in rows:
        lines.append(f"{'>' if mine else ' '}{place:>2} {_cut(name, name_w):<{name_w}} "
                     f"{took:>{took_w}} {penalties:>3} {after}")
    return lines


# ---- rematches --------------------------------------------------------------------------

# The race screen's keys once the match is over, and while its rematch waits for players.
RACE_OVER_KEYS = "arrows/wasd look around  r rematch  q quit"
REMATCH_WAITING_KEYS = "arrows/wasd look around  q leave the rematch"


def race_over(offered_by: str | None = None, *, offered: bool = False) -> str:
    """What the race screen says once the match is over: the rematch on offer, if
    another player asked for one (``offered_by``, or ``offered`` without a name)."""
    if offered_by is not None:
        return f"{offered_by} wants a rematch: r to join"
    if offered:
        return "a rematch was asked for: r to join"
    return "the race is over: r for a rematch, q to quit"


def rematch_waiting(missing: list[str]) -> str:
    """``rematch: waiting for bob to join (q leaves it)``."""
    who = ", ".join(missing) if missing else "the others"
    return f"rematch: waiting for {who} to join (q leaves it)"


def rematch_started(match_id: str) -> str:
    return f"rematch: match {match_id}"


# What a refusal means when it is the rematch that refuses, by the problem's code.
_REMATCH_REFUSALS = {
    "match_started": "it started without you",
    "match_full": "every seat of it is taken",
}


def rematch_refused(reason: str, code: str = "") -> str:
    """A rematch that could not be asked for or joined, and why: the ``reason`` given,
    in the rematch's words when its problem ``code`` has them."""
    return f"no rematch: {_REMATCH_REFUSALS.get(code, reason)}"


def rematch_left(match_id: str) -> str:
    return f"you left the rematch {match_id} before it started"


def rematch_seat_lines(match: MatchView, previous: MatchView, you: str) -> list[str]:
    """A rematch waiting for the players of the ``previous`` match: who sat down, with
    their rating now, and who has not yet."""
    seated = {s.player.id: s.player for s in match.seats}
    lines = []
    for old in previous.seats:
        p = seated.get(old.player.id)
        now = p.rating if p is not None else old.rating_after
        if now is None:
            now = old.player.rating
        lines.append(
            f"{'>' if old.player.id == you else ' '} {old.player.name:<20} {rating(now):>7}  "
            f"{'seated' if p is not None else 'not seated yet'}"
        )
    return lines


def rematch_asked(match_id: str) -> str:
    """The line for somebody watching a match: its rematch, and how to follow it."""
    return f"a rematch was asked for: minesweeper match {match_id} to watch it"



def resigned(match: MatchView) -> str:
    """Said on the screen of a seat that resigned while the others play on: the result
    comes when they are done, and the rematch with it."""
    if match.mode == "coop":
        return "you left the game to the team: its end shows here (then r for a rematch)"
    return "you resigned: the result shows when the others finish (then r for a rematch)"


def left_seat_playing(match: MatchView) -> str:
    """Said when Ctrl-C left a match's screen while the seat still played: the seat is
    not given up (q q does that), and how to get back to it."""
    what = "game" if match.mode == "coop" else "race"
    return (f"you left the {what} screen; your seat is still playing and its clock runs: "
            f"minesweeper match {match.id} to get back to it (q q there resigns)")
