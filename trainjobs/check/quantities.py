"""Resource quantities in pod specs: each must be a Kubernetes quantity, and not negative.

The OpenAPI schema types a quantity as "string or number", so ``cpu: 4 cores``
passes it; the API server then refuses the object. This check finds such values
in the input's pod templates (with the user's field path) and in every rendered
object that holds a pod spec.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from trainjobs.check.k8s_schema import SchemaProblem
from trainjobs.errors import format_path
from trainjobs.k8s.pods import each_container
from trainjobs.k8s.quantity import QuantityError, parse_quantity

__all__ = ["HINT", "pod_spec_paths", "quantity_problems"]

HINT = "write a number with an optional suffix, e.g. 4, 500m, 16Gi, 1e3"
_REQUIREMENTS = ("limits", "requests")


def _problem(path: str, value: Any) -> SchemaProblem | None:
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        return None  # a wrong type: the schema check reports it
    try:
        amount = parse_quantity(value)
    except QuantityError:
        return path, "is not a Kubernetes quantity", value
    if amount < 0:
        return path, "a resource quantity must not be negative", value
    return None


def _quantities(pod_spec: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(path inside the pod spec, value) of every resource quantity it holds."""
    for field, index, container in each_container(pod_spec):
        resources = container.get("resources")
        if not isinstance(resources, Mapping):
            continue
        for requirement in _REQUIREMENTS:
            amounts = resources.get(requirement)
            if isinstance(amounts, Mapping):
                for name, value in amounts.items():
                    yield format_path([field, index, "resources", requirement, name]), value
    overhead = pod_spec.get("overhead")
    if isinstance(overhead, Mapping):
        for name, value in overhead.items():
            yield format_path(["overhead", name]), value
    volumes = pod_spec.get("volumes")
    if isinstance(volumes, list):
        for index, volume in enumerate(volumes):
            empty_dir = volume.get("emptyDir") if isinstance(volume, Mapping) else None
            if isinstance(empty_dir, Mapping) and "sizeLimit" in empty_dir:
                yield f"volumes[{index}].emptyDir.sizeLimit", empty_dir["sizeLimit"]


def quantity_problems(pod_spec: Any, prefix: str = "") -> list[SchemaProblem]:
    """Bad quantities in one pod spec; paths start with ``prefix`` (e.g. ``spec``)."""
    if not isinstance(pod_spec, Mapping):
        return []
    found = []
    for path, value in _quantities(pod_spec):
        problem = _problem(f"{prefix}.{path}" if prefix else path, value)
        if problem is not None:
            found.append(problem)
    return found


def pod_spec_paths(manifest: Mapping[str, Any]) -> Iterator[tuple[str, Any]]:
    """(path, pod spec) of every pod spec in a rendered object: a Pod's own, a workload's
    template, a CronJob's job template."""
    spec = manifest.get("spec")
    if not isinstance(spec, Mapping):
        return
    if manifest.get("kind") == "Pod":
        yield "spec", spec
        return
    template = spec.get("template")
    if isinstance(template, Mapping) and isinstance(template.get("spec"), Mapping):
        yield "spec.template.spec", template["spec"]
    job_template = spec.get("jobTemplate")
    if isinstance(job_template, Mapping):
        inner = (job_template.get("spec") or {}).get("template") or {}
        if isinstance(inner, Mapping) and isinstance(inner.get("spec"), Mapping):
            yield "spec.jobTemplate.spec.template.spec", inner["spec"]
