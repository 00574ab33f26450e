"""NfsBackend: validation, and the share mounted in every pod."""

from __future__ import annotations

from typing import Any

import pytest

from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.spec import parse_documents


def _nfs(spec: dict[str, Any], namespace: str | None = None) -> dict[str, Any]:
    meta: dict[str, Any] = {"name": "share"}
    if namespace:
        meta["namespace"] = namespace
    return {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "NfsBackend",
        "metadata": meta,
        "spec": spec,
    }


def _job(namespace: str = "default") -> dict[str, Any]:
    return {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf", "namespace": namespace},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {
                    "replicas": 2,
                    "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:2"}]}},
                }
            }
        },
        "trainjobs": {"target": "pods", "backend": "share"},
    }


def _errors(*docs: dict[str, Any]) -> list[str]:
    with pytest.raises(SpecError) as err:
        run(parse_documents(list(docs)))
    return [f.render() for f in err.value.errors]


def test_an_export_is_mounted_in_every_container_with_nfs_path() -> None:
    docs = [_nfs({"server": "nfs.lab", "path": "/exports/ckpt", "mountPath": "/ckpt"}), _job()]
    rendering = run(parse_documents(docs))
    pods = [m for m in rendering.manifests if m["kind"] == "Pod"]
    assert len(pods) == 2
    for pod in pods:
        assert pod["spec"]["volumes"] == [
            {"name": "share-share", "nfs": {"server": "nfs.lab", "path": "/exports/ckpt"}}
        ]
        (container,) = pod["spec"]["containers"]
        assert container["volumeMounts"] == [{"name": "share-share", "mountPath": "/ckpt"}]
        assert container["env"][0] == {"name": "NFS_PATH", "value": "/ckpt"}
    backend = next(u for u in rendering.units if u.ref.category == "backend")
    assert backend.objects == ()
    assert backend.outputs == {"path": "/ckpt"}


def test_a_claim_mounts_read_only_at_the_default_path() -> None:
    docs = [_nfs({"claimName": "data", "readOnly": True}), _job()]
    pod = next(m for m in run(parse_documents(docs)).manifests if m["kind"] == "Pod")
    assert pod["spec"]["volumes"] == [
        {"name": "share-share", "persistentVolumeClaim": {"claimName": "data", "readOnly": True}}
    ]
    mount = pod["spec"]["containers"][0]["volumeMounts"]
    assert mount == [{"name": "share-share", "mountPath": "/mnt/share", "readOnly": True}]


def test_source_rules() -> None:
    assert _errors(_nfs({"server": "nfs.lab"})) == [
        "error: backends[0].spec.path: an NFS export needs both server and path; fix: add it, "
        "or name an existing PersistentVolumeClaim in claimName"
    ]
    assert _errors(_nfs({"server": "a", "path": "/x", "claimName": "c"})) == [
        "error: backends[0].spec.claimName: give either server and path, or claimName, not both "
        "(got 'c'); fix: remove claimName to mount the export directly, or server and path"
    ]
    assert _errors(_nfs({"claimName": "c", "mountPath": "data"})) == [
        "error: backends[0].spec.mountPath: the mount path must be absolute (got 'data'); "
        "fix: e.g. /mnt/share"
    ]


def test_a_claim_of_another_namespace_is_refused() -> None:
    assert _errors(_nfs({"claimName": "data"}, namespace="storage"), _job("training")) == [
        "error: jobs[0].trainjobs.backend: backend 'share' mounts claim 'data' of namespace "
        "'storage', but the job runs in 'training' (got 'share'); fix: a pod mounts claims of "
        "its own namespace only; use an export (server/path) or a claim in the job's namespace"
    ]
