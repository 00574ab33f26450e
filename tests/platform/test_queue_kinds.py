"""A queue on every kind and target: what Kueue reads is there, or check refuses it.

For each registered framework (one example of its kind, with the example file's own
platform documents) and each target it renders to, the job is put on a GpuQueue. Then,
by what Kueue v0.19.2 admits (its integrations: the Kubeflow v1 kinds but MPIJob v1 and
MXJob, MPIJob v2beta1, TrainJob, JobSet, batch Job, and plain Pods in a group):

* ``operator``: a kind Kueue integrates carries the queue label itself; any other is
  refused (``queue.kind``) with the pods target as the way out;
* ``trainer``: the TrainJob carries it; ``jobset``: the JobSet;
* ``pods``: every bare Pod carries the queue and pod-group labels and the group's total
  count (the number of pods in the group), or the one batch Job that owns every pod
  carries the queue label and starts suspended;
* a kind with no pod templates (PaddlePaddle EDL) is refused on every target, with
  ``remove … queue`` as the way out.

The proof against the real Kueue is tests/cluster/test_kueue_admission.py.
"""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest
import yaml

from tests.support.paths import EXAMPLES
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.spec import parse_documents

Doc = dict[str, Any]
QUEUE = "kueue.x-k8s.io/queue-name"
GROUP = "kueue.x-k8s.io/pod-group-name"
COUNT = "kueue.x-k8s.io/pod-group-total-count"
INTEGRATED = {
    ("kubeflow.org/v1", "TFJob"),
    ("kubeflow.org/v1", "PyTorchJob"),
    ("kubeflow.org/v1", "XGBoostJob"),
    ("kubeflow.org/v1", "PaddleJob"),
    ("kubeflow.org/v1", "JAXJob"),
    ("kubeflow.org/v2beta1", "MPIJob"),
    ("trainer.kubeflow.org/v1alpha1", "TrainJob"),
}
"""Kueue v0.19.2's job integrations of the kinds trainjobs renders (pkg/controller/jobs)."""
NO_POD_TEMPLATES = {("paddlepaddle.org/v1", "TrainingJob")}


def _pool_and_queue(namespace: str) -> list[Doc]:
    pool = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "GpuNodePool",
        "metadata": {"name": "q-pool"},
        "spec": {
            "provider": "static",
            "gpu": "t4",
            "gpusPerNode": 8,
            "cpu": 512,
            "memory": "4Ti",
            "maxNodes": 8,
            "labels": {"gpu-pool": "q-pool"},
        },
    }
    queue = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "GpuQueue",
        "metadata": {"name": "q"},
        # Ephemeral storage covered too: an MPIJob v1 launcher asks for some
        # (test_queue.py has the queue that does not cover it).
        "spec": {
            "nodePool": "q-pool",
            "gpus": 64,
            "ephemeralStorage": "1Ti",
            "namespaces": [namespace],
        },
    }
    return [pool, queue]


def _example(api_version: str, kind: str) -> tuple[list[Doc], Doc]:
    """The first example holding a job of the kind: its file's other documents, the job."""
    for path in sorted(EXAMPLES.glob("*/*.yaml")):
        if path.name.startswith("Pulumi"):
            continue
        docs = [d for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
        for doc in docs:
            if (doc.get("apiVersion"), doc.get("kind")) == (api_version, kind):
                return [d for d in docs if d is not doc], copy.deepcopy(doc)
    raise AssertionError(f"no example of {kind} ({api_version})")


KINDS_AND_TARGETS = [(f, target) for f in REGISTRY for target in f.targets]
CASES = [
    pytest.param(f, target, id=f"{f.kind.kind}-{f.kind.api_version}-{target}")
    for f, target in KINDS_AND_TARGETS
]


@pytest.mark.parametrize("framework,target", CASES)
def test_a_queued_job_carries_what_kueue_reads_or_is_refused(framework: Any, target: str) -> None:
    key = (framework.kind.api_version, framework.kind.kind)
    others, job = _example(*key)
    namespace = job["metadata"].get("namespace", "default")
    # The example's own gang choice is not the case (a Volcano queue beside Kueue's is
    # refused on its own: gang.two_queues).
    (job.get("spec") or {}).get("runPolicy", {}).pop("schedulingPolicy", None)
    options = {k: v for k, v in (job.get("trainjobs") or {}).items() if k not in ("target", "gang")}
    job["trainjobs"] = {**options, "target": target, "queue": "q"}
    try:
        manifests = run(parse_documents([*others, *_pool_and_queue(namespace), job])).manifests
    except SpecError as exc:
        codes = {f.code for f in exc.errors}
        assert codes == {"queue.kind"}, [str(f) for f in exc.errors]
        (finding,) = exc.errors
        if key in NO_POD_TEMPLATES:
            assert "remove" in finding.hint and "queue" in finding.hint, finding.hint
        else:
            assert target == "operator" and key not in INTEGRATED, (key, target)
            assert "target pods" in finding.hint, finding.hint
        return
    assert key not in NO_POD_TEMPLATES
    labelled = [m for m in manifests if QUEUE in ((m.get("metadata") or {}).get("labels") or {})]
    kinds = {m["kind"] for m in labelled}
    if target == "operator":
        assert key in INTEGRATED
        assert kinds == {key[1]}, kinds
    elif target == "trainer":
        assert kinds == {"TrainJob"}, kinds
    elif target == "jobset":
        assert kinds == {"JobSet"}, kinds
    else:
        pods = [m for m in manifests if m["kind"] == "Pod"]
        jobs = [m for m in manifests if m["kind"] == "Job" and m in labelled]
        if jobs:
            assert kinds == {"Job"} and not pods, kinds
            assert all(j["spec"].get("suspend") is True for j in jobs)
            return
        # Bare pods, and the pod template of any batch Job the job makes (an MPIJob's
        # launcher; not a DatasetJob of the example's), are one group.
        name = job["metadata"]["name"]
        launchers = [
            m for m in manifests if m["kind"] == "Job" and m["metadata"]["name"].startswith(name)
        ]
        members = [*pods, *(m["spec"]["template"] for m in launchers)]
        assert members
        groups = Counter(m["metadata"]["labels"][GROUP] for m in members)
        assert all(m["metadata"]["labels"][QUEUE] == "q" for m in members)
        (size,) = {m["metadata"]["annotations"][COUNT] for m in members}
        total = len(pods) + sum(int(j["spec"].get("parallelism", 1)) for j in launchers)
        assert list(groups.values()) == [len(members)] and size == str(total), (groups, size)
