"""`trainjobs convert` on the real controllers: the v1 job on its operator and the TrainJob
it became on Trainer + JobSet make pods that agree on what the training code sees.

For each converted example, the v1 job goes to the real Training Operator v1.9.4 or MPI
Operator v0.8.0 in one namespace, the converted TrainJob (and its TrainingRuntime) to
the real Trainer v2.3.0 and JobSet v0.12.0 in another. Their pods, as the controllers
made them, must agree on: how many there are per role; each node's rank, once each,
0..n-1; the rendezvous env the training code reads (world size, rank, master or
coordinator address, ports: every variable the v1 operator set, PET_* aside, with the
same value once host names are read as the node they name); that every address names a
pod the namespace resolves (a Service, or a pod's hostname under a headless Service);
the image, command, args and resources of the main container; the volumes and mounts
the job declared. For MPI, the hostfile lists as many hosts with the same slots.

The v1 MPIJob (kubeflow.org/v1) runs in tests/cluster/test_mpi_v1.py, on a control
plane whose Training Operator serves mpijobs.kubeflow.org (this one's is the MPI
Operator's v2beta1).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.expansion import delete_all, render_doc
from tests.cluster.kube import apply, poll
from tests.support.paths import EXAMPLES
from trainjobs.convert import convert_job

pytestmark = pytest.mark.cluster

Doc = dict[str, Any]
CASES = [
    "pytorch-ddp/pytorchjob.yaml",
    "pytorch-elastic/pytorchjob.yaml",
    "xgboost-dist/xgboostjob.yaml",
    "jax-simple/jaxjob.yaml",
    "mpi-horovod-benchmarks/mpijob.yaml",
]
REPLICA_TYPE = "training.kubeflow.org/replica-type"
JOB_ROLE = "training.kubeflow.org/job-role"
"""The MPI Operator's role label (it writes no replica-type label)."""
REPLICA_INDEX = "training.kubeflow.org/replica-index"
REPLICATED_JOB = "jobset.sigs.k8s.io/replicatedjob-name"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
NODE_ROLES = {
    "PyTorchJob": ("master", "worker"),
    "XGBoostJob": ("master", "worker"),
    "JAXJob": ("worker",),
    "MPIJob": ("worker",),
}
"""The v1 replica types whose pods are Trainer's nodes, in rank order (label values)."""


def _doc(relative: str, namespace: str) -> Doc:
    (doc,) = [d for d in yaml.safe_load_all((EXAMPLES / relative).read_text()) if d]
    doc = copy.deepcopy(doc)
    doc["metadata"]["namespace"] = namespace
    doc.pop("trainjobs", None)
    return dict(doc)


def _pods(cluster: ControlPlane, namespace: str, count: int) -> list[Doc] | None:
    """The namespace's live pods once there are ``count``, each scheduled (a pod a
    controller replaced, being deleted or failed, is not counted)."""
    pods = [
        p
        for p in cluster.client.items(f"/api/v1/namespaces/{namespace}/pods")
        if not p["metadata"].get("deletionTimestamp")
        and p.get("status", {}).get("phase") not in ("Failed", "Succeeded")
    ]
    if len(pods) != count or not all(p["spec"].get("nodeName") for p in pods):
        return None
    return pods


def _settled(cluster: ControlPlane, namespace: str, count: int, what: str) -> list[Doc]:
    """:func:`_pods` once it holds; on a timeout the message lists every pod seen."""
    try:
        pods: list[Doc] = poll(what, lambda: _pods(cluster, namespace, count), 90)
    except AssertionError as exc:
        seen = cluster.client.items(f"/api/v1/namespaces/{namespace}/pods")
        raise AssertionError(f"{exc}; pods: {_names(seen)}") from None
    return pods


def _names(pods: list[Doc]) -> list[str]:
    """Each pod's name, phase, owner and node, and why it is not scheduled if it is not."""
    return [
        f"{p['metadata']['name']} {p.get('status', {}).get('phase')} "
        f"{p['metadata'].get('ownerReferences', [{}])[0].get('name')} "
        f"{p['spec'].get('nodeName') or _unscheduled(p)}"
        for p in pods
    ]


def _unscheduled(pod: Doc) -> str:
    for c in pod.get("status", {}).get("conditions") or []:
        if c["type"] == "PodScheduled" and c["status"] != "True":
            return f"unscheduled: {c.get('reason')}: {c.get('message')}"
    return "not yet seen by the scheduler"


def _env(pod: Doc, container: Doc) -> dict[str, str]:
    """The container's env as the process sees it (fieldRefs to the pod resolved)."""
    out: dict[str, str] = {}
    for entry in container.get("env") or []:
        if "value" in entry:
            out[entry["name"]] = str(entry["value"])
            continue
        path = ((entry.get("valueFrom") or {}).get("fieldRef") or {}).get("fieldPath", "")
        match = re.fullmatch(r"metadata\.annotations\['(.+)'\]", path)
        if match:
            out[entry["name"]] = pod["metadata"].get("annotations", {}).get(match.group(1), "")
    return out


