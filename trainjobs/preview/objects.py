"""One side of a preview: Kubernetes objects keyed by identity, wherever they came from.

A side is a render (``trainjobs render`` output as a directory or a YAML
stream, a render made in-process, the stored last render) or what a cluster
holds. Objects are keyed by (API group, kind, namespace, name), the identity
that must be unique in a stack; a change of version within a group is a change
of that object, not a new one.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trainjobs import limits
from trainjobs.errors import NO_VALUE, Finding, SpecError
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.yamlio import InputError, YamlSyntaxError, load_all, read_bounded
from trainjobs.output import WRITTEN_LIST
from trainjobs.render import RenderedJob, Rendering

__all__ = [
    "JOB_NAME_LABELS",
    "Key",
    "PreviewObject",
    "Side",
    "job_of",
    "key_of",
    "load_side",
    "ordered_keys",
    "side_from_manifests",
    "side_from_rendering",
    "strip_server_fields",
    "title_of",
]

Key = tuple[str, str, str, str]
"""(API group, kind, namespace, name); ``""`` for the core group and cluster-wide objects."""

JOB_NAME_LABELS = (
    # Training Operator v1, MPI Operator v2 and kubeflow/common v0.4+ (pods and services).
    "training.kubeflow.org/job-name",
    # kubeflow/common before v0.4, and the Kubernetes Job controller on a Job's pods.
    "job-name",
    # MindSpore ms-operator.
    "ms_job_name",
    # PaddlePaddle EDL.
    "paddle-job",
)
"""Labels, in order of trust, that name the training job an object belongs to."""

_SERVER_METADATA = (
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
    "ownerReferences",
)
_SERVER_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def key_of(manifest: Mapping[str, Any]) -> Key:
    """The identity of ``manifest`` (same as ``RenderedObject.identity``)."""
    meta = manifest.get("metadata") or {}
    group = str(manifest.get("apiVersion", "")).rpartition("/")[0]
    return (group, str(manifest.get("kind")), str(meta.get("namespace") or ""), str(meta["name"]))


def title_of(key: Key) -> str:
    """``Kind namespace/name`` for people."""
    _, kind, namespace, name = key
    return f"{kind} {namespace + '/' if namespace else ''}{name}"


def job_of(manifest: Mapping[str, Any]) -> str:
    """The training job ``manifest`` belongs to, from its kind or labels; ``""`` for none.

    A job's own custom resource belongs to itself; Pods, Services and
    workloads carry the job's name in a label their operator (or trainjobs'
    ``pods`` target) puts on them.
    """
    meta = manifest.get("metadata") or {}
    if REGISTRY.of_document(manifest) is not None:
        return str(meta.get("name", ""))
    template = (manifest.get("spec") or {}).get("template") or {}
    for labels in (meta.get("labels"), (template.get("metadata") or {}).get("labels")):
        if isinstance(labels, Mapping):
            for label in JOB_NAME_LABELS:
                if isinstance(labels.get(label), str) and labels[label]:
                    return str(labels[label])
    return ""


def strip_server_fields(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """A copy without what the API server adds: uid, resourceVersion, status, managedFields …

    Objects exported with ``kubectl get -o yaml`` then compare with renders.
    """
    out = copy.deepcopy(dict(manifest))
    out.pop("status", None)
    meta = out.get("metadata")
    if isinstance(meta, dict):
        for name in _SERVER_METADATA:
            meta.pop(name, None)
        annotations = meta.get("annotations")
        if isinstance(annotations, dict):
            for name in _SERVER_ANNOTATIONS:
                annotations.pop(name, None)
            if not annotations:
                meta.pop("annotations", None)
    return out


@dataclass(frozen=True)
class PreviewObject:
    """One object on one side of a preview.

    Attributes:
        manifest: the object, server fields stripped.
        job: the training job it belongs to (``""``: none).
        source: where it was read from (a file, ``REF:path``, ``cluster``).
        unit: the stack's other resource it belongs to, e.g. ``backend training/redis``
            (``""``: a job's object, or a stack-level one such as a Namespace).
        origin: where in the stack it was declared (``jobs[0]``, ``namespaces[1]``);
            ``""`` when not from an in-process render.
    """

    manifest: dict[str, Any]
    job: str = ""
    source: str = ""
    unit: str = ""
    origin: str = ""

    @property
    def key(self) -> Key:
        return key_of(self.manifest)

    @property
    def title(self) -> str:
        return title_of(self.key)


@dataclass(frozen=True)
class Side:
    """Everything one side of a preview holds, in the order it was given (apply order).

    Attributes:
        label: what this side is, for people (``HEAD:stacks/Pulumi.demo.yaml``).
        objects: by key, in order.
        labels: for what a cluster holds, each object's labels as the cluster has them,
            read before the object is cut down to the render's fields (the stack label
            that says who made it is not one of them); empty for a render.
    """

    label: str
    objects: dict[Key, PreviewObject] = field(default_factory=dict)
    labels: dict[Key, dict[str, str]] = field(default_factory=dict)


def _finding(source: str, path: str, message: str, hint: str, value: Any = NO_VALUE) -> Finding:
    return Finding(
        code="preview.input", path=path, message=message, value=value, hint=hint, source=source
    )


def side_from_manifests(
    manifests: Iterable[tuple[Any, str]], label: str, *, jobs: Mapping[Key, str] | None = None
) -> Side:
    """A side from ``(document, source)`` pairs; SpecError lists every unusable document.

    ``kind: List`` documents (``kubectl get -o yaml`` of several objects) are
    expanded; ``jobs`` gives the job of an object where it is known, else its
    labels decide.
    """
    objects: dict[Key, PreviewObject] = {}
    findings: list[Finding] = []
    counters: dict[str, int] = {}
    pending: list[tuple[Any, str, str]] = []
    for doc, source in manifests:
        counters[source] = counters.get(source, -1) + 1
        pending.append((doc, source, f"documents[{counters[source]}]"))
    while pending:
        doc, source, where = pending.pop(0)
        if isinstance(doc, Mapping) and doc.get("kind") == "List" and "items" in doc:
            items = doc.get("items") or []
            pending[0:0] = [(item, source, f"{where}.items[{i}]") for i, item in enumerate(items)]
            continue
        if not isinstance(doc, Mapping) or not all(
            isinstance(doc.get(k), str) and doc.get(k) for k in ("apiVersion", "kind")
        ):
            findings.append(
                _finding(
                    source,
                    where,
                    "not a Kubernetes object: apiVersion and kind are required",
                    "pass the output of `trainjobs render`, not a stack or job file "
                    "(use --against REF to compare a stack file with git)",
                )
            )
            continue
        meta = doc.get("metadata")
        if not isinstance(meta, Mapping) or not isinstance(meta.get("name"), str):
            findings.append(
                _finding(source, f"{where}.metadata.name", "an object needs a name", "add one")
            )
            continue
        manifest = strip_server_fields(doc)
        key = key_of(manifest)
        if key in objects:
            findings.append(
                _finding(
                    source,
                    where,
                    "the same object appears twice",
                    "remove one of them",
                    title_of(key),
                )
            )
            continue
        job = (jobs or {}).get(key) or job_of(manifest)
        objects[key] = PreviewObject(manifest, job, source)
    if findings:
        raise SpecError.from_findings(findings)
    return Side(label, objects)


def side_from_rendering(
    rendering: Rendering, label: str, relabel: Callable[[str], str] | None = None
) -> Side:
    """A side from an in-process render: each object keeps the job or resource that made it.

    ``relabel`` maps each object's source file to the name shown for it.
    """
    owners: dict[int, tuple[str, str]] = {}
    origins: dict[int, str] = {}
    for rendered in rendering.units:
        for made in rendered.objects:
            origins[id(made)] = made.origin or rendered.origin
            if isinstance(rendered, RenderedJob):
                owners[id(made)] = (made.job, "")
            elif rendered.ref.category != "namespace":
                owners[id(made)] = ("", str(rendered.ref))
    objects: dict[Key, PreviewObject] = {}
    for obj in rendering.objects:
        manifest = copy.deepcopy(obj.manifest)
        source = relabel(obj.source) if relabel else obj.source
        job, unit = owners.get(id(obj), ("", ""))
        objects[key_of(manifest)] = PreviewObject(
            manifest, job or job_of(manifest), source, unit, origins.get(id(obj), obj.origin)
        )
    return Side(label, objects)


def _read_text(path: Path, source: str) -> str:
    try:
        # A render output: a large job's is far bigger than any file a user writes.
        return read_bounded("-" if source == "-" else path, limits.RENDER_BYTES)
    except InputError as exc:
        raise SpecError.from_findings([_finding(source, "", exc.problem, exc.hint)]) from None


def _documents(path: Path, source: str) -> list[tuple[Any, str]]:
    text = _read_text(path, source)
    try:
        return [(doc, source) for doc in load_all(text, source)]
    except YamlSyntaxError as exc:
        raise SpecError.from_findings([_finding(source, "", exc.problem, exc.hint)]) from None


def load_side(location: str, label: str = "") -> Side:
    """A render output: a directory of YAML files (``render -o``), a YAML stream, or ``-``.

    Files of a directory are read in name order, which is apply order for
    ``render -o``; files that are not ``.yaml``/``.yml`` are passed over.
    """
    path = Path(location)
    docs: list[tuple[Any, str]] = []
    if location != "-" and path.is_dir():
        files = sorted(p for p in path.iterdir() if p.suffix in (".yaml", ".yml") and p.is_file())
        if not files and not (path / WRITTEN_LIST).is_file():
            # Read as a render of nothing, a wrong folder (`out` for `out/demo`) would
            # plan to create, or delete, every object.
            raise SpecError.from_findings(
                [
                    _finding(
                        location,
                        "",
                        f"the folder holds no render output (no .yaml file, no {WRITTEN_LIST})",
                        "name the folder `trainjobs render -o DIR` wrote, or a YAML stream",
                    )
                ]
            )
        for file in files:
            docs += _documents(file, str(file))
    elif location == "-" or path.is_file():
        docs = _documents(path, location)
    else:
        raise SpecError.from_findings(
            [_finding(location, "", "no such file or directory", "check the path")]
        )
    return side_from_manifests(docs, label or location)


def ordered_keys(old: Side, new: Side) -> Sequence[Key]:
    """Keys of both sides: the new side's order, then what only the old side has."""
    return [*new.objects, *(k for k in old.objects if k not in new.objects)]
