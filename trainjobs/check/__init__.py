"""Checks over the input and the rendered manifests, and ``run``: render + every check."""

from __future__ import annotations

from typing import TYPE_CHECKING

from trainjobs._lazy import lazy_exports

if TYPE_CHECKING:
    from trainjobs.check.pipeline import run

_HOMES = {
    "run": "trainjobs.check.pipeline",
}

__all__ = [
    "run",
]
__getattr__, __dir__ = lazy_exports(__name__, globals(), _HOMES)
