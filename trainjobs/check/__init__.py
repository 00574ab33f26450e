"""Checks over the input and the rendered manifests, and ``run``: render + every check."""

from trainjobs.check.pipeline import run

__all__ = ["run"]
