"""Package attributes and registry plugins imported on first use.

``trainjobs --help`` and every import of a small module (a constant, an error type)
runs the ``__init__`` of each package above it. Packages whose curated API pulls in
every framework, schema and check export it through this, so those costs are paid only
by the commands that use them. Each package also imports the same names under
``TYPE_CHECKING``, which type checkers and import-linter read.

The framework and platform registries list their plugins as :class:`Line` s in a
:class:`LazyTable`, which imports a plugin's module when the plugin is first asked for.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, Generic, TypeVar

__all__ = ["LazyTable", "Line", "lazy_exports"]

K = TypeVar("K")
V = TypeVar("V")


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


class Line(ABC, Generic[V]):
    """A registry line: where a plugin is and what it is, known before its module is
    imported. Subclasses are frozen dataclasses with a ``module`` field."""

    module: str
    """The dotted name of the module that defines the plugin."""
    attribute: ClassVar[str]
    """The module's name for its plugin, e.g. ``FRAMEWORK``."""
    registry: ClassVar[str]
    """The file the lines are written in, named by the error a wrong line raises."""

    @abstractmethod
    def says(self) -> tuple[Any, ...]:
        """What the line says of its plugin."""

    @abstractmethod
    def declared(self, plugin: V) -> tuple[Any, ...]:
        """What ``plugin`` says of itself, in the terms of :meth:`says`."""

    def load(self) -> V:
        """Import the module; its plugin, which must be what this line says."""
        plugin: V = getattr(importlib.import_module(self.module), self.attribute)
        declared = self.declared(plugin)
        if declared != self.says():
            # A bug in the registry, not in the user's input: the line and its module disagree.
            raise RuntimeError(
                f"the registry line {self} does not match {self.module}.{self.attribute}, "
                f"which is {declared}; fix the line in {self.registry}"
            )
        return plugin


class LazyTable(Generic[K, V]):
    """Plugins by key, each imported the first time it is asked for.

    ``in``, ``len`` and :meth:`keys` import nothing; ``table[key]`` loads the key's
    line once and keeps its plugin; iterating loads every plugin, in the order added.
    """

    def __init__(self, what: str) -> None:
        self._what = what  # what a plugin is, for errors: ``framework``
        self._lines: dict[K, Line[V]] = {}
        self._loaded: dict[K, V] = {}

    def add(self, key: K, line: Line[V]) -> None:
        """List ``line`` under ``key``; ValueError when ``key`` is listed already."""
        if key in self._lines:
            raise ValueError(f"{self._what} {key!r} is registered twice")
        self._lines[key] = line

    def __getitem__(self, key: K) -> V:
        if key not in self._loaded:
            self._loaded[key] = self._lines[key].load()
        return self._loaded[key]

    def get(self, key: K) -> V | None:
        """The plugin under ``key``, loaded; None when no line is."""
        return self[key] if key in self._lines else None

    def __contains__(self, key: object) -> bool:
        return key in self._lines

    def __len__(self) -> int:
        return len(self._lines)

    def __iter__(self) -> Iterator[V]:
        return iter([self[key] for key in self._lines])

    def keys(self) -> list[K]:
        """Every key, in the order added."""
        return list(self._lines)
