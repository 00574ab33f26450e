"""The CustomResourceDefinitions trainjobs ships, under ``crds/``.

Operators install them and the checks validate custom resources against them;
both read them from here. Each file is parsed once.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path
from typing import Any

import yaml

__all__ = ["crd_dir", "crd_files", "load_crd", "parse_crd"]

try:
    _Loader: type[yaml.SafeLoader] = yaml.CSafeLoader  # type: ignore[assignment]
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


def crd_dir() -> Path:
    """Where the shipped CRDs are: ``$TRAINJOBS_CRDS``, else the package's ``crds``.

    In a checkout ``trainjobs/crds`` links to the top-level ``crds/``; a built
    wheel holds the files themselves, so an installed trainjobs finds them too.
    """
    override = os.environ.get("TRAINJOBS_CRDS")
    if override:
        return Path(override)
    return Path(__file__).resolve().parents[1] / "crds"


def crd_files() -> list[Path]:
    """Every CRD file shipped, sorted."""
    return sorted(crd_dir().rglob("*.yaml"))


def parse_crd(source: bytes | str) -> dict[str, Any]:
    """A CRD file's text as a manifest."""
    crd: dict[str, Any] = yaml.load(source, Loader=_Loader)
    return crd


@cache
def _parsed(path: Path) -> dict[str, Any]:
    return parse_crd(path.read_bytes())


def load_crd(relative: str) -> dict[str, Any]:
    """The CRD at ``crds/<relative>`` as a manifest (shared and cached: copy before changing)."""
    return _parsed(crd_dir() / relative)
