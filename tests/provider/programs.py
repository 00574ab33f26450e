"""A Pulumi YAML program's trainjobs resources as the stack file that declares the same.

The proofs compare what a program in another language makes with what ``trainjobs
render`` prints for this file: a job's ``target``, ``backend``, ``nodePool`` … become
its options beside it (``trainjobs:``), a platform component its document.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from trainjobs.platform import API_VERSION

__all__ = ["stack_documents", "write_stack_file"]

_REFERENCE = re.compile(r"^\$\{([A-Za-z0-9_-]+)\}$")
_OPTIONS = ("target", "gang", "wait", "waitTimeout")
_REFERENCES = ("backend", "nodePool", "queue")


def _referenced(value: Any, resources: Mapping[str, Any]) -> str:
    match = _REFERENCE.match(str(value))
    if match is None or match.group(1) not in resources:
        raise ValueError(f"{value!r} is not a reference to a resource of the program")
    return match.group(1)


def stack_documents(program: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The documents of a stack file declaring the program's trainjobs resources."""
    resources: Mapping[str, Any] = program.get("resources") or {}
    docs: list[dict[str, Any]] = []
    for name, resource in resources.items():
        package, _, kind = str(resource["type"]).rpartition(":")
        if not package.startswith("trainjobs"):
            continue
        props: Mapping[str, Any] = resource.get("properties") or {}
        if kind == "TrainingJob":
            job = dict(props["job"])
            options = {k: props[k] for k in _OPTIONS if k in props}
            options |= {k: _referenced(props[k], resources) for k in _REFERENCES if k in props}
            docs.append({**job, "trainjobs": options} if options else job)
            continue
        meta = {"name": name}
        if "namespace" in props:
            meta["namespace"] = props["namespace"]
        doc = {"apiVersion": API_VERSION, "kind": kind, "metadata": meta}
        docs.append({**doc, "spec": dict(props.get("spec") or {})})
    return docs


def write_stack_file(program_file: Path, out: Path) -> Path:
    """Write the stack file of the program in ``program_file`` to ``out``."""
    program = yaml.safe_load(program_file.read_text())
    out.write_text(yaml.safe_dump_all(stack_documents(program), sort_keys=False))
    return out
