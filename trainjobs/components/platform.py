"""Platform components: a backend, node pool, queue or operator as a Pulumi component."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, TypeGuard

import pulumi
from pulumi_kubernetes.yaml.v2 import ConfigGroup

from trainjobs.check import run
from trainjobs.components.inputs import Inputs, Resolved, is_output
from trainjobs.components.ownership import guard
from trainjobs.components.pod_set import is_member, register_pod_set
from trainjobs.components.register import child_name, register_manifest
from trainjobs.components.secrets import GeneratedValues
from trainjobs.errors import Finding, Rule, SpecError
from trainjobs.k8s.model import K8sModel
from trainjobs.k8s.order import apply_tier
from trainjobs.platform import API_VERSION, PlatformMeta, PlatformResource
from trainjobs.render import RenderedObject, RenderedUnit, UnitRef
from trainjobs.spec.entry import PlatformEntry
from trainjobs.spec.load import parse_entry
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, StackSpec

__all__ = [
    "ARGUMENT_TYPE",
    "NAMESPACE_TWICE",
    "OTHER_KIND",
    "InvalidResourceError",
    "PlatformArgs",
    "PlatformComponent",
    "SpecInput",
    "is_document",
    "is_text",
    "log_warnings",
    "own_findings",
    "register_objects",
    "wrong_type",
]

ARGUMENT_TYPE = Rule(
    "component.argument", "{component} takes {takes} here, not the {got} given", "{fix}"
)
"""An argument of a component's constructor has the wrong type (a name where a component
belongs, a list where a dict does): a finding at the argument, not a traceback."""


SpecInput = K8sModel | Mapping[str, Any] | None
"""What a platform component's ``spec`` may be: the kind's spec model (``RedisBackendSpec``
…), its fields as a dict, a whole ``trainjobs.dev/v1alpha1`` document, or None (defaults)."""

OTHER_KIND = Rule(
    "component.kind",
    "a {component} component takes a {component} document, not a {kind} one",
    "declare it with {kind}(...) (PlatformComponent.for_kind(kind) for any kind)",
)
"""A typed platform component was given the whole document of another kind."""


def wrong_type(component: str, argument: str, value: Any, takes: str, fix: str) -> Finding:
    """The finding that ``argument`` of ``component`` got ``value``, which is not ``takes``."""
    got = type(value).__name__
    return ARGUMENT_TYPE.at(argument, value, component=component, takes=takes, got=got, fix=fix)


def own_findings(findings: Iterable[Finding], path: str) -> list[Finding]:
    """The findings about the entry at ``path`` (its fields and its objects), not those of
    the components rendered beside it (a job's backend, a queue's pool), which log their own."""
    # A field (``redis.spec.port``, ``job[0]``) or an object (``redis → Deployment …``).
    under = tuple(path + sep for sep in ".[ :")
    return [f for f in findings if f.path == path or f.path.startswith(under)]


def log_warnings(findings: Iterable[Finding], resource: pulumi.Resource) -> None:
    """Log each finding (a warning or advice: an error stops the render) on ``resource``."""
    for finding in findings:
        pulumi.log.warn(finding.render(), resource=resource)


def is_document(spec: Any) -> TypeGuard[Mapping[str, Any]]:
    """Whether a component's ``spec`` is a whole document (``apiVersion``, ``kind`` …)
    rather than the fields of its ``spec``."""
    return isinstance(spec, Mapping) and "apiVersion" in spec and "kind" in spec


def is_text(value: Any) -> bool:
    """Whether ``value`` may stand where a string belongs: a str or a Pulumi Input of one."""
    return isinstance(value, str) or is_output(value)


class InvalidResourceError(pulumi.RunError):
    """A resource given to a component is invalid; ``findings`` lists every problem."""

    def __init__(self, message: str, findings: tuple[Finding, ...] = ()) -> None:
        super().__init__(message)
        self.findings = findings


def _explicit_provider(parent: pulumi.Resource) -> bool:
    """Whether ``parent``'s children go to a Kubernetes provider of the program's own,
    whose cluster the ownership guard cannot know (it reads the default provider's)."""
    providers = getattr(parent, "_providers", None) or {}
    return "kubernetes" in providers


BARRIER_EDGES = 256
"""Above this many ``depends_on`` edges from one apply tier to everything before it (every
Pod of a 17-worker pods-target job on each of its Services), the tier waits on one barrier
instead: the edges grow with the objects, not with their square (issue 35)."""


def _barrier(
    parent: pulumi.Resource,
    first: Mapping[str, Any],
    prefix: str,
    tier: int,
    before: Sequence[pulumi.Resource],
) -> pulumi.Resource:
    """One resource that is registered once everything in ``before`` is, so that a tier
    depending on it alone is created after all of them (and deleted before them).

    It is an empty ``kubernetes:yaml/v2:ConfigGroup``: a component served by the Kubernetes
    provider, so the engine and the SDK treat it as one dependency (the SDK expands a
    component of the program's own into all its children, which would bring every edge
    back). It creates nothing in the cluster. Its name is the tier's first object's,
    unique as that object's is.
    """
    name = f"{child_name(first, prefix)}:after-tier-{tier}"
    opts = pulumi.ResourceOptions(parent=parent, depends_on=list(before))
    return ConfigGroup(name, objs=[], opts=opts)


def register_objects(
    parent: pulumi.Resource,
    objects: tuple[RenderedObject, ...],
    *,
    prefix: str = "",
    inputs: Inputs | None = None,
    passwords: Mapping[str, pulumi.Input[str]] | None = None,
    secret: bool = False,
    pod_set: str = "",
) -> list[pulumi.CustomResource]:
    """Register each object as a child of ``parent``; generated values become secrets.

    ``prefix`` scopes the children's names (``register.child_name``); ``inputs``
    turns the tokens of Pulumi Inputs back into Outputs; ``passwords`` (placeholder
    group → Input) are given instead of generated; ``secret`` keeps every object's
    fields encrypted in the state (it came from a secret setting).

    A unit is created in steps (``k8s.order.apply_tier``): CRDs and Namespaces, then
    the other definitions (ServiceAccounts, Secrets, ConfigMaps, RBAC), then Services,
    then workloads and custom resources, then webhooks — each step after everything
    before it (the list returned is in the order of ``objects``). A pod
    created before its Secret would not start, a custom resource before its CRD
    would be refused, a pod before its Service would miss the Service's link
    variables, a webhook before its server would reject every object. A Job with
    ``lifecycle.after`` is created once the Jobs it names have completed (the provider
    awaits them): JobSet's ``dependsOn`` on the pods target. A step that would take more
    than ``BARRIER_EDGES`` edges to the steps before it waits on one barrier resource
    instead, which waits on them: the same order, with edges linear in the objects.

    ``pod_set``: register the Pods and Services as one pod set of that name
    (:mod:`trainjobs.components.pod_set`), in the tier of the Pods, after every tier
    before it; the list returned gives the pod set for each of them.
    """
    explicit = _explicit_provider(parent)
    if not explicit:
        guard().claim([o.manifest for o in objects], resource=parent)
    if pod_set and explicit:
        raise pulumi.RunError(
            f"{pod_set}: registration: pod-set applies to the cluster of the stack's "
            "Kubernetes settings (kubernetes:kubeconfig, kubernetes:context), and this job "
            "is given a Kubernetes provider of its own; use registration: objects for it"
        )
    generated = GeneratedValues(parent, prefix, passwords)
    by_index: dict[int, pulumi.CustomResource] = {}
    members = [i for i, o in enumerate(objects) if pod_set and is_member(o.manifest)]
    in_set = set(members)
    set_tier = max((apply_tier(objects[i].manifest) for i in members), default=-1)
    jobs = {
        str(o.manifest["metadata"]["name"]): i
        for i, o in enumerate(objects)
        if o.manifest.get("kind") == "Job"
    }
    # What an object of the next tier waits for: every object registered so far, or one
    # barrier standing for them all (``_barrier``).
    before: list[pulumi.Resource] = []
    tiers = {apply_tier(o.manifest) for i, o in enumerate(objects) if i not in in_set}
    for tier in sorted(tiers | ({set_tier} if members else set())):
        waiting = [
            i for i, o in enumerate(objects) if apply_tier(o.manifest) == tier and i not in in_set
        ]
        tier_indices = set(waiting)
        if len(before) * max(len(waiting), 1) > BARRIER_EDGES:
            first = objects[(waiting or members)[0]].manifest
            before = [_barrier(parent, first, prefix, tier, before)]
        if tier == set_tier:
            opts = pulumi.ResourceOptions(parent=parent, depends_on=list(before))
            made = register_pod_set(
                pod_set,
                [objects[i].manifest for i in members],
                [objects[i].lifecycle for i in members],
                opts,
                generated=generated,
                inputs=inputs,
                secret=secret,
            )
            by_index.update({i: made for i in members})
            tier_indices |= in_set
        while waiting:
            # A Job that waits for others (Lifecycle.after) comes once they are registered:
            # it depends on them, and the provider awaits their completion.
            ready = [
                i
                for i in waiting
                if all(jobs.get(n) in by_index for n in objects[i].lifecycle.after if n in jobs)
            ] or waiting
            for index in ready:
                o = objects[index]
                awaited = [by_index[jobs[n]] for n in o.lifecycle.after if n in jobs]
                opts = pulumi.ResourceOptions(parent=parent, depends_on=[*before, *awaited])
                by_index[index] = register_manifest(
                    o.manifest,
                    opts,
                    generated,
                    o.lifecycle,
                    prefix=prefix,
                    inputs=inputs,
                    secret=secret,
                )
            waiting = [i for i in waiting if i not in by_index]
        # In the order registered, as the edges were before barriers.
        made_here = {id(r): r for i, r in by_index.items() if i in tier_indices}
        before = [*before, *made_here.values()]
    # In the objects' order, so a resource and the object it came from pair up.
    return [by_index[i] for i in range(len(objects))]


@dataclass(frozen=True)
class PlatformArgs:
    """The arguments of a platform component, typed: ``GpuNodePool(name, PlatformArgs(...))``.

    Every string in ``spec`` and ``namespace`` may be a Pulumi Input.
    """

    spec: SpecInput = None
    """The kind's ``spec``: its pydantic model (``RedisBackendSpec`` …), or its fields as a
    dict, or a whole ``trainjobs.dev/v1alpha1`` document. Default: all defaults."""
    namespace: pulumi.Input[str] | None = None
    """Where its objects go; default per kind (backends ``default``, operators their
    upstream namespace, node pools cluster-wide)."""
    uses: Sequence[PlatformComponent] = ()
    """Platform components this one refers to (a queue's node pool); default none."""
    k8s_version: str = DEFAULT_K8S_VERSION
    """Kubernetes version the objects are checked against; default ``DEFAULT_K8S_VERSION``."""
    secret: bool = False
    """Keep every field of its objects encrypted in Pulumi's state; default false."""


class PlatformComponent(pulumi.ComponentResource):
    """One backend, node pool, queue or operator and its Kubernetes objects.

    Subclasses set ``kind`` (``RedisBackend`` …) and are the typed way to declare
    one in a Pulumi program::

        redis = RedisBackend("redis", {"password": True}, namespace="training")

    Args:
        name: the resource's name (``metadata.name``) and the component's Pulumi name,
            or ``namespace/name`` as the stack program names it (one name in two
            namespaces); with ``rendered`` or a whole document, only the Pulumi name.
        spec: the kind's ``spec`` — its pydantic model or plain data (strings may be
            Pulumi Inputs); default all defaults. Or a :class:`PlatformArgs` holding
            every argument below.
        namespace: where its objects go; default per kind.
        rendered: an already rendered unit and its entry (used by the stack program).
        uses: platform components this one refers to (a queue's node pool): rendered
            with it so references resolve, and created before it.
        k8s_version: Kubernetes version to check against.
        secret: keep every field of its objects encrypted in Pulumi's state (the stack
            program sets it for resources read from a secret setting); default false.
        opts: Pulumi resource options.

    Children are named ``<name>:<namespace>/<object>`` (see ``TrainingJob``) unless
    the component is named after its resource (``name`` or ``namespace/name``).
    Strings in ``spec`` and ``namespace`` may be Pulumi Inputs: rendered with
    placeholders, checked again when the values are known.

    Outputs: ``objects`` (``Kind namespace/name`` of each child) and the kind's own
    outputs (an address …) as ``outputs``.
    """

    kind: ClassVar[str] = ""
    entry: PlatformEntry
    inputs: Inputs
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
        spec: PlatformArgs | SpecInput = None,
        *,
        namespace: pulumi.Input[str] | None = None,
        rendered: tuple[PlatformEntry, RenderedUnit] | None = None,
        uses: Sequence[PlatformComponent] = (),
        k8s_version: str = DEFAULT_K8S_VERSION,
        secret: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        if isinstance(spec, PlatformArgs):
            namespace, uses = spec.namespace, spec.uses
            k8s_version, secret, spec = spec.k8s_version, spec.secret, spec.spec
        kind = self.kind or "PlatformComponent"
        wrong = _wrong_arguments(kind, spec, namespace, uses)
        if wrong:
            raise InvalidResourceError(f"{name}: {SpecError.from_findings(wrong)}", tuple(wrong))
        uses = [*uses, *self.shares_with(uses)]
        self.uses: tuple[PlatformComponent, ...] = tuple(uses)
        self.inputs = Inputs(f"{kind}/{name}").merge(*(u.inputs for u in uses))
        if rendered is None:
            resource_name, namespace = _split_name(kind, name, spec, namespace)
            try:
                lifted = self.inputs.lift(spec)
                entry = self._entry(resource_name, lifted, self.inputs.lift(namespace))
                platform = (*(u.entry for u in uses), entry)
                rendering = run(StackSpec(platform=platform), k8s_version=k8s_version)
            except (SpecError, InvalidResourceError) as exc:
                # Name each Input as the user knows it, not by its placeholder token.
                text = self.inputs.describe(str(SpecError.from_findings(exc.findings)))
                raise InvalidResourceError(f"{name}: {text}", tuple(exc.findings)) from None
            ref = UnitRef(entry.plugin.category, entry.key)
            unit = next(u for u in rendering.units if u.ref == ref)
            # With Inputs, the warnings come once their values are known (_check_resolved).
            warnings = [] if self.inputs else own_findings(rendering.findings, entry.path)
        else:
            entry, unit = rendered
            warnings = []  # the stack program logs the whole stack's
        if uses:
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=list(uses)))
        super().__init__(f"trainjobs:index:{entry.plugin.kind}", name, None, opts)
        log_warnings(warnings, self)
        self.entry = entry
        rendered_unit = unit
        self.rendered = rendered_unit
        # Named after its resource (``namespace/name`` as the stack program names it,
        # or the bare name), the children keep their plain names: a second copy has
        # another name and so scoped children, and today's URNs stay as they were.
        self.prefix = "" if name in (entry.key, entry.resource.name) else name
        self.resources = register_objects(
            self,
            rendered_unit.objects,
            prefix=self.prefix,
            inputs=self.inputs,
            passwords=self.given_passwords(),
            secret=secret,
        )
        self.register_extra()
        titles = [o.title for o in rendered_unit.objects]
        self.objects = pulumi.Output.from_input(self.inputs.substitute(titles))
        self.outputs = pulumi.Output.from_input(self.inputs.substitute(dict(rendered_unit.outputs)))
        checked: Any = None
        if self.inputs and rendered is None:
            checked = self.inputs.resolved().apply(
                lambda resolved: self._check_resolved(name, entry, uses, resolved, k8s_version)
            )
        self.register_outputs(
            {
                "objects": self.objects,
                **self.inputs.substitute(dict(rendered_unit.outputs)),
                **({"checked": checked} if checked is not None else {}),
            }
        )

    def resolved_entry(self, values: Mapping[str, Any]) -> PlatformEntry:
        """This resource's entry with its Inputs' resolved ``values`` in place of tokens."""
        document = Inputs.fill(self.entry.resource.to_manifest(), values)
        return self._entry(self.entry.resource.name, document, None)

    def given_passwords(self) -> Mapping[str, pulumi.Input[str]]:
        """Passwords the user gave (placeholder group → Input); default none."""
        return {}

    def _check_resolved(
        self,
        name: str,
        entry: PlatformEntry,
        uses: Sequence[PlatformComponent],
        resolved: Resolved,
        k8s_version: str,
    ) -> bool:
        """Render and check again with the Inputs' real values; fail the update if invalid.
        Neither the message nor a warning shows the value of a secret Input."""
        values = resolved.values
        document = Inputs.fill(entry.resource.to_manifest(), values)
        try:
            own = self._entry(name, document, None)
            platform = (*(u.resolved_entry(values) for u in uses), own)
            rendering = run(StackSpec(platform=platform), k8s_version=k8s_version)
        except (SpecError, InvalidResourceError) as exc:
            findings = tuple(resolved.redact(exc.findings))
            message = f"{name} (with its Pulumi Inputs resolved): {SpecError(findings)}"
            pulumi.log.error(message, resource=self)
            raise InvalidResourceError(message, findings) from None
        log_warnings(resolved.redact(own_findings(rendering.findings, own.path)), self)
        return True

    def shares_with(self, uses: Sequence[PlatformComponent]) -> list[PlatformComponent]:
        """Components made before this one that it shares objects with (the queues already
        on its pool, whose first renders the pool's ResourceFlavor): rendered ahead of it,
        as in a stack, so an object shared is registered once, and created before it.
        Default none."""
        return []

    def register_extra(self) -> None:
        """Register what is not a Kubernetes object (a cloud node pool); default nothing."""

    def _entry(self, name: str, spec: Any, namespace: str | None) -> PlatformEntry:
        if isinstance(spec, PlatformResource):
            document: Mapping[str, Any] = spec.to_manifest()
        elif is_document(spec):
            document = spec
        else:
            data = spec.to_manifest() if isinstance(spec, K8sModel) else dict(spec or {})
            meta = PlatformMeta(name=name, namespace=namespace).to_manifest()
            document = {
                "apiVersion": API_VERSION,
                "kind": self.kind,
                "metadata": meta,
                "spec": data,
            }
        kind = document.get("kind")
        if self.kind and kind != self.kind:
            # Parsed, it would register a resource of that kind under this class's name.
            found = OTHER_KIND.at(f"{name}.kind", kind, component=self.kind, kind=kind)
            raise InvalidResourceError(f"{name}: {SpecError.from_findings([found])}", (found,))
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


