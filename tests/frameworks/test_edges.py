"""Issue 16, "faithful at the edges": each test pins one operator behaviour and cites
the upstream line it reproduces.

Sources (read, never copied):
  TO   = kubeflow/training-operator@078ec30ff26649a07d2e28893c332d4cef70e233 (release-1.9)
  MPI  = kubeflow/mpi-operator@1bfc6b3ac4b0a178c22a5141254434802a999d82 (v0.8.0)
  K8S  = https://kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/
         custom-resource-definitions/#defaulting-and-nullable
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.support.v1jobs import document, render_checked, replica
from trainjobs.frameworks.pytorch import FRAMEWORK as PT
from trainjobs.frameworks.tensorflow import FRAMEWORK as TF
from trainjobs.k8s.yamlio import dump_all
from trainjobs.spec import load_path

TARGETS = ("operator", "pods")


def _with_nulls() -> dict[str, Any]:
    master = replica("pytorch", 1)
    container = master["template"]["spec"]["containers"][0]
    container.update({"command": None, "args": None, "workingDir": None})
    master["restartPolicy"] = None
    return document(PT, {"Master": master, "Worker": replica("pytorch", None)}, "blank")


@pytest.mark.parametrize("target", TARGETS)
def test_null_fields_are_unset_fields_on_every_target(target: str) -> None:
    # K8S "Defaulting and Nullable": null values of fields that are not nullable are
    # pruned before defaulting; no Kubeflow CRD marks a field nullable.
    _, text = render_checked(_with_nulls(), target)
    unset = {"Master": replica("pytorch", 1), "Worker": replica("pytorch", None)}
    _, clean = render_checked(document(PT, unset, "blank"), target)
    assert text == clean
    assert ": null" not in text


def test_null_fields_given_as_bare_keys_in_yaml(tmp_path: Path) -> None:
    path = tmp_path / "job.yaml"
    path.write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: bare, namespace: ns}\n"
        "spec:\n  tfReplicaSpecs:\n    Worker:\n      replicas:\n      template:\n"
        "        spec:\n          containers:\n          - name: tensorflow\n"
        "            image: img:1\n            command:\n            args:\n"
    )
    (entry,) = load_path(path).jobs
    defaulted = TF.default(entry.job)
    assert defaulted.replica_specs["Worker"].replicas == 1  # type: ignore[attr-defined]
    container = defaulted.replica_specs["Worker"].template["spec"]["containers"][0]  # type: ignore[attr-defined]
    assert set(container) == {"name", "image", "ports"}


def test_template_metadata_travels_to_the_pods_finalizers_included() -> None:
    # TO pkg/controller.v1/control/pod_control.go#L76-L95 and #L118-L127:
    # GetPodFromTemplate copies the template's labels, annotations and finalizers.
    worker = replica("pytorch", 1)
    worker["template"]["metadata"] = {
        "labels": {"team": "vision"},
        "annotations": {"sidecar.istio.io/inject": "false"},
        "finalizers": ["example.com/keep-logs"],
    }
    rendering, _ = render_checked(document(PT, {"Master": worker}, "meta"), "pods")
    (pod,) = [m for m in rendering.manifests if m["kind"] == "Pod"]
    assert pod["metadata"]["labels"]["team"] == "vision"
    assert pod["metadata"]["annotations"] == {"sidecar.istio.io/inject": "false"}
    assert pod["metadata"]["finalizers"] == ["example.com/keep-logs"]


def test_a_kubectl_list_is_a_stream_of_its_items(tmp_path: Path) -> None:
    # `kubectl get -o yaml` of several objects prints one v1 List; kubectl apply
    # (k8s.io/cli-runtime pkg/resource visitor, FlattenListVisitor) takes its items.
    first = document(TF, {"Worker": replica("tensorflow", 1)}, "first")
    second = document(TF, {"Worker": replica("tensorflow", 2)}, "second")
    stream = tmp_path / "stream.yaml"
    stream.write_text(dump_all([first, second]))
    listed = tmp_path / "list.yaml"
    nested = {"apiVersion": "v1", "kind": "List", "items": [second]}
    listed.write_text(
        dump_all(
            [
                {
                    "apiVersion": "v1",
                    "kind": "List",
                    "metadata": {"resourceVersion": ""},
                    "items": [first, nested],
                }
            ]
        )
    )
    assert [e.job.name for e in load_path(listed).jobs] == ["first", "second"]
    assert [e.job for e in load_path(listed).jobs] == [e.job for e in load_path(stream).jobs]
