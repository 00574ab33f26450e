"""The repository's examples as generic input for property tests and benchmarks.

Nothing here names a framework, a platform kind or a field: every example job
file under ``examples/`` is read as it is, and what can vary is found by trying.
A *knob* is a whole-number field of a job document that, raised by one, makes
the job render more pods (``replicas`` of a replica type, an EDL trainer's
``min-instance`` …); the values a knob may take are the ones that render and
pass every check on every target. A framework merged later is covered as soon
as it has an example.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from tests.support.paths import example_job_files, stack_files
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.yamlio import load_all
from trainjobs.platform import API_VERSION, PLATFORM
from trainjobs.render import render
from trainjobs.spec import Target, load_path, parse_documents
from trainjobs.spec.entry import OPTIONS_KEY, TARGETS
from trainjobs.spec.stack import StackSpec

__all__ = [
    "Example",
    "Knob",
    "Part",
    "examples",
    "get_path",
    "is_job",
    "knob_values",
    "knobs",
    "leaf_paths",
    "platform_documents",
    "platform_variants",
    "pods_of",
    "scaled",
    "set_path",
    "stack_of",
]

Part = str | int
"""One step of a path into a document: a mapping key or a list index."""

KNOB_VALUES = range(1, 6)
"""Values a knob is tried at (besides its own): enough to vary, small enough to be fast."""


def is_job(doc: Any) -> bool:
    """Whether a document is a job (not one of trainjobs' own platform kinds, nor a
    definition a job names, such as a Trainer runtime)."""
    if not isinstance(doc, dict) or doc.get("apiVersion") == API_VERSION:
        return False
    return REGISTRY.defining(str(doc.get("apiVersion")), str(doc.get("kind"))) is None


@dataclass(frozen=True, eq=False)
class Example:
    """One example job file: its documents (jobs and the platform resources they name)."""

    path: Path
    docs: tuple[dict[str, Any], ...]

    @property
    def name(self) -> str:
        return f"{self.path.parent.name}/{self.path.stem}"

    @property
    def job_indexes(self) -> tuple[int, ...]:
        return tuple(i for i, d in enumerate(self.docs) if is_job(d))

    def copy_docs(self) -> list[dict[str, Any]]:
        return copy.deepcopy(list(self.docs))

    @property
    def frameworks(self) -> tuple[str, ...]:
        return tuple(e.framework.name for e in stack_of(self.docs).jobs)

    @property
    def targets(self) -> tuple[Target, ...]:
        """The targets every job of the file renders to."""
        jobs = stack_of(self.docs).jobs
        return tuple(t for t in TARGETS if all(t in e.framework.targets for e in jobs))


@cache
def examples() -> tuple[Example, ...]:
    """Every example job file, in path order."""
    found = []
    for path in example_job_files():
        docs = tuple(d for d in load_all(path.read_text(), str(path)) if isinstance(d, dict))
        if any(is_job(d) for d in docs):
            found.append(Example(path, docs))
    return tuple(found)


def stack_of(docs: Sequence[dict[str, Any]]) -> StackSpec:
    """The stack a file of these documents is (raises SpecError when invalid)."""
    return parse_documents(copy.deepcopy(list(docs)))


def get_path(doc: Any, path: Sequence[Part]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


def set_path(doc: Any, path: Sequence[Part], value: Any) -> None:
    get_path(doc, path[:-1])[path[-1]] = value


def leaf_paths(value: Any, prefix: tuple[Part, ...] = ()) -> Iterator[tuple[Part, ...]]:
    """The path of every scalar inside ``value``."""
    if isinstance(value, dict):
        for key, item in value.items():
            yield from leaf_paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from leaf_paths(item, (*prefix, index))
    else:
        yield prefix


def pods_of(manifests: Sequence[Manifest]) -> int:
    """How many pods these objects make: Pods, and each workload's replicas."""
    total = 0
    for manifest in manifests:
        spec = manifest.get("spec") or {}
        if manifest.get("kind") == "Pod":
            total += 1
        elif isinstance(spec, dict) and isinstance(spec.get("template"), dict):
            count = spec.get("replicas", spec.get("parallelism", 1))
            total += count if isinstance(count, int) else 1
    return total


def _pods(docs: Sequence[dict[str, Any]]) -> int | None:
    try:
        return pods_of(render(stack_of(docs), "pods").manifests)
    except SpecError:
        return None


