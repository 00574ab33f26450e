"""A job's Pods and Services as one Pulumi resource: ``registration: pod-set`` (issue 35).

The engine's cost is per resource: it writes its whole checkpoint after every step, so a
1,024-worker job on the pods target (2,049 resources) costs it the square of its size.
A pod set is one resource holding every Pod and Service of the job, keyed by
``Kind namespace/name``. Its provider (:class:`PodSetProvider`) applies them with
server-side apply, many at a time, Services before Pods; an update applies only the
objects whose manifest changed and deletes those the job no longer has; a refresh reads
which of them the cluster still holds; a destroy deletes exactly them, and only those
that still carry this stack's owner label. A Pod whose change the API server refuses
(most of a Pod's spec is immutable) is deleted and created again, as the Kubernetes
provider replaces it.

``pulumi preview --diff`` shows the change of each object by its key (the engine diffs
the ``objects`` input), so the plan stays in words.

Like the generated secrets it is a Pulumi dynamic resource, run by the
``pulumi-resource-pulumi-python`` plugin in the program's own Python; inside the
component provider (a program in YAML, TypeScript or Go) the provider serves the same
logic as ``trainjobs:index:PodSet`` (:mod:`trainjobs.provider.generated`).
"""

from __future__ import annotations

import concurrent.futures
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Literal

import pulumi
from pulumi.dynamic import (
    CreateResult,
    DiffResult,
    ReadResult,
    Resource,
    ResourceProvider,
    UpdateResult,
)

from trainjobs.components.cluster_reader import ClusterAccess, ClusterReadError, refusal
from trainjobs.components.inputs import Inputs, is_input_token
from trainjobs.components.ownership import owner_metadata
from trainjobs.components.register import with_owner
from trainjobs.components.secrets import GeneratedValues, has_placeholders
from trainjobs.k8s.changes import field_changes
from trainjobs.k8s.replace import replacing_rule
from trainjobs.render.lifecycle import Lifecycle

__all__ = [
    "APPLY_ORDER",
    "FIELD_MANAGER",
    "MEMBER_KINDS",
    "PodSet",
    "PodSetError",
    "PodSetProvider",
    "is_member",
    "member_key",
    "object_actions",
    "pod_set_inputs",
    "register_pod_set",
    "serve_with",
]

MEMBER_KINDS = ("Service", "Pod")
"""The kinds a pod set holds (core/v1), in the order they are applied: a Pod's Service
exists before it starts, as the operator creates them."""
APPLY_ORDER = {kind: rank for rank, kind in enumerate(MEMBER_KINDS)}
FIELD_MANAGER = "trainjobs"
"""The field manager of every server-side apply (``managedFields`` shows it)."""
PARALLEL = 16
"""Requests in flight at once."""
DELETE_TIMEOUT = 600.0
"""Seconds a destroy (or a replaced Pod) waits for the cluster to remove the objects."""
POLL = 1.0
"""Seconds between two reads while waiting."""

_PLURALS = {"Pod": "pods", "Service": "services"}


class PodSetError(Exception):
    """The cluster refused or could not be asked; the message names each object."""


def is_member(manifest: Mapping[str, Any]) -> bool:
    """Whether ``manifest`` belongs in a pod set: a core/v1 Pod or Service."""
    return manifest.get("apiVersion") == "v1" and manifest.get("kind") in APPLY_ORDER


def member_key(manifest: Mapping[str, Any]) -> str:
    """The object's key in the set, as ``objects`` and ``trainjobs preview`` title it:
    ``Pod training/mnist-worker-0``; a namespace that is a Pulumi Input is left out
    (``Pod mnist-worker-0``), so the key does not change with its value."""
    meta = manifest.get("metadata") or {}
    namespace = meta.get("namespace")
    if not namespace or is_input_token(str(namespace)):
        return f"{manifest['kind']} {meta['name']}"
    return f"{manifest['kind']} {namespace}/{meta['name']}"


Action = Literal["create", "update", "replace", "delete"]


