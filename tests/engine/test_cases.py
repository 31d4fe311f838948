"""The rules, one case per situation, read from ``cases/*.txt``.

Case files
----------
A file holds any number of cases. Lines starting with ``#`` are comments;
blank lines are ignored. A case is::

    === a title that becomes the test id
    <board before>      text form of service/engine/text.py, header line optional
    > reveal 3 4 @1000  one or more moves, applied in order
    <after>             an expectation line, board rows, or both
                        -- or --
    raises GameOver     the last move must raise this engine error

Moves: ``reveal X Y``, ``chord X Y``, ``flag X Y [flag|question|none]``,
``pause``, ``resume``, ``hint`` (a hint is given: counted), ``start`` (a new
board opens the start cell its seed picks, as a daily board does) and ``end`` (a
match's end ends a game still on), each with an optional ``@NOW`` (milliseconds;
1000 when left out).

The expectation line is ``key=value`` pairs, and only the keys given are
checked. Keys are those of the text header (``version``, ``status``,
``started_at``, ``bbbv``, ``placed``, ``clicks.useful``...; ``-`` means
unset) plus ``mines_left``, ``flags``, ``hidden_safe``, ``bbbv_done``,
``diff`` (how many cells the last move changed), ``elapsed_ms`` (at the last
move's time) and ``elapsed_ms@T`` (at time ``T``). Board rows after the moves
are compared with the whole board in text form.

Every move of every case is also checked for the invariants a change always
keeps: the input snapshot is left as it was, the diff turns the old view into
the new one, and the version moves on exactly when the diff is not empty (for
a pause or resume: when the paused state changes; never for a hint or a start).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from service import engine
from service.engine import ChangedCell, Game, codec, errors
from service.engine.text import board_text, dump, load

CASES = Path(__file__).parent / "cases"
DEFAULT_NOW = 1000


@dataclass
class Step:
    action: str
    x: int = 0
    y: int = 0
    mark: engine.Mark | None = None
    now: int = DEFAULT_NOW
    line: int = 0


@dataclass
class Case:
    path: Path
    line: int
    title: str
    before: list[str] = field(default_factory=list)
    steps: list[Step] = field(default_factory=list)
    expect: dict[str, str] = field(default_factory=dict)
    after: list[str] = field(default_factory=list)
    raises: str | None = None

    @property
    def id(self) -> str:
        slug = re.sub(r"[^a-z0-9]+", "-", self.title.lower()).strip("-")
        return f"{self.path.stem}:{slug}"


_MOVE = re.compile(
    r"^>\s*(?P<action>reveal|flag|chord|pause|resume|hint|start|end)"
    r"(?:\s+(?P<x>-?\d+)\s+(?P<y>-?\d+))?"
    r"(?:\s+(?P<mark>flag|question|none))?"
    r"(?:\s+@(?P<now>\d+))?\s*$"
)


def _parse_step(text: str, where: str, line: int) -> Step:
    m = _MOVE.match(text)
    if m is None:
        raise ValueError(f"{where}: cannot read move {text!r}")
    action = m["action"]
    needs_cell = action in ("reveal", "flag", "chord")
    if needs_cell != (m["x"] is not None) or (m["mark"] and action != "flag"):
        raise ValueError(f"{where}: malformed {action} move {text!r}")
    return Step(
        action=action,
        x=int(m["x"] or 0),
        y=int(m["y"] or 0),
        mark=m["mark"],
        now=int(m["now"] or DEFAULT_NOW),
        line=line,
    )


def parse(path: Path) -> list[Case]:
    cases: list[Case] = []
    case: Case | None = None
    for number, raw in enumerate(path.read_text().splitlines(), start=1):
        text = raw.strip()
        where = f"{path.name}:{number}"
        if not text or text.startswith("#"):
            continue
        if text.startswith("==="):
            case = Case(path, number, text.lstrip("=").strip())
            cases.append(case)
            continue
        if case is None:
            raise ValueError(f"{where}: text before the first '===' title")
        if text.startswith(">"):
            if case.expect or case.after or case.raises:
                raise ValueError(f"{where}: a move after the expected result")
            case.steps.append(_parse_step(text, where, number))
        elif not case.steps:
            case.before.append(text)
        elif text.startswith("raises "):
            case.raises = text.split(None, 1)[1].strip()
        elif "=" in text:
            if case.expect or case.after:
                raise ValueError(f"{where}: the expectation line comes before the board")
            case.expect = dict(item.split("=", 1) for item in text.split())
        else:
            case.after.append(text)
    for c in cases:
        if not c.steps or not c.before:
            raise ValueError(f"{c.path.name}:{c.line}: a case needs a board and a move")
        if not (c.expect or c.after or c.raises):
            raise ValueError(f"{c.path.name}:{c.line}: a case needs an expected result")
    return cases


def all_cases() -> list[Case]:
    return [case for path in sorted(CASES.glob("*.txt")) for case in parse(path)]


# The changes that name no cell, by the step's action.
CHANGES = {
    "pause": engine.pause,
    "resume": engine.resume,
    "hint": engine.count_hint,
    "start": engine.open_start,
    "end": engine.end,
}


def _play(game: Game, step: Step) -> tuple[Game, list[ChangedCell]]:
    if step.action in CHANGES:
        return CHANGES[step.action](game, step.now)
    move = engine.Move(step.action, step.x, step.y, step.mark)  # type: ignore[arg-type]
    return engine.apply(game, move, step.now)


def _apply_diff(game: Game, diff: list[ChangedCell]) -> list[str]:
    rows = [list(row) for row in game.board()]
    for x, y, char in diff:
        rows[y][x] = char
    return ["".join(row) for row in rows]


def _checked_move(game: Game, step: Step) -> tuple[Game, list[ChangedCell]]:
    """Play one move and check what every move must keep."""
    stored = codec.encode(game)
    new, diff = _play(game, step)
    assert codec.encode(game) == stored, "the move changed its input snapshot"
    assert _apply_diff(game, diff) == new.board(), "old view + diff != new view"
    assert len({(x, y) for x, y, _ in diff}) == len(diff), "a cell appears twice in the diff"
    if step.action in ("pause", "resume"):
        assert not diff, "a pause or resume lists no cell"
        moved = new.paused != game.paused
    elif step.action == "hint":
        assert not diff and new.clicks.hints == game.clicks.hints + 1
        moved = False
    elif step.action == "start":
        assert new.version == 0, "a board's start is no move"
        return new, diff
    elif step.action == "end":
        # A game still on ends, whether or not a cell shows it; a race seat's loss
        # shows the mines it held back.
        moved = not game.finished or bool(diff)
    else:
        moved = bool(diff)
    assert new.version == game.version + moved, "the version moved without a change"
    return new, diff


def facts(game: Game, diff: list[ChangedCell], now: int) -> dict[str, str]:
    header = dump(game).split("\n", 1)[0]
    out = dict(item.split("=", 1) for item in header.split())
    out.update(
        mines_left=str(game.mines_left),
        flags=str(game.flags),
        hidden_safe=str(game.hidden_safe),
        bbbv_done=str(engine.bbbv_done(game)),
        diff=str(len(diff)),
        elapsed_ms=str(game.elapsed_ms(now)),
        ended_by=str(game.ended_by),
    )
    return out


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in all_cases()])
def test_case(case: Case) -> None:
    game = load("\n".join(case.before))
    for step in case.steps[:-1]:
        game, _ = _checked_move(game, step)
    last = case.steps[-1]
    if case.raises is not None:
        error = getattr(errors, case.raises)
        stored = codec.encode(game)
        with pytest.raises(error):
            _play(game, last)
        assert codec.encode(game) == stored
        return
    game, diff = _checked_move(game, last)
    known = facts(game, diff, last.now)
    for key, want in case.expect.items():
        if key.startswith("elapsed_ms@"):
            got = str(game.elapsed_ms(int(key.split("@", 1)[1])))
        else:
            assert key in known, f"unknown expectation key {key!r}"
            got = known[key]
        assert got == want, f"{key}: got {got}, want {want}"
    if case.after:
        got_rows = board_text(game).split()
        shown = "\n".join(["board after the moves:", *got_rows, "expected:", *case.after])
        assert got_rows == case.after, shown


def test_every_case_file_has_cases() -> None:
    files = sorted(CASES.glob("*.txt"))
    assert files
    for path in files:
        assert parse(path), f"{path.name} holds no case"


def test_case_ids_are_unique() -> None:
    ids = [c.id for c in all_cases()]
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
