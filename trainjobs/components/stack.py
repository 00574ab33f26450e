"""The stack program: a stack's config → every component it declares, in dependency order."""

from __future__ import annotations

import difflib
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import pulumi
import yaml

from trainjobs.check import run
from trainjobs.components.inputs import hide_forms, value_forms
from trainjobs.components.job import TrainingJob, load_for_program
from trainjobs.components.ownership import Guard, configure, guard
from trainjobs.components.platform import PlatformComponent
from trainjobs.components.register import register_manifest
from trainjobs.errors import NO_VALUE, Finding, Rule, SpecError
from trainjobs.k8s.ownership import ObjectKey
from trainjobs.render import RenderedJob, Rendering, UnitRef
from trainjobs.render.switch import OWNED_TARGETS, adopted_objects
from trainjobs.spec.entry import OPTIONS_KEY, Target
from trainjobs.spec.load import ALLOW_NO_JOBS, CONFIG_NAMESPACE, parse_stack
from trainjobs.spec.stack import StackSpec

__all__ = [
    "ALLOW_NO_JOBS",
    "JOBS_OUTPUT",
    "JOB_TARGETS_OUTPUT",
    "PROGRAM_KEYS",
    "StackConfig",
    "TrainingStack",
    "program",
    "stack_config",
    "stack_from_file",
]


PROGRAM_KEYS = {ALLOW_NO_JOBS}
"""Settings of the stack program itself (not of the stack's contents)."""

JOBS_OUTPUT = "jobs"
"""The stack output listing the stack's jobs (``namespace/name``), read by the next run."""

JOB_TARGETS_OUTPUT = "jobTargets"
"""The stack output mapping each job (``namespace/name``) to its target (``operator`` …),
read by the next run when a job's target is one that could adopt what another made."""


@dataclass(frozen=True)
class StackConfig:
    """A stack's trainjobs settings as the program received them.

    Attributes:
        namespace: the config namespace: the project's name in Pulumi.yaml.
        values: each bare key (``jobs``) → plain data (lists and maps parsed from JSON).
        secret_keys: the bare keys set with ``--secret`` (or holding a ``secure:`` value).
        allow_no_jobs: ``<namespace>:allowNoJobs: true``: an empty stack is intended.
        plain_entries: entries of secret settings (``jobs[1]``) that the stack file
            shows hold no ``secure:`` value, exactly as the engine passed them; their
            objects need not be encrypted. Default none (every entry of a secret
            setting is encrypted).
    """

    namespace: str
    values: dict[str, Any]
    secret_keys: frozenset[str]
    allow_no_jobs: bool = False
    plain_entries: frozenset[str] = frozenset()


FOREIGN_NAMESPACE = Rule("stack.namespace", "{message}", hint="rename it to {project}:{bare}")
ALLOW_NO_JOBS_VALUE = Rule(
    "stack.allowNoJobs",
    f"{ALLOW_NO_JOBS} must be true or false",
    hint=f"pulumi config set {{project}}:{ALLOW_NO_JOBS} true",
)


def _all_config() -> tuple[dict[str, Any], set[str]]:
    """Every config key the engine passed (``namespace:key`` → text) and the secret ones.

    The SDK reads one key at a time and has no call listing them, and reading only
    the known keys is what let a misspelt key pass unseen. The language host passes
    them all in ``PULUMI_CONFIG`` (JSON); tests and the Automation API set them with
    ``pulumi.runtime.set_all_config``. tests/components/test_stack_program.py covers both.
    """
    values: dict[str, Any] = dict(pulumi.runtime.get_config_env())
    values.update(pulumi.runtime.config.CONFIG.get())
    secret = set(pulumi.runtime.get_config_secret_keys_env())
    secret.update(k for k in values if pulumi.runtime.is_config_secret(k))
    return values, secret


def _decode(text: Any) -> Any:
    # Pulumi hands every setting over as text; lists and maps arrive as JSON.
    if isinstance(text, str) and text[:1] in ("[", "{"):
        return json.loads(text)
    return text


