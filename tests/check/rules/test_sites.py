"""Pod sites in every kind of object, and field paths both ways."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from tests.check.rules.helpers import container, pod, workload
from trainjobs.check.rules.sites import MISSING, get_path, join, pod_sites, split_path
from trainjobs.errors import format_path
from trainjobs.frameworks.pytorch import FRAMEWORK as PYTORCH


def test_a_pod_is_one_site_at_the_root() -> None:
    (site,) = pod_sites(pod())
    assert (site.path, site.owner, site.at("spec.hostNetwork")) == (
        "",
        ("v1", "Pod"),
        "spec.hostNetwork",
    )


def test_workloads_and_cronjobs() -> None:
    assert [s.path for s in pod_sites(workload("apps/v1", "DaemonSet"))] == ["spec.template"]
    cron = {
        "apiVersion": "batch/v1",
        "kind": "CronJob",
        "metadata": {"name": "c"},
        "spec": {"jobTemplate": {"spec": workload("batch/v1", "Job")["spec"]}},
    }
    (site,) = pod_sites(cron)
    assert (
        site.at("spec.containers[0].image")
        == "spec.jobTemplate.spec.template.spec.containers[0].image"
    )


def test_custom_resources_through_their_framework() -> None:
    manifest = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "p", "namespace": "training"},
        "spec": {
            "pytorchReplicaSpecs": {
                "Master": {
                    "restartPolicy": "OnFailure",
                    "template": {"spec": {"containers": [container("pytorch")]}},
                },
                "Worker": {"template": {"spec": {"containers": [container("pytorch")]}}},
            }
        },
    }
    sites = pod_sites(manifest)
    assert [(s.path, s.framework, s.replica_restart_policy) for s in sites] == [
        ("spec.pytorchReplicaSpecs.Master.template", PYTORCH, "OnFailure"),
        ("spec.pytorchReplicaSpecs.Worker.template", PYTORCH, None),
    ]
    assert sites[0].replica_restart_path == "spec.pytorchReplicaSpecs.Master.restartPolicy"


def test_objects_without_pods_and_malformed_resources_have_no_sites() -> None:
    assert pod_sites({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s"}}) == []
    broken = {"apiVersion": "kubeflow.org/v1", "kind": "PyTorchJob", "metadata": {}, "spec": 3}
    assert pod_sites(broken) == []


def test_get_path() -> None:
    manifest = pod()
    manifest["metadata"]["annotations"] = {"a.b/c": "x"}
    assert get_path(manifest, "spec.containers[0].name") == "trainer"
    assert get_path(manifest, "metadata.annotations['a.b/c']") == "x"
    assert get_path(manifest, "spec.containers[3]") is MISSING
    assert get_path(manifest, "spec.restartPolicy.x") is MISSING
    assert join("spec.template", "", "spec", "[0]") == "spec.template.spec[0]"


_KEY = st.one_of(
    st.from_regex(r"[A-Za-z_][A-Za-z0-9_-]{0,8}", fullmatch=True),
    st.from_regex(r"[a-z]{1,4}\.[a-z]{1,4}/[a-z-]{1,6}", fullmatch=True),
    st.integers(min_value=0, max_value=20),
)


@settings(max_examples=40)
@given(parts=st.lists(_KEY, min_size=1, max_size=6).filter(lambda p: isinstance(p[0], str)))
def test_split_path_inverts_format_path(parts: list[str | int]) -> None:
    assert split_path(format_path(parts)) == parts
