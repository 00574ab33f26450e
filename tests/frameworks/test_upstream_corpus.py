"""Every upstream example through check and render, on both targets (issue 16, done-when).

Inputs: the Training Operator and MPI Operator examples (tests/data/upstream/, see its
README) and the seed operators' examples already vendored (tests/data/caffe2,
ms-operator, paddle-edl). Each job document must pass ``check`` on the operator and
the pods target, unless it is listed in ``REJECTED`` with the upstream rule that
rejects it too. Documents that are not training jobs (the etcd Service of an elastic
example, a PersistentVolumeClaim) must be refused as such, never crash.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.paths import DATA
from trainjobs.check import run
from trainjobs.errors import Severity, SpecError
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.spec import parse_documents

TARGETS = ("operator", "pods")


def _files() -> list[Path]:
    found = [
        *sorted((DATA / "upstream").glob("*/*.yaml")),
        *sorted((DATA / "caffe2").glob("resnet50*.yaml")),
        *sorted((DATA / "ms-operator").glob("*/*.yaml")),
        *sorted((DATA / "paddle-edl").glob("*.yaml")),
    ]
    return [f for f in found if f.name != "crd.yaml"]


def _documents() -> list[tuple[str, int, dict[str, Any]]]:
    out: list[tuple[str, int, dict[str, Any]]] = []
    for path in _files():
        # PyYAML's own loader: the upstream ms-dist-train.yaml holds a key twice, which
        # trainjobs' loader refuses (tests/frameworks/test_mindspore.py asserts it); the
        # jobs' other findings are what this test is about.
        for index, doc in enumerate(d for d in yaml.safe_load_all(path.read_text()) if d):
            out.append((str(path.relative_to(DATA)), index, doc))
    return out


DOCUMENTS = _documents()


def _is_job(doc: dict[str, Any]) -> bool:
    return REGISTRY.by_kind(str(doc.get("apiVersion")), str(doc.get("kind"))) is not None


_PSS_BASELINE = "https://kubernetes.io/docs/concepts/security/pod-security-standards/#baseline"

REJECTED: dict[tuple[str, int], tuple[set[str], str]] = {
    # The v1alpha1-era file puts apiVersion/kind into the PodTemplateSpec: unknown fields
    # of core/v1 PodTemplateSpec, refused by the API server under kubectl's default
    # strict field validation (kubectl >= 1.27, --validate=strict).
    ("upstream/training-operator/xgboost_smoke-dist_xgboostjob_v1alpha1_rabit_test.yaml", 0): (
        {"schema.pod_template"},
        "k8s.io/api core/v1 PodTemplateSpec has no apiVersion/kind; strict field validation",
    ),
    # hostNetwork and hostPath volumes: Pod Security Standards, baseline level ("Host
    # Namespaces", "HostPath Volumes"), which a stack enforces by default.
    ("caffe2/resnet50.historic-2018-06.yaml", 0): (
        {"pss.baseline.host_namespaces", "pss.baseline.host_path"},
        _PSS_BASELINE,
    ),
    ("caffe2/resnet50_nfs.yaml", 0): (
        {"pss.baseline.host_namespaces", "pss.baseline.host_path"},
        _PSS_BASELINE,
    ),
    ("caffe2/resnet50_redis.yaml", 2): (
        {"pss.baseline.host_namespaces", "pss.baseline.host_path"},
        _PSS_BASELINE,
    ),
    **{
        (f"ms-operator/kubebuilder-v1/ms_wide_deep_{name}.yaml", 0): (
            {"pss.baseline.host_path"},
            _PSS_BASELINE,
        )
        for name in ("dataparallel", "ps_distribute", "ps_standalone", "standalone")
    },
    # Marked WIP upstream: a volumeMount with hostPath and no mountPath (core/v1
    # VolumeMount requires mountPath; the mount names no declared volume, refused by
    # k8s.io/kubernetes pkg/apis/core/validation ValidateVolumeMounts), and no
    # container named 'mindspore' (ms-operator's controller injects its env only there).
    ("ms-operator/legacy-kubeflow-v1/ms-dist-train.yaml", 0): (
        {"schema.pod_template", "template.volume_mount", "template.default_container"},
        "core/v1 VolumeMount.mountPath required; ValidateVolumeMounts",
    ),
}


def _errors(doc: dict[str, Any], target: str) -> set[str] | None:
    try:
        run(parse_documents([doc]), target=target)  # type: ignore[arg-type]
    except SpecError as exc:
        return {f.code for f in exc.findings if f.severity is Severity.ERROR}
    return None


def test_the_corpus_is_all_there() -> None:
    jobs = [d for d in DOCUMENTS if _is_job(d[2])]
    # 31 Training Operator + 5 MPI Operator files, and the 12 seed examples.
    assert (len(_files()), len(jobs), len(DOCUMENTS) - len(jobs)) == (48, 43, 9)


@pytest.mark.parametrize("target", TARGETS)
@pytest.mark.parametrize(
    ("name", "index", "doc"),
    [d for d in DOCUMENTS if _is_job(d[2])],
    ids=[f"{n}#{i}" for n, i, d in DOCUMENTS if _is_job(d)],
)
def test_every_upstream_job_is_accepted_or_rightly_rejected(
    name: str, index: int, doc: dict[str, Any], target: str
) -> None:
    expected = REJECTED.get((name, index))
    errors = _errors(doc, target)
    if expected is None:
        assert errors is None, f"{name}#{index} wrongly rejected on {target}: {errors}"
    else:
        assert errors == expected[0], expected[1]


@pytest.mark.parametrize(
    ("name", "index", "doc"),
    [d for d in DOCUMENTS if not _is_job(d[2])],
    ids=[f"{n}#{i}" for n, i, d in DOCUMENTS if not _is_job(d)],
)
def test_documents_that_are_not_jobs_are_refused_as_such(
    name: str, index: int, doc: dict[str, Any]
) -> None:
    assert _errors(doc, "operator") == {"spec.kind_unknown"}
