"""`preview --live` against the real kubectl and API server: what it reads is what is there.

Each test applies objects with the cluster's own kubectl (v1.36) into a namespace of
its own, then reads them back through :class:`trainjobs.preview.live.Kubectl` running
that same kubectl. The kubectl calls preview makes are recorded by wrapping
``subprocess.run`` (the real program still runs).

API discovery failing, as reproduced here (an APIService whose Service has no
endpoints): kubectl v1.36 uses aggregated discovery, which marks the group ``Stale``,
and ``kubectl get --output=json -- Widget.v1.<group> x`` prints only
``error: the server doesn't have a resource type "Widget"`` — no discovery error at
all, the same words as for a CRD that is not installed. A CRD kind of a healthy group
reads normally meanwhile (``Error from server (NotFound): tfjobs.kubeflow.org "x" not
found``). Asked directly, ``kubectl get --raw=/apis/<group>/v1`` says
``Error from server (ServiceUnavailable): the server is currently unable to handle the
request``, where a group nobody serves says ``Error from server (NotFound): the server
could not find the requested resource``.
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane, free_ports
from tests.cluster.kube import apply, poll
from tests.preview.jobs import example, render, set_image
from trainjobs.cli import main
from trainjobs.k8s.crds import load_crd
from trainjobs.preview.live import Kubectl, LiveError, live_side
from trainjobs.preview.objects import Side, side_from_manifests
from trainjobs.preview.plan import make_plan

pytestmark = pytest.mark.cluster

Doc = dict[str, Any]


@pytest.fixture
def namespace(cluster: ControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    """A namespace of the test's own, deleted after it (with all it holds)."""
    words = re.sub(r"[^a-z0-9]+", "-", request.node.name.removeprefix("test_").lower())
    name = "preview-" + words[:40].strip("-")
    cluster.ensure_namespace(name)
    try:
        yield name
    finally:
        cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture
def kubectl(cluster: ControlPlane) -> Kubectl:
    """preview's kubectl client, running the cluster's own kubectl with its kubeconfig."""
    return Kubectl(program=str(cluster.bins["kubectl"]), kubeconfig=str(cluster.kubeconfig))


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> list[list[str]]:
    """Every command run through ``subprocess.run`` from here on (each still runs)."""
    seen: list[list[str]] = []
    real = subprocess.run

    def recording(command: list[str], *args: Any, **kwargs: Any) -> Any:
        seen.append([str(a) for a in command])
        return real(command, *args, **kwargs)

    monkeypatch.setattr("trainjobs.preview.live.subprocess.run", recording)
    return seen


def _job(name: str, namespace: str) -> Doc:
    doc = example(name)
    doc["metadata"]["namespace"] = namespace
    return doc


def _apply(cluster: ControlPlane, manifests: list[Doc]) -> None:
    result = apply(cluster, manifests, dry_run=False)
    assert result.ok, str(result)


def _apply_side(cluster: ControlPlane, side: Side) -> None:
    _apply(cluster, [obj.manifest for obj in side.objects.values()])


def _kubeconfig(path: Path, cluster: ControlPlane | None, current: str = "gone") -> Path:
    """A kubeconfig whose context ``gone`` points at a closed port (the current one), and
    with ``cluster``, a context ``real`` copied from the cluster's own kubeconfig."""
    (port,) = free_ports(1)  # closed again once chosen: nothing listens there
    config: Doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "gone", "cluster": {"server": f"https://127.0.0.1:{port}"}}],
        # A token, so kubectl does not ask for a username first.
        "users": [{"name": "nobody", "user": {"token": "not-a-real-token"}}],
        "contexts": [{"name": "gone", "context": {"cluster": "gone", "user": "nobody"}}],
        "current-context": current,
    }
    if cluster is not None:
        own = yaml.safe_load(cluster.kubeconfig.read_text())
        config["clusters"] += own["clusters"]
        config["users"] += own["users"]
        (context,) = own["contexts"]
        config["contexts"].append({"name": "real", "context": context["context"]})
    path.write_text(yaml.safe_dump(config, sort_keys=False))
    return path


