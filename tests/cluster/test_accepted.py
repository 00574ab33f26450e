"""Proof 1: what trainjobs renders, the real API server accepts; what it refuses, we refuse.

Every example and every stack, on every target its jobs support, is applied with
``kubectl apply --server-side --dry-run=server`` (the real kubectl and kube-apiserver
v1.36, our crds/ installed, the Training Operator's validating webhook answering).
Then a corpus of bad inputs goes both to ``trainjobs check`` and to the API server (the
custom resource, and the Pods its replica templates would become); the agreement
table is printed, and its "only the API server rejects" column must be empty.
"""

from __future__ import annotations

import contextlib
import copy
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import CRD_PREFERRED, ControlPlane
from tests.cluster.kube import apply, ensure_namespaces, render
from tests.cluster.refusals import (
    custom_resource_in_place,
    custom_resource_refused,
    our_errors,
    said_at_apply,
)
from tests.support.paths import EXAMPLES, example_job_files, stack_files
from trainjobs.check import run
from trainjobs.errors import SpecError
from trainjobs.k8s.crds import load_crd
from trainjobs.spec import load_path, parse_documents

pytestmark = pytest.mark.cluster

MPIJOB_V1_CRD = "training-operator-v1.9.4/kubeflow.org_mpijobs.yaml"


def _needs_mpijob_v1(manifests: list[dict[str, Any]]) -> bool:
    """Whether the objects hold a kubeflow.org/v1 MPIJob or install its v1-only CRD.

    One cluster holds one CRD named mpijobs.kubeflow.org: the MPI Operator's v2beta1
    by default, the Training Operator's v1 while these cases run.
    """
    for m in manifests:
        if m["kind"] == "MPIJob" and m["apiVersion"] == "kubeflow.org/v1":
            return True
        if (
            m["kind"] == "CustomResourceDefinition"
            and m["metadata"]["name"] == "mpijobs.kubeflow.org"
            and [v["name"] for v in m["spec"]["versions"]] == ["v1"]
        ):
            return True
    return False


def _cases() -> list[tuple[Path, str | None]]:
    """(file, target) of every example and stack on every target all its jobs support.

    A stack also runs with target None: each job on its own target, as `pulumi up` does.
    """
    cases: list[tuple[Path, str | None]] = []
    for path in example_job_files() + stack_files():
        stack = load_path(path)
        targets = set.intersection(*(set(e.framework.targets) for e in stack.jobs))
        if path.name.startswith("Pulumi."):
            cases.append((path, None))
        cases += [(path, t) for t in sorted(targets)]
    return cases


CASES = _cases()


def _case_id(value: Any) -> str:
    if isinstance(value, Path):
        return value.stem if value.name.startswith("Pulumi.") else value.parent.name
    return str(value or "own")


@pytest.fixture
def mpijob_crd(cluster: ControlPlane) -> Iterator[Any]:
    """Yields a function that installs the mpijobs CRD version a case needs."""

    def use(v1: bool) -> None:
        crd = load_crd(MPIJOB_V1_CRD if v1 else CRD_PREFERRED["mpijobs.kubeflow.org"])
        cluster.put_crd(crd)

    yield use
    use(False)  # the MPI Operator's v2beta1, for the tests that follow


def _beside_ours(manifest: dict[str, Any], ours: list[str]) -> dict[str, Any]:
    """The object, renamed if it is a webhook configuration the control plane has too.

    The control plane installed its own (reaching the controller by URL on loopback); a
    dry-run apply of the render's (by Service) over it would merge the two into one
    naming both, which no cluster that got it from trainjobs would hold. Under another
    name it is validated as a create, as on a cluster without the controller.
    """
    if manifest["kind"].endswith("WebhookConfiguration") and manifest["metadata"]["name"] in ours:
        manifest = copy.deepcopy(manifest)
        manifest["metadata"]["name"] += ".dry-run"
    return manifest


RUNTIME_KINDS = ("ClusterTrainingRuntime", "TrainingRuntime")


