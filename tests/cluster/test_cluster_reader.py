"""The ownership guard's reader (trainjobs.components.cluster_reader) against the real
API server: which declared objects exist, and their labels, read as metadata only."""

from __future__ import annotations

import pytest

from tests.cluster.control_plane import ControlPlane
from trainjobs.components.cluster_reader import (
    LIST_ABOVE,
    ClusterAccess,
    ClusterReadError,
    read_labels,
)
from trainjobs.k8s.ownership import ObjectKey

pytestmark = pytest.mark.cluster


def test_existing_absent_and_unserved_objects(cluster: ControlPlane) -> None:
    cluster.ensure_namespace("reader-a", {"team": "a"})
    present = ObjectKey("Namespace", "", "reader-a", "v1")
    absent = ObjectKey("Namespace", "", "reader-nowhere", "v1")
    pod = ObjectKey("Pod", "reader-a", "nobody", "v1")
    unserved = ObjectKey("Widget", "reader-a", "w", "example.com/v1")
    access = ClusterAccess(str(cluster.kubeconfig))
    found = read_labels(access, [present, absent, pod, unserved])
    assert (found[present] or {}).get("team") == "a"
    assert found[absent] is None and found[pod] is None and found[unserved] is None


def test_many_objects_of_one_kind_are_read_with_one_list(cluster: ControlPlane) -> None:
    """More than LIST_ABOVE objects of a (kind, namespace) come from one list: the same
    answers as a get each."""
    cluster.ensure_namespace("reader-b")
    for i in range(3):
        cluster.client.create(
            "/api/v1/namespaces/reader-b/configmaps",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": f"cm-{i}", "labels": {"n": str(i)}},
            },
        )
    keys = [ObjectKey("ConfigMap", "reader-b", f"cm-{i}", "v1") for i in range(LIST_ABOVE + 5)]
    found = read_labels(ClusterAccess(str(cluster.kubeconfig)), keys)
    assert [(found[k] or {}).get("n") for k in keys[:4]] == ["0", "1", "2", None]
    assert all(found[k] is None for k in keys[3:])


def test_the_kubeconfig_text_itself_and_a_bad_one(cluster: ControlPlane) -> None:
    text = cluster.kubeconfig.read_text()
    key = ObjectKey("Namespace", "", "default", "v1")
    assert read_labels(ClusterAccess(text), [key])[key] is not None
    with pytest.raises(ClusterReadError, match="cannot load the kubeconfig"):
        read_labels(ClusterAccess("/nonexistent/kubeconfig"), [key])
