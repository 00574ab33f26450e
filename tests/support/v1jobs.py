"""Small builders and readers for Training Operator v1 jobs in framework tests."""

from __future__ import annotations

from typing import Any

from tests.support.expand import expand_pods
from trainjobs.check import crd_schema, run
from trainjobs.errors import Finding, Severity
from trainjobs.frameworks.kubeflow_v1 import KubeflowV1Framework, ReplicaJob
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.yamlio import dump_all
from trainjobs.render import Rendering
from trainjobs.spec import parse_documents


def replica(
    container: str, replicas: int | None = None, image: str = "img:1", **extra: Any
) -> dict[str, Any]:
    """A replica spec with one container; ``replicas`` left out when None."""
    # Requests keep renders free of the resources.requests warning.
    resources = {"requests": {"cpu": "1", "memory": "1Gi"}}
    spec: dict[str, Any] = {
        "template": {
            "spec": {"containers": [{"name": container, "image": image, "resources": resources}]}
        }
    }
    if replicas is not None:
        spec["replicas"] = replicas
    spec.update(extra)
    return spec


def document(
    fw: KubeflowV1Framework[Any],
    specs: dict[str, Any],
    name: str,
    namespace: str | None = "kubeflow",
    **spec: Any,
) -> dict[str, Any]:
    """The job as a user writes it: apiVersion, kind, metadata and ``spec``."""
    metadata: dict[str, Any] = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    return {
        "apiVersion": fw.kind.api_version,
        "kind": fw.kind.kind,
        "metadata": metadata,
        "spec": {fw.replica_alias: specs, **spec},
    }


def job(fw: KubeflowV1Framework[Any], specs: dict[str, Any], name: str, **spec: Any) -> Any:
    """The job parsed with the framework's model (not yet defaulted)."""
    return fw.model.model_validate(document(fw, specs, name, **spec))


def objects(fw: KubeflowV1Framework[Any], job: ReplicaJob) -> dict[tuple[str, str], Manifest]:
    """The pods target's objects by (kind, name)."""
    return {(o["kind"], o["metadata"]["name"]): o for o in expand_pods(fw, fw.default(job))}


def env(pod: Manifest, container: int = 0) -> list[dict[str, Any]]:
    """The env of one container of a pod, as rendered."""
    entries: list[dict[str, Any]] = pod["spec"]["containers"][container]["env"]
    return entries


def lines(fw: KubeflowV1Framework[Any], job: ReplicaJob) -> list[str]:
    """The framework's findings for the defaulted job, as a terminal prints them."""
    return [f.render() for f in fw.validate(fw.default(job))]


def crd_problems(fw: KubeflowV1Framework[Any], job: ReplicaJob) -> list[Any]:
    """Problems of the operator target's output against the shipped CRD of its kind.

    Fails when no CRD is found, so an empty list means "checked and clean".
    """
    found = crd_schema.problems(fw.operator_manifest(fw.default(job)))
    assert found is not None, f"no CRD in crds/ knows {fw.kind.kind}"
    return found


def render_checked(doc: dict[str, Any], target: str) -> tuple[Rendering, str]:
    """Render with every check (raises on an error) and the YAML it prints."""
    rendering = run(parse_documents([doc]), target=target)  # type: ignore[arg-type]
    return rendering, dump_all(rendering.manifests)


def not_advice(findings: tuple[Finding, ...]) -> list[str]:
    """Warnings and errors among ``findings``, rendered."""
    return [f.render() for f in findings if f.severity is not Severity.ADVICE]