@contextlib.contextmanager
def _runtimes_created(cluster: ControlPlane, manifests: list[dict[str, Any]]) -> Iterator[None]:
    """The render's Trainer runtimes the cluster lacks, created for the test and removed
    after: the Trainer's webhook refuses a TrainJob whose runtime does not exist yet, and
    a dry run creates nothing (`pulumi up` creates the runtime first)."""
    created = []
    for manifest in manifests:
        if manifest["kind"] not in RUNTIME_KINDS:
            continue
        meta = manifest["metadata"]
        where = f"namespaces/{meta['namespace']}/" if "namespace" in meta else ""
        plural = manifest["kind"].lower() + "s"
        path = f"/apis/trainer.kubeflow.org/v1alpha1/{where}{plural}/{meta['name']}"
        if cluster.client.get(path) is None:
            result = apply(cluster, [manifest], dry_run=False)
            assert result.ok, f"the render's runtime was refused:\n{result}"
            created.append(manifest)
    try:
        yield
    finally:
        if created:
            cluster.kubectl(
                "delete", "--wait=false", "-f", "-", stdin=yaml.safe_dump_all(created), check=False
            )


@pytest.mark.parametrize(("path", "target"), CASES, ids=_case_id)
def test_apiserver_accepts_render(
    cluster: ControlPlane, mpijob_crd: Any, path: Path, target: str | None
) -> None:
    """The real kube-apiserver (schemas, CRDs, the operator's webhook) accepts the render.

    Catches trainjobs rendering an object the cluster would refuse at `pulumi up`: a
    field its schema does not have (strict field validation), a wrong type or enum, a
    name or label the API server's validation refuses, a custom resource the Training
    Operator's webhook rejects, an invalid Pod (duplicate ports, bad quantities).
    """
    manifests = [_beside_ours(m, cluster.webhook_configs) for m in render(path, target)]
    mpijob_crd(_needs_mpijob_v1(manifests))
    ensure_namespaces(cluster, manifests)
    with _runtimes_created(cluster, manifests):
        result = apply(cluster, manifests, dry_run=True)
    assert result.ok, f"the API server refused the render of {path} ({target}):\n{result}"
    # kubectl names every object it applied: nothing was skipped.
    assert len(result.stdout.splitlines()) == len(manifests), result.stdout


# --- bad inputs ---------------------------------------------------------------------

DELETE = object()
"""A value in a mutation: remove the key."""

Mutation = tuple[tuple[str | int, ...], Any]

TF = EXAMPLES / "tf-mnist" / "tfjob.yaml"
PT = EXAMPLES / "pytorch-ddp" / "pytorchjob.yaml"
ELASTIC = EXAMPLES / "pytorch-elastic" / "pytorchjob.yaml"
MPI = EXAMPLES / "mpi-horovod-benchmarks" / "mpijob.yaml"
XGB = EXAMPLES / "xgboost-dist" / "xgboostjob.yaml"
MPI_LAUNCHER = ("spec", "mpiReplicaSpecs", "Launcher")
TF_WORKER = ("spec", "tfReplicaSpecs", "Worker")
TF_C0 = (*TF_WORKER, "template", "spec", "containers", 0)
PT_MASTER = ("spec", "pytorchReplicaSpecs", "Master")
PT_C0 = ("spec", "pytorchReplicaSpecs", "Worker", "template", "spec", "containers", 0)

