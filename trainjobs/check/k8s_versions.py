"""The Kubernetes versions whose OpenAPI schemas are bundled (by kubernetes-validate).

Found from the package's folder without importing it, so the command line can list
them in ``--help`` at no cost."""

from __future__ import annotations

import importlib.util
import os
import re
from functools import cache
from pathlib import Path

__all__ = ["SCHEMA_DIR", "SCHEMA_PACKAGE", "available_versions", "schema_root"]

SCHEMA_PACKAGE = "kubernetes_validate"
SCHEMA_DIR = "kubernetes-json-schema"


@cache
def _package_folders() -> tuple[str, ...]:
    """Where the package is, found without importing it (which imports jsonschema)."""
    spec = importlib.util.find_spec(SCHEMA_PACKAGE)
    return tuple((spec.submodule_search_locations if spec else None) or ())


@cache
def schema_root() -> Path:
    """The folder of kubernetes-validate's schemas (one folder per version)."""
    for folder in _package_folders():
        root = Path(folder, SCHEMA_DIR)
        if root.is_dir():
            return root
    raise ModuleNotFoundError(f"{SCHEMA_PACKAGE} with its {SCHEMA_DIR} folder is not installed")


@cache
def available_versions() -> tuple[str, ...]:
    """Kubernetes minor versions with bundled schemas, e.g. ``("1.25", …, "1.37")``."""
    found = set()
    for folder in _package_folders():
        root = os.path.join(folder, SCHEMA_DIR)
        for name in os.listdir(root) if os.path.isdir(root) else ():
            match = re.match(r"^v(\d+\.\d+)\.\d+-local-strict$", name)
            if match:
                found.add(match.group(1))
    return tuple(sorted(found, key=lambda v: tuple(int(p) for p in v.split("."))))