def object_actions(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Action]:
    """What an update does to each object that changes, from the objects applied before
    (``old``) and those wanted now (``new``), by the Kubernetes provider's own rules:
    a change to a field it cannot update in place (almost all of a Pod's spec)
    replaces the object, as ``pulumi up`` and ``trainjobs preview`` would."""
    actions: dict[str, Action] = {}
    for key in sorted({*old, *new}):
        if key not in new:
            actions[key] = "delete"
        elif key not in old:
            actions[key] = "create"
        else:
            changes = field_changes(old[key], new[key])
            if any(replacing_rule(old[key], c) for c in changes):
                actions[key] = "replace"
            elif changes:
                actions[key] = "update"
    return actions


Objects = Mapping[str, Mapping[str, Any]]
"""Manifests by key: where each is in the cluster is read from its own metadata."""


def _where(manifest: Mapping[str, Any]) -> tuple[str, str, str]:
    """Kind, namespace and name of a manifest (its Inputs resolved)."""
    meta = manifest.get("metadata") or {}
    return str(manifest.get("kind")), str(meta.get("namespace")), str(meta.get("name"))


def _path(manifest: Mapping[str, Any], *, with_name: bool = True) -> str:
    kind, namespace, name = _where(manifest)
    base = f"/api/v1/namespaces/{namespace}/{_PLURALS[kind]}"
    return f"{base}/{name}" if with_name else base


def _ordered(objects: Objects, keys: Iterable[str]) -> list[list[str]]:
    """``keys`` in waves: every Service, then every Pod."""
    waves: dict[int, list[str]] = defaultdict(list)
    for key in keys:
        waves[APPLY_ORDER[_where(objects[key])[0]]].append(key)
    return [sorted(waves[rank]) for rank in sorted(waves)]


def _pods(objects: Objects) -> dict[str, Mapping[str, Any]]:
    return {k: m for k, m in objects.items() if _where(m)[0] == "Pod"}


class _Cluster:
    """The requests a pod set makes, on a client of the stack's cluster."""

    def __init__(self, cluster: Mapping[str, Any] | None) -> None:
        cluster = cluster or {}
        access = ClusterAccess(cluster.get("kubeconfig"), cluster.get("context"))
        try:
            self.api = access.client()
        except ClusterReadError as exc:
            raise PodSetError(str(exc)) from None

    def _call(self, method: str, path: str, **kwargs: Any) -> tuple[int, Any]:
        try:
            return self.api.request(method, path, **kwargs)
        except ClusterReadError as exc:
            raise PodSetError(str(exc)) from None

    def apply(self, manifest: Mapping[str, Any]) -> tuple[int, Any]:
        query = f"?fieldManager={FIELD_MANAGER}&force=true"
        return self._call(
            "PATCH",
            _path(manifest) + query,
            body=manifest,
            content_type="application/apply-patch+yaml",
        )

    def delete(self, key: str, manifest: Mapping[str, Any]) -> None:
        body = {"propagationPolicy": "Background"}
        status, data = self._call("DELETE", _path(manifest), body=body)
        if status >= 300 and status != 404:
            raise PodSetError(f"{key}: the cluster refused to delete it: {refusal(status, data)}")

    def listed(self, objects: Objects) -> dict[str, Mapping[str, Any]]:
        """The live copy of each of ``objects`` the cluster holds, by key: one list per
        kind and namespace."""
        groups: dict[tuple[str, str], dict[str, str]] = defaultdict(dict)
        for key, manifest in objects.items():
            kind, namespace, name = _where(manifest)
            groups[(kind, namespace)][name] = key
        found: dict[str, Mapping[str, Any]] = {}
        for (kind, namespace), by_name in sorted(groups.items()):
            sample = objects[next(iter(by_name.values()))]
            status, data = self._call("GET", _path(sample, with_name=False))
            if status == 404:
                continue
            if status >= 300:
                raise PodSetError(f"cannot list {kind}s in {namespace}: {refusal(status, data)}")
            for item in (data or {}).get("items") or []:
                name = str((item.get("metadata") or {}).get("name"))
                if name in by_name:
                    found[by_name[name]] = item
        return found


def _owned_by(live: Mapping[str, Any], owner: Mapping[str, str]) -> bool:
    labels = (live.get("metadata") or {}).get("labels") or {}
    return all(labels.get(k) == v for k, v in owner.items())


def _phases(live: Objects) -> dict[str, Any]:
    """Each Pod's phase by name, from live objects (or the server's answers)."""
    return {
        _where(obj)[2]: (obj.get("status") or {}).get("phase")
        for _, obj in sorted(live.items())
        if _where(obj)[0] == "Pod"
    }


