"""The plan in plain words, grouped per training job and per object.

A training job is restarted when any Pod it runs (or the job resource
itself) is recreated or removed: the containers stop, and the job starts
again from its last checkpoint — whatever it computed since is lost. The
words say which jobs restart, which Pods are recreated and why.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.changes import Path
from trainjobs.preview.plan import ObjectPlan, Plan

__all__ = ["RESTART", "Story", "explain", "explain_object", "noun_of"]

RESTART = "the job restarts from its last checkpoint"
"""What recreating or removing a running job's Pods means for training."""

_POD_RUNNERS = {"Pod", "Job", "StatefulSet", "Deployment", "DaemonSet", "ReplicaSet"}

# The last path key that names what changed, in the words people use for it.
_NOUNS = {
    "image": "the image",
    "command": "the command",
    "args": "the command",
    "env": "the environment",
    "envFrom": "the environment",
    "resources": "the resources",
    "ports": "the ports",
    "volumes": "the volumes",
    "volumeMounts": "the volumes",
    "volumeDevices": "the volumes",
    "nodeSelector": "the placement",
    "affinity": "the placement",
    "tolerations": "the placement",
    "nodeName": "the placement",
    "restartPolicy": "the restart policy",
    "schedulerName": "the scheduler",
    "serviceAccountName": "the service account",
    "serviceAccount": "the service account",
    "securityContext": "the security context",
    "livenessProbe": "the probes",
    "readinessProbe": "the probes",
    "startupProbe": "the probes",
    "replicas": "the replica counts",
    "labels": "the labels",
    "annotations": "the annotations",
    "apiVersion": "the API version",
    "initContainers": "the init containers",
    "containers": "the containers",
    "clusterIP": "the cluster IP",
    "data": "the data",
    "stringData": "the data",
}


def noun_of(path: Path) -> str:
    """What a changed field is, for people: ``spec.containers[0].image`` → ``the image``."""
    keys = [p for p in path if isinstance(p, str)]
    for key in reversed(keys):
        if key in _NOUNS:
            return _NOUNS[key]
    return keys[-1] if keys else "the object"


