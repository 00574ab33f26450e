"""Hypothesis strategies for valid input, built from the examples (see ``corpus``).

A valid input is an example file with its knobs set to values that pass, its
jobs renamed (up to the longest name the framework accepts) and moved to
another namespace (with the platform resources beside them), and trainjobs
options (target, wait, waitTimeout) each job may carry. Nothing here names a
framework: a framework merged later is drawn as soon as it has an example.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from hypothesis import strategies as st

from tests.support.corpus import (
    Example,
    examples,
    is_job,
    knob_values,
    knobs,
    passes,
)
from trainjobs.errors import format_path
from trainjobs.k8s.names import LABEL_MAX
from trainjobs.platform import PLATFORM
from trainjobs.spec import Target
from trainjobs.spec.entry import OPTIONS_KEY
from trainjobs.spec.load import LIST_KEYS

__all__ = [
    "ValidInput",
    "max_name_length",
    "user_path",
    "valid_inputs",
    "valid_waits",
    "with_names",
    "with_namespace",
]

WAITS = ("none", "running", "succeeded")
_LIST_OF = {category: key for key, category in LIST_KEYS.items()}


def user_path(docs: list[dict[str, Any]], index: int, path: tuple[Any, ...] = ()) -> str:
    """The path a finding names for ``path`` in document ``index`` of a file:
    ``jobs[0].spec.tfReplicaSpecs.Worker.replicas`` (documents count per list)."""

    def list_of(doc: Any) -> str:
        if is_job(doc):
            return "jobs"
        plugin = PLATFORM.by_kind(str(doc.get("kind")))
        return _LIST_OF[plugin.category] if plugin else "jobs"

    key = list_of(docs[index])
    position = sum(1 for d in docs[:index] if list_of(d) == key)
    base = f"{key}[{position}]"
    return f"{base}.{format_path(path)}" if path else base


def normalised(path: str) -> str:
    """A path with ``['key']`` written as ``.key``, to compare paths however quoted."""
    return re.sub(r"\['([^']*)'\]", r".\1", path)


def with_names(docs: list[dict[str, Any]], name: str) -> None:
    """Name the jobs ``name`` (``name-<i>`` when there are several)."""
    jobs = [d for d in docs if is_job(d)]
    for index, doc in enumerate(jobs):
        own = name if len(jobs) == 1 else f"{name[: LABEL_MAX - 4]}-{index}"
        doc["metadata"] = {**doc["metadata"], "name": own}


def with_namespace(docs: list[dict[str, Any]], namespace: str) -> None:
    """Move the jobs, and the namespaced platform resources beside them, to ``namespace``
    (a queue's LocalQueues go with them)."""
    for doc in docs:
        if doc.get("kind") == "GpuQueue" and (doc.get("spec") or {}).get("namespaces"):
            doc["spec"] = {**doc["spec"], "namespaces": [namespace]}
        if not is_job(doc) and "namespace" not in doc["metadata"]:
            plugin = PLATFORM.by_kind(str(doc.get("kind")))
            if plugin is None or plugin.default_namespace is None:
                continue  # cluster-wide (a node pool), or in a namespace of its own
        doc["metadata"] = {**doc["metadata"], "namespace": namespace}


def _at_most(example: Example) -> list[dict[str, Any]]:
    """The example with every knob at its largest value (the longest object names)."""
    docs = example.copy_docs()
    for knob in knobs(example):
        knob.apply(docs, max(knob_values(example, knob)))
    return docs


@cache
def max_name_length(example: Example) -> int:
    """The longest job name the example's framework accepts (63, or less where the
    operator builds longer hostnames from it), with every knob at its largest."""
    for length in range(LABEL_MAX, 0, -1):
        docs = _at_most(example)
        with_names(docs, "n" * length)
        if passes(docs, example.targets):
            return length
    raise AssertionError(f"{example.name}: no job name is accepted")


@cache
def valid_waits(example: Example, target: Target) -> tuple[str, ...]:
    """The ``wait`` options the example's jobs accept on ``target``."""
    found = []
    for wait in WAITS:
        docs = example.copy_docs()
        for doc in docs:
            if is_job(doc):
                doc[OPTIONS_KEY] = {**(doc.get(OPTIONS_KEY) or {}), "wait": wait}
        if passes(docs, (target,)):
            found.append(wait)
    return tuple(found)


@dataclass(frozen=True)
class ValidInput:
    """A drawn input: the file's documents and the target its jobs ask for."""

    example: Example
    docs: list[dict[str, Any]]
    target: Target


def _dns_label(max_size: int, first: str) -> st.SearchStrategy[str]:
    middle = max(max_size - 2, 0)
    pattern = rf"{first}([a-z0-9-]{{0,{middle}}}[a-z0-9])?" if max_size > 1 else first
    return st.from_regex(pattern, fullmatch=True)


@st.composite
def valid_inputs(draw: st.DrawFn) -> ValidInput:
    """An example file varied within what its framework accepts."""
    example = draw(st.sampled_from(examples()))
    docs = example.copy_docs()
    for knob in knobs(example):
        knob.apply(docs, draw(st.sampled_from(knob_values(example, knob))))
    with_names(docs, draw(_dns_label(max_name_length(example), "[a-z]")))
    # Namespaces start with a letter here: a Caffe2Job names its Services
    # <namespace>-<job>-worker-<k>, which a leading digit makes invalid (reported
    # by the name check, but not an input that renders).
    with_namespace(docs, draw(_dns_label(LABEL_MAX, "[a-z]")))
    target: Target = draw(st.sampled_from(example.targets))
    options: dict[str, Any] = {"target": target}
    options["wait"] = draw(st.sampled_from(valid_waits(example, target)))
    if options["wait"] != "none" and draw(st.booleans()):
        options["waitTimeout"] = f"{draw(st.integers(1, 600))}{draw(st.sampled_from('smh'))}"
    for doc in docs:
        if is_job(doc):
            doc[OPTIONS_KEY] = {**(doc.get(OPTIONS_KEY) or {}), **options}
    return ValidInput(example, docs, target)
