"""The framework registry: every plugin, listed once.

Adding a framework: write its module in this package and add one :class:`Plugin`
line to ``_PLUGINS`` below: its name, the ``apiVersion`` and ``kind`` it claims and
the module whose ``FRAMEWORK`` it is. Nothing else in trainjobs changes.

A module is imported the first time its framework is asked for (``by_name``,
``by_kind``, iterating the registry), not when the registry is: importing one builds
its pydantic models, tens of milliseconds each, and ``trainjobs check`` of one TFJob
needs only TensorFlow's. ``tests/frameworks/test_registry_lazy.py`` holds every line
to what its module declares.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from trainjobs._lazy import LazyTable, Line

if TYPE_CHECKING:
    from trainjobs.frameworks.base import Framework

__all__ = ["REGISTRY", "Plugin", "Registry"]


@dataclass(frozen=True)
class Plugin(Line["Framework[Any]"]):
    """Where a framework plugin is, known before it is imported.

    Attributes:
        name: the framework's ``name`` (``tensorflow``); no default.
        api_version: the ``apiVersion`` of its custom resource (``kubeflow.org/v1``).
        kind: the ``kind`` of its custom resource (``TFJob``).
        module: the dotted name of the module whose ``FRAMEWORK`` is the plugin.
        definitions: the ``(apiVersion, kind)`` of its ``definition_kinds`` (documents
            its jobs name, such as Trainer runtimes); default none.
    """

    name: str
    api_version: str
    kind: str
    module: str
    definitions: tuple[tuple[str, str], ...] = ()
    attribute = "FRAMEWORK"
    registry = "trainjobs/frameworks/registry.py"

    def says(self) -> tuple[Any, ...]:
        return (self.name, self.api_version, self.kind, self.definitions)

    def declared(self, plugin: Framework[Any]) -> tuple[Any, ...]:
        defined = tuple((ref.api_version, ref.kind) for ref in plugin.definition_kinds)
        return (plugin.name, plugin.kind.api_version, plugin.kind.kind, defined)


class Registry:
    """Frameworks by name and by (apiVersion, kind).

    Holds each framework as a :class:`Plugin` line, imported on first use. ``len``,
    ``kinds`` and ``names`` import nothing; ``by_name`` and ``by_kind`` import the one
    framework asked for; iterating imports them all.
    """

    def __init__(self, plugins: Iterable[Plugin]) -> None:
        self._by_name: LazyTable[str, Framework[Any]] = LazyTable("framework")
        self._by_kind: dict[tuple[str, str], str] = {}
        self._definitions: dict[tuple[str, str], str] = {}
        for plugin in plugins:
            self._by_name.add(plugin.name, plugin)
            self._claim(self._by_kind, (plugin.api_version, plugin.kind), plugin.name)
            for key in plugin.definitions:
                self._claim(self._definitions, key, plugin.name)

    def _claim(self, table: dict[tuple[str, str], str], key: tuple[str, str], name: str) -> None:
        if key in self._by_kind or key in self._definitions:
            raise ValueError(f"{key} is claimed by two frameworks")
        table[key] = name

    def __iter__(self) -> Iterator[Framework[Any]]:
        return iter(self._by_name)

    def __len__(self) -> int:
        return len(self._by_name)

    def by_name(self, name: str) -> Framework[Any] | None:
        return self._by_name.get(name)

    def by_kind(self, api_version: str, kind: str) -> Framework[Any] | None:
        name = self._by_kind.get((api_version, kind))
        return None if name is None else self._by_name[name]

    def named(self, name: str) -> Framework[Any]:
        """The framework registered as ``name``; KeyError naming the known ones if none."""
        if name not in self._by_name:
            raise KeyError(f"no framework {name!r}; known: {', '.join(self._by_name.keys())}")
        return self._by_name[name]

    def names(self) -> list[str]:
        """Every framework's name, in registry order."""
        return self._by_name.keys()

    def of_document(
        self, body: Mapping[str, Any], *, defining: bool = False
    ) -> Framework[Any] | None:
        """The framework whose custom resource the document ``body`` is (by its
        ``apiVersion`` and ``kind``), or, with ``defining``, the one whose
        :attr:`~Framework.definition_kinds` include it; None when either field is not
        text or no framework claims the pair."""
        api_version, kind = body.get("apiVersion"), body.get("kind")
        if not isinstance(api_version, str) or not isinstance(kind, str):
            return None
        return self.defining(api_version, kind) if defining else self.by_kind(api_version, kind)

    def defining(self, api_version: str, kind: str) -> Framework[Any] | None:
        """The framework one of whose :attr:`~Framework.definition_kinds` this is (a
        Trainer runtime: the trainjob framework), or None."""
        name = self._definitions.get((api_version, kind))
        return None if name is None else self._by_name[name]

    def definition_kinds(self) -> list[str]:
        """Every accepted ``apiVersion kind`` of a definition document, for error hints."""
        return [f"{api} {kind}" for api, kind in self._definitions]

    def kinds(self) -> list[str]:
        """Every accepted ``apiVersion kind``, for error hints."""
        return [f"{api} {kind}" for api, kind in self._by_kind]


_TRAINER = "trainer.kubeflow.org/v1alpha1"
_RUNTIMES = ((_TRAINER, "ClusterTrainingRuntime"), (_TRAINER, "TrainingRuntime"))

_PLUGINS: tuple[Plugin, ...] = (
    Plugin("tensorflow", "kubeflow.org/v1", "TFJob", "trainjobs.frameworks.tensorflow"),
    Plugin("pytorch", "kubeflow.org/v1", "PyTorchJob", "trainjobs.frameworks.pytorch"),
    Plugin("mpi", "kubeflow.org/v2beta1", "MPIJob", "trainjobs.frameworks.mpi"),
    Plugin("mpi-v1", "kubeflow.org/v1", "MPIJob", "trainjobs.frameworks.mpi_v1"),
    Plugin("xgboost", "kubeflow.org/v1", "XGBoostJob", "trainjobs.frameworks.xgboost"),
    Plugin("paddle", "kubeflow.org/v1", "PaddleJob", "trainjobs.frameworks.paddle"),
    Plugin("jax", "kubeflow.org/v1", "JAXJob", "trainjobs.frameworks.jax"),
    Plugin("trainjob", _TRAINER, "TrainJob", "trainjobs.frameworks.trainjob", _RUNTIMES),
    Plugin("mxnet", "kubeflow.org/v1", "MXJob", "trainjobs.frameworks.mxnet"),
    Plugin("paddle-edl", "paddlepaddle.org/v1", "TrainingJob", "trainjobs.frameworks.paddle_edl"),
    Plugin("caffe2", "kubeflow.org/v1alpha1", "Caffe2Job", "trainjobs.frameworks.caffe2"),
    Plugin("mindspore", "kubeflow.org/v1", "MSJob", "trainjobs.frameworks.mindspore"),
    Plugin("mindspore-v2", "mindspore.gitee.com/v1", "MSJob", "trainjobs.frameworks.mindspore_v2"),
)

REGISTRY = Registry(_PLUGINS)