def _main(pod: Doc, name: str | None) -> Doc:
    containers = pod["spec"]["containers"]
    return next((c for c in containers if c["name"] == name), containers[0])


def _runs(container: Doc) -> tuple[Any, ...]:
    resources = container.get("resources") or {}
    return (
        container.get("image"),
        tuple(container.get("command") or ()),
        tuple(container.get("args") or ()),
        yaml.safe_dump(resources, sort_keys=True),
    )


def _worker_command(doc: Doc) -> list[str]:
    """The MPIJob's Worker command as the user wrote it ([] when none)."""
    worker = doc["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
    return list(worker.get("command") or [])


def _without_run(container: Doc) -> Doc:
    return {k: v for k, v in container.items() if k not in ("command", "args")}


def _declared(doc: Doc) -> tuple[set[str], set[tuple[str, str]]]:
    """The volumes and mounts the job's own templates declare."""
    volumes: set[str] = set()
    mounts: set[tuple[str, str]] = set()
    specs = next(v for k, v in doc["spec"].items() if k.endswith("ReplicaSpecs"))
    for replica in specs.values():
        pod = replica["template"]["spec"]
        volumes |= {v["name"] for v in pod.get("volumes") or []}
        for c in pod["containers"]:
            mounts |= {(m["name"], m["mountPath"]) for m in c.get("volumeMounts") or []}
    return volumes, mounts


class Side:
    """One side's pods: by role, each node's rank, hosts and what resolves."""

    def __init__(self, cluster: ControlPlane, namespace: str, pods: list[Doc]) -> None:
        self.namespace = namespace
        self.pods = pods
        services = cluster.client.items(f"/api/v1/namespaces/{namespace}/services")
        self.services = {s["metadata"]["name"]: s for s in services}

    def resolves(self, host: str) -> bool:
        """Whether ``host`` (``name`` or ``hostname.subdomain``, any port cut) names a
        pod through a Service of the namespace, as the cluster's DNS would answer."""
        host = host.split(":")[0]
        if "." in host:
            hostname, subdomain = host.split(".", 1)
            service = self.services.get(subdomain)
            return service is not None and any(
                p["spec"].get("hostname") == hostname and p["spec"].get("subdomain") == subdomain
                for p in self.pods
            )
        return host in self.services


def _role(pod: Doc) -> str | None:
    """A v1 pod's replica type as its operator labels it."""
    labels = pod["metadata"]["labels"]
    role = labels.get(REPLICA_TYPE) or labels.get(JOB_ROLE)
    return str(role) if role is not None else None


def _v1_side(cluster: ControlPlane, kind: str, namespace: str, pods: list[Doc]) -> Iterator[Any]:
    roles = NODE_ROLES[kind]
    nodes = [p for p in pods if _role(p) in roles]
    nodes.sort(
        key=lambda p: (
            roles.index(_role(p)),
            int(p["metadata"]["labels"][REPLICA_INDEX]),
        )
    )
    yield from ((rank, pod) for rank, pod in enumerate(nodes))


def _v2_side(pods: list[Doc]) -> list[tuple[int, Doc]]:
    nodes = [p for p in pods if p["metadata"]["labels"].get(REPLICATED_JOB) == "node"]
    return sorted(
        ((int(p["metadata"]["annotations"][COMPLETION_INDEX]), p) for p in nodes),
        key=lambda rp: rp[0],
    )


def _normalised(env: dict[str, str], hosts: dict[str, str]) -> dict[str, str]:
    if not hosts:
        return env
    pattern = re.compile("|".join(re.escape(h) for h in sorted(hosts, key=len, reverse=True)))
    return {k: pattern.sub(lambda m: hosts[m.group(0)], v) for k, v in env.items()}


@pytest.mark.parametrize("relative", CASES, ids=lambda r: r.split("/")[0])
def test_v1_and_converted_pods_agree(cluster: ControlPlane, kwok_node: str, relative: str) -> None:
    assert_v1_and_converted_agree(cluster, relative)


def assert_v1_and_converted_agree(cluster: ControlPlane, relative: str) -> None:
    """The example's v1 job on its operator and its TrainJob on Trainer + JobSet, both on
    ``cluster``, make pods that agree on what the training code sees (module doc)."""
    case = relative.split("/")[0]
    ns1, ns2 = f"convert-v1-{case}", f"convert-v2-{case}"
    v1_doc, v2_doc = _doc(relative, ns1), _doc(relative, ns2)
    kind = v1_doc["kind"]
    conversion = convert_job(v2_doc)
    assert conversion.converted, conversion.findings
    specs = next(v for k, v in v1_doc["spec"].items() if k.endswith("ReplicaSpecs"))
    total = sum(int(r.get("replicas", 1)) for r in specs.values())
    for namespace in (ns1, ns2):
        cluster.ensure_namespace(namespace)
    v1_objects = [m for m in render_doc(v1_doc, "operator") if m["kind"] == kind]
    v2_objects = [
        m
        for m in render_doc(conversion.objects, "operator")
        if m["kind"] in ("TrainJob", "TrainingRuntime")
    ]
    try:
        result = apply(cluster, v1_objects, dry_run=False)
        assert result.ok, str(result)
        result = apply(cluster, v2_objects, dry_run=False)
        assert result.ok, str(result)
        pods1 = _settled(cluster, ns1, total, "the v1 operator's pods")
        pods2 = _settled(cluster, ns2, total, "the Trainer's pods")
        assert len(pods1) == len(pods2) == total, (_names(pods1), _names(pods2))
        side1, side2 = Side(cluster, ns1, pods1), Side(cluster, ns2, pods2)
        nodes1, nodes2 = list(_v1_side(cluster, kind, ns1, pods1)), _v2_side(pods2)
        # As many nodes, each rank once: 0..n-1.
        assert [r for r, _ in nodes2] == [r for r, _ in nodes1] == list(range(len(nodes1)))
        # Host names read as the node they name.
        hosts1 = {p["metadata"]["name"]: f"<node {r}>" for r, p in nodes1}
        hosts2 = {
            f"{p['spec']['hostname']}.{p['spec']['subdomain']}": f"<node {r}>" for r, p in nodes2
        }
        container = {"PyTorchJob": "pytorch", "XGBoostJob": "xgboost", "JAXJob": "jax"}.get(kind)
        by_exec = v1_doc["apiVersion"] == "kubeflow.org/v1" and kind == "MPIJob"
        for (rank, pod1), (_, pod2) in zip(nodes1, nodes2, strict=True):
            main1, main2 = _main(pod1, container), _main(pod2, "node")
            if by_exec and not _worker_command(v1_doc):
                # No training code runs on an MPI worker: v1's launcher execs into it
                # (the operator makes it sleep), Trainer's reaches it over SSH (convert
                # makes it run sshd, docs/convert.md). The launcher's run is compared below.
                assert main1["command"][0] == "sleep", main1["command"]
                assert main2["command"] == ["/usr/sbin/sshd", "-De"], main2["command"]
                main1, main2 = _without_run(main1), _without_run(main2)
            assert _runs(main1) == _runs(main2), f"node {rank}"
            env1 = _env(pod1, main1)
            env2 = _env(pod2, main2)
            seen = {k: v for k, v in env1.items() if not k.startswith("PET_")}
            assert _normalised(seen, hosts1) == _normalised(
                {k: env2.get(k, "<unset>") for k in seen}, hosts2
            ), f"node {rank}"
            for env, side, hosts in ((env1, side1, hosts1), (env2, side2, hosts2)):
                for value in env.values():
                    for host in hosts:
                        if re.search(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", value):
                            assert side.resolves(host), (side.namespace, host)
            if "PET_MASTER_ADDR" in env2:
                assert side2.resolves(env2["PET_MASTER_ADDR"])
                assert env2["PET_NNODES"] == str(len(nodes2))
            volumes, mounts = _declared(v1_doc)
            for pod, main in ((pod1, main1), (pod2, main2)):
                assert volumes <= {v["name"] for v in pod["spec"].get("volumes") or []}
                assert mounts <= {
                    (m["name"], m["mountPath"]) for m in main.get("volumeMounts") or []
                }
        if kind == "MPIJob":
            _same_launcher_and_hostfile(cluster, ns1, ns2, pods1, pods2, len(nodes1))
    finally:
        delete_all(cluster, v1_objects, ns1)
        delete_all(cluster, v2_objects, ns2)


def _same_launcher_and_hostfile(
    cluster: ControlPlane, ns1: str, ns2: str, pods1: list[Doc], pods2: list[Doc], nodes: int
) -> None:
    (launcher1,) = [p for p in pods1 if _role(p) == "launcher"]
    (launcher2,) = [p for p in pods2 if p["metadata"]["labels"].get(REPLICATED_JOB) == "launcher"]
    assert _runs(launcher1["spec"]["containers"][0]) == _runs(_main(launcher2, "node"))

    def hostfile(namespace: str) -> list[str]:
        for cm in cluster.client.items(f"/api/v1/namespaces/{namespace}/configmaps"):
            text = (cm.get("data") or {}).get("hostfile")
            if text:
                return [line for line in text.splitlines() if line.strip()]
        raise AssertionError(f"no hostfile in {namespace}")

    lines1, lines2 = hostfile(ns1), hostfile(ns2)
    assert len(lines1) == len(lines2) == nodes
    slots = {line.split("slots=")[-1] for line in lines1}
    assert slots == {line.split("slots=")[-1] for line in lines2}


def test_cases_are_the_convertible_examples() -> None:
    """Every case is an example convert turns into a TrainJob, one per v1 kind the
    operators here run."""
    kinds = set()
    for relative in CASES:
        (doc,) = [d for d in yaml.safe_load_all((EXAMPLES / relative).read_text()) if d]
        kinds.add(doc["kind"])
        assert convert_job(doc).converted
    assert kinds == {"PyTorchJob", "XGBoostJob", "JAXJob", "MPIJob"}
    assert Path(EXAMPLES).is_dir()
