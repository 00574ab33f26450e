"""The CRD a seed operator installs: the shipped one, or a schema-less stand-in until then."""

from __future__ import annotations

from pathlib import Path

import pytest

from trainjobs.check.k8s_schema import problems
from trainjobs.frameworks.caffe2 import FRAMEWORK as CAFFE2
from trainjobs.frameworks.mindspore_v2 import FRAMEWORK as MS2
from trainjobs.k8s.crds import crd_dir
from trainjobs.platform._crd import framework_crd


def test_without_a_shipped_file_the_crd_keeps_every_field(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("TRAINJOBS_CRDS", str(tmp_path))
    crd = framework_crd(MS2, {"app": "ms"}, status=True)
    assert crd == {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": "msjobs.mindspore.gitee.com", "labels": {"app": "ms"}},
        "spec": {
            "group": "mindspore.gitee.com",
            "names": {
                "kind": "MSJob",
                "listKind": "MSJobList",
                "plural": "msjobs",
                "singular": "msjob",
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {
                        "openAPIV3Schema": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": True,
                        }
                    },
                    "subresources": {"status": {}},
                }
            ],
        },
    }
    assert problems(crd, "1.32") == []


def test_a_shipped_file_is_installed_as_it_is(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    shipped = tmp_path / CAFFE2.crd_file
    shipped.parent.mkdir(parents=True)
    source = crd_dir() / "training-operator-v1.9.4" / "kubeflow.org_tfjobs.yaml"
    shipped.write_text(source.read_text())
    monkeypatch.setenv("TRAINJOBS_CRDS", str(tmp_path))
    crd = framework_crd(CAFFE2, {"app": "c2"})
    assert crd["metadata"]["name"] == "tfjobs.kubeflow.org"  # the file's content, untouched
    assert crd["metadata"]["labels"] == {"app": "c2"}
