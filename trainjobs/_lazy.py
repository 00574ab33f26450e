"""Package attributes imported on first use (PEP 562).

``trainjobs --help`` and every import of a small module (a constant, an error type)
runs the ``__init__`` of each package above it. Packages whose curated API pulls in
every framework, schema and check export it through this, so those costs are paid only
by the commands that use them. Each package also imports the same names under
``TYPE_CHECKING``, which type checkers and import-linter read.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, namespace: dict[str, Any], homes: Mapping[str, str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for ``package``: each name in ``homes`` is read
    from the module ``homes[name]`` the first time it is asked for, then kept."""

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        return sorted({*namespace, *homes})

    return getattr_, dir_
