"""``TrainingJob``: one training job as a Pulumi component."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pulumi
from pydantic import ValidationError

from trainjobs.check import run
from trainjobs.components.inputs import Inputs, Resolved
from trainjobs.components.platform import (
    InvalidResourceError,
    PlatformComponent,
    is_text,
    log_warnings,
    own_findings,
    register_objects,
    wrong_type,
)
from trainjobs.components.register import LiveObject
from trainjobs.errors import Finding, SpecError
from trainjobs.k8s.model import JobResource
from trainjobs.plan.trainer import TRAINJOB_KIND
from trainjobs.platform.gang import GangMechanism
from trainjobs.render import RenderedJob
from trainjobs.spec._findings import findings_from_validation_error
from trainjobs.spec.entry import OPTIONS_KEY, JobEntry, JobOptions, Registration, Target, Wait
from trainjobs.spec.load import load_path, parse_job
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, StackSpec
from trainjobs.targets.names import TARGETS, is_target

__all__ = [
    "DEFAULT_CLUSTER_DOMAIN",
    "InvalidJobError",
    "TrainingJob",
    "TrainingJobArgs",
    "jobs_from_file",
    "load_for_program",
]

DEFAULT_CLUSTER_DOMAIN = "cluster.local"
"""The DNS domain of a Kubernetes cluster unless its kubelets are told otherwise."""


class InvalidJobError(pulumi.RunError):
    """A job given to a component is invalid; ``findings`` lists every problem."""

    def __init__(self, message: str, findings: Sequence[Finding] = ()) -> None:
        super().__init__(message)
        self.findings = tuple(findings)


def _entry(job: JobResource | Mapping[str, Any], target: Target | None) -> JobEntry:
    if isinstance(job, JobResource):
        return JobEntry.of(job, target=target)
    entries, findings = parse_job(dict(job), path="job")
    if findings and not entries:
        raise SpecError.from_findings(findings)
    entry = entries[0]
    if target is not None:
        return JobEntry(
            entry.job,
            entry.framework,
            entry.options.model_copy(update={"target": target}),
            entry.path,
        )
    return entry


def _with_platform(
    entry: JobEntry,
    backend: PlatformComponent | None,
    node_pool: PlatformComponent | Mapping[str, PlatformComponent] | None,
    queue: PlatformComponent | None,
    values: Mapping[str, Any] | None = None,
) -> tuple[JobEntry, list[PlatformComponent]]:
    """The entry with its options naming the given components, and those components.

    With ``values`` (the Inputs resolved), the references hold the real names.
    """

    def ref(component: PlatformComponent) -> str:
        return str(Inputs.fill(component.reference, values)) if values else component.reference

    update: dict[str, Any] = {}
    used: list[PlatformComponent] = []
    if backend is not None:
        update["backend"] = ref(backend)
        used.append(backend)
    if isinstance(node_pool, PlatformComponent):
        update["node_pool"] = ref(node_pool)
        used.append(node_pool)
    elif node_pool:
        update["node_pool"] = {role: ref(pool) for role, pool in node_pool.items()}
        used += list(node_pool.values())
    if queue is not None:
        update["queue"] = ref(queue)
        used.append(queue)
    if not update:
        return entry, used
    options = entry.options.model_copy(update=update)
    return JobEntry(entry.job, entry.framework, options, entry.path, entry.source), used


def _with_options(entry: JobEntry, args: TrainingJobArgs) -> JobEntry:
    """The entry with the component's ``wait``, ``wait_timeout``, ``gang`` and
    ``registration``, validated as the same options beside a job in a file are (a bad
    value is a finding at its path)."""
    options = entry.options.to_manifest()
    # Only what the component was given replaces the job's own options.
    given = {
        "wait": args.wait,
        "waitTimeout": args.wait_timeout,
        "gang": args.gang,
        "registration": args.registration,
    }
    options.update({k: v for k, v in given.items() if v is not None})
    try:
        validated = JobOptions.model_validate({k: v for k, v in options.items() if v is not None})
    except ValidationError as exc:
        found = findings_from_validation_error(exc, JobOptions)
        prefix = f"{entry.path}.{OPTIONS_KEY}"
        raise SpecError.from_findings(f.located("", prefix) for f in found) from None
    return replace(entry, options=validated)


@dataclass(frozen=True)
class TrainingJobArgs:
    """The arguments of a :class:`TrainingJob`, typed (``TrainingJob(name, args, opts)``).

    Every string inside ``job`` (an image, an env value, a node selector) and
    ``namespace`` may be a Pulumi Input: an ``Output`` of a registry push, of another
    component, of a secret manager. The job is rendered and checked with
    placeholders at preview and again with the real values once they resolve.
    """

    job: JobResource | Mapping[str, Any]
    """The job: a typed model (``TFJob(...)``) or the upstream YAML as a dict. Required."""
    namespace: pulumi.Input[str] | None = None
    """Namespace of the job's objects, replacing ``metadata.namespace``; default the job's."""
    target: Target | None = None
    """``operator``, ``pods``, ``trainer`` or ``jobset``; default the job's ``trainjobs.target``
    (itself default ``operator``)."""
    backend: PlatformComponent | None = None
    """A backend component (``RedisBackend`` …) the pods rendezvous through; default none."""
    node_pool: PlatformComponent | Mapping[str, PlatformComponent] | None = None
    """A node pool for every GPU replica, or a map of replica type to pool; default none."""
    queue: PlatformComponent | None = None
    """A queue component the job is admitted through; default none."""
    gang: GangMechanism | None = None
    """``volcano`` or ``scheduler-plugins``: gang-schedule the job; default the job's
    ``trainjobs.gang`` (none)."""
    wait: Wait | None = None
    """How long ``pulumi up`` waits: ``none`` (default), ``running`` or ``succeeded``."""
    wait_timeout: str | None = None
    """How long it waits when it does, e.g. ``90m``; default 60m."""
    registration: Registration | None = None
    """``objects`` (each object its own Pulumi resource) or ``pod-set`` (pods target: the
    Pods and Services one resource, for big jobs); default the job's
    ``trainjobs.registration`` (itself default ``objects``)."""
    k8s_version: str = DEFAULT_K8S_VERSION
    """Kubernetes version the objects are checked against; default ``DEFAULT_K8S_VERSION``."""
    cluster_domain: str = DEFAULT_CLUSTER_DOMAIN
    """The cluster's DNS domain, for the full addresses in ``addresses``; default
    ``cluster.local``."""


def _document(job: JobResource | Mapping[str, Any], namespace: Any) -> Any:
    """The job as the parser takes it, with ``namespace`` (already a token or text) set."""
    if namespace is None:
        return job
    data = dict(job.to_manifest() if isinstance(job, JobResource) else job)
    data["metadata"] = {**dict(data.get("metadata") or {}), "namespace": namespace}
    return data


def _full_address(address: str, namespace: str, domain: str) -> str:
    """A Service address as a client anywhere in the cluster dials it:
    ``host`` or ``host.ns.svc`` (``:port``) → ``host.ns.svc.<domain>:port``."""
    host, sep, port = address.rpartition(":")
    if not sep or not host:
        host, port = address, ""
    if "." not in host:
        host = f"{host}.{namespace}.svc"
    if host.endswith(".svc"):
        host = f"{host}.{domain}"
    return f"{host}:{port}" if port else host


def _render(
    name: str,
    args: TrainingJobArgs,
    job: JobResource | Mapping[str, Any],
    namespace: Any,
    inputs: Inputs | None = None,
    values: Mapping[str, Any] | None = None,
) -> tuple[RenderedJob, list[PlatformComponent], list[Finding]]:
    """Render and check ``job`` with the platform components ``args`` names; ``inputs``
    names the Inputs' placeholders in an error message. With ``values`` (the Inputs
    resolved), the platform components are rendered with them too. Also returns the
    job's own warnings (not those of the components, which log their own)."""
    try:
        entry = _entry(_document(job, namespace), args.target)
        entry, used = _with_platform(entry, args.backend, args.node_pool, args.queue, values)
        if (args.wait, args.wait_timeout, args.gang, args.registration) != (None,) * 4:
            entry = _with_options(entry, args)
        rendered_with = _with_their_uses(used)
        platform = tuple(c.resolved_entry(values) if values else c.entry for c in rendered_with)
        unresolved = inputs.tokens if inputs else frozenset()
        stack = StackSpec(jobs=(entry,), platform=platform, unresolved=unresolved)
        rendering = run(stack, target=args.target, k8s_version=args.k8s_version)
    except SpecError as exc:
        text = inputs.describe(str(exc)) if inputs else str(exc)
        raise InvalidJobError(f"{name}: {text}", exc.findings) from None
    return rendering.jobs[0], used, own_findings(rendering.findings, entry.path)


