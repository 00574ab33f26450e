"""Platform components: a backend, node pool, queue or operator as a Pulumi component."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pulumi

from trainjobs.check import run
from trainjobs.components.register import register_manifest
from trainjobs.components.secrets import GeneratedValues
from trainjobs.errors import Finding, SpecError
from trainjobs.frameworks.base import K8sModel
from trainjobs.k8s.order import apply_tier
from trainjobs.platform import API_VERSION, PlatformMeta, PlatformResource
from trainjobs.render import RenderedObject, RenderedUnit, UnitRef
from trainjobs.spec.entry import PlatformEntry
from trainjobs.spec.load import parse_entry
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, StackSpec

__all__ = ["InvalidResourceError", "PlatformComponent", "register_objects"]


class InvalidResourceError(pulumi.RunError):
    """A resource given to a component is invalid; ``findings`` lists every problem."""

    def __init__(self, message: str, findings: tuple[Finding, ...] = ()) -> None:
        super().__init__(message)
        self.findings = findings


def register_objects(
    parent: pulumi.Resource, objects: tuple[RenderedObject, ...]
) -> list[pulumi.CustomResource]:
    """Register each object as a child of ``parent``; generated values become secrets.

    A unit is created in steps (``k8s.order.apply_tier``): definitions (CRDs,
    ServiceAccounts, Secrets, ConfigMaps, RBAC), then Services, then workloads and
    custom resources, then webhooks — each step after everything before it. A pod
    created before its Secret would not start, a custom resource before its CRD
    would be refused, a pod before its Service would miss the Service's link
    variables, a webhook before its server would reject every object.
    """
    generated = GeneratedValues(parent)
    registered: list[pulumi.CustomResource] = []
    for tier in sorted({apply_tier(o.manifest) for o in objects}):
        opts = pulumi.ResourceOptions(parent=parent, depends_on=list(registered))
        registered += [
            register_manifest(o.manifest, opts, generated, o.lifecycle)
            for o in objects
            if apply_tier(o.manifest) == tier
        ]
    return registered


class PlatformComponent(pulumi.ComponentResource):
    """One backend, node pool, queue or operator and its Kubernetes objects.

    Subclasses set ``kind`` (``RedisBackend`` …) and are the typed way to declare
    one in a Pulumi program::

        redis = RedisBackend("redis", {"password": True}, namespace="training")

    Args:
        name: the resource's name (``metadata.name``) and the component's Pulumi name;
            with ``rendered``, only the Pulumi name (the stack program's ``namespace/name``).
        spec: the kind's ``spec`` — its pydantic model or plain data; default all defaults.
        namespace: where its objects go; default per kind.
        rendered: an already rendered unit and its entry (used by the stack program).
        uses: platform components this one refers to (a queue's node pool): rendered
            with it so references resolve, and created before it.
        k8s_version: Kubernetes version to check against.
        opts: Pulumi resource options.

    Outputs: ``objects`` (``Kind namespace/name`` of each child) and the kind's own
    outputs (an address …) as ``outputs``.
    """

    kind: ClassVar[str] = ""
    entry: PlatformEntry
    objects: pulumi.Output[list[str]]
    outputs: pulumi.Output[dict[str, str]]
    _by_kind: ClassVar[dict[str, type[PlatformComponent]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.kind:
            PlatformComponent._by_kind[cls.kind] = cls

    @staticmethod
    def for_kind(kind: str) -> type[PlatformComponent]:
        """The typed component of a platform kind (``GpuNodePool`` …), else the generic one."""
        return PlatformComponent._by_kind.get(kind, PlatformComponent)

    def __init__(
        self,
        name: str,
        spec: Any = None,
        *,
        namespace: str | None = None,
        rendered: tuple[PlatformEntry, RenderedUnit] | None = None,
        uses: Sequence[PlatformComponent] = (),
        k8s_version: str = DEFAULT_K8S_VERSION,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        if rendered is None:
            entry = self._entry(name, spec, namespace)
            platform = (*(u.entry for u in uses), entry)
            try:
                rendering = run(StackSpec(platform=platform), k8s_version=k8s_version)
            except SpecError as exc:
                raise InvalidResourceError(f"{name}: {exc}", tuple(exc.findings)) from None
            ref = UnitRef(entry.plugin.category, entry.key)
            unit = next(u for u in rendering.units if u.ref == ref)
        else:
            entry, unit = rendered
        if uses:
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=list(uses)))
        super().__init__(f"trainjobs:index:{entry.plugin.kind}", name, None, opts)
        self.entry = entry
        rendered_unit = unit
        self.rendered = rendered_unit
        self.resources = register_objects(self, rendered_unit.objects)
        self.register_extra()
        titles = [o.title for o in rendered_unit.objects]
        self.objects = pulumi.Output.from_input(titles)
        self.outputs = pulumi.Output.from_input(dict(rendered_unit.outputs))
        self.register_outputs({"objects": titles, **rendered_unit.outputs})

    def register_extra(self) -> None:
        """Register what is not a Kubernetes object (a cloud node pool); default nothing."""

    def _entry(self, name: str, spec: Any, namespace: str | None) -> PlatformEntry:
        if isinstance(spec, PlatformResource):
            document: Mapping[str, Any] = spec.to_manifest()
        else:
            data = spec.to_manifest() if isinstance(spec, K8sModel) else dict(spec or {})
            meta = PlatformMeta(name=name, namespace=namespace).to_manifest()
            document = {
                "apiVersion": API_VERSION,
                "kind": self.kind,
                "metadata": meta,
                "spec": data,
            }
        parsed = parse_entry(document, path=name)
        if not parsed.platform:
            raise InvalidResourceError(
                f"{name}: {SpecError.from_findings(parsed.findings)}", tuple(parsed.findings)
            )
        return parsed.platform[0]

    @property
    def reference(self) -> str:
        """How a job names this resource in its options: ``namespace/name`` or ``name``."""
        return self.rendered.ref.name