NAMESPACE_TWICE = Rule(
    "component.namespace",
    "the name {name!r} holds namespace {in_name!r}, and namespace is another",
    "give the namespace once: in the name (namespace/name) or as namespace",
)
"""A platform component named ``namespace/name`` was also given another namespace."""


def _split_name(kind: str, name: str, spec: Any, namespace: Any) -> tuple[str, Any]:
    """The resource name and namespace of a component named ``name``.

    ``namespace/name`` is how the stack program names a platform component, so a
    program may name one so too (the same name in two namespaces, the same URNs as in
    a stack); a whole document names its resource itself.
    """
    if "/" not in name or isinstance(spec, PlatformResource) or is_document(spec):
        return name, namespace
    in_name, _, resource_name = name.partition("/")
    if namespace is not None and namespace != in_name:
        found = NAMESPACE_TWICE.at("namespace", namespace, name=name, in_name=in_name)
        raise InvalidResourceError(f"{name}: {SpecError.from_findings([found])}", (found,))
    return resource_name, in_name


def _wrong_arguments(kind: str, spec: Any, namespace: Any, uses: Any) -> list[Finding]:
    """A finding for each argument of a platform component that has the wrong type."""
    found = []
    if spec is not None and not isinstance(spec, K8sModel | Mapping):
        takes = f"its spec model ({kind}Spec(...)), its fields as a dict, or its document"
        fix = "pass a dict such as {'password': True}, or the kind's spec model"
        found.append(wrong_type(kind, "spec", spec, takes, fix))
    if namespace is not None and not is_text(namespace):
        takes = "a namespace name (a str or a Pulumi Input of one)"
        found.append(wrong_type(kind, "namespace", namespace, takes, "give the name as a str"))
    listed = [uses] if isinstance(uses, str | Mapping) else list(uses)
    for i, used in enumerate(listed):
        if not isinstance(used, PlatformComponent):
            takes = "a platform component (GpuNodePool(...) …)"
            fix = "pass the component object, not its name or document"
            found.append(wrong_type(kind, f"uses[{i}]", used, takes, fix))
    return found
