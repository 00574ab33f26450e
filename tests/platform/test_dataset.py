"""DatasetJob: the preparation Job, the share it binds, and the jobs waiting for it."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.render.lifecycle import Lifecycle
from trainjobs.spec import parse_documents


def dataset(share: dict[str, Any] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "DatasetJob",
        "metadata": {"name": "mnist", "namespace": "ml"},
        "spec": {
            "share": share or {"claimName": "data", "mountPath": "/data"},
            "container": {"image": "prep:1", "command": ["prepare"]},
            **spec,
        },
    }


JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "PyTorchJob",
    "metadata": {"name": "ddp", "namespace": "ml"},
    "spec": {
        "pytorchReplicaSpecs": {
            "Worker": {
                "replicas": 1,
                "template": {"spec": {"containers": [{"name": "pytorch", "image": "pt:2"}]}},
            }
        }
    },
    "trainjobs": {"target": "pods", "backend": "mnist"},
}


def test_the_job_mounts_the_share_and_pulumi_waits_for_it() -> None:
    rendering = run(parse_documents([dataset(timeout="45m")]))
    (job,) = rendering.manifests
    assert job["apiVersion"] == "batch/v1"
    assert "annotations" not in job["metadata"]
    # Awaited (not skipped), for the DatasetJob's timeout; the components apply it.
    ((obj,),) = [u.objects for u in rendering.units]
    assert obj.lifecycle == Lifecycle(timeout="45m")
    assert job["spec"]["backoffLimit"] == 2
    pod = job["spec"]["template"]["spec"]
    assert pod["restartPolicy"] == "Never"
    assert pod["containers"] == [
        {
            "name": "prepare",
            "image": "prep:1",
            "command": ["prepare"],
            "volumeMounts": [{"name": "mnist-share", "mountPath": "/data"}],
        }
    ]
    assert pod["volumes"] == [
        {"name": "mnist-share", "persistentVolumeClaim": {"claimName": "data"}}
    ]


def test_a_training_job_naming_it_mounts_the_share_and_depends_on_it() -> None:
    rendering = run(parse_documents([dataset(), JOB]))
    (unit,) = rendering.jobs
    assert [str(d) for d in unit.depends_on] == ["backend ml/mnist"]
    pod = next(m for m in rendering.manifests if m["kind"] == "Pod")
    (container,) = pod["spec"]["containers"]
    assert container["volumeMounts"] == [{"name": "mnist-share", "mountPath": "/data"}]
    assert container["env"][0] == {"name": "NFS_PATH", "value": "/data"}


def test_share_and_container_problems_are_reported_at_their_paths() -> None:
    bad = dataset({"server": "nfs.lab"})
    del bad["spec"]["container"]["image"]
    with pytest.raises(SpecError) as err:
        parse_documents([bad])
    assert [f.render() for f in err.value.findings] == [
        "error: backends[0].spec.share.path: an NFS export needs both server and path; fix: add "
        "it, or name an existing PersistentVolumeClaim in claimName",
        "error: backends[0].spec.container.image: the preparation container needs an image; "
        "fix: set the image that has the preparation tool, e.g. make_mnist_db",
    ]


def test_the_timeout_is_a_duration() -> None:
    with pytest.raises(SpecError) as err:
        parse_documents([dataset(timeout="1800")])
    assert [f.render() for f in err.value.findings] == [
        "error: backends[0].spec.timeout: must be a whole number of s, m or h "
        "(got '1800'); fix: write e.g. 30m or 2h"
    ]


def test_a_claim_in_another_namespace_is_refused() -> None:
    other = {**JOB, "metadata": {"name": "ddp", "namespace": "other"}}
    with pytest.raises(SpecError) as err:
        run(parse_documents([dataset(), other]))
    assert [f.code for f in err.value.findings] == ["backend.claim_namespace"]
