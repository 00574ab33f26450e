"""An API kind a framework reads and its operator consumes."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["KindRef"]


@dataclass(frozen=True)
class KindRef:
    """An API kind: ``kubeflow.org/v1`` ``TFJob`` with plural ``tfjobs``."""

    api_version: str
    kind: str
    plural: str
    short_names: tuple[str, ...] = ()
    """Short names (``kubectl get tj``) a generated CRD declares; default none."""

    @property
    def group(self) -> str:
        return self.api_version.rpartition("/")[0]

    @property
    def version(self) -> str:
        return self.api_version.rpartition("/")[2]

    @property
    def crd_name(self) -> str:
        """The CustomResourceDefinition name, e.g. ``tfjobs.kubeflow.org``."""
        return f"{self.plural}.{self.group}"