class TrainingJob(pulumi.ComponentResource):
    """A distributed training job: its custom resource, or its Pods and Services.

    Args:
        name: the Pulumi name of the component. Its children are named
            ``<name>:<namespace>/<object>`` so that two components of one job (two
            clusters, a blue/green copy) never share a URN; a component named after
            its job (``<namespace>/<job>`` as the stack program names them, or
            ``<job>``) leaves the prefix out, so name at most one copy that way. An
            alias keeps the unscoped name, so stacks made before keep their objects.
        job: the job — a typed model, the upstream YAML as a dict (its strings may be
            Pulumi Inputs), or a :class:`TrainingJobArgs` holding every argument below.
        namespace, target, backend, node_pool, queue, gang, wait, wait_timeout,
        registration, k8s_version, cluster_domain: as in :class:`TrainingJobArgs` (ignored when
            ``job`` is a ``TrainingJobArgs``).
        rendered: an already rendered job (used by the stack program).
        secret: keep every field of its objects encrypted in Pulumi's state (the stack
            program sets it for jobs read from a secret setting); default false.
        opts: Pulumi resource options; children inherit the provider from it. The
            job also waits for every platform component it was given.

    Raises:
        InvalidJobError: the job is invalid; the message lists every finding. (The
            Python SDK has no ``pulumi.ResourceError``; ``RunError``, which this
            subclasses, is how a Python program fails with a message and no traceback.)
            With Inputs, the same check runs again when their values are known, and
            fails the update.

    Outputs:
        ``objects`` (``Kind namespace/name`` of each child), ``addresses`` (each
        role's full service address, ``mnist-chief-0.kubeflow.svc.cluster.local:2222``),
        ``target``, and ``status``: the live object's status as the cluster reports it
        after the update — the custom resource's ``status`` (its ``conditions``) on the
        operator and trainer targets, each pod's ``phase`` on the pods target.
    """

    objects: pulumi.Output[list[str]]
    addresses: pulumi.Output[dict[str, str]]
    status: pulumi.Output[Any]

    def __init__(
        self,
        name: str,
        job: TrainingJobArgs | JobResource | Mapping[str, Any] | None = None,
        *,
        namespace: pulumi.Input[str] | None = None,
        target: Target | None = None,
        backend: PlatformComponent | None = None,
        node_pool: PlatformComponent | Mapping[str, PlatformComponent] | None = None,
        queue: PlatformComponent | None = None,
        gang: GangMechanism | None = None,
        wait: Wait | None = None,
        wait_timeout: str | None = None,
        registration: Registration | None = None,
        k8s_version: str = DEFAULT_K8S_VERSION,
        cluster_domain: str = DEFAULT_CLUSTER_DOMAIN,
        rendered: RenderedJob | None = None,
        secret: bool = False,
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        used: list[PlatformComponent] = []
        if isinstance(job, TrainingJobArgs):
            args = job
        else:
            args = TrainingJobArgs(
                job if job is not None else {},
                namespace=namespace,
                target=target,
                backend=backend,
                node_pool=node_pool,
                queue=queue,
                gang=gang,
                wait=wait,
                wait_timeout=wait_timeout,
                registration=registration,
                k8s_version=k8s_version,
                cluster_domain=cluster_domain,
            )
        self.inputs = Inputs(f"TrainingJob/{name}")
        lifted_job: Any = None
        lifted_namespace: Any = None
        if rendered is None:
            if job is None:
                raise InvalidJobError(f"{name}: TrainingJob needs a job")
            wrong = _wrong_arguments(args)
            if wrong:
                raise InvalidJobError(f"{name}: {SpecError.from_findings(wrong)}", wrong)
            # The platform's Inputs first: an Output the job shares with its backend (a
            # namespace) keeps the backend's token.
            platform_inputs = [
                c.inputs for c in _components(args.backend, args.node_pool, args.queue)
            ]
            self.inputs.merge(*platform_inputs)
            lifted_job = self.inputs.lift(args.job)
            lifted_namespace = self.inputs.lift(args.namespace)
            rendered, used, found = _render(name, args, lifted_job, lifted_namespace, self.inputs)
            # With Inputs, the warnings come once their values are known (_check_resolved);
            # the stack program (``rendered``) logs the whole stack's.
            warnings = [] if self.inputs else found
        else:
            warnings = []
        if used:
            opts = pulumi.ResourceOptions.merge(opts, pulumi.ResourceOptions(depends_on=used))
        super().__init__("trainjobs:index:TrainingJob", name, None, opts)
        log_warnings(warnings, self)
        job_name = f"{rendered.job.namespace}/{rendered.job.name}"
        # Named after its job (``namespace/name`` as the stack program names it, or the
        # bare name), the children keep their plain names: a second component of the
        # same job has another name and so scoped children, and the URNs that stacks
        # and programs have today stay as they were.
        self.prefix = "" if name in (job_name, rendered.job.name) else name
        pod_set = f"{name}:pod-set" if rendered.entry.options.registration == "pod-set" else ""
        self.resources = register_objects(
            self,
            rendered.objects,
            prefix=self.prefix,
            inputs=self.inputs,
            secret=secret,
            pod_set=pod_set,
        )
        self.rendered = rendered
        titles = [o.title for o in rendered.objects]
        self.objects = pulumi.Output.from_input(self.inputs.substitute(titles))
        full = {
            role: _full_address(address, rendered.job.namespace, args.cluster_domain)
            for role, address in rendered.addresses.items()
        }
        self.addresses = pulumi.Output.from_input(self.inputs.substitute(full))
        self.status = self._status()
        outputs: dict[str, Any] = {
            "objects": self.objects,
            "addresses": self.addresses,
            "target": rendered.target,
            "status": self.status,
        }
        if self.inputs and lifted_job is not None:
            outputs["checked"] = self.inputs.resolved().apply(
                lambda resolved: self._check_resolved(
                    name, args, lifted_job, lifted_namespace, resolved
                )
            )
        self.register_outputs(outputs)

    def _status(self) -> pulumi.Output[Any]:
        """The live status: the job's own custom resource's, else each pod's phase."""
        # The trainer target's own object is the TrainJob, not the framework's kind.
        kind = TRAINJOB_KIND.kind if self.rendered.target == "trainer" else self.rendered.kind
        own = [
            r
            for r, o in zip(self.resources, self.rendered.objects, strict=True)
            if o.manifest.get("kind") == kind and isinstance(r, LiveObject)
        ]
        if own:
            return own[0].status
        pods = {
            str((o.manifest.get("metadata") or {}).get("name")): r
            for r, o in zip(self.resources, self.rendered.objects, strict=True)
            if o.manifest.get("kind") == "Pod"
        }
        if not pods:
            return pulumi.Output.from_input(None)
        names = sorted(pods)
        pod_set = next((r for r in pods.values() if hasattr(r, "phases")), None)
        if pod_set is not None:
            # One pod set holds them all: its ``phases`` output has each Pod's.
            held: pulumi.Output[Any] = pod_set.phases
            return held.apply(lambda p: {"pods": {n: (p or {}).get(n) for n in names}})
        phases = [_pod_phase(pods[n]) for n in names]
        return pulumi.Output.all(*phases).apply(
            lambda values: {"pods": dict(zip(names, values, strict=True))}
        )

    def _check_resolved(
        self,
        name: str,
        args: TrainingJobArgs,
        job: Any,
        namespace: Any,
        resolved: Resolved,
    ) -> bool:
        """Render and check the job again with its Inputs' values; fail the update if
        invalid. The message never shows the value of a secret Input."""
        values = resolved.values
        try:
            filled_job, filled_namespace = Inputs.fill(job, values), Inputs.fill(namespace, values)
            rendered, _, warnings = _render(name, args, filled_job, filled_namespace, None, values)
        except (InvalidJobError, InvalidResourceError) as exc:
            findings = resolved.redact(exc.findings)
            message = (
                f"{name} (with its Pulumi Inputs resolved): {SpecError.from_findings(findings)}"
            )
            pulumi.log.error(message, resource=self)
            raise InvalidJobError(message, findings) from None
        del rendered
        log_warnings(resolved.redact(warnings), self)
        return True


def _with_their_uses(used: Sequence[PlatformComponent]) -> list[PlatformComponent]:
    """``used`` and what each uses (a queue's pool), each once, a component after what it
    uses: what a job's render needs for every reference to resolve."""
    found: list[PlatformComponent] = []

    def add(component: PlatformComponent) -> None:
        if component not in found:
            for other in component.uses:
                add(other)
            found.append(component)

    for component in used:
        add(component)
    return found


def _wrong_arguments(args: TrainingJobArgs) -> list[Finding]:
    """A finding for each argument of a :class:`TrainingJob` that has the wrong type."""
    found = []
    if not isinstance(args.job, JobResource | Mapping):
        takes = "a typed job model (TFJob(...)) or the job's YAML as a dict"
        fix = "read a file with jobs_from_file, or give the dict yaml.safe_load returns"
        found.append(wrong_type("TrainingJob", "job", args.job, takes, fix))
    if args.namespace is not None and not is_text(args.namespace):
        takes = "a namespace name (a str or a Pulumi Input of one)"
        found.append(
            wrong_type("TrainingJob", "namespace", args.namespace, takes, "give the name as a str")
        )
    component = "a platform component (RedisBackend(...), GpuNodePool(...) …)"
    fix = "pass the component object, not its name or document"
    pools: dict[str, Any] = {}
    if isinstance(args.node_pool, Mapping):
        pools = {f"node_pool[{role!r}]": pool for role, pool in args.node_pool.items()}
    elif args.node_pool is not None:
        pools = {"node_pool": args.node_pool}
    given = {"backend": args.backend, **pools, "queue": args.queue}
    for argument, value in given.items():
        if value is not None and not isinstance(value, PlatformComponent):
            found.append(wrong_type("TrainingJob", argument, value, component, fix))
    return found


def _components(
    backend: PlatformComponent | None,
    node_pool: PlatformComponent | Mapping[str, PlatformComponent] | None,
    queue: PlatformComponent | None,
) -> list[PlatformComponent]:
    found = [c for c in (backend, queue) if c is not None]
    if isinstance(node_pool, PlatformComponent):
        found.append(node_pool)
    elif node_pool:
        found += list(node_pool.values())
    return found


def _pod_phase(resource: pulumi.CustomResource) -> pulumi.Output[Any]:
    status: pulumi.Output[Any] = getattr(resource, "status", pulumi.Output.from_input(None))
    return status.apply(lambda s: _field(s, "phase"))


def _field(value: Any, key: str) -> Any:
    """A field of a status output: a typed output object or, under mocks, a dict."""
    if value is None:
        return None
    if isinstance(value, Mapping):
        return value.get(key)
    return getattr(value, key, None)


def load_for_program(path: str | Path, target: str | None) -> tuple[StackSpec, Target | None]:
    """The stack at ``path`` and the ``target`` a Pulumi program asks for (None: the
    jobs' own), or a RunError that stops the program with what is wrong."""
    if target is not None and not is_target(target):
        raise pulumi.RunError(f"target must be one of {', '.join(TARGETS)}, not {target!r}")
    try:
        return load_path(path), target
    except SpecError as exc:
        raise pulumi.RunError(str(exc)) from None


def jobs_from_file(path: str | Path, *, target: Target | str | None = None) -> list[TrainingJob]:
    """Every job in a YAML file as a :class:`TrainingJob`, outputs exported by job name
    (``<name>.objects``, ``<name>.addresses``; ``<namespace>/<name>.…`` for a name the
    file uses in two namespaces).

    ``target`` (``operator`` or ``pods``) overrides the jobs' own; the example
    programs pass their stack's ``target`` config here. Each job keeps its own options
    (``trainjobs:`` beside it: ``gang``, ``wait``, ``ignore`` …), as ``trainjobs check``
    reads them. A file that also declares platform resources (a backend …) is a stack,
    refused here: use :func:`stack_from_file`.
    """
    stack, chosen_target = load_for_program(path, target)
    if stack.platform:
        declared = ", ".join(f"{p.plugin.kind} {p.key}" for p in stack.platform)
        raise pulumi.RunError(
            f"{path}: it declares platform resources ({declared}) beside its jobs, which "
            "jobs_from_file would leave out with the jobs' references to them; it is a "
            "stack: use stack_from_file"
        )
    # Rendered as a whole, as `trainjobs check` renders the file: each job with its own
    # options, its findings at its place in the file.
    try:
        rendering = run(stack, target=chosen_target)
    except SpecError as exc:
        raise InvalidJobError(str(exc), exc.findings) from None
    for finding in rendering.findings:
        pulumi.log.warn(finding.render())
    names = [unit.job.name for unit in rendering.jobs]
    jobs = []
    for unit in rendering.jobs:
        name = f"{unit.job.namespace}/{unit.job.name}"
        # Named as the stack program names jobs, so a job moved between the two keeps
        # its URN; the alias keeps stacks made when this used the bare name.
        opts = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=unit.job.name)])
        job = TrainingJob(name, rendered=unit, opts=opts)
        key = unit.job.name if names.count(unit.job.name) == 1 else name
        pulumi.export(f"{key}.objects", job.objects)
        pulumi.export(f"{key}.addresses", job.addresses)
        jobs.append(job)
    return jobs