def _configmap(name: str, namespace: str) -> Doc:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"lr": "0.1"},
    }


def test_a_cluster_running_the_render_shows_no_change(
    cluster: ControlPlane, namespace: str, kubectl: Kubectl, calls: list[list[str]]
) -> None:
    """Catches the API server's own additions (uids, defaults, injected volumes, status,
    quantities rewritten) showing as changes: every `preview --live` would plan updates."""
    desired = render([_job("pytorch-ddp", namespace)])
    _apply_side(cluster, desired)
    calls.clear()
    plan = make_plan(live_side(desired, None, b"k", kubectl), desired)
    assert [o.title for o in plan.changes] == []
    assert plan.counts()["same"] == 8
    assert calls[0] == [
        kubectl.program, "get", "--output=json", f"--namespace={namespace}",
        f"--kubeconfig={cluster.kubeconfig}", "--", "Service", "pytorch-ddp-master-0",
    ]  # fmt: skip
    assert len(calls) == 8 and all(call[1:3] == ["get", "--output=json"] for call in calls)


def test_an_image_change_against_the_cluster_replaces_its_pods(
    cluster: ControlPlane, namespace: str, kubectl: Kubectl
) -> None:
    mnist = [_job("tf-mnist", namespace)]
    _apply_side(cluster, render(mnist))
    desired = render(mnist, edit=set_image("tf:2"))
    plan = make_plan(live_side(desired, None, b"k", kubectl), desired)
    assert plan.counts() == {"create": 0, "update": 0, "replace": 4, "delete": 0, "same": 4}


def test_missing_objects_are_created_and_stored_ones_gone_from_the_render_deleted(
    cluster: ControlPlane, namespace: str, kubectl: Kubectl
) -> None:
    last = render([_job("tf-mnist", namespace)])
    _apply_side(cluster, last)
    cluster.kubectl("delete", "pod", "mnist-ps-0", "-n", namespace, "--grace-period=0", "--force")
    desired = render([_job("pytorch-ddp", namespace)])
    plan = make_plan(live_side(desired, last, b"k", kubectl), desired)
    counts = plan.counts()
    assert counts["create"] == 8  # pytorch-ddp is not in the cluster
    assert counts["delete"] == 7  # mnist's objects, less the Pod already gone


def test_operator_target_custom_resources_are_read_fully_qualified(
    cluster: ControlPlane, namespace: str, kubectl: Kubectl, calls: list[list[str]]
) -> None:
    """Catches a custom resource read by a short name another group also serves, or a
    TFJob the operator has defaulted and reported on showing as changed."""
    cluster.put_crd(load_crd("training-operator-v1.9.4/kubeflow.org_tfjobs.yaml"))
    desired = render([_job("tf-benchmarks", namespace)], target="operator")
    _apply_side(cluster, desired)
    calls.clear()
    plan = make_plan(live_side(desired, None, b"k", kubectl), desired)
    assert not plan.changed
    assert calls == [
        [
            kubectl.program, "get", "--output=json", f"--namespace={namespace}",
            f"--kubeconfig={cluster.kubeconfig}", "--", "TFJob.v1.kubeflow.org", "tf-benchmarks",
        ]
    ]  # fmt: skip


def test_secrets_compare_by_fingerprint_and_generated_values_match(
    cluster: ControlPlane, namespace: str, kubectl: Kubectl
) -> None:
    secret: Doc = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "ssh", "namespace": namespace},
        "stringData": {"password": "hunter2", "key": f"<generated:password:{namespace}/ssh>"},
    }
    stored = {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "ssh", "namespace": namespace},
        "type": "Opaque",
        "data": {
            "password": base64.b64encode(b"hunter2").decode(),
            "key": base64.b64encode(b"made-at-apply-time").decode(),
        },
    }
    _apply(cluster, [stored])
    desired = side_from_manifests([(secret, "s.yaml")], "render")
    plan = make_plan(live_side(desired, None, b"k", kubectl), desired, secret_key=b"k")
    assert not plan.changed
    secret["stringData"]["password"] = "hunter3"
    desired = side_from_manifests([(secret, "s.yaml")], "render")
    plan = make_plan(live_side(desired, None, b"k", kubectl), desired, secret_key=b"k")
    (obj,) = plan.changes
    assert obj.action == "replace"
    assert "hunter" not in obj.unified_diff() and "made-at-apply-time" not in obj.unified_diff()