def _join(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " and " + words[-1]


def _lookup(value: Any, path: Path) -> Any:
    for part in path:
        if isinstance(part, int) and isinstance(value, list) and part < len(value):
            value = value[part]
        elif isinstance(part, str) and isinstance(value, Mapping):
            value = value.get(part)
        else:
            return None
    return value


def _env_by_name(plan: ObjectPlan, env: Path, new: bool) -> dict[str, Any]:
    side = plan.new if new else plan.old
    items = _lookup(side.manifest, env) if side else None
    found: dict[str, Any] = {}
    for item in items if isinstance(items, list) else []:
        if isinstance(item, Mapping) and isinstance(item.get("name"), str):
            found.setdefault(str(item["name"]), item)
    return found


def _env_names(plan: ObjectPlan, path: Path) -> list[str] | None:
    """The environment variables whose value differs in the ``env`` list a change under
    ``env`` is in, matched by name; None when ``path`` is not in a list of variables.

    The field changes compare the list item by item, so one variable put first
    moves every other one a place: by index all of them changed, by name one did.
    """
    for i, part in enumerate(path):
        if part == "env" and (i + 1 == len(path) or isinstance(path[i + 1], int)):
            old = _env_by_name(plan, path[: i + 1], new=False)
            new = _env_by_name(plan, path[: i + 1], new=True)
            if not old and not new:
                return None
            names = [*new, *(name for name in old if name not in new)]
            return [name for name in names if old.get(name) != new.get(name)]
    return None


def _nouns(plans: Iterable[ObjectPlan], replacing_only: bool) -> str:
    """What changed across ``plans``: ``the image and the environment variable RANK``."""
    found: list[str] = []
    variables: list[str] = []
    for plan in plans:
        fields = plan.replacing if replacing_only else plan.fields
        for field in fields:
            noun = noun_of(field.change.path)
            names = _env_names(plan, field.change.path) if noun == "the environment" else None
            if names:
                variables += [name for name in names if name not in variables]
                noun = "<variables>"
            if noun not in found:
                found.append(noun)
    if variables:
        many = "s" if len(variables) > 1 else ""
        found = [
            f"the environment variable{many} {_join(variables)}" if n == "<variables>" else n
            for n in found
        ]
    return _join(found) if found else "the spec"


def _count(n: int, kind: str) -> str:
    return f"{n} {kind}{'s' if n != 1 else ''}"


def _counts(plans: Sequence[ObjectPlan]) -> str:
    kinds: dict[str, int] = {}
    for plan in plans:
        kinds[plan.kind] = kinds.get(plan.kind, 0) + 1
    return _join([_count(n, kind) for kind, n in kinds.items()])


def _paths(plan: ObjectPlan, limit: int = 3) -> str:
    fields = plan.replacing if plan.action == "replace" else plan.fields
    texts = [f.change.text for f in fields]
    shown = ", ".join(texts[:limit])
    return shown + (f" and {len(texts) - limit} more" if len(texts) > limit else "")


def explain_object(plan: ObjectPlan) -> str:
    """One object's change in words: ``recreates Pod kubeflow/mnist-chief-0: … changed``."""
    if plan.ownership is not None:
        return plan.ownership.words
    if plan.action == "create":
        return f"creates {plan.title}"
    if plan.action == "delete":
        tail = " and everything in it" if plan.kind == "Namespace" else ""
        return f"deletes {plan.title}{tail}"
    if plan.action == "replace":
        return f"recreates {plan.title}: {_paths(plan)} changed"
    if plan.action == "update" and plan.refused:
        fields = ", ".join(f.change.text for f in plan.refused)
        return (
            f"cannot update {plan.title}: the API server refuses a change to {fields} "
            f"once the {plan.kind} exists (its CRD makes the field immutable); delete the "
            f"{plan.kind} first, or give it a new name"
        )
    if plan.action == "update":
        return f"updates {plan.title} in place: {_paths(plan)} changed"
    return f"leaves {plan.title} as it is"


@dataclass(frozen=True)
class Story:
    """What a plan means for one job, one other resource of the stack, or the stack itself.

    Attributes:
        job: the job's name (``""`` when the story is not about a job).
        namespace: the job's namespace.
        summary: sentences about the whole job, most important first.
        details: one sentence per changed object.
        unit: the stack's other resource (``backend training/redis``) the objects belong
            to; ``""`` for a job, or for the stack's own objects when ``job`` is empty too.
    """

    job: str
    namespace: str
    summary: tuple[str, ...]
    details: tuple[str, ...]
    unit: str = ""

    @property
    def title(self) -> str:
        """``job mnist (kubeflow)``, ``backend training/redis`` or ``the stack's own objects``."""
        if self.job:
            return f"job {self.job}" + (f" ({self.namespace})" if self.namespace else "")
        return self.unit or "the stack's own objects"

    @property
    def restarts(self) -> bool:
        return any(RESTART in line for line in self.summary)


def _is_job_resource(plan: ObjectPlan) -> bool:
    side = plan.new or plan.old
    if side is None:
        return False
    api_version = str(side.manifest.get("apiVersion", ""))
    return REGISTRY.by_kind(api_version, plan.kind) is not None and plan.key[3] == plan.job


# runPolicy.suspend of the v1 kinds and MPIJob v2beta1.
_SUSPEND = ("spec", "runPolicy", "suspend")


def _suspend_line(job: str, plan: ObjectPlan) -> str | None:
    """What flipping ``runPolicy.suspend`` does: the operator creates or deletes every Pod
    (Training Operator v1.9 common/job.go ReconcileJobs; MPI Operator v0.8 launcher Job)."""
    for changed in plan.fields:
        if tuple(changed.change.path) == _SUSPEND:
            if changed.change.old is True and changed.change.new is not True:
                return (
                    f"job {job} is resumed: its operator creates its Pods and the job starts "
                    "(from its last checkpoint, if it ran before)"
                )
            if changed.change.new is True and changed.change.old is not True:
                return (
                    f"job {job} is suspended: its operator deletes its Pods and the job stops "
                    "until it is resumed; the work since its last checkpoint is lost"
                )
    return None


def _own_resource_lines(job: str, plan: ObjectPlan) -> list[str]:
    """Sentences for a change to the job's own custom resource (the operator target)."""
    suspend = _suspend_line(job, plan) if plan.action == "update" else None
    if suspend is not None:
        rest = [f for f in plan.fields if tuple(f.change.path) != _SUSPEND]
        if not rest:
            return [suspend]
        return [suspend, *_own_resource_lines(job, replace(plan, fields=tuple(rest)))]
    if plan.action == "create":
        return [f"job {job} is handed to its operator: creates its {plan.kind}"]
    if plan.action == "delete":
        return [
            f"job {job} leaves its operator: deletes its {plan.kind} and the Pods the "
            f"operator runs for it; {RESTART}"
        ]
    if plan.action == "replace":
        return [
            f"changing {_nouns([plan], True)} of job {job} recreates its {plan.kind}; "
            f"its operator starts every Pod again, so {RESTART}"
        ]
    if plan.action == "update" and plan.refused:
        return [
            f"changing {_nouns([plan], False)} of job {job} cannot be applied: the API server "
            f"refuses it on an existing {plan.kind}, so `pulumi up` fails; delete the job "
            "first (its Pods restart from the beginning), or rename it"
        ]
    if plan.action == "update":
        # The Training Operator reconciles replica counts, but never recreates a
        # running Pod because its template changed.
        replicas_only = all(noun_of(f.change.path) == "the replica counts" for f in plan.fields)
        after = (
            "its operator adds or removes Pods to match"
            if replicas_only
            else "Pods already running keep their old spec until they are recreated"
        )
        return [
            f"changing {_nouns([plan], False)} of job {job} updates its {plan.kind} in "
            f"place; {after}"
        ]
    return []


def _object_lines(job: str, plans: Sequence[ObjectPlan], restart_said: bool) -> list[str]:
    """Sentences for the Pods, Services … a job's changed objects other than its resource."""
    lines: list[str] = []
    runners = [p for p in plans if p.kind in _POD_RUNNERS]
    replaced = [p for p in runners if p.action == "replace"]
    if replaced:
        lines.append(
            f"changing {_nouns(replaced, True)} of job {job} recreates {_counts(replaced)}"
            + ("" if restart_said else f"; {RESTART}")
        )
        restart_said = True
    removed = [p for p in runners if p.action == "delete"]
    if removed:
        lines.append(
            f"job {job} loses {_counts(removed)}" + ("" if restart_said else f"; {RESTART}")
        )
    updated = [p for p in runners if p.action == "update"]
    if updated:
        lines.append(
            f"changing {_nouns(updated, False)} of job {job} updates {_counts(updated)} in "
            "place; nothing restarts"
        )
    added = [p for p in plans if p.action == "create"]
    if added:
        lines.append(f"job {job} gains {_counts(added)}")
    rest = [p for p in plans if p.kind not in _POD_RUNNERS]
    for action, verb in (("update", "updates"), ("replace", "recreates"), ("delete", "deletes")):
        chosen = [p for p in rest if p.action == action]
        if chosen:
            where = " in place" if action == "update" else ""
            lines.append(f"job {job} {verb} {_counts(chosen)}{where}")
    return lines


def _job_summary(
    job: str, plans: Sequence[ObjectPlan], everything: Sequence[ObjectPlan]
) -> list[str]:
    """Sentences for one job; ``everything`` is all of the job's objects, changed or not."""
    if all(p.action == "create" for p in everything):
        return [f"job {job} is new: creates {_counts(everything)}"]
    if all(p.action == "delete" for p in everything):
        return [
            f"job {job} is removed: deletes {_counts(everything)}; the job stops and the work "
            "since its last checkpoint is lost"
        ]
    lines = _ownership_lines(job, plans)
    lines += [line for p in plans if _is_job_resource(p) for line in _own_resource_lines(job, p)]
    restart_said = any(RESTART in line for line in lines)
    others = [p for p in plans if not _is_job_resource(p)]
    return lines + _object_lines(job, others, restart_said)


def _ownership_lines(job: str, plans: Sequence[ObjectPlan]) -> list[str]:
    """Sentences for a job's objects that exist and were not made by the stack."""
    lines = []
    refused = [p for p in plans if p.action == "refused"]
    if refused:
        verbs = "exists and was" if len(refused) == 1 else "exist and were"
        lines.append(
            f"`pulumi up` refuses job {job}: {_counts(refused)} of it already {verbs} not "
            "made by this stack"
        )
    adopted = [p for p in plans if p.action == "adopt"]
    if adopted:
        lines.append(f"job {job} adopts {_counts(adopted)} that exist and were not made by it")
    return lines


def explain(plan: Plan) -> list[Story]:
    """One story per job with changes (in plan order), then other resources, then the stack's.

    Only jobs get a summary: the objects of a backend, node pool, queue or
    operator are told one by one.
    """
    # A job's cluster-wide objects (the trainer target's ClusterTrainingRuntime) have
    # no namespace of their own: they join the job's story when its name says which.
    namespaces: dict[str, set[str]] = {}
    for obj in plan.objects:
        if obj.job and obj.key[2]:
            namespaces.setdefault(obj.job, set()).add(obj.key[2])
    groups: dict[tuple[str, str, str], list[ObjectPlan]] = {}
    for obj in plan.objects:
        unit = "" if obj.job else obj.unit
        namespace = obj.key[2] if obj.job else ""
        if obj.job and not namespace and len(namespaces.get(obj.job, ())) == 1:
            (namespace,) = namespaces[obj.job]
        groups.setdefault((obj.job, namespace, unit), []).append(obj)
    stories: list[Story] = []
    for (job, namespace, unit), everything in groups.items():
        changed = [p for p in everything if p.action != "same"]
        if not changed:
            continue
        details = tuple(explain_object(p) for p in changed)
        summary = tuple(_job_summary(job, changed, everything)) if job else ()
        stories.append(Story(job, namespace, summary, details, unit))
    stories.sort(key=lambda s: (not s.job, not s.unit))
    return stories
