"""The platform registry: every platform kind, listed once.

Adding a kind: write its module in this package and add its ``KIND`` to
``_PLUGINS`` below. Nothing else in trainjobs changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from trainjobs.platform import (
    caffe2_operator,
    dataset,
    edl_controller,
    jobset,
    mpi_operator,
    ms_operator,
    ms_operator_v2,
    nfs,
    pools,
    queue,
    redis,
    trainer,
    training_operator,
)
from trainjobs.platform.base import Category, PlatformKind

__all__ = ["PLATFORM", "PlatformRegistry"]


class PlatformRegistry:
    """Platform kinds by kind name."""

    def __init__(self, plugins: Sequence[PlatformKind]) -> None:
        self._by_kind: dict[str, PlatformKind] = {}
        for plugin in plugins:
            if plugin.kind in self._by_kind:
                raise ValueError(f"platform kind {plugin.kind!r} is registered twice")
            self._by_kind[plugin.kind] = plugin

    def __iter__(self) -> Iterator[PlatformKind]:
        return iter(self._by_kind.values())

    def by_kind(self, kind: str) -> PlatformKind | None:
        return self._by_kind.get(kind)

    def kinds(self, category: Category | None = None) -> list[str]:
        """Kind names, optionally of one category, for error hints."""
        return [k for k, p in self._by_kind.items() if category in (None, p.category)]


_PLUGINS: tuple[PlatformKind, ...] = (
    redis.KIND,
    nfs.KIND,
    training_operator.KIND,
    mpi_operator.KIND,
    trainer.KIND,
    jobset.KIND,
    edl_controller.KIND,
    dataset.KIND,
    caffe2_operator.KIND,
    ms_operator.KIND,
    ms_operator_v2.KIND,
    pools.KIND,
    queue.KIND,
)

PLATFORM = PlatformRegistry(_PLUGINS)