BAD_INPUTS: list[tuple[str, Path, list[Mutation]]] = [
    ("name uppercase", TF, [(("metadata", "name"), "MNIST")]),
    ("name starts with a digit", TF, [(("metadata", "name"), "1mnist")]),
    ("name with a dot", TF, [(("metadata", "name"), "mn.ist")]),
    ("name of 64 characters", TF, [(("metadata", "name"), "m" * 64)]),
    ("namespace invalid", TF, [(("metadata", "namespace"), "Bad_NS")]),
    ("job label value invalid", TF, [(("metadata", "labels"), {"team": "a b"})]),
    ("job annotation key invalid", TF, [(("metadata", "annotations"), {"a b": "x"})]),
    ("no replica specs", TF, [(("spec", "tfReplicaSpecs"), {})]),
    ("unknown replica type", TF, [(("spec", "tfReplicaSpecs", "Foo"), {"replicas": 1})]),
    ("unknown spec field", TF, [(("spec", "bogus"), 1)]),
    ("replicas negative", TF, [((*TF_WORKER, "replicas"), -1)]),
    ("replicas a string", TF, [((*TF_WORKER, "replicas"), "two")]),
    ("restartPolicy unknown", TF, [((*TF_WORKER, "restartPolicy"), "Sometimes")]),
    ("cleanPodPolicy unknown", TF, [(("spec", "runPolicy"), {"cleanPodPolicy": "Sometimes"})]),
    ("backoffLimit negative", TF, [(("spec", "runPolicy"), {"backoffLimit": -1})]),
    ("no containers", TF, [((*TF_WORKER, "template", "spec", "containers"), [])]),
    ("image missing", TF, [((*TF_C0, "image"), DELETE)]),
    ("default container missing", TF, [((*TF_C0, "name"), "trainer")]),
    ("container name invalid", TF, [((*TF_C0, "name"), "Tensor_Flow")]),
    (
        "duplicate container names",
        TF,
        [
            (
                (*TF_WORKER, "template", "spec", "containers", 1),
                {"name": "tensorflow", "image": "busybox:1.36"},
            )
        ],
    ),
    ("port out of range", TF, [((*TF_C0, "ports"), [{"containerPort": 70000}])]),
    ("port name too long", TF, [((*TF_C0, "ports"), [{"name": "a" * 16, "containerPort": 2222}])]),
    (
        "duplicate port names",
        TF,
        [
            (
                (*TF_C0, "ports"),
                [{"name": "p", "containerPort": 1000}, {"name": "p", "containerPort": 1001}],
            )
        ],
    ),
    (
        "probe port of digits in quotes",
        TF,
        [((*TF_C0, "readinessProbe"), {"tcpSocket": {"port": "2222"}})],
    ),
    (
        "preStop port out of range",
        TF,
        [((*TF_C0, "lifecycle"), {"preStop": {"httpGet": {"port": 0, "path": "/stop"}}})],
    ),
    # A Pod takes cpu: 0.5; the TFJob CRD's int-or-string schema refuses a float.
    ("cpu a fraction unquoted", TF, [((*TF_C0, "resources", "requests", "cpu"), 0.5)]),
    ("cpu quantity invalid", TF, [((*TF_C0, "resources", "requests", "cpu"), "lots")]),
    ("cpu request above limit", TF, [((*TF_C0, "resources", "requests", "cpu"), "2")]),
    (
        "gpu request differs from limit",
        TF,
        [
            (
                (*TF_C0, "resources"),
                {"requests": {"nvidia.com/gpu": 1}, "limits": {"nvidia.com/gpu": 2}},
            )
        ],
    ),
    ("env name with =", TF, [((*TF_C0, "env"), [{"name": "A=B", "value": "1"}])]),
    (
        "volumeMount of no volume",
        TF,
        [((*TF_C0, "volumeMounts"), [{"name": "data", "mountPath": "/data"}])],
    ),
    (
        "template label value invalid",
        TF,
        [((*TF_WORKER, "template", "metadata"), {"labels": {"team": "a b"}})],
    ),
    (
        "pod restartPolicy invalid",
        TF,
        [((*TF_WORKER, "template", "spec", "restartPolicy"), "Sometimes")],
    ),
    ("two masters", PT, [((*PT_MASTER, "replicas"), 2)]),
    ("pytorch default container missing", PT, [((*PT_C0, "name"), "trainer")]),
    (
        "elastic min above max",
        ELASTIC,
        [
            (("spec", "elasticPolicy", "minReplicas"), 9),
            (("spec", "elasticPolicy", "maxReplicas"), 2),
        ],
    ),
    ("nprocPerNode invalid", PT, [(("spec", "nprocPerNode"), "many")]),
    # MPI Operator v0.8: no webhook, its validation runs in the controller.
    ("mpi two launchers", MPI, [((*MPI_LAUNCHER, "replicas"), 2)]),
    ("mpi restartPolicy Always", MPI, [((*MPI_LAUNCHER, "restartPolicy"), "Always")]),
    ("mpi implementation unknown", MPI, [(("spec", "mpiImplementation"), "LAM")]),
    ("xgboost without a master", XGB, [(("spec", "xgbReplicaSpecs", "Master"), DELETE)]),
]
"""Inputs an operator's user could write, each broken in one way. The two unmutated
bases are accepted by both sides (checked first), so each row's verdicts are the
mutation's."""


