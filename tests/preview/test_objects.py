"""Loading render outputs into identity-keyed objects, and which job an object belongs to."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest

from tests.support.paths import EXAMPLES
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.k8s.yamlio import dump_all, dump_one
from trainjobs.preview.objects import (
    job_of,
    load_side,
    side_from_manifests,
    side_from_rendering,
    strip_server_fields,
)
from trainjobs.spec import load_path

POD = """apiVersion: v1
kind: Pod
metadata:
  name: mnist-worker-0
  namespace: kubeflow
  labels: {training.kubeflow.org/job-name: mnist}
spec: {containers: [{name: tensorflow, image: "tf:1"}]}
"""


def test_a_directory_and_a_stream_of_the_same_render_are_the_same(tmp_path: Path) -> None:
    rendering = run(load_path(EXAMPLES / "tf-mnist" / "tfjob.yaml"), target="pods")
    folder = tmp_path / "out"
    folder.mkdir()
    for i, manifest in enumerate(rendering.manifests):
        (folder / f"{i:04d}.yaml").write_text(dump_one(manifest))
    (folder / "README.md").write_text("not YAML, passed over")
    stream = tmp_path / "all.yaml"
    stream.write_text(dump_all(rendering.manifests))
    from_dir, from_stream = load_side(str(folder)), load_side(str(stream))
    assert list(from_dir.objects) == list(from_stream.objects)
    assert [o.manifest for o in from_dir.objects.values()] == rendering.manifests
    assert from_dir.objects[("", "Pod", "kubeflow", "mnist-worker-1")].job == "mnist"


def test_stdin_is_read_for_dash(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(POD.encode())))
    side = load_side("-")
    assert list(side.objects) == [("", "Pod", "kubeflow", "mnist-worker-0")]


def test_kubectl_exports_compare_with_renders() -> None:
    exported = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Service",
                "metadata": {
                    "name": "s",
                    "namespace": "n",
                    "uid": "1234",
                    "resourceVersion": "9",
                    "creationTimestamp": "2024-01-01T00:00:00Z",
                    "managedFields": [{}],
                    "annotations": {"kubectl.kubernetes.io/last-applied-configuration": "{}"},
                },
                "spec": {"clusterIP": "None"},
                "status": {"loadBalancer": {}},
            }
        ],
    }
    side = side_from_manifests([(exported, "export.yaml")], "export")
    (obj,) = side.objects.values()
    assert obj.manifest == {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "s", "namespace": "n"},
        "spec": {"clusterIP": "None"},
    }


def test_bad_documents_are_all_reported() -> None:
    docs = [
        ({"kind": "TFJob"}, "a.yaml"),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {}}, "a.yaml"),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, "b.yaml"),
        ({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}}, "b.yaml"),
    ]
    with pytest.raises(SpecError) as caught:
        side_from_manifests(docs, "x")
    assert [f.render() for f in caught.value.findings] == [
        "error: a.yaml: documents[0]: not a Kubernetes object: apiVersion and kind are required; "
        "fix: pass the output of `trainjobs render`, not a stack or job file "
        "(use --against REF to compare a stack file with git)",
        "error: a.yaml: documents[1].metadata.name: an object needs a name; fix: add one",
        "error: b.yaml: documents[1]: the same object appears twice (got 'Pod p'); "
        "fix: remove one of them",
    ]


def test_a_missing_path_is_bad_input() -> None:
    with pytest.raises(SpecError) as caught:
        load_side("no/such/render")
    assert caught.value.findings[0].render() == (
        "error: no/such/render: no such file or directory; fix: check the path"
    )


def test_a_folder_without_render_output_is_bad_input(tmp_path: Path) -> None:
    # `diff out out/demo` (the parent folder by mistake) planned to create everything.
    (tmp_path / "demo").mkdir()
    (tmp_path / "notes.txt").write_text("not a render\n")
    with pytest.raises(SpecError) as caught:
        load_side(str(tmp_path))
    assert caught.value.findings[0].render() == (
        f"error: {tmp_path}: the folder holds no render output (no .yaml file, no "
        ".trainjobs-written); fix: name the folder `trainjobs render -o DIR` wrote, "
        "or a YAML stream"
    )
    # A render of an empty stack writes only the list: that is a render of nothing.
    (tmp_path / "demo" / ".trainjobs-written").write_text("# written by trainjobs\n")
    assert load_side(str(tmp_path / "demo")).objects == {}


def test_invalid_yaml_is_bad_input(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("a: [\n")
    with pytest.raises(SpecError) as caught:
        load_side(str(bad))
    assert "invalid YAML at line 2" in caught.value.findings[0].message


@pytest.mark.parametrize(
    ("manifest", "job"),
    [
        ({"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": {"name": "m"}}, "m"),
        (
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "labels": {"training.kubeflow.org/job-name": "m"}},
            },
            "m",
        ),
        (
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "p", "labels": {"job-name": "j"}},
            },
            "j",
        ),
        (
            {
                "apiVersion": "batch/v1",
                "kind": "Job",
                "metadata": {"name": "pi-launcher", "labels": {"app": "pi"}},
                "spec": {
                    "template": {"metadata": {"labels": {"training.kubeflow.org/job-name": "pi"}}}
                },
            },
            "pi",
        ),
        ({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "kubeflow"}}, ""),
    ],
)
def test_job_of(manifest: dict[str, object], job: str) -> None:
    assert job_of(manifest) == job


def test_a_render_keeps_the_job_that_made_each_object() -> None:
    rendering = run(load_path(EXAMPLES / "tf-mnist" / "tfjob.yaml"), target="pods")
    side = side_from_rendering(rendering, "now", relabel=lambda s: "REF:" + Path(s).name)
    assert {o.job for o in side.objects.values()} == {"mnist"}
    assert {o.source for o in side.objects.values()} == {"REF:tfjob.yaml"}


def test_strip_server_fields_leaves_the_input_alone() -> None:
    manifest = {"kind": "Pod", "metadata": {"name": "p", "uid": "u"}, "status": {}}
    assert strip_server_fields(manifest) == {"kind": "Pod", "metadata": {"name": "p"}}
    assert manifest["metadata"] == {"name": "p", "uid": "u"}
