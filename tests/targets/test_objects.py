"""targets/objects.py: each object plan written as its object, field for field."""

from __future__ import annotations

from trainjobs.plan.objects import (
    BatchJobPlan,
    ConfigMapPlan,
    ReplicaSetPlan,
    RoleBindingPlan,
    RolePlan,
    ServiceAccountPlan,
    SshKeySecretPlan,
)
from trainjobs.targets.objects import object_manifest


def test_a_config_map_holds_its_files_and_labels_only_when_it_has_some() -> None:
    plan = ConfigMapPlan("mpi-config", {"hostfile": "a slots=1\n"}, {"app": "mpi"})
    assert object_manifest(plan, "ml") == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "mpi-config", "namespace": "ml", "labels": {"app": "mpi"}},
        "data": {"hostfile": "a slots=1\n"},
    }
    bare = object_manifest(ConfigMapPlan("tj-mpi-hostfile", {}), "ml")
    assert bare["metadata"] == {"name": "tj-mpi-hostfile", "namespace": "ml"}


def test_an_ssh_secret_carries_placeholders_of_one_group_never_a_key() -> None:
    secret = object_manifest(SshKeySecretPlan("tj-mpi-ssh-auth", immutable=True), "ml")
    assert list(secret) == ["apiVersion", "kind", "metadata", "type", "immutable", "stringData"]
    assert secret["stringData"] == {
        "ssh-privatekey": "<generated:ecdsa-p521-private:ml/tj-mpi-ssh-auth>",
        "ssh-publickey": "<generated:ecdsa-p521-public:ml/tj-mpi-ssh-auth>",
    }
    mutable = object_manifest(SshKeySecretPlan("mpi-ssh", {"app": "mpi"}), "ml")
    assert "immutable" not in mutable and mutable["metadata"]["labels"] == {"app": "mpi"}


def test_workloads_copy_their_spec() -> None:
    spec = {"parallelism": 2, "template": {"spec": {"containers": [{"name": "a"}]}}}
    job = object_manifest(BatchJobPlan("launcher", spec), "ml")
    replica_set = object_manifest(ReplicaSetPlan("master", {"replicas": 1}), "ml")
    assert (job["apiVersion"], job["kind"]) == ("batch/v1", "Job")
    assert (replica_set["apiVersion"], replica_set["kind"]) == ("apps/v1", "ReplicaSet")
    job["spec"]["template"]["spec"]["containers"][0]["name"] = "changed"
    assert spec["template"]["spec"]["containers"][0]["name"] == "a"  # type: ignore[index]


def test_rbac_binds_the_role_of_its_name_in_the_operator_s_field_order() -> None:
    account = object_manifest(ServiceAccountPlan("launcher"), "ml")
    assert account == {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": "launcher", "namespace": "ml"},
    }
    rules = [{"verbs": ["get"], "apiGroups": [""], "resources": ["pods"]}]
    role = object_manifest(RolePlan("launcher", rules), "ml")
    assert role["rules"] == rules and role["kind"] == "Role"
    mpi = object_manifest(RoleBindingPlan("launcher", "runner"), "ml")
    edl = object_manifest(RoleBindingPlan("launcher", "runner", subjects_first=False), "ml")
    assert list(mpi)[-2:] == ["subjects", "roleRef"]
    assert list(edl)[-2:] == ["roleRef", "subjects"]
    assert mpi == edl  # the same object; only the order of its fields differs
    assert mpi["subjects"] == [{"kind": "ServiceAccount", "name": "runner", "namespace": "ml"}]
    assert mpi["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": "launcher",
    }
