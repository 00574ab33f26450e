"""Proof 5: lifecycle on a real cluster — what preview says, the cluster does.

A stack (a TFJob on the pods target, a PyTorchJob on the operator target) is applied
with kubectl; ``trainjobs preview --live`` (with the real kubectl) must then see no
change at all, whatever the API server added. The TFJob's Worker image changes: preview
names the objects replaced and updated; applying it as the Pulumi provider does (an
update in place, a replace as delete and create) must be accepted by the API server
for every in-place update, replace everything the API server refuses to change in
place, and keep every other object (same uid). Then, with kwok running the Pods, the
conditions ``wait: running`` and ``wait: succeeded`` make ``pulumi up`` wait on
(``pulumi.com/waitFor``) are the ones the real operators report.
"""

from __future__ import annotations

import copy
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.kube import apply, poll
from tests.support.paths import EXAMPLES
from trainjobs.check import run
from trainjobs.spec import load_path, parse_documents

pytestmark = pytest.mark.cluster

Doc = dict[str, Any]
SUCCEED = "trainjobs.dev/kwok-succeed"
"""Pods annotated so are completed (exit 0) by our kwok stage."""


def _example(relative: str, namespace: str, target: str, **options: Any) -> Doc:
    (doc,) = [d for d in yaml.safe_load_all((EXAMPLES / relative).read_text()) if d]
    doc["metadata"]["namespace"] = namespace
    doc["trainjobs"] = {"target": target, **options}
    return dict(doc)


def _key(obj: Doc) -> tuple[str, str, str]:
    return (obj["kind"], obj["metadata"].get("namespace") or "", obj["metadata"]["name"])


def _preview_live(cluster: ControlPlane, path: Path, tmp: Path) -> tuple[int, Doc]:
    """``trainjobs preview --live --json`` with the cluster's own kubectl first on PATH."""
    env = dict(os.environ)
    env["PATH"] = f"{cluster.bins['kubectl'].parent}{os.pathsep}{env.get('PATH', '')}"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "trainjobs",
            "preview",
            "--live",
            "--json",
            f"--kubeconfig={cluster.kubeconfig}",
            f"--state-dir={tmp / 'state'}",
            str(path),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    assert result.returncode in (0, 1), f"preview --live failed:\n{result.stderr}"
    return result.returncode, json.loads(result.stdout)


def _uid(cluster: ControlPlane, obj: Doc) -> str | None:
    result = cluster.kubectl(
        "get",
        obj["kind"].lower()
        + ("." + obj["apiVersion"].split("/")[0] if "/" in obj["apiVersion"] else ""),
        obj["metadata"]["name"],
        "-n",
        obj["metadata"].get("namespace", "default"),
        "-o",
        "jsonpath={.metadata.uid}",
        check=False,
    )
    return result.stdout.strip() or None


def _running(cluster: ControlPlane, namespace: str, names: set[str]) -> bool:
    pods = cluster.client.items(f"/api/v1/namespaces/{namespace}/pods")
    phases = {p["metadata"]["name"]: p.get("status", {}).get("phase") for p in pods}
    return all(phases.get(n) == "Running" for n in names)


def test_live_preview_replaces_what_the_cluster_replaces(
    cluster: ControlPlane, kwok_node: str, tmp_path: Path
) -> None:
    """Preview's replace/update/same per object holds against the real API server.

    Catches `preview --live` reporting changes that are only the API server's defaults
    (every `pulumi up` would look like a change), an object preview calls an in-place
    update that the API server refuses to change in place (`pulumi up` would fail
    half-way), and a change that recreates more Pods than the changed replica's (the
    chief, the parameter server or the Services restarted for nothing).
    """
    namespace = "lifecycle"
    v1 = [
        _example("tf-mnist/tfjob.yaml", namespace, "pods"),
        _example("pytorch-ddp/pytorchjob.yaml", namespace, "operator"),
    ]
    v1_file = tmp_path / "jobs.yaml"
    v1_file.write_text(yaml.safe_dump_all(v1))
    rendered = list(run(load_path(v1_file)).manifests)
    cluster.ensure_namespace(namespace)
    try:
        result = apply(cluster, rendered, dry_run=False)
        assert result.ok, str(result)
        pods = {m["metadata"]["name"] for m in rendered if m["kind"] == "Pod"}
        poll("the pods to run on kwok", lambda: _running(cluster, namespace, pods), 60)

        code, plan = _preview_live(cluster, v1_file, tmp_path)
        changed = [o for p in plan["plans"] for o in p["objects"]]
        assert code == 0 and not changed, (
            "preview --live sees changes right after applying the same render:\n"
            + json.dumps(
                [{k: o[k] for k in ("action", "kind", "name", "fields")} for o in changed], indent=1
            )
        )

        v2 = copy.deepcopy(v1)
        worker = v2[0]["spec"]["tfReplicaSpecs"]["Worker"]["template"]["spec"]["containers"][0]
        worker["image"] = "kubeflow/tf-mnist-with-summaries:1.1"
        master = v2[1]["spec"]["pytorchReplicaSpecs"]["Master"]["template"]["spec"]["containers"][0]
        master["image"] = "pytorch/pytorch:2.6.0-cuda12.4-cudnn9-runtime"
        v1_file.write_text(yaml.safe_dump_all(v2))
        new = list(run(load_path(v1_file)).manifests)
        code, plan = _preview_live(cluster, v1_file, tmp_path)
        assert code == 1, plan
        actions = {
            (o["kind"], o["namespace"] or "", o["name"]): o["action"]
            for p in plan["plans"]
            for o in p["objects"]
        }
        replaced = {k for k, a in actions.items() if a == "replace"}
        updated = {k for k, a in actions.items() if a == "update"}
        assert not {a for a in actions.values()} - {"replace", "update"}, actions
        # The image change of the Worker recreates the Worker Pods, and nothing else.
        workers = {("Pod", namespace, f"mnist-worker-{i}") for i in range(2)}
        assert replaced == workers, actions
        assert updated == {("PyTorchJob", namespace, "pytorch-ddp")}, actions

        before = {_key(m): _uid(cluster, m) for m in new}
        forced = set()
        for obj in new:
            key = _key(obj)
            in_place = apply(cluster, [obj], dry_run=True)
            if not in_place.ok:
                forced.add(key)
            if key in replaced:
                cluster.kubectl(
                    "delete",
                    obj["kind"].lower(),
                    obj["metadata"]["name"],
                    "-n",
                    namespace,
                    "--wait=true",
                    "--timeout=60s",
                )
                created = apply(cluster, [obj], dry_run=False)
                assert created.ok, str(created)
            else:
                assert in_place.ok, (
                    f"preview says {actions.get(key, 'same')} for {key}, but the API server "
                    f"refuses to change it in place:\n{in_place}"
                )
                assert apply(cluster, [obj], dry_run=False).ok
        assert forced <= replaced, f"the API server needs these replaced: {forced - replaced}"
        after = {_key(m): _uid(cluster, m) for m in new}
        for key in before:
            if key in replaced:
                assert after[key] != before[key], f"{key} was not recreated"
            else:
                assert after[key] == before[key], f"{key} was recreated, but preview said kept"
        poll("the replaced pods to run again", lambda: _running(cluster, namespace, pods), 60)
        code, plan = _preview_live(cluster, v1_file, tmp_path)
        assert code == 0, f"preview --live still sees changes after the apply: {plan}"
    finally:
        cluster.kubectl(
            "delete",
            "pytorchjobs,pods,services",
            "--all",
            "-n",
            namespace,
            "--grace-period=0",
            "--force",
            "--wait=false",
            check=False,
        )


