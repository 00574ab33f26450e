"""The platform registry: every platform kind, listed once.

Adding a kind: write its module in this package and add one :class:`PlatformPlugin`
line to ``_PLUGINS`` below: its kind, its category and the module whose ``KIND`` it
is. Nothing else in trainjobs changes.

A module is imported the first time its kind is asked for (``by_kind``, iterating),
not when the registry is: the operator kinds import their frameworks and every kind
builds pydantic models, and a stack of one TFJob needs none of them.
``tests/platform/test_registry_lazy.py`` holds every line to what its module declares.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trainjobs.platform.base import Category, PlatformKind

__all__ = ["PLATFORM", "PlatformPlugin", "PlatformRegistry"]


@dataclass(frozen=True)
class PlatformPlugin:
    """Where a platform kind is, known before it is imported.

    Attributes:
        kind: the document kind (``RedisBackend``); no default.
        category: its category (``backend``, ``nodePool``, ``queue``, ``operator``).
        module: the dotted name of the module whose ``KIND`` is the plugin.
    """

    kind: str
    category: Category
    module: str

    def load(self) -> PlatformKind:
        """Import the module; its ``KIND``, which must be what this line says."""
        plugin: PlatformKind = importlib.import_module(self.module).KIND
        if (plugin.kind, plugin.category) != (self.kind, self.category):
            # A bug in this file, not in the user's input: the line and its module disagree.
            raise RuntimeError(
                f"the registry line {self} does not match {self.module}.KIND, which is "
                f"{(plugin.kind, plugin.category)}; fix the line in trainjobs/platform/registry.py"
            )
        return plugin


class PlatformRegistry:
    """Platform kinds by kind name.

    Accepts kinds already imported (a :class:`PlatformKind`) or to be imported on first
    use (a :class:`PlatformPlugin`). ``kinds`` imports nothing; ``by_kind`` imports the
    one kind asked for; iterating imports them all.
    """

    def __init__(self, plugins: Iterable[PlatformKind | PlatformPlugin]) -> None:
        self._by_kind: dict[str, PlatformKind | PlatformPlugin] = {}
        self._category: dict[str, Category] = {}
        for plugin in plugins:
            if plugin.kind in self._by_kind:
                raise ValueError(f"platform kind {plugin.kind!r} is registered twice")
            self._by_kind[plugin.kind] = plugin
            self._category[plugin.kind] = plugin.category

    def _load(self, kind: str) -> PlatformKind:
        plugin = self._by_kind[kind]
        if isinstance(plugin, PlatformPlugin):
            loaded = plugin.load()
            self._by_kind[kind] = loaded
            return loaded
        return plugin

    def __iter__(self) -> Iterator[PlatformKind]:
        return iter([self._load(kind) for kind in self._by_kind])

    def by_kind(self, kind: str) -> PlatformKind | None:
        return self._load(kind) if kind in self._by_kind else None

    def kinds(self, category: Category | None = None) -> list[str]:
        """Kind names, optionally of one category, for error hints."""
        return [k for k, c in self._category.items() if category in (None, c)]


_PLUGINS: tuple[PlatformPlugin, ...] = (
    PlatformPlugin("RedisBackend", "backend", "trainjobs.platform.redis"),
    PlatformPlugin("NfsBackend", "backend", "trainjobs.platform.nfs"),
    PlatformPlugin("TrainingOperator", "operator", "trainjobs.platform.training_operator"),
    PlatformPlugin("MPIOperator", "operator", "trainjobs.platform.mpi_operator"),
    PlatformPlugin("Trainer", "operator", "trainjobs.platform.trainer"),
    PlatformPlugin("JobSet", "operator", "trainjobs.platform.jobset"),
    PlatformPlugin("EdlController", "operator", "trainjobs.platform.edl_controller"),
    PlatformPlugin("DatasetJob", "backend", "trainjobs.platform.dataset"),
    PlatformPlugin("Caffe2Operator", "operator", "trainjobs.platform.caffe2_operator"),
    PlatformPlugin("MSOperator", "operator", "trainjobs.platform.ms_operator"),
    PlatformPlugin("MSOperatorV2", "operator", "trainjobs.platform.ms_operator_v2"),
    PlatformPlugin("GpuNodePool", "nodePool", "trainjobs.platform.pools"),
    PlatformPlugin("GpuQueue", "queue", "trainjobs.platform.queue"),
)

PLATFORM = PlatformRegistry(_PLUGINS)
