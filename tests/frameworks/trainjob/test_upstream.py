"""Every TrainJob and runtime of Kubeflow Trainer v2.3.0's own manifests and examples
(tests/data/trainer-upstream) through the models, the rules and both expansions: none
crashes, none is refused that Trainer v2.3.0 accepts, and the outputs pass the JobSet /
PodGroup CRD schemas and the Kubernetes schemas."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.jobset import jobset_manifests
from trainjobs.check import crd_schema, k8s_schema
from trainjobs.errors import Severity
from trainjobs.frameworks.trainjob import (
    ClusterTrainingRuntime,
    Runtime,
    TrainingRuntime,
    TrainJob,
    builtin_runtimes,
    resolve_runtime,
    runtime_findings,
    trainjob_findings,
)
from trainjobs.targets.jobset_pods import pods_manifests

DATA = Path(__file__).parents[2] / "data" / "trainer-upstream"
FILES = sorted(DATA.glob("*.yaml"))
KINDS: dict[str, type[TrainJob] | type[TrainingRuntime] | type[ClusterTrainingRuntime]] = {
    "TrainJob": TrainJob,
    "TrainingRuntime": TrainingRuntime,
    "ClusterTrainingRuntime": ClusterTrainingRuntime,
}
K8S_VERSION = "1.32"
REFUSED = {
    # Trainer v2.3.0's own example: the runtime's dataset-initializer container mounts no
    # volume named `initializer`, which the v2.3.0 TrainJob webhook requires
    # (plugins/jobset/jobset.go Validate), so the real webhook refuses it too.
    ("examples_yaml_05-multi-step.yaml", "multi-step-example"): {"trainjob.initializer_runtime"},
}
NOT_EXPANDED = {"flux-distributed"}
"""Runtimes whose policy (flux) the jobset target does not expand yet: operator target only."""


def _documents() -> list[tuple[str, Any]]:
    out = []
    for path in FILES:
        out += [(path.name, d) for d in yaml.safe_load_all(path.read_text()) if d]
    return out


def _objects() -> list[tuple[str, TrainJob | TrainingRuntime | ClusterTrainingRuntime]]:
    return [(name, KINDS[d["kind"]].model_validate(d)) for name, d in _documents()]


def test_the_corpus_is_all_there() -> None:
    kinds = sorted(d["kind"] for _, d in _documents())
    assert kinds.count("TrainJob") == 8
    assert kinds.count("ClusterTrainingRuntime") == 11
    assert kinds.count("TrainingRuntime") == 1


@pytest.mark.parametrize("name_document", _documents(), ids=lambda nd: f"{nd[0]}")
def test_every_document_parses_and_round_trips(name_document: tuple[str, Any]) -> None:
    _, document = name_document
    model = KINDS[document["kind"]].model_validate(document)
    assert model.to_manifest() == document


def test_every_runtime_passes_the_runtime_webhook_and_the_crd() -> None:
    runtimes = [o for _, o in _objects() if not isinstance(o, TrainJob)]
    for runtime in [*runtimes, *builtin_runtimes()]:
        assert runtime_findings(runtime) == [], runtime.name
        assert crd_schema.problems(runtime.to_manifest()) == [], runtime.name


def _declared() -> list[Runtime]:
    return [o for _, o in _objects() if not isinstance(o, TrainJob)]


def _jobs() -> list[tuple[str, TrainJob]]:
    return [(n, o) for n, o in _objects() if isinstance(o, TrainJob)]


@pytest.mark.parametrize("name_job", _jobs(), ids=lambda nj: f"{nj[0]}:{nj[1].name}")
def test_every_trainjob_renders_on_every_target(name_job: tuple[str, TrainJob]) -> None:
    name, job = name_job
    assert crd_schema.problems(job.to_manifest()) == []
    runtime, findings = resolve_runtime(job, _declared())
    assert findings == [] and runtime is not None
    errors = {f.code for f in trainjob_findings(job, runtime) if f.severity is Severity.ERROR}
    assert errors == REFUSED.get((name, job.name), set())
    objects, findings = jobset_manifests(job, runtime)
    if runtime.name in NOT_EXPANDED:
        assert [f.code for f in findings] == ["trainjob.flux_unsupported"] and objects == []
        return
    assert [f for f in findings if f.severity is Severity.ERROR] == []
    jobset = objects[-1]
    assert jobset["kind"] == "JobSet" and jobset["metadata"]["name"] == job.name
    for manifest in objects:
        if manifest["apiVersion"] == "v1":
            assert list(k8s_schema.problems(manifest, K8S_VERSION)) == []
        else:
            assert crd_schema.problems(manifest) == [], manifest["kind"]
    pods = pods_manifests(jobset)
    assert pods[0]["kind"] == "Service" and pods[0]["metadata"]["name"] == job.name
    for manifest in pods:
        assert list(k8s_schema.problems(manifest, K8S_VERSION)) == [], manifest["metadata"]
    trainer = next(
        j
        for j in pods
        if j["kind"] == "Job"
        and j["metadata"]["labels"].get("trainer.kubeflow.org/trainjob-ancestor-step") == "trainer"
    )
    assert trainer["spec"]["template"]["spec"]["subdomain"] == job.name