def _namespace_findings(keys: list[str], project: str, source: str) -> list[Finding]:
    """Keys in a namespace that is almost the project's: read by no one, so a typo there
    would silently drop every job."""
    findings = []
    for key in keys:
        namespace, _, bare = key.rpartition(":")
        if not namespace or namespace == project:
            continue
        if namespace == CONFIG_NAMESPACE:
            message = (
                f"the project is named {project!r} (Pulumi.yaml), so its stack settings "
                f"are {project}:<key>; {key} is not read"
            )
        elif difflib.SequenceMatcher(None, namespace, project).ratio() >= 0.75:
            message = f"config namespace {namespace!r} is not the project's ({project!r})"
        else:
            continue  # another provider's or program's config, e.g. kubernetes:context
        findings.append(
            FOREIGN_NAMESPACE.at(key, message=message, project=project, bare=bare).located(source)
        )
    return findings


def _located_in_project(finding: Finding, project: str) -> Finding:
    """A finding's path in the project's namespace (the parser names ``trainjobs:``)."""
    prefix = f"{CONFIG_NAMESPACE}:"
    if project == CONFIG_NAMESPACE or not finding.path.startswith(prefix):
        return finding
    return replace(finding, path=f"{project}:{finding.path[len(prefix) :]}")


def stack_config(source: str = "") -> StackConfig:
    """The stack's settings (``<project>:*``) as plain data; every problem at once.

    Raises:
        SpecError: a key in a near-miss namespace, or an ``allowNoJobs`` that is not
            true or false. (Unknown keys are the parser's findings.)
    """
    project = pulumi.get_project()
    raw, secret = _all_config()
    findings = _namespace_findings(sorted(raw), project, source)
    values: dict[str, Any] = {}
    secret_keys = set()
    for key in sorted(raw):
        namespace, _, bare = key.rpartition(":")
        if namespace != project:
            continue
        values[bare] = _decode(raw[key])
        if key in secret:
            secret_keys.add(bare)
    allow = values.pop(ALLOW_NO_JOBS, "false")
    if str(allow).lower() not in ("true", "false"):
        findings.append(
            ALLOW_NO_JOBS_VALUE.at(f"{project}:{ALLOW_NO_JOBS}", allow, project=project).located(
                source
            )
        )
    if findings:
        raise SpecError.from_findings(findings)
    return StackConfig(
        project,
        values,
        frozenset(secret_keys),
        str(allow).lower() == "true",
        _plain_entries(source, project, values, secret_keys),
    )