def _mutated(base: Path, mutations: list[Mutation]) -> dict[str, Any]:
    (doc,) = [d for d in yaml.safe_load_all(base.read_text()) if d]
    doc = copy.deepcopy(doc)
    for path, value in mutations:
        node: Any = doc
        for part in path[:-1]:
            node = node[part]
        last = path[-1]
        if value is DELETE:
            del node[last]
        elif isinstance(node, list) and isinstance(last, int) and last == len(node):
            node.append(value)
        else:
            node[last] = value
    return dict(doc)


def _we_reject(doc: dict[str, Any]) -> str:
    """trainjobs check's first error on the operator target, or "" when it accepts."""
    try:
        run(parse_documents([copy.deepcopy(doc)], source="bad-input"), target="operator")
    except SpecError as exc:
        return str(exc.findings[0].message if exc.findings else exc)
    return ""


def _replica_specs(doc: dict[str, Any]) -> dict[str, Any]:
    specs: dict[str, Any] = {}
    for key, value in (doc.get("spec") or {}).items():
        if key.endswith("ReplicaSpecs") and isinstance(value, dict):
            specs.update(value)
    return specs


def _pods_of(doc: dict[str, Any]) -> list[dict[str, Any]]:
    """The Pod each replica template becomes, as plainly as the operator makes it."""
    pods = []
    meta = doc.get("metadata") or {}
    for rtype, spec in _replica_specs(doc).items():
        if not isinstance(spec, dict) or not isinstance(spec.get("template"), dict):
            continue
        template = copy.deepcopy(spec["template"])
        pod_spec = template.get("spec") or {}
        policy = spec.get("restartPolicy")
        if policy and "restartPolicy" not in pod_spec:
            pod_spec["restartPolicy"] = "Never" if policy == "ExitCode" else policy
        pods.append(
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {
                    **(template.get("metadata") or {}),
                    "name": f"{str(meta.get('name', 'job')).lower()}-{str(rtype).lower()}-0",
                    "namespace": meta.get("namespace", "default"),
                },
                "spec": pod_spec,
            }
        )
    return pods


def _apiserver_rejects(cluster: ControlPlane, doc: dict[str, Any]) -> str:
    """The API server's refusal of the custom resource or of one of its Pods, or ""."""
    cr, refused = custom_resource_in_place(cluster, doc)
    if refused:
        return refused
    for obj in [cr, *_pods_of(cr)]:
        result = apply(cluster, [obj], dry_run=True)
        if not result.ok:
            return f"{obj['kind']}: {result.stderr.strip().splitlines()[-1]}"
    return ""


def test_bad_inputs_rejected_by_apiserver_are_rejected_by_check(cluster: ControlPlane) -> None:
    """Whatever the real API server (and the operator's webhook) refuses, check refuses.

    Catches trainjobs passing input the cluster would refuse at `pulumi up` — a name,
    label, quantity, port or container rule it does not know, a webhook rule it
    missed — which is the "only the API server rejects" column, required empty.
    """
    for base in (TF, PT, ELASTIC, MPI, XGB):
        (doc,) = [d for d in yaml.safe_load_all(base.read_text()) if d]
        assert not _we_reject(doc), f"{base} must be valid for the corpus to mean anything"
        assert not _apiserver_rejects(cluster, doc), f"{base} must be accepted by the API server"

    rows = []
    for name, base, mutations in BAD_INPUTS:
        doc = _mutated(base, mutations)
        rows.append((name, _we_reject(doc), _apiserver_rejects(cluster, doc)))

    both = [r for r in rows if r[1] and r[2]]
    only_we = [r for r in rows if r[1] and not r[2]]
    only_api = [r for r in rows if r[2] and not r[1]]
    neither = [r for r in rows if not r[1] and not r[2]]
    table = _table(both, only_we, only_api, neither)
    print(table)
    assert not only_api, f"inputs only the API server rejects (trainjobs must too):\n{table}"
    assert not neither, f"corpus inputs nobody rejects (not bad inputs):\n{table}"
    assert both, table