def passes(docs: Sequence[dict[str, Any]], targets: Sequence[Target]) -> bool:
    """Whether the documents render and pass every check on each of ``targets``."""
    try:
        stack = stack_of(docs)
        for target in targets:
            run(stack, target=target)
    except SpecError:
        return False
    return True


@dataclass(frozen=True)
class Knob:
    """A whole-number field of a job document that adds pods when raised.

    Attributes:
        doc: the index of the job document in its file.
        path: where the field is in that document.
        base: its value in the example.
        step: pods added per unit.
    """

    doc: int
    path: tuple[Part, ...]
    base: int
    step: int

    def apply(self, docs: list[dict[str, Any]], value: int) -> None:
        set_path(docs[self.doc], self.path, value)


@cache
def knobs(example: Example) -> tuple[Knob, ...]:
    """Every knob of an example (empty when it has no pods target)."""
    if "pods" not in example.targets:
        return ()
    base_pods = _pods(example.docs)
    if base_pods is None:
        return ()
    found = []
    for index in example.job_indexes:
        doc = example.docs[index]
        for path in leaf_paths(doc):
            if path[0] in ("apiVersion", "kind", "metadata", OPTIONS_KEY):
                continue
            value = get_path(doc, path)
            if not isinstance(value, int) or isinstance(value, bool):
                continue
            docs = example.copy_docs()
            set_path(docs[index], path, value + 1)
            more = _pods(docs)
            if more is None or more <= base_pods:
                continue
            found.append(Knob(index, path, value, more - base_pods))
    return tuple(found)


@cache
def knob_values(example: Example, knob: Knob) -> tuple[int, ...]:
    """The values (its own among them) with which the file passes every check on every
    target, the other knobs as they are."""
    values = []
    docs = example.copy_docs()
    for candidate in sorted({knob.base, *KNOB_VALUES}):
        knob.apply(docs, candidate)
        if passes(docs, example.targets):
            values.append(candidate)
    return tuple(values)


def scaled(example: Example, pods: int) -> list[dict[str, Any]] | None:
    """The example's documents with its main knob (the largest) set so that it renders
    ``pods`` pods on the pods target and passes every check; None when that cannot be
    done."""
    found = knobs(example)
    base_pods = _pods(example.docs)
    if not found or base_pods is None:
        return None
    knob = max(found, key=lambda k: (k.base, -k.doc))
    extra, remainder = divmod(pods - base_pods, knob.step)
    value = knob.base + extra
    if remainder or value < 0:
        return None
    docs = example.copy_docs()
    knob.apply(docs, value)
    if _pods(docs) != pods or not passes(docs, example.targets):
        return None  # e.g. more pods than the node pool the example names can hold
    return docs


def _bool_fields(model: Any) -> list[str]:
    """Wire names of the boolean fields of a pydantic spec model."""
    fields = getattr(model, "model_fields", {})
    return [info.alias or name for name, info in fields.items() if info.annotation is bool]


@cache
def platform_variants() -> tuple[dict[str, Any], ...]:
    """Per platform kind in the registry: a document with its defaults, and one with
    each boolean spec field switched on (a RedisBackend with ``password: true`` …),
    each of which renders on its own. Kinds that need more than defaults are drawn
    from the examples and stacks instead (:func:`platform_documents`)."""
    found: list[dict[str, Any]] = []
    for plugin in PLATFORM:
        spec_model = plugin.model.model_fields["spec"].annotation
        variants: list[dict[str, Any]] = [{}]
        variants += [{field: True} for field in _bool_fields(spec_model)]
        for number, spec in enumerate(variants):
            doc = {
                "apiVersion": API_VERSION,
                "kind": plugin.kind,
                "metadata": {"name": f"{plugin.kind.lower()}-{number}", "namespace": "training"},
                "spec": spec,
            }
            try:
                render(parse_documents([copy.deepcopy(doc)]))
            except SpecError:
                continue
            found.append(doc)
    return tuple(found)


@cache
def platform_documents() -> tuple[dict[str, Any], ...]:
    """A document of every platform kind the repository can render: those in the
    examples and stacks, and :func:`platform_variants`."""
    found: list[dict[str, Any]] = []
    for example in examples():
        found += [copy.deepcopy(d) for d in example.docs if not is_job(d)]
    for path in stack_files():
        try:
            found += [p.resource.to_manifest() for p in load_path(path).platform]
        except SpecError:
            continue
    return (*found, *platform_variants())