def test_an_unreachable_cluster_is_an_error(cluster: ControlPlane, tmp_path: Path) -> None:
    config = _kubeconfig(tmp_path / "kubeconfig", None)
    server = yaml.safe_load(config.read_text())["clusters"][0]["cluster"]["server"]
    client = Kubectl(program=str(cluster.bins["kubectl"]), kubeconfig=str(config))
    refused = f"The connection to the server {server.removeprefix('https://')} was refused"
    with pytest.raises(LiveError, match=re.escape(refused)):
        live_side(render([example("tf-mnist")]), None, b"k", client)


def test_a_user_without_credentials_is_an_error_not_a_wait(
    cluster: ControlPlane, tmp_path: Path
) -> None:
    """kubectl asks such a user's name on its stdin: with preview's stdin open (a terminal,
    a pipe from CI), each object would wait there until the timeout."""
    config = _kubeconfig(tmp_path / "kubeconfig", None)
    text = yaml.safe_load(config.read_text())
    text["users"][0]["user"] = {}
    config.write_text(yaml.safe_dump(text))
    client = Kubectl(program=str(cluster.bins["kubectl"]), kubeconfig=str(config), timeout=20)
    reader, writer = os.pipe()  # never written to, never closed while kubectl runs
    saved = os.dup(0)
    os.dup2(reader, 0)
    try:
        with pytest.raises(LiveError) as caught:
            client.get(_configmap("lr", "default"))
    finally:
        os.dup2(saved, 0)
        for fd in (saved, reader, writer):
            os.close(fd)
    assert str(caught.value) == (
        "kubectl asks for a username: the kubeconfig user of its current context has no "
        "credentials; fix: give that user a token, client certificate or exec plugin in the "
        "kubeconfig, or choose another --context"
    )


def test_kubeconfig_and_context_are_passed_on(
    cluster: ControlPlane, namespace: str, tmp_path: Path
) -> None:
    """The current context of this kubeconfig is a closed port; only ``--context real``
    reaches the cluster."""
    _apply(cluster, [_configmap("lr", namespace)])
    config = str(_kubeconfig(tmp_path / "kubeconfig", cluster))
    program = str(cluster.bins["kubectl"])
    found = Kubectl(program=program, kubeconfig=config, context="real").get(
        _configmap("lr", namespace)
    )
    assert found is not None and found["data"] == {"lr": "0.1"}
    with pytest.raises(LiveError, match="was refused"):
        Kubectl(program=program, kubeconfig=config).get(_configmap("lr", namespace))


def test_names_from_the_input_never_become_kubectl_options(
    cluster: ControlPlane, namespace: str, kubectl: Kubectl
) -> None:
    """A name or namespace that kubectl would take for an option is read as a name.

    Were ``-A`` an option, kubectl would list the ConfigMaps of every namespace (this
    one holds ``lr``); were ``--kubeconfig=…`` one, kubectl would read that file.
    """
    _apply(cluster, [_configmap("lr", namespace)])
    assert kubectl.get(_configmap("-A", namespace)) is None
    assert kubectl.get(_configmap("lr", "-A")) is None
    namespace_named = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "-A"}}
    assert kubectl.get(namespace_named) is None
    # kubectl refuses a name with a slash itself (resource/name form): an error, not a file.
    with pytest.raises(LiveError, match="resource/name form"):
        kubectl.get(_configmap("--kubeconfig=/tmp/evil", namespace))


