"""Benchmark input: N jobs of 8 replicas each, cycling through every framework.

A target's mix is every framework that renders to it and can share one stack
with the others (see :func:`mix`).

Each job is one of the repository's examples (per framework, the largest
example that scales), with its main replica count set so the job makes
exactly ``replicas`` pods, renamed ``<framework>-<i>`` into namespace ``bench``.
Platform resources in the example file (a backend, a node pool) come along,
renamed with the job; operator installs are left out (N copies would install
the same CRDs N times). A framework merged later is in the mix as soon as it
has an example.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Sequence
from functools import cache
from typing import Any

from tests.support.corpus import Example, examples, is_job, scaled
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.platform import PLATFORM
from trainjobs.spec import StackSpec, Target, parse_documents
from trainjobs.spec.entry import OPTIONS_KEY

__all__ = ["NAMESPACE", "REPLICAS", "framework_examples", "job_documents", "mix", "stack"]

REPLICAS = 8
NAMESPACE = "bench"
_REFERENCE_OPTIONS = ("backend", "nodePool", "queue")


@cache
def framework_examples() -> dict[str, Example]:
    """Per framework (registry order), one single-framework example that scales: files
    holding only jobs before those with platform resources, the largest first."""
    found: dict[str, Example] = {}
    # Files of jobs alone first (a job that names a node pool is bound by its size),
    # then the richest job first: the most to expand and write is the fair measure.
    ordered = sorted(
        examples(), key=lambda e: (len(e.job_indexes) != len(e.docs), -len(json.dumps(e.docs)))
    )
    for framework in REGISTRY:
        for example in ordered:
            if example.frameworks == (framework.name,) and scaled(example, REPLICAS):
                found[framework.name] = example
                break
    return found


def _renamed(docs: list[dict[str, Any]], job_name: str, suffix: str) -> list[dict[str, Any]]:
    """Jobs named ``job_name``, platform resources ``<name>-<suffix>``, references kept."""
    names: dict[str, str] = {}
    out = []
    for doc in docs:
        if is_job(doc):
            doc["metadata"] = {**doc["metadata"], "name": job_name, "namespace": NAMESPACE}
            out.append(doc)
            continue
        plugin = PLATFORM.by_kind(str(doc.get("kind")))
        if plugin is None or plugin.category == "operator":
            continue
        old = doc["metadata"]["name"]
        names[old] = f"{old}-{suffix}"
        meta = {**doc["metadata"], "name": names[old]}
        if plugin.default_namespace is not None or "namespace" in meta:
            meta["namespace"] = NAMESPACE
        doc["metadata"] = meta
        out.append(doc)
    for doc in out:
        options = doc.get(OPTIONS_KEY) if is_job(doc) else None
        if not isinstance(options, dict):
            continue
        for key in _REFERENCE_OPTIONS:
            value = options.get(key)
            if isinstance(value, str):
                options[key] = names.get(value, value)
            elif isinstance(value, dict):
                options[key] = {role: names.get(v, v) for role, v in value.items()}
    return out


@cache
def mix(target: Target) -> tuple[str, ...]:
    """The frameworks in the mix for ``target``: registry order, each one that renders
    to it and can share a stack with those before it (MPIJob v1 and v2beta1 cannot on
    the operator target: a cluster serves one version of their CRD)."""
    chosen: list[str] = []
    for name, example in framework_examples().items():
        if target not in example.targets:
            continue
        try:
            run(parse_documents(_documents([*chosen, name], len(chosen) + 1)), target=target)
        except SpecError:
            continue
        chosen.append(name)
    return tuple(chosen)


def _documents(names: Sequence[str], count: int, replicas: int = REPLICAS) -> list[dict[str, Any]]:
    chosen = framework_examples()
    scaled_docs: dict[str, list[dict[str, Any]]] = {}
    docs: list[dict[str, Any]] = []
    for index in range(count):
        name = names[index % len(names)]
        if name not in scaled_docs:
            found = scaled(chosen[name], replicas)
            if found is None:
                raise ValueError(f"{chosen[name].name} cannot be scaled to {replicas} pods")
            scaled_docs[name] = found
        docs += _renamed(copy.deepcopy(scaled_docs[name]), f"{name}-{index}", str(index))
    return docs


def job_documents(count: int, target: Target, replicas: int = REPLICAS) -> list[dict[str, Any]]:
    """``count`` jobs of ``replicas`` pods, cycling through the frameworks of ``mix(target)``."""
    return _documents(mix(target), count, replicas)


def stack(count: int, target: Target, replicas: int = REPLICAS) -> StackSpec:
    return parse_documents(job_documents(count, target, replicas))