def _plain_entries(
    source: str, project: str, values: dict[str, Any], secret_keys: set[str]
) -> frozenset[str]:
    """The entries of secret settings that the stack file holds in plain text.

    Pulumi marks a whole setting secret when any value in it is ``secure:``, so one
    secret env var made every job of ``jobs`` secret and ``pulumi preview --diff``
    showed each job's changes as ``[secret] => [secret]``. An entry counts as plain
    only if the stack file holds it without any ``secure:`` value and equal to what
    the engine passed (not so for a config that came from elsewhere, e.g. an ESC
    environment or ``--config-file``); anything unsure stays secret.
    """
    if not secret_keys or not source:
        return frozenset()
    try:
        doc = yaml.safe_load(Path(source).read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return frozenset()
    file_config = doc.get("config") if isinstance(doc, dict) else None
    if not isinstance(file_config, dict) or "environment" in doc:
        return frozenset()
    plain: set[str] = set()
    for bare in secret_keys:
        in_file = file_config.get(f"{project}:{bare}")
        passed = values.get(bare)
        if not isinstance(in_file, list) or not isinstance(passed, list):
            continue
        if len(in_file) != len(passed):
            continue
        plain.update(
            f"{bare}[{i}]"
            for i, (entry, value) in enumerate(zip(in_file, passed, strict=True))
            if not _holds_secure(entry) and entry == value
        )
    return frozenset(plain)


def _holds_secure(value: Any) -> bool:
    """Whether a stack file value holds a ``secure:`` (encrypted) value anywhere."""
    if isinstance(value, dict):
        return "secure" in value or any(_holds_secure(v) for v in value.values())
    if isinstance(value, list):
        return any(_holds_secure(v) for v in value)
    return False


def _redacted(exc: SpecError, config: StackConfig) -> SpecError:
    """``exc`` with the values of secret settings left out and paths in the project's
    namespace: an error message must never print a ``secure:`` value."""

    def clean(finding: Finding) -> Finding:
        finding = _located_in_project(finding, config.namespace)
        key = finding.path.split(":", 1)[-1].split("[", 1)[0].split(".", 1)[0]
        if key in config.secret_keys:
            finding = _without_value(finding)
        return finding

    return SpecError.from_findings([clean(f) for f in exc.findings])


class TrainingStack:
    """Every unit of a stack as a component, each created after what it depends on.

    The whole stack is rendered and checked first (names must be unique across
    it, references must resolve), then each unit registers its own objects:
    Namespaces as plain resources, jobs as :class:`TrainingJob`, backends, node
    pools, queues and operators as :class:`PlatformComponent`.
    """

    def __init__(
        self,
        stack: StackSpec,
        target: Target | None = None,
        secret_keys: frozenset[str] = frozenset(),
        plain_entries: frozenset[str] = frozenset(),
        rendering: Rendering | None = None,
        config_namespace: str = CONFIG_NAMESPACE,
    ) -> None:
        """``secret_keys``: the stack settings (``jobs`` …) that are secrets; what they
        declare is kept encrypted in the state and their values stay out of messages.
        ``plain_entries``: entries of those settings (``jobs[1]``) known to hold no
        secret, whose objects are not encrypted (default none). ``rendering``: the
        stack already rendered and checked with ``target`` (default: render it here).
        ``config_namespace``: the project's config namespace, for messages (default
        ``trainjobs``).

        Before anything is registered, every object the stack declares is read from the
        cluster: one that exists and was not made by this stack (nor named by its
        ``adopt`` setting) stops the run, all of them listed
        (:mod:`trainjobs.components.ownership`). Each of ``sharedNamespaces`` is only
        read (it must exist), never owned: destroy leaves it."""
        if rendering is None:
            try:
                rendering = run(stack, target=target)
            except SpecError as exc:
                raise pulumi.RunError(str(_redact(exc.findings, secret_keys))) from None
        for finding in _redact(rendering.findings, secret_keys).findings:
            pulumi.log.warn(finding.render())
        entries = {p.path: p for p in stack.platform}
        self.components: dict[UnitRef, pulumi.Resource] = {}
        self.jobs: list[TrainingJob] = []
        self.platform: list[PlatformComponent] = []
        _claim_all(stack, rendering, config_namespace)
        self.shared_namespaces = {name: _shared_namespace(name) for name in stack.shared_namespaces}
        for unit in rendering.units:
            deps = [self.components[d] for d in unit.depends_on if d in self.components]
            deps += [
                self.shared_namespaces[ns]
                for ns in sorted(_namespaces_of(unit))
                if ns in self.shared_namespaces
            ]
            opts = pulumi.ResourceOptions(depends_on=deps) if deps else pulumi.ResourceOptions()
            secret = (
                _setting(unit.origin) in secret_keys and _entry(unit.origin) not in plain_entries
            )
            if isinstance(unit, RenderedJob):
                name = f"{unit.job.namespace}/{unit.job.name}"
                job = TrainingJob(name, rendered=unit, secret=secret, opts=opts)
                pulumi.export(name, job.addresses)
                self.jobs.append(job)
                self.components[unit.ref] = job
            elif unit.ref.category == "namespace":
                (obj,) = unit.objects
                self.components[unit.ref] = register_manifest(obj.manifest, opts)
            else:
                entry = entries[unit.origin]
                # ``namespace/name``, as jobs are named: two backends called redis in
                # different namespaces are two URNs. The alias keeps stacks made when
                # components had the bare name.
                if entry.key != entry.resource.name:
                    alias = pulumi.ResourceOptions(aliases=[pulumi.Alias(name=entry.resource.name)])
                    opts = pulumi.ResourceOptions.merge(opts, alias)
                component = PlatformComponent.for_kind(entry.plugin.kind)(
                    entry.key, rendered=(entry, unit), secret=secret, opts=opts
                )
                if unit.outputs:
                    pulumi.export(str(unit.ref), component.outputs)
                self.platform.append(component)
                self.components[unit.ref] = component


def _claim_all(stack: StackSpec, rendering: Rendering, config_namespace: str) -> None:
    """Check, for the whole stack at once, that it takes over nothing it did not make."""
    # The run's reader stays (a test's); what the stack adds is its adopt setting.
    own = Guard(
        adopt=stack.adopt,
        namespace=config_namespace,
        source=stack.source,
        reader=guard().reader,
    )
    configure(own)
    manifests = []
    paths: dict[ObjectKey, str] = {}
    for unit in rendering.units:
        for obj in unit.objects:
            manifests.append(obj.manifest)
            paths[ObjectKey.of(obj.manifest)] = f"{config_namespace}:{obj.origin or unit.origin}"
    decision = own.decide(manifests, paths)
    for finding in decision.unused:
        pulumi.log.warn(finding.render())
    own.claim(manifests, paths)


def _shared_namespace(name: str) -> pulumi.Resource:
    """A namespace the stack uses and never owns: read (so ``pulumi preview`` fails at once
    when it does not exist), never created, updated or deleted.

    It has the URN an owned Namespace of that name has and the same ID: a stack that
    owned it before (the demo stack owned ``kubeflow`` until trainjobs 0.2) relinquishes
    it on its next update — the engine drops it from the state without deleting it — so
    moving a namespace from ``namespaces`` to ``sharedNamespaces`` never deletes it.
    """
    from pulumi_kubernetes.core.v1 import Namespace

    return Namespace.get(name, name)


def _namespaces_of(unit: Any) -> set[str]:
    return {
        str((o.manifest.get("metadata") or {}).get("namespace"))
        for o in unit.objects
        if (o.manifest.get("metadata") or {}).get("namespace")
    }


def _setting(origin: str) -> str:
    """The stack setting an entry path (``jobs[0]``, ``backends[1].spec``) sits in."""
    return origin.split("[", 1)[0].split(".", 1)[0]


def _entry(origin: str) -> str:
    """The entry (``jobs[0]``) an entry path (``jobs[0]``, ``backends[1].spec``) names."""
    head, bracket, rest = origin.partition("[")
    return f"{head}[{rest.split(']', 1)[0]}]" if bracket else head


def _redact(findings: Sequence[Finding], secret_keys: frozenset[str]) -> SpecError:
    """The findings with the values of secret settings left out (never print a secret)."""
    return SpecError.from_findings(
        _without_value(f) if _setting(f.path.split(":", 1)[-1]) in secret_keys else f
        for f in findings
    )


def _without_value(finding: Finding) -> Finding:
    """``finding`` (about a secret setting) without its value, also where its message
    repeats it (a name finding's ``e.g.`` is the bad name lowercased)."""
    if isinstance(finding.value, str):
        (finding,) = hide_forms([finding], value_forms(finding.value, "<secret>"))
    return replace(finding, value=NO_VALUE)


def stack_from_file(path: str | Path, *, target: Target | str | None = None) -> TrainingStack:
    """Every job and platform resource of a YAML file (or stack config) as components.

    ``target`` (``operator`` or ``pods``) overrides the jobs' own; the example
    programs pass their stack's ``target`` config here.
    """
    stack, chosen_target = load_for_program(path, target)
    return TrainingStack(stack, chosen_target)


READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs"
"""The engine's built-in function that reads a stack's outputs (what a StackReference reads)."""


def _previous_outputs() -> dict[str, Any]:
    """The outputs of this stack's last update (``jobs``, ``jobTargets`` …); empty on its
    first update.

    Read with the engine's built-in function, synchronously, before anything is
    declared — not through a ``StackReference`` and an ``apply``: the Python SDK waits
    for what a program declares inside an ``apply`` with a loop whose every turn walks
    every pending output, so a 1,024-pod job declared there cost the program minutes of
    CPU growing with the square of the job (issue 35); and a reference to the stack
    itself copied all of its last outputs into its state.
    """
    name = f"{pulumi.get_organization()}/{pulumi.get_project()}/{pulumi.get_stack()}"
    # The SDK raises when the engine cannot read them (e.g. a backend it cannot reach).
    result = pulumi.runtime.invoke(READ_STACK_OUTPUTS, {"name": name})
    return dict((result.value or {}).get("outputs") or {})


def _rendering(stack: StackSpec, secret_keys: frozenset[str]) -> Rendering:
    """``stack`` rendered and checked, or a RunError with every problem (secret
    settings' values left out)."""
    try:
        return run(stack)
    except SpecError as exc:
        raise pulumi.RunError(str(_redact(exc.findings, secret_keys))) from None


def _vanished_jobs(previous: list[str], source: str, namespace: str) -> str:
    """The refusal of a stack that declares no jobs though its last update had some;
    empty when it had none."""
    if not previous:
        return ""
    return (
        f"{source}: the stack declares no jobs, but its last update had "
        f"{len(previous)} ({', '.join(previous)}); `pulumi up` would delete them. "
        f"A misspelt or removed {namespace}:jobs does this. If removing every job is "
        f"intended, say so: pulumi config set {namespace}:{ALLOW_NO_JOBS} true"
    )


TARGET_SWITCH = Rule(
    "stack.target_switch",
    "job {job} moves from target {old} to {new} in one update, which would lose its "
    "pods: the {new} target declares {objects} under the names the {old} target's "
    "controllers gave their own; `pulumi up` creates before it deletes, so the "
    "Kubernetes provider adopts those (still owned by the {owner}) and deleting the "
    "{owner} then garbage-collects them",
    hint="take two updates: remove the job from {namespace}:jobs (keep a copy) and "
    "`pulumi up`{allow}; then add it back with target {new} and `pulumi up`",
)
SHOWN_OBJECTS = 3
"""How many of a job's objects a target-switch message names before ``and N more``."""


_OLD_OWNER = {"trainer": "TrainJob", "jobset": "JobSet"}
"""What owns the taken-over objects when the old target was not ``operator`` (whose
owner is the job's own kind)."""


def _switch_findings(
    rendering: Rendering, previous: Any, config: StackConfig, source: str
) -> list[Finding]:
    """A finding for every job whose target changed, since the last update, to one that
    would take over, and then lose, what the old target's controllers made
    (:func:`trainjobs.render.switch.adopted_objects`).

    ``previous`` is the last update's ``jobTargets`` output. A stack last updated by a
    version that did not export it has nothing to compare, so its switches are allowed
    (as is a job new to the stack).
    """
    if not isinstance(previous, dict):
        return []
    jobs = [u for u in rendering.units if isinstance(u, RenderedJob)]
    switching: list[tuple[RenderedJob, str, tuple[str, ...]]] = []
    for job in jobs:
        old = previous.get(_job_key(job))
        adopted = adopted_objects(job, old) if isinstance(old, str) else ()
        if adopted:
            switching.append((job, str(old), adopted))
    # Removing them all leaves the stack without jobs: the first update needs allowNoJobs.
    allow = ""
    if len(switching) == len(jobs) and not config.allow_no_jobs:
        which = "the stack's only job" if len(jobs) == 1 else "all the stack's jobs"
        allow = (
            f" (as that is {which}, the first update needs "
            f"`pulumi config set {config.namespace}:{ALLOW_NO_JOBS} true`)"
        )
    findings = []
    for job, old, adopted in switching:
        shown = ", ".join(adopted[:SHOWN_OBJECTS])
        if len(adopted) > SHOWN_OBJECTS:
            shown += f" and {len(adopted) - SHOWN_OBJECTS} more"
        # The job's own trainjobs.target, else the stack's default.
        own = job.entry.options.target is not None
        path = f"{job.origin}.{OPTIONS_KEY}.target" if own else "target"
        findings.append(
            TARGET_SWITCH.at(
                f"{config.namespace}:{path}",
                job=_job_key(job),
                old=old,
                new=job.target,
                objects=shown,
                owner=job.kind if old == "operator" else _OLD_OWNER.get(old, old),
                namespace=config.namespace,
                allow=allow,
            ).located(source)
        )
    return findings


def _job_key(job: RenderedJob) -> str:
    """``namespace/name``: how the stack outputs ``jobs`` and ``jobTargets`` name a job."""
    return f"{job.job.namespace}/{job.job.name}"


def program() -> TrainingStack:
    """Run the stack program: read the stack's config and declare its components.

    Fails before anything is planned when a setting is unknown or misspelt (also
    its namespace), when a value is invalid, when the stack declares no jobs but its
    last update had some (``<project>:allowNoJobs: true`` allows that), or when a job
    moves in one update to a target (``pods``, ``jobset``) that would adopt and then
    lose the objects its old target's controllers made (two updates do it).
    Settings are read in the project's namespace (Pulumi.yaml ``name``, ``trainjobs``
    here); secret settings stay secrets. ``file:`` paths in the config are relative
    to the stack config folder (``stacks/`` unless ``$TRAINJOBS_STACK_DIR`` says
    otherwise).

    Exports ``jobs`` (``namespace/name``, sorted) and ``jobTargets`` (each job's
    target), which the next run compares against.
    """
    base = Path(os.environ.get("TRAINJOBS_STACK_DIR", "stacks"))
    source = f"{base}/Pulumi.{pulumi.get_stack()}.yaml"
    try:
        config = stack_config(source)
    except SpecError as exc:
        raise pulumi.RunError(str(exc)) from None
    try:
        stack = parse_stack(config.values, source=source, base_dir=base)
    except SpecError as exc:
        raise pulumi.RunError(str(_redacted(exc, config))) from None
    rendering = _rendering(stack, config.secret_keys)

    def build() -> TrainingStack:
        declared = TrainingStack(
            stack,
            secret_keys=config.secret_keys,
            plain_entries=config.plain_entries,
            rendering=rendering,
            config_namespace=config.namespace,
        )
        # What the next run compares against: a stack that had jobs and declares none
        # fails instead of deleting them; a job that moves to a target that would adopt
        # its old controllers' objects fails instead of losing its pods.
        targets = {_job_key(j.rendered): j.rendered.target for j in declared.jobs}
        pulumi.export(JOBS_OUTPUT, sorted(targets))
        pulumi.export(JOB_TARGETS_OUTPUT, dict(sorted(targets.items())))
        return declared

    vanishing = not (stack.jobs or config.allow_no_jobs)
    switching = any(
        isinstance(u, RenderedJob) and u.target in OWNED_TARGETS for u in rendering.units
    )
    if not vanishing and not switching:
        # Nothing to compare: the last outputs are not read, as before jobTargets.
        return build()

    def checked(previous: dict[str, Any]) -> TrainingStack:
        if vanishing:
            message = _vanished_jobs(
                list(previous.get(JOBS_OUTPUT) or []), source, config.namespace
            )
            if message:
                raise pulumi.RunError(message)
        found = _switch_findings(rendering, previous.get(JOB_TARGETS_OUTPUT), config, source)
        if found:
            raise pulumi.RunError(str(SpecError.from_findings(found)))
        return build()

    # Nothing is declared until the last update's outputs are known: a failure here
    # must come before any resource is planned, created or deleted.
    return checked(_previous_outputs())
