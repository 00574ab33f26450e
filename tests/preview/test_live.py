"""--live: what a cluster holds, read through a fake `kubectl` on PATH.

The fake stands in for kubectl's output in these tests only; users run the
real kubectl against their cluster.
"""

from __future__ import annotations

import base64
import copy
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.preview.jobs import example, render, set_image
from trainjobs.preview.live import Kubectl, LiveError, live_side, prune, quantity_same, resource_arg
from trainjobs.preview.objects import Side, side_from_manifests
from trainjobs.preview.plan import make_plan

FAKE = """#!/bin/sh
# Stands in for `kubectl get --output=json [--namespace=NS] ... -- KIND NAME`: serves
# $FAKE_KUBECTL_DIR/KIND_NS_NAME.json.
echo "$*" >> "$FAKE_KUBECTL_DIR/calls.log"
if [ -e "$FAKE_KUBECTL_DIR/unreachable" ]; then
  echo "The connection to the server localhost:8080 was refused" >&2
  exit 1
fi
resource="" name="" namespace="" positional=""
for arg in "$@"; do
  if [ -n "$positional" ]; then
    if [ -z "$resource" ]; then resource=$arg; else name=$arg; fi
    continue
  fi
  case "$arg" in
    --) positional=1 ;;
    --namespace=*) namespace=${arg#--namespace=} ;;
  esac
done
file="$FAKE_KUBECTL_DIR/${resource}_${namespace}_${name}.json"
if [ -f "$file" ]; then
  cat "$file"
else
  echo "Error from server (NotFound): $resource \"$name\" not found" >&2
  exit 1
fi
"""


@pytest.fixture
def cluster(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A folder of objects the fake kubectl serves; the fake is first on PATH."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "kubectl"
    fake.write_text(FAKE)
    fake.chmod(0o755)
    objects = tmp_path / "cluster"
    objects.mkdir()
    monkeypatch.setenv("PATH", f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setenv("FAKE_KUBECTL_DIR", str(objects))
    return objects


def _serve(cluster: Path, manifest: dict[str, Any]) -> None:
    meta = manifest["metadata"]
    path = cluster / f"{resource_arg(manifest)}_{meta.get('namespace', '')}_{meta['name']}.json"
    path.write_text(json.dumps(manifest))


def _as_the_server_returns(manifest: dict[str, Any]) -> dict[str, Any]:
    """``manifest`` with what the API server adds: ids, defaults, injected volumes, status."""
    out = copy.deepcopy(manifest)
    out["metadata"].update(
        uid="0b1c", resourceVersion="42", creationTimestamp="2024-01-01T00:00:00Z"
    )
    if out["kind"] == "Pod":
        spec = out["spec"]
        spec.update(
            dnsPolicy="ClusterFirst", nodeName="gpu-node-1", schedulerName="default-scheduler"
        )
        spec["volumes"] = [*spec.get("volumes", []), {"name": "kube-api-access-x", "projected": {}}]
        for container in spec["containers"]:
            container["terminationMessagePath"] = "/dev/termination-log"
            container["volumeMounts"] = [{"name": "kube-api-access-x", "mountPath": "/var/run"}]
            limits = container.get("resources", {}).get("limits", {})
            for name, value in limits.items():
                limits[name] = str(value)
        out["status"] = {"phase": "Running"}
    if out["kind"] == "Service":
        for port in out["spec"]["ports"]:
            port.update(protocol="TCP", targetPort=port["port"])
    return out


def _deploy(cluster: Path, side: Side) -> None:
    for obj in side.objects.values():
        _serve(cluster, _as_the_server_returns(obj.manifest))


def test_a_cluster_running_the_render_shows_no_change(cluster: Path) -> None:
    ddp = [example("pytorch-ddp")]
    desired = render(ddp)
    _deploy(cluster, desired)
    live = live_side(desired, None, b"k")
    plan = make_plan(live, desired, same=quantity_same)
    assert [o.title for o in plan.changes] == []
    assert plan.counts()["same"] == 8
    calls = (cluster / "calls.log").read_text().splitlines()
    assert calls[0] == "get --output=json --namespace=training -- Service pytorch-ddp-master-0"
    assert all(call.startswith("get ") for call in calls)


def test_an_image_change_against_the_cluster_replaces_its_pods(cluster: Path) -> None:
    mnist = [example("tf-mnist")]
    _deploy(cluster, render(mnist))
    desired = render(mnist, edit=set_image("tf:2"))
    plan = make_plan(live_side(desired, None, b"k"), desired, same=quantity_same)
    assert plan.counts() == {"create": 0, "update": 0, "replace": 4, "delete": 0, "same": 4}


def test_missing_objects_are_created_and_stored_ones_gone_from_the_render_deleted(
    cluster: Path,
) -> None:
    mnist = [example("tf-mnist")]
    last = render(mnist)
    _deploy(cluster, last)
    (cluster / "Pod_kubeflow_mnist-ps-0.json").unlink()
    desired = render([example("pytorch-ddp")])
    plan = make_plan(live_side(desired, last, b"k"), desired, same=quantity_same)
    counts = plan.counts()
    assert counts["create"] == 8  # pytorch-ddp is not in the cluster
    assert counts["delete"] == 7  # mnist's objects, less the Pod already gone


def test_operator_target_custom_resources_are_read_fully_qualified(cluster: Path) -> None:
    bench = [example("tf-benchmarks")]
    desired = render(bench, target="operator")
    _deploy(cluster, desired)
    plan = make_plan(live_side(desired, None, b"k"), desired, same=quantity_same)
    assert not plan.changed
    assert (cluster / "calls.log").read_text() == (
        "get --output=json --namespace=training -- TFJob.v1.kubeflow.org tf-benchmarks\n"
    )


def test_secrets_compare_by_fingerprint_and_generated_values_match(cluster: Path) -> None:
    secret: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "ssh", "namespace": "ns"},
        "stringData": {"password": "hunter2", "key": "<generated:password:ns/ssh>"},
    }
    served = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "ssh", "namespace": "ns", "uid": "1"},
        "type": "Opaque",
        "data": {
            "password": base64.b64encode(b"hunter2").decode(),
            "key": base64.b64encode(b"made-at-apply-time").decode(),
        },
    }
    _serve(cluster, served)
    desired = side_from_manifests([(secret, "s.yaml")], "render")
    plan = make_plan(live_side(desired, None, b"k"), desired, secret_key=b"k", same=quantity_same)
    assert not plan.changed
    secret["stringData"]["password"] = "hunter3"
    desired = side_from_manifests([(secret, "s.yaml")], "render")
    plan = make_plan(live_side(desired, None, b"k"), desired, secret_key=b"k", same=quantity_same)
    (obj,) = plan.changes
    assert obj.action == "replace"
    assert "hunter" not in obj.unified_diff() and "made-at-apply-time" not in obj.unified_diff()