def _table(*groups: list[tuple[str, str, str]]) -> str:
    titles = ("both reject", "only trainjobs rejects", "only the API server rejects", "neither")
    lines = ["agreement on bad inputs (trainjobs check vs kube-apiserver dry run):"]
    for title, group in zip(titles, groups, strict=True):
        lines.append(f"  {title}: {len(group)}")
        for name, ours, theirs in group:
            lines.append(f"    - {name}")
            if ours:
                lines.append(f"        trainjobs: {ours[:150]}")
            if theirs:
                lines.append(f"        apiserver: {theirs[:150]}")
    return "\n".join(lines)


# --- which stage refuses ----------------------------------------------------------


def test_the_stage_check_names_is_the_one_that_refuses(cluster: ControlPlane) -> None:
    """Each bad input's errors name the stage that refuses it (trainjobs/check/stages.py).

    When one error is attributed to the API server, the CRD schema or the operator's
    webhook (not "when the operator creates the pods"), the real API server refuses the
    custom resource itself at apply; when every error is the controller's, the pods' or
    trainjobs' own, it stores the custom resource, and a Pod-level error means one of
    the Pods its templates become is refused. Catches a finding that promises
    `kubectl apply` fails when it would not, and the reverse.
    """
    wrong = []
    for name, base, mutations in BAD_INPUTS:
        doc = _mutated(base, mutations)
        errors = our_errors(doc)
        if not errors:
            continue
        said = "; ".join(f"{f.code} [{f.rejected_by}]" for f in errors)
        refused = custom_resource_refused(cluster, doc)
        at_apply = any(said_at_apply(f) for f in errors)
        if at_apply != bool(refused):
            wrong.append(f"{name}: trainjobs says {said}; apply: {refused or 'accepted'}")
            continue
        pod_level = any("when the operator creates the pods" in f.stage_by for f in errors)
        if not at_apply and pod_level:
            pods = _apiserver_rejects(cluster, doc)
            if not pods.startswith("Pod:"):
                wrong.append(f"{name}: trainjobs says {said}; its pods: {pods or 'accepted'}")
    assert not wrong, "stages that are not the one refusing:\n" + "\n".join(wrong)


def test_the_webhook_sees_defaults_only_in_what_trainjobs_writes(cluster: ControlPlane) -> None:
    """v1.9.4 has no mutating webhook: its validating webhook sees a job as applied.

    A PyTorchJob written with a lowercase ``master`` key and no replicas is refused when
    applied as written ("Unsupported value" / "must be 1"), while the operator target's
    render of the same file — defaults written out, as the controller would apply them
    in memory — is accepted. Catches a render that leaves a default to a webhook that
    does not exist, and a claim that the file itself would pass.
    """
    container = {"name": "pytorch", "image": "docker.io/pytorch/pytorch:2.1.0"}
    replica = {"template": {"spec": {"containers": [container]}}}
    doc: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "as-written", "namespace": "default"},
        "spec": {"pytorchReplicaSpecs": {"master": copy.deepcopy(replica), "worker": replica}},
    }
    assert "pytorchReplicaSpecs" in custom_resource_refused(cluster, doc)
    rendering = run(parse_documents([copy.deepcopy(doc)], source="as-written"), target="operator")
    (rendered,) = rendering.manifests
    assert list(rendered["spec"]["pytorchReplicaSpecs"]) == ["Master", "Worker"]
    assert custom_resource_refused(cluster, dict(rendered)) == ""
