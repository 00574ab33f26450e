"""The framework registry: every plugin, listed once.

Adding a framework: write its module in this package and add its ``FRAMEWORK``
to ``_PLUGINS`` below. Nothing else in trainjobs changes.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from trainjobs.frameworks import (
    caffe2,
    jax,
    mindspore,
    mindspore_v2,
    mpi,
    mpi_v1,
    mxnet,
    paddle,
    paddle_edl,
    pytorch,
    tensorflow,
    trainjob,
    xgboost,
)
from trainjobs.frameworks.base import Framework

__all__ = ["REGISTRY", "Registry"]


class Registry:
    """Frameworks by name and by (apiVersion, kind)."""

    def __init__(self, plugins: Sequence[Framework[Any]]) -> None:
        self._by_name: dict[str, Framework[Any]] = {}
        self._by_kind: dict[tuple[str, str], Framework[Any]] = {}
        for plugin in plugins:
            if plugin.name in self._by_name:
                raise ValueError(f"framework {plugin.name!r} is registered twice")
            key = (plugin.kind.api_version, plugin.kind.kind)
            if key in self._by_kind:
                raise ValueError(f"{key} is claimed by two frameworks")
            self._by_name[plugin.name] = plugin
            self._by_kind[key] = plugin
        self._definitions: dict[tuple[str, str], Framework[Any]] = {}
        for plugin in plugins:
            for ref in plugin.definition_kinds:
                key = (ref.api_version, ref.kind)
                if key in self._by_kind or key in self._definitions:
                    raise ValueError(f"{key} is claimed by two frameworks")
                self._definitions[key] = plugin

    def __iter__(self) -> Iterator[Framework[Any]]:
        return iter(self._by_name.values())

    def __len__(self) -> int:
        return len(self._by_name)

    def by_name(self, name: str) -> Framework[Any] | None:
        return self._by_name.get(name)

    def named(self, name: str) -> Framework[Any]:
        """The framework registered as ``name``; KeyError naming the known ones if none."""
        found = self._by_name.get(name)
        if found is None:
            raise KeyError(f"no framework {name!r}; known: {', '.join(self._by_name)}")
        return found

    def by_kind(self, api_version: str, kind: str) -> Framework[Any] | None:
        return self._by_kind.get((api_version, kind))

    def defining(self, api_version: str, kind: str) -> Framework[Any] | None:
        """The framework one of whose :attr:`~Framework.definition_kinds` this is (a
        Trainer runtime: the trainjob framework), or None."""
        return self._definitions.get((api_version, kind))

    def definition_kinds(self) -> list[str]:
        """Every accepted ``apiVersion kind`` of a definition document, for error hints."""
        return [f"{api} {kind}" for api, kind in self._definitions]

    def kinds(self) -> list[str]:
        """Every accepted ``apiVersion kind``, for error hints."""
        return [f"{api} {kind}" for api, kind in self._by_kind]


_PLUGINS: tuple[Framework[Any], ...] = (
    tensorflow.FRAMEWORK,
    pytorch.FRAMEWORK,
    mpi.FRAMEWORK,
    mpi_v1.FRAMEWORK,
    xgboost.FRAMEWORK,
    paddle.FRAMEWORK,
    jax.FRAMEWORK,
    trainjob.FRAMEWORK,
    mxnet.FRAMEWORK,
    paddle_edl.FRAMEWORK,
    caffe2.FRAMEWORK,
    mindspore.FRAMEWORK,
    mindspore_v2.FRAMEWORK,
)

REGISTRY = Registry(_PLUGINS)
