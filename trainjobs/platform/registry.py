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

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trainjobs._lazy import LazyTable, Line

if TYPE_CHECKING:
    from trainjobs.platform.base import Category, PlatformKind

__all__ = ["PLATFORM", "PlatformPlugin", "PlatformRegistry"]


@dataclass(frozen=True)
class PlatformPlugin(Line["PlatformKind"]):
    """Where a platform kind is, known before it is imported.

    Attributes:
        kind: the document kind (``RedisBackend``); no default.
        category: its category (``backend``, ``nodePool``, ``queue``, ``operator``).
        module: the dotted name of the module whose ``KIND`` is the plugin.
    """

    kind: str
    category: Category
    module: str
    attribute = "KIND"
    registry = "trainjobs/platform/registry.py"

    def says(self) -> tuple[Any, ...]:
        return (self.kind, self.category)

    def declared(self, plugin: PlatformKind) -> tuple[Any, ...]:
        return (plugin.kind, plugin.category)


class PlatformRegistry:
    """Platform kinds by kind name.

    Holds each kind as a :class:`PlatformPlugin` line, imported on first use. ``kinds``
    imports nothing; ``by_kind`` imports the one kind asked for; iterating imports them
    all.
    """

    def __init__(self, plugins: Iterable[PlatformPlugin]) -> None:
        self._by_kind: LazyTable[str, PlatformKind] = LazyTable("platform kind")
        self._category: dict[str, Category] = {}
        for plugin in plugins:
            self._by_kind.add(plugin.kind, plugin)
            self._category[plugin.kind] = plugin.category

    def __iter__(self) -> Iterator[PlatformKind]:
        return iter(self._by_kind)

    def by_kind(self, kind: str) -> PlatformKind | None:
        return self._by_kind.get(kind)

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
