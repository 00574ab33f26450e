"""Colours per unit category."""

from __future__ import annotations

from typing import get_args

from trainjobs.graph.style import STYLES, Style, style_of
from trainjobs.render import UnitCategory


def _categories() -> set[str]:
    found: set[str] = set()
    for arg in get_args(UnitCategory):
        found |= set(get_args(arg)) or {arg}
    return found


def test_every_unit_category_has_its_own_colours() -> None:
    assert _categories() == set(STYLES)
    assert len({s.stroke for s in STYLES.values()}) == len(STYLES)


def test_a_category_added_later_is_drawn_neutral() -> None:
    assert style_of("cluster") == Style("#ffffff", "#616161")
    assert style_of("job") is STYLES["job"]