def test_an_unreachable_cluster_is_an_error(cluster: Path) -> None:
    (cluster / "unreachable").write_text("")
    with pytest.raises(LiveError, match="connection to the server localhost:8080 was refused"):
        live_side(render([example("tf-mnist")]), None, b"k")


def test_no_kubectl_is_an_error() -> None:
    with pytest.raises(LiveError, match="no-such-kubectl is not on PATH"):
        Kubectl(program="no-such-kubectl").get({"apiVersion": "v1", "kind": "Pod", "metadata": {}})


def test_kubeconfig_and_context_are_passed_on() -> None:
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "namespace": "n"}}
    namespace = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"}}
    kubectl = Kubectl(kubeconfig="/k/config", context="prod")
    assert kubectl.command(pod) == [
        "kubectl", "get", "--output=json", "--namespace=n",
        "--kubeconfig=/k/config", "--context=prod", "--", "Pod", "p",
    ]  # fmt: skip
    assert Kubectl().command(namespace) == [
        "kubectl", "get", "--output=json", "--", "Namespace", "n"
    ]  # fmt: skip


def test_names_from_the_input_never_become_kubectl_options() -> None:
    hostile = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "--kubeconfig=/tmp/evil", "namespace": "-A"},
    }
    command = Kubectl().command(hostile)
    cut = command.index("--")
    assert command[cut + 1 :] == ["Pod", "--kubeconfig=/tmp/evil"]
    assert "--namespace=-A" in command[:cut] and "-A" not in command


def test_prune_keeps_what_either_render_sets() -> None:
    live = {"a": 1, "b": {"c": 2, "d": 3}, "l": [1, 2, 3], "server": "x"}
    assert prune(live, [{"a": 0, "b": {"c": 0}, "l": [0]}]) == {"a": 1, "b": {"c": 2}, "l": [1]}
    assert prune(live, [{"l": [0]}, {"l": [0, 0], "b": {"d": 0}}]) == {
        "b": {"d": 3},
        "l": [1, 2],
    }


def test_quantities_compare_by_value_under_resources() -> None:
    path = ("spec", "containers", 0, "resources", "limits", "cpu")
    assert quantity_same(path, "0.5", "500m")
    assert quantity_same(path, 1, "1")
    assert not quantity_same(path, "1", "2")
    assert not quantity_same(("spec", "replicas"), 1, "1")
