"""Colours per kind of unit, shared by the Mermaid and Graphviz writers."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["STYLES", "Style", "style_of"]


@dataclass(frozen=True)
class Style:
    """A unit's fill and border colour."""

    fill: str
    stroke: str


STYLES: dict[str, Style] = {
    "job": Style("#e8f0fe", "#3b6fc4"),
    "backend": Style("#e6f4ea", "#2e8540"),
    "nodePool": Style("#fef3e0", "#c77700"),
    "queue": Style("#f3e8fd", "#7b3fb8"),
    "operator": Style("#eceff1", "#546e7a"),
    "namespace": Style("#fafafa", "#9e9e9e"),
}
_OTHER = Style("#ffffff", "#616161")


def style_of(category: str) -> Style:
    """The style of a unit category (a neutral one for categories added later)."""
    return STYLES.get(category, _OTHER)