def test_the_cli_reads_the_cluster_with_one_kubectl_call(
    cluster: ControlPlane,
    namespace: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    calls: list[list[str]],
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`trainjobs preview --live --kubeconfig K --context real`: exit 1 (the TFJob is not
    there: a create), one `kubectl get`, the context chosen; without it, exit 2."""
    job = tmp_path / "tfjob.yaml"
    job.write_text(yaml.safe_dump(_job("tf-mnist", namespace)))
    (tmp_path / "Pulumi.yaml").write_text("name: mnist\nruntime: python\n")
    config = str(_kubeconfig(tmp_path / "kubeconfig", cluster))
    # The cluster's own kubectl (the real program) first on PATH, as a user's would be.
    monkeypatch.setenv("PATH", f"{cluster.bins['kubectl'].parent}{os.pathsep}{os.environ['PATH']}")
    preview = ["preview", str(job), "--live", "--kubeconfig", config, "-q"]
    assert main([*preview, "--context", "real"]) == 1
    assert calls == [
        [
            "kubectl", "get", "--output=json", f"--namespace={namespace}",
            f"--kubeconfig={config}", "--context=real", "--", "TFJob.v1.kubeflow.org", "mnist",
        ]
    ]  # fmt: skip
    capsys.readouterr()
    assert main(preview) == 2
    assert "was refused" in capsys.readouterr().err


@pytest.fixture
def broken_group(cluster: ControlPlane, namespace: str) -> Iterator[str]:
    """An API group registered by an APIService whose Service has no endpoints.

    Removed before the namespace is: while it is there, the namespace controller cannot
    list every kind and would leave namespaces half-deleted.
    """
    group = f"{namespace}.trainjobs.example.com"
    service = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": "no-backend", "namespace": namespace},
        "spec": {"ports": [{"port": 443, "targetPort": 6443}]},  # no selector: no endpoints
    }
    api_service = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"v1.{group}"},
        "spec": {
            "group": group,
            "version": "v1",
            "service": {"name": "no-backend", "namespace": namespace, "port": 443},
            "insecureSkipTLSVerify": True,
            "groupPriorityMinimum": 1000,
            "versionPriority": 15,
        },
    }
    _apply(cluster, [service, api_service])
    try:

        def unavailable() -> bool:
            raw = cluster.kubectl("get", f"--raw=/apis/{group}/v1", check=False)
            return "(ServiceUnavailable)" in raw.stderr

        poll(f"discovery of {group}/v1 to fail", unavailable, 30)
        yield group
    finally:
        cluster.kubectl("delete", "apiservice", f"v1.{group}", "--wait=true", check=False)


def test_a_kind_whose_discovery_failed_is_an_error_not_absent(
    cluster: ControlPlane, broken_group: str, namespace: str, kubectl: Kubectl
) -> None:
    """Catches preview planning a create for an object of an aggregated API whose backend
    is down: kubectl calls its kind unknown, exactly as for a CRD not installed."""
    widget = {
        "apiVersion": f"{broken_group}/v1",
        "kind": "Widget",
        "metadata": {"name": "w", "namespace": namespace},
    }
    said = cluster.kubectl(*kubectl.command(widget)[1:], check=False)
    assert said.stderr.strip() == 'error: the server doesn\'t have a resource type "Widget"'
    with pytest.raises(LiveError) as caught:
        live_side(side_from_manifests([(widget, "w.yaml")], "render"), None, b"k", kubectl)
    assert str(caught.value) == (
        f"cannot tell whether Widget.v1.{broken_group} w in namespace {namespace} exists: "
        f"kubectl calls its kind unknown, but API discovery failed for {broken_group}/v1 "
        "(asked for its kinds, the API server said: Error from server (ServiceUnavailable): "
        "the server is currently unable to handle the request), so the kind may well be "
        "there; fix: check the cluster's APIServices (`kubectl get apiservices`: the one "
        f"serving {broken_group}/v1 is not Available) and `kubectl api-resources`, then "
        "preview again"
    )
    # Meanwhile a kind of a healthy group reads as ever, and a kind nobody serves is absent.
    tfjob = render([_job("tf-mnist", namespace)], target="operator")
    (manifest,) = [o.manifest for o in tfjob.objects.values()]
    assert kubectl.get(manifest) is None
    gizmo = {
        "apiVersion": "nobody.trainjobs.example.com/v1",
        "kind": "Gizmo",
        "metadata": {"name": "g", "namespace": namespace},
    }
    assert kubectl.get(gizmo) is None