WAIT_CASES = [
    "tf-mnist/tfjob.yaml",
    "pytorch-ddp/pytorchjob.yaml",
    "xgboost-dist/xgboostjob.yaml",
    "jax-simple/jaxjob.yaml",
    "paddle-collective/paddlejob.yaml",
    "mpi-horovod-benchmarks/mpijob.yaml",
]


def _conditions(cluster: ControlPlane, obj: Doc) -> dict[str, str]:
    plural = {"MPIJob": "mpijobs"}.get(obj["kind"], obj["kind"].lower() + "s")
    group, version = obj["apiVersion"].split("/")
    live = (
        cluster.client.get(
            f"/apis/{group}/{version}/namespaces/{obj['metadata']['namespace']}/{plural}/{obj['metadata']['name']}"
        )
        or {}
    )
    return {c["type"]: c["status"] for c in live.get("status", {}).get("conditions", []) or []}


@pytest.mark.parametrize("relative", WAIT_CASES, ids=lambda r: r.split("/")[0])
def test_wait_conditions_are_what_the_operator_reports(
    cluster: ControlPlane, kwok_node: str, relative: str
) -> None:
    """`wait: running` / `succeeded` wait on conditions the real operator sets.

    Catches a `pulumi.com/waitFor: condition=X` naming a condition the operator never
    reports (every `pulumi up` with a wait would hang until its timeout), or one it
    reports before the job is really running or done.
    """
    namespace = "wait-" + relative.split("/")[0]
    waits = {}
    for wait in ("running", "succeeded"):
        doc = _example(relative, namespace, "operator", wait=wait)
        rendering = run(parse_documents([doc], source=relative))
        (obj,) = [o for o in rendering.objects if o.manifest["kind"] == doc["kind"]]
        assert obj.lifecycle.wait_for.startswith("condition="), obj.lifecycle
        waits[wait] = obj.lifecycle.wait_for.removeprefix("condition=")
        cr = obj.manifest
    cluster.ensure_namespace(namespace)
    try:
        assert apply(cluster, [cr], dry_run=False).ok
        poll(
            f"{cr['kind']} condition {waits['running']}=True with kwok running its pods",
            lambda: _conditions(cluster, cr).get(waits["running"]) == "True",
            60,
        )
        assert _conditions(cluster, cr).get(waits["succeeded"]) != "True"

        # Every pod now exits 0 (our kwok stage completes annotated pods).
        def finish() -> bool:
            cluster.kubectl(
                "annotate",
                "pods",
                "--all",
                "-n",
                namespace,
                f"{SUCCEED}=true",
                "--overwrite",
                check=False,
            )
            return _conditions(cluster, cr).get(waits["succeeded"]) == "True"

        poll(
            f"{cr['kind']} condition {waits['succeeded']}=True once its pods exit 0",
            finish,
            90,
            every=1,
        )
    finally:
        cluster.kubectl(
            "delete", cr["kind"].lower(), "--all", "-n", namespace, "--wait=false", check=False
        )
        cluster.kubectl(
            "delete",
            "pods",
            "--all",
            "-n",
            namespace,
            "--grace-period=0",
            "--force",
            "--wait=false",
            check=False,
        )
