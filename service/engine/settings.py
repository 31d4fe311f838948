"""Board sizes: the presets and the bounds of a custom board."""

from __future__ import annotations

from typing import Final, Literal

import msgspec

from .errors import InvalidSettings

PresetName = Literal["beginner", "intermediate", "expert"]
FirstClick = Literal["zero", "safe", "none"]

DEFAULT_MAX_CELLS: Final = 1_000_000
# Room for a mine-free 3x3 start anywhere on the board.
START_AREA: Final = 9


class Settings(msgspec.Struct, frozen=True):
    width: int
    height: int
    mines: int
    preset: PresetName | None = None


PRESETS: Final[dict[str, Settings]] = {
    "beginner": Settings(9, 9, 10, "beginner"),
    "intermediate": Settings(16, 16, 40, "intermediate"),
    "expert": Settings(30, 16, 99, "expert"),
}


def preset(name: str) -> Settings:
    try:
        return PRESETS[name]
    except KeyError:
        raise InvalidSettings(
            f"unknown preset {name!r}; choose one of {', '.join(PRESETS)}"
        ) from None


def custom(width: int, height: int, mines: int, *, max_cells: int = DEFAULT_MAX_CELLS) -> Settings:
    if width < 2 or height < 2:
        raise InvalidSettings(f"a board is at least 2x2, not {width}x{height}")
    cells = width * height
    if cells > max_cells:
        raise InvalidSettings(
            f"a {width}x{height} board has {cells} cells; the limit is {max_cells}"
        )
    if cells - START_AREA < 1:
        raise InvalidSettings(
            f"a {width}x{height} board has no room for a mine beside a 3x3 start area"
        )
    if not 1 <= mines <= cells - START_AREA:
        raise InvalidSettings(
            f"a {width}x{height} board takes 1 to {cells - START_AREA} mines, not {mines}"
        )
    return Settings(width, height, mines)
