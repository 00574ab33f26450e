"""A stack → every unit, wired: what depends on what, and the objects in apply order."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from trainjobs import limits
from trainjobs.errors import Finding, Severity, SpecError
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.names import dns1123_label_problem, labelled_name_problem
from trainjobs.k8s.order import apply_rank
from trainjobs.plan.memo import render_scope
from trainjobs.platform.base import PlatformKind, PlatformResource
from trainjobs.render.jobs import (
    IGNORE_ANNOTATION,
    DefaultedJob,
    base_plan,
    render_job,
    with_ignored,
)
from trainjobs.render.lifecycle import Lifecycle, base_lifecycle
from trainjobs.render.model import RenderedObject, RenderedUnit, Rendering, UnitRef
from trainjobs.render.namespace_labels import (
    enforced_level,
    ignores_by_namespace,
    with_pod_security_labels,
)
from trainjobs.render.resolve import PlatformIndex
from trainjobs.spec.entry import PlatformEntry, Target
from trainjobs.spec.stack import Profile, StackSpec

__all__ = ["render", "render_platform"]


def render_platform(
    entry: PlatformEntry, index: PlatformIndex
) -> tuple[RenderedUnit, list[Finding]]:
    """One backend, node pool, queue or operator → its unit."""
    plugin, resource = entry.plugin, entry.resource
    # Loading refused the resource on an error; its warnings are reported with the render.
    findings: list[Finding] = [
        f.located(entry.source, entry.path)
        for f in plugin.validate(resource)
        if f.severity is not Severity.ERROR
    ]
    name_problem = labelled_name_problem(resource.name)
    namespace = plugin.namespace(resource)
    problems = [
        ("metadata.name", "name", resource.name, name_problem),
        (
            "metadata.namespace",
            "namespace",
            namespace,
            namespace and dns1123_label_problem(namespace),
        ),
    ]
    for path, what, value, said in problems:
        if said:
            findings.append(
                Finding(
                    code=f"{what}.invalid",
                    path=f"{entry.path}.{path}",
                    message=f"the {what} {said}",
                    value=value,
                    hint=f"give the {plugin.kind} another {what}",
                    source=entry.source,
                )
            )
    depends_on: list[UnitRef] = []
    for ref in plugin.references(resource):
        found, problem = index.resolve(ref, plugin.namespace(resource), entry.source)
        if found is None:
            findings += [problem.located(entry.source, entry.path)] if problem else []
        else:
            depends_on.append(UnitRef(found.plugin.category, found.key))
    manifests = sorted(plugin.manifests_in(resource, index.resources), key=apply_rank)
    objects = tuple(
        RenderedObject(m, entry.path, entry.source, resource.name, _lifecycle(plugin, resource, m))
        for m in (_with_exemptions(plugin, resource, m) for m in manifests)
    )
    unit = RenderedUnit(
        ref=UnitRef(plugin.category, entry.key),
        kind=plugin.kind,
        objects=objects,
        depends_on=tuple(depends_on),
        outputs=plugin.outputs(resource),
        origin=entry.path,
        source=entry.source,
    )
    return unit, findings


def _with_exemptions(
    plugin: PlatformKind, resource: PlatformResource, manifest: Manifest
) -> Manifest:
    """The object, naming in its ignore annotation the rules its kind exempts it from."""
    codes = [e.code for e in plugin.check_exemptions(resource, manifest)]
    return with_ignored(manifest, codes)


def _lifecycle(plugin: PlatformKind, resource: PlatformResource, manifest: Manifest) -> Lifecycle:
    timeout = plugin.await_timeout(resource, manifest)
    return Lifecycle(timeout=timeout) if timeout else base_lifecycle(manifest)


def _provided_kinds(unit: RenderedUnit) -> set[tuple[str, str]]:
    """(group, kind) of every CustomResourceDefinition the unit installs."""
    kinds = set()
    for obj in unit.objects:
        manifest = obj.manifest
        if manifest.get("kind") == "CustomResourceDefinition":
            spec = manifest.get("spec") or {}
            kinds.add((str(spec.get("group")), str((spec.get("names") or {}).get("kind"))))
    return kinds


def _wire(units: list[RenderedUnit]) -> list[RenderedUnit]:
    """Add the dependencies no one wrote down.

    A unit whose objects are custom resources depends on the unit in the stack
    that installs their CRD (no "no matches for kind" on the first ``pulumi up``);
    a unit in a namespace the stack creates depends on that namespace.
    """
    installers: dict[tuple[str, str], UnitRef] = {}
    for unit in units:
        for kind in _provided_kinds(unit):
            installers.setdefault(kind, unit.ref)
    created = {u.ref.name for u in units if u.ref.category == "namespace"}
    wired = []
    for unit in units:
        extra: list[UnitRef] = []
        # A job has thousands of objects of a few kinds in one namespace: look each up once.
        kinds_seen: set[tuple[str, str]] = set()
        namespaces_seen: set[str] = set()
        for obj in unit.objects:
            kind = (str(obj.manifest.get("apiVersion", "")), str(obj.manifest.get("kind")))
            if kind not in kinds_seen:
                kinds_seen.add(kind)
                installer = installers.get((kind[0].rpartition("/")[0], kind[1]))
                if installer is not None and installer != unit.ref:
                    extra.append(installer)
            namespace = (obj.manifest.get("metadata") or {}).get("namespace")
            if namespace and str(namespace) not in namespaces_seen:
                namespaces_seen.add(str(namespace))
                ns_unit = UnitRef("namespace", str(namespace))
                if ns_unit != unit.ref and str(namespace) in created:
                    extra.append(ns_unit)
        merged = tuple(dict.fromkeys([*unit.depends_on, *extra]))
        wired.append(replace(unit, depends_on=merged) if merged != unit.depends_on else unit)
    return wired


def _in_dependency_order(units: Sequence[RenderedUnit]) -> tuple[list[RenderedUnit], list[Finding]]:
    """Every unit after its dependencies, input order otherwise; cycles are findings.

    Two units with one name (a job declared twice) both stay, so the name
    check reports the duplicate objects.
    """
    by_ref: dict[UnitRef, RenderedUnit] = {}
    for unit in units:
        by_ref.setdefault(unit.ref, unit)
    order: list[RenderedUnit] = []
    placed: set[int] = set()
    visiting: list[UnitRef] = []
    findings: list[Finding] = []

    def visit(unit: RenderedUnit) -> None:
        if id(unit) in placed:
            return
        if unit.ref in visiting:
            cycle = [*visiting[visiting.index(unit.ref) :], unit.ref]
            findings.append(
                Finding(
                    code="ref.cycle",
                    path=unit.origin,
                    message="these resources depend on each other in a circle: "
                    + " → ".join(str(r) for r in cycle),
                    hint="remove one of the references",
                    source=unit.source,
                )
            )
            return
        visiting.append(unit.ref)
        for dep in unit.depends_on:
            if dep in by_ref:
                visit(by_ref[dep])
        visiting.pop()
        if id(unit) not in placed:
            placed.add(id(unit))
            order.append(unit)

    for unit in units:
        visit(unit)
    return order, findings


def _label_namespaces(
    units: Sequence[RenderedUnit], checked: Profile, k8s_version: str, stack_ignore: Sequence[str]
) -> list[RenderedUnit]:
    """Every Namespace of ``units`` labelled with the Pod Security level it can enforce."""
    ignores = ignores_by_namespace(
        [o.manifest for u in units for o in u.objects], IGNORE_ANNOTATION
    )

    def labelled(obj: RenderedObject) -> RenderedObject:
        if obj.manifest.get("kind") != "Namespace" or obj.manifest.get("apiVersion") != "v1":
            return obj
        name = str((obj.manifest.get("metadata") or {}).get("name"))
        level = enforced_level(checked, [*stack_ignore, *ignores.get(name, ())])
        return replace(
            obj, manifest=with_pod_security_labels(obj.manifest, checked, level, k8s_version)
        )

    return [replace(u, objects=tuple(labelled(o) for o in u.objects)) for u in units]


def _refuse_too_many_pods(stack: StackSpec) -> list[DefaultedJob | None]:
    """Refuse a stack with more jobs than the limit, or whose jobs together run more
    pods than the limit, before any job is expanded: 20 jobs of 10,000 replicas each
    pass the per-job limit, yet expanding them all would take tens of GB.

    Returns each job's ``base_plan`` (None: it cannot be defaulted, which its render
    reports), so the render does not default the jobs a second time."""
    if len(stack.jobs) > limits.JOBS.value():
        raise SpecError.from_findings(
            [
                Finding(
                    code="jobs.too_many",
                    path=stack.jobs[limits.JOBS.value()].path,
                    message=f"the stack has {len(stack.jobs):,} jobs; {limits.JOBS.exceeded()}",
                    hint="split the stack; if it is right, raise the limit with "
                    f"{limits.JOBS.env}=N",
                    source=stack.jobs[0].source or stack.source,
                )
            ]
        )
    plans: list[DefaultedJob | None] = []
    for entry in stack.jobs:
        try:
            plans.append(base_plan(entry))
        except SpecError:  # render_job reports a job that cannot be defaulted
            plans.append(None)
    # A job over the per-job limit is reported by render_job at its replica count, and
    # never expanded: only the others add up here.
    counts = [
        (planned.plan.pods, entry)
        for planned, entry in zip(plans, stack.jobs, strict=True)
        if planned is not None and planned.plan.pods <= limits.POD_COUNT.value()
    ]
    total = sum(count for count, _ in counts)
    if total <= limits.STACK_PODS.value():
        return plans
    count, largest = max(counts, key=lambda pair: pair[0])
    raise SpecError.from_findings(
        [
            Finding(
                code="replicas.stack_too_many",
                path=largest.path,
                message=(
                    f"the stack's {len(counts)} jobs would run {total:,} pods, this one "
                    f"{count:,}; {limits.STACK_PODS.exceeded()}"
                ),
                hint="check the replica counts for a typo, or split the stack; if it is "
                f"right, raise the limit with {limits.STACK_PODS.env}=N",
                source=largest.source or stack.source,
            )
        ]
    )


def render(
    stack: StackSpec,
    target: Target | None = None,
    *,
    pod_security: Profile | None = None,
    k8s_version: str | None = None,
) -> Rendering:
    """Render every unit of ``stack``; ``target`` overrides each job's own.

    ``pod_security`` and ``k8s_version`` override the stack's level and version, which
    the Namespaces it creates are labelled to enforce (:mod:`namespace_labels`).
    Raises SpecError listing every error found anywhere in the stack.
    """
    with render_scope():
        return _render(stack, target, pod_security, k8s_version)


def _render(
    stack: StackSpec,
    target: Target | None,
    pod_security: Profile | None,
    k8s_version: str | None,
) -> Rendering:
    plans = _refuse_too_many_pods(stack)
    index = PlatformIndex(stack.platform, stack.unresolved)
    findings: list[Finding] = []
    units: list[RenderedUnit] = [
        RenderedUnit(
            ref=UnitRef("namespace", name),
            kind="Namespace",
            objects=(
                RenderedObject(
                    {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}},
                    f"namespaces[{i}]",
                    stack.source,
                ),
            ),
            origin=f"namespaces[{i}]",
            source=stack.source,
        )
        for i, name in enumerate(stack.namespaces)
    ]
    for entry in stack.platform:
        unit, problems = render_platform(entry, index)
        units.append(unit)
        findings += problems
    for job_entry, plan in zip(stack.jobs, plans, strict=True):
        rendered, problems = render_job(job_entry, target, stack.target, index, plan)
        findings += problems
        if rendered is not None:
            units.append(rendered)
    units = _label_namespaces(
        units, pod_security or stack.pod_security, k8s_version or stack.k8s_version, stack.ignore
    )
    ordered, cycles = _in_dependency_order(_wire(units))
    findings += cycles
    if any(f.severity is Severity.ERROR for f in findings):
        raise SpecError.from_findings(findings)
    objects = sorted((o for u in ordered for o in u.objects), key=lambda o: apply_rank(o.manifest))
    return Rendering(tuple(ordered), tuple(objects), tuple(findings), stack.k8s_version)