def _in_parallel(keys: Sequence[str], work: Callable[[str], str | None]) -> None:
    """Run ``work`` on every key, at most :data:`PARALLEL` at once; raise one error that
    lists every object refused (not only the first)."""
    problems: list[str] = []
    with concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        for problem in pool.map(work, keys):
            if problem:
                problems.append(problem)
    if problems:
        shown = problems[:20]
        more = f"\n  … and {len(problems) - 20} more" if len(problems) > 20 else ""
        raise PodSetError(
            f"{len(problems)} of {len(keys)} objects were not applied:\n  "
            + "\n  ".join(shown)
            + more
        )


def _wait_gone(cluster: _Cluster, objects: Objects, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    left = dict(objects)
    while left:
        left = {k: objects[k] for k in sorted(cluster.listed(left))}
        if not left:
            return
        if time.monotonic() > deadline:
            raise PodSetError(
                f"{len(left)} objects were still being deleted after {timeout:.0f}s: "
                + ", ".join(list(left)[:10])
            )
        time.sleep(POLL)


def _wait_running(cluster: _Cluster, objects: Objects, timeout: float) -> dict[str, Any]:
    """Wait until every Pod runs and is Ready (or has succeeded), as the Kubernetes
    provider awaits a Pod; raise at the timeout naming the Pods that do not."""
    pods = _pods(objects)
    deadline = time.monotonic() + timeout
    while True:
        live = cluster.listed(pods)
        waiting = sorted(k for k in pods if not _ready(live.get(k)))
        failed = sorted(
            k for k in pods if ((live.get(k) or {}).get("status") or {}).get("phase") == "Failed"
        )
        if failed:
            raise PodSetError("these Pods failed: " + ", ".join(failed[:10]))
        if not waiting:
            return _phases(live)
        if time.monotonic() > deadline:
            raise PodSetError(
                f"{len(waiting)} Pods were not running after {timeout:.0f}s: "
                + ", ".join(waiting[:10])
            )
        time.sleep(POLL * 2)


def _ready(live: Mapping[str, Any] | None) -> bool:
    status = (live or {}).get("status") or {}
    if status.get("phase") == "Succeeded":
        return True
    conditions = {c.get("type"): c.get("status") for c in status.get("conditions") or []}
    return status.get("phase") == "Running" and conditions.get("Ready") == "True"


class PodSetProvider(ResourceProvider):
    """Applies, reads and deletes a pod set's objects.

    Inputs: ``objects`` (key → manifest), ``cluster`` (``kubeconfig``, ``context``),
    ``owner`` (the stack's label), ``waitSeconds`` (wait for the Pods to run, or None).
    Outputs: the same, ``objects`` being those the cluster was given (after a refresh,
    those it still holds), and ``phases`` (each Pod's phase).
    """

    outputs: tuple[str, ...] = ("cluster",)
    """Outputs kept secret: the cluster's settings (a kubeconfig may hold credentials)."""

    def create(self, props: dict[str, Any]) -> CreateResult:
        objects = props.get("objects") or {}
        actions: dict[str, Action] = {key: "create" for key in objects}
        return CreateResult(uuid.uuid4().hex, _apply(props, actions, {}, {}))

    def diff(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> DiffResult:
        # `olds` are the stored outputs: the objects the cluster was given (and, after a
        # refresh, still holds). The set itself is never replaced: its objects are.
        actions = object_actions(olds.get("objects") or {}, news.get("objects") or {})
        wait_changed = olds.get("waitSeconds") != news.get("waitSeconds")
        return DiffResult(
            changes=bool(actions) or wait_changed, replaces=[], delete_before_replace=False
        )

    def update(self, _id: str, olds: dict[str, Any], news: dict[str, Any]) -> UpdateResult:
        old = olds.get("objects") or {}
        actions = object_actions(old, news.get("objects") or {})
        return UpdateResult(_apply(news, actions, old, olds.get("phases") or {}))

    def read(self, id_: str, props: dict[str, Any]) -> ReadResult:
        objects: dict[str, Mapping[str, Any]] = dict(props.get("objects") or {})
        live = _Cluster(props.get("cluster")).listed(objects)
        owner = props.get("owner") or {}
        # An object deleted out of band (or now someone else's) drops from the record, so
        # the next update creates it again.
        kept = {k: m for k, m in objects.items() if k in live and _owned_by(live[k], owner)}
        return ReadResult(id_, {**props, "objects": kept, "phases": _phases(live)})

    def delete(self, _id: str, props: dict[str, Any]) -> None:
        objects = props.get("objects") or {}
        _delete(_Cluster(props.get("cluster")), objects, props.get("owner") or {})


def _apply(
    props: Mapping[str, Any],
    actions: Mapping[str, Action],
    old: Objects,
    phases: Mapping[str, Any],
) -> dict[str, Any]:
    """Carry out ``actions`` on the cluster (``old``: the objects applied before); the
    set's outputs afterwards."""
    objects: Objects = props.get("objects") or {}
    cluster = _Cluster(props.get("cluster"))
    owner = props.get("owner") or {}
    # Deleted first; a replaced object is deleted, then applied again with the others.
    removed = {k: old[k] for k, a in actions.items() if a in ("delete", "replace")}
    if removed:
        _delete(cluster, removed, owner)
    answered: dict[str, Any] = {}
    made: dict[str, Mapping[str, Any]] = {}

    def apply_one(key: str) -> str | None:
        manifest = objects[key]
        status, data = cluster.apply(manifest)
        if status == 422 and actions[key] == "update" and _where(manifest)[0] == "Pod":
            # A change the rules let through and the API server refuses: replace it.
            cluster.delete(key, manifest)
            _wait_gone(cluster, {key: manifest}, DELETE_TIMEOUT)
            status, data = cluster.apply(manifest)
        if status >= 300:
            return f"{key}: {refusal(status, data)}"
        answered[key] = data
        if status == 201 and key not in old:
            made[key] = manifest
        return None

    try:
        for wave in _ordered(objects, (k for k, a in actions.items() if a != "delete")):
            _in_parallel(wave, apply_one)
    except PodSetError as refused:
        raise PodSetError(f"{refused}{_undo(cluster, made, owner)}") from None
    pods = {_where(m)[2] for m in _pods(objects).values()}
    new_phases = {n: p for n, p in {**phases, **_phases(answered)}.items() if n in pods}
    wait = props.get("waitSeconds")
    if wait:
        new_phases = _wait_running(cluster, objects, float(wait))
    return {
        "objects": dict(objects),
        "phases": dict(sorted(new_phases.items())),
        "cluster": props.get("cluster"),
        "owner": owner,
        "waitSeconds": wait,
    }


def _undo(cluster: _Cluster, made: Objects, owner: Mapping[str, str]) -> str:
    """Delete the objects a failed step created, and say so ("" when it created none).
    The engine records nothing of a failed create (nor the new objects of a failed
    update): left in the cluster, they would be in no state, and no destroy would
    delete them."""
    if not made:
        return ""
    try:
        _delete(cluster, made, owner)
    except PodSetError as exc:
        label = ",".join(f"{k}={v}" for k, v in sorted(owner.items()))
        return (
            f"\nThe {len(made)} objects this step created were to be deleted again, and "
            f"these were not (they carry the label {label}):\n{exc}"
        )
    which = (
        "The object this step created is"
        if len(made) == 1
        else f"The {len(made)} objects this step created are"
    )
    return (
        f"\n{which} deleted again: the cluster holds what the state records. Fix the "
        "cause and run `pulumi up` again."
    )


def _delete(cluster: _Cluster, objects: Objects, owner: Mapping[str, str]) -> None:
    """Delete ``objects`` (Pods before Services) and wait until they are gone: only those
    the cluster holds with this stack's owner label, so an object another stack (or a
    person) made in their place since is left alone."""
    live = cluster.listed(objects)
    mine = {k: m for k, m in objects.items() if k in live and _owned_by(live[k], owner)}
    problems: list[str] = []

    def delete_one(key: str) -> str | None:
        try:
            cluster.delete(key, mine[key])
        except PodSetError as exc:
            return str(exc)
        return None

    with concurrent.futures.ThreadPoolExecutor(max_workers=PARALLEL) as pool:
        for wave in reversed(_ordered(mine, mine)):
            problems += [p for p in pool.map(delete_one, wave) if p]
    if problems:
        raise PodSetError("\n".join(problems))
    _wait_gone(cluster, mine, DELETE_TIMEOUT)


class PodSet(Resource, module="trainjobs", name="PodSet"):
    """One job's Pods and Services as one resource (see the module's docstring).

    Outputs: ``objects`` (each object the cluster was given, by key; after a refresh, those
    it still holds) and ``phases`` (each Pod's phase when last applied or refreshed).
    """

    objects: pulumi.Output[dict[str, Any]]
    phases: pulumi.Output[dict[str, Any]]

    def __init__(
        self,
        name: str,
        props: Mapping[str, Any],
        opts: pulumi.ResourceOptions | None = None,
    ) -> None:
        secret = pulumi.ResourceOptions(additional_secret_outputs=list(PodSetProvider.outputs))
        super().__init__(
            PodSetProvider(),
            name,
            {**props, "phases": None},
            pulumi.ResourceOptions.merge(opts, secret),
        )


_MADE_WITH: list[Callable[..., pulumi.CustomResource]] = [PodSet]


def serve_with(cls: Callable[..., pulumi.CustomResource]) -> None:
    """Make pod sets with ``cls`` (the component provider's served resource) instead of
    the dynamic :class:`PodSet`."""
    _MADE_WITH[:] = [cls]


def make_pod_set(
    name: str, props: Mapping[str, Any], opts: pulumi.ResourceOptions
) -> pulumi.CustomResource:
    """A pod set of the kind this process makes (dynamic, or served by the provider)."""
    return _MADE_WITH[0](name, props, opts)


_UNITS = {"s": 1, "m": 60, "h": 3600}


def _seconds(duration: str) -> int:
    """``90m`` → 5400 (a job's ``waitTimeout``, already validated)."""
    return int(duration[:-1]) * _UNITS[duration[-1]]


def pod_set_inputs(
    manifests: Sequence[Mapping[str, Any]],
    lifecycles: Sequence[Lifecycle],
    *,
    generated: GeneratedValues | None = None,
    inputs: Inputs | None = None,
    secret: bool = False,
) -> tuple[dict[str, Any], bool]:
    """The pod set's inputs, and whether its ``objects`` are secret.

    The inputs: each manifest by key, with the stack's owner label (what a destroy
    checks before deleting); the cluster the Kubernetes provider is configured for; and
    how long to wait for the Pods (their longest timeout, if any is awaited).

    ``generated`` fills generated values and ``inputs`` Pulumi Inputs, as for an object
    of its own; ``secret`` (or a generated value inside) keeps ``objects`` encrypted."""
    objects = {member_key(m): with_owner(dict(m)) for m in manifests}
    hidden = secret
    if any(has_placeholders(m) for m in objects.values()):
        if generated is None:
            raise ValueError("a pod set holds generated values, and no generator was given")
        objects = generated.substitute(objects)
        hidden = True
    if inputs:
        objects = inputs.substitute(objects)
    waits = [_seconds(lc.timeout) for lc in lifecycles if not lc.skip_await and lc.timeout]
    config = pulumi.Config("kubernetes")
    cluster = {"kubeconfig": config.get("kubeconfig"), "context": config.get("context")}
    labels, _ = owner_metadata()
    props = {
        "objects": pulumi.Output.secret(objects) if hidden else objects,
        "cluster": pulumi.Output.secret(cluster) if cluster["kubeconfig"] else cluster,
        "owner": labels,
        "waitSeconds": max(waits) if waits else None,
    }
    return props, hidden


def register_pod_set(
    name: str,
    manifests: Sequence[Mapping[str, Any]],
    lifecycles: Sequence[Lifecycle],
    opts: pulumi.ResourceOptions,
    *,
    generated: GeneratedValues | None = None,
    inputs: Inputs | None = None,
    secret: bool = False,
) -> pulumi.CustomResource:
    """Register ``manifests`` (each :func:`is_member`) as one pod set named ``name``."""
    props, hidden = pod_set_inputs(
        manifests, lifecycles, generated=generated, inputs=inputs, secret=secret
    )
    if hidden:
        # The objects as applied are an output too: as secret as the input.
        extra = pulumi.ResourceOptions(additional_secret_outputs=["objects"])
        opts = pulumi.ResourceOptions.merge(opts, extra)
    return make_pod_set(name, props, opts)
