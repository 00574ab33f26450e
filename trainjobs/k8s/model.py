"""The shared base models of Kubernetes documents: camelCase on the wire, strict, frozen.

``K8sModel`` is the base of every upstream API model (a framework's custom resource, a
platform component's settings, a stack's options); ``ObjectMeta`` and ``JobResource``
are the metadata and the apiVersion/kind/metadata frame every training job shares.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Self, get_args, get_origin

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel

from trainjobs.k8s.data import Manifest, drop_nulls
from trainjobs.k8s.kinds import KindRef

__all__ = [
    "DEFAULT_NAMESPACE",
    "JobResource",
    "K8sModel",
    "ObjectMeta",
    "model_from_generic",
]

DEFAULT_NAMESPACE = "default"
"""Namespace of a job whose metadata names none; made explicit in every render."""


class K8sModel(BaseModel):
    """Base of every upstream API model: camelCase on the wire, snake_case in Python.

    Unknown fields are rejected so a misspelt field is reported, not ignored.
    """

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="forbid",
        frozen=True,
        # Kubernetes rejects "2" where it wants 2, so trainjobs does too.
        strict=True,
    )

    def to_manifest(self) -> Manifest:
        """The model as plain data in upstream spelling, unset fields left out."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


class ObjectMeta(K8sModel):
    """The metadata of a job. Only what a user sets is kept.

    Fields the API server fills in (uid, resourceVersion, managedFields …) are
    accepted, so ``kubectl get -o yaml`` output is valid input, and dropped.
    """

    name: str = Field(description="Job name; names every object rendered from it. Required.")
    namespace: str | None = Field(
        default=None, description=f"Namespace; default {DEFAULT_NAMESPACE!r}."
    )
    labels: dict[str, str] | None = Field(default=None, description="Labels of the job object.")
    annotations: dict[str, str] | None = Field(
        default=None, description="Annotations of the job object."
    )
    uid: Any = Field(default=None, exclude=True)
    resource_version: Any = Field(default=None, exclude=True)
    generation: Any = Field(default=None, exclude=True)
    creation_timestamp: Any = Field(default=None, exclude=True)
    deletion_timestamp: Any = Field(default=None, exclude=True)
    deletion_grace_period_seconds: Any = Field(default=None, exclude=True)
    managed_fields: Any = Field(default=None, exclude=True)
    self_link: Any = Field(default=None, exclude=True)
    owner_references: Any = Field(default=None, exclude=True)
    finalizers: Any = Field(default=None, exclude=True)

    @property
    def ns(self) -> str:
        """The namespace, defaulted."""
        return self.namespace or DEFAULT_NAMESPACE


class JobResource(K8sModel):
    """A training job custom resource: apiVersion, kind, metadata, spec.

    ``status`` is accepted (so exported objects are valid input) and dropped.
    """

    api_version: str
    kind: str
    metadata: ObjectMeta
    status: Any = Field(default=None, exclude=True)

    @model_validator(mode="before")
    @classmethod
    def _unset_nulls(cls, data: Any) -> Any:
        # `command:` with no value is null in YAML; the API server prunes a null
        # field of a custom resource before defaulting (nullable is false in every
        # Kubeflow CRD), so to the operator it is an unset field.
        return drop_nulls(data) if isinstance(data, Mapping) else data

    @classmethod
    def kind_ref(cls) -> KindRef:
        """The kind this model accepts: its ``apiVersion`` and ``kind`` defaults, with the
        plural the lowercase kind plus ``s`` (``TFJob`` → ``tfjobs``), as every kind here
        has it."""
        api_version: str = cls.model_fields["api_version"].default
        kind: str = cls.model_fields["kind"].default
        return KindRef(api_version, kind, f"{kind.lower()}s")

    @property
    def name(self) -> str:
        return self.metadata.name

    @property
    def namespace(self) -> str:
        return self.metadata.ns

    def with_labels(self, labels: Mapping[str, str]) -> Self:
        """The job with its own labels (``metadata.labels``) replaced."""
        metadata = self.metadata.model_copy(update={"labels": dict(labels)})
        return self.model_copy(update={"metadata": metadata})


def model_from_generic(cls: type, root: type) -> Any:
    """Give ``cls``, a subclass of ``root``, the ``model`` its generic base names (``TFJob``
    of ``class TensorFlow(KubeflowV1Framework[TFJob])``) unless it sets one; the model
    ``cls`` states itself, or None when it inherits one. TypeError at import when a
    concrete ``cls`` (no type variable left, unlike ``KubeflowV1Framework[V1JobT]``) has
    no model at all."""
    for base in cls.__dict__.get("__orig_bases__", ()):
        origin = get_origin(base)
        if "model" not in cls.__dict__ and isinstance(origin, type) and issubclass(origin, root):
            (argument,) = get_args(base)
            if isinstance(argument, type):
                # setattr: ``cls`` is typed ``type`` here, which declares no ``model``.
                setattr(cls, "model", argument)  # noqa: B010
    if not hasattr(cls, "model") and not getattr(cls, "__parameters__", ()):
        raise TypeError(
            f"{cls.__qualname__} has no model: parameterise its base with the document "
            f"model ({root.__name__}[YourModel]) or set `model = YourModel`"
        )
    return cls.__dict__.get("model")
