"""``registration: pod-set`` with the real engine, dynamic-provider plugin and API server.

A pods-target TFJob whose Pods and Services are one Pulumi resource (issue 35). The
proofs of the per-object stacks hold for it: the cluster holds what ``trainjobs render``
prints; a second ``up`` changes nothing; an image change replaces exactly the Pods
``trainjobs preview`` says it replaces, and ``pulumi preview --diff`` names them; a Pod
deleted behind Pulumi's back is forgotten by ``refresh`` and created again by ``up``;
fewer workers delete exactly the ones removed; ``destroy`` deletes the set's objects,
never a neighbour's in the same namespace, nor an object someone else made in place of one.
A create (or the new objects of an update) the API server refuses in part leaves nothing
behind that the state does not record.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import REPO, Project, render
from tests.cluster.pulumi_up.test_demo_stack import missing_or_different, read_back
from trainjobs.k8s.ownership import STACK_LABEL

pytestmark = pytest.mark.cluster

STACK = "podset"
POD_SET_TYPE = "pulumi-python:dynamic/trainjobs:PodSet"
IMAGE = "ghcr.io/example/tf-mnist:1.0"


def _stack_file(namespace: str, *, workers: int = 3, image: str = IMAGE) -> str:
    return f"""\
config:
  trainjobs:k8sVersion: "1.32"
  trainjobs:sharedNamespaces: [{namespace}]
  trainjobs:jobs:
    - apiVersion: kubeflow.org/v1
      kind: TFJob
      metadata: {{name: gamma, namespace: {namespace}}}
      spec:
        tfReplicaSpecs:
          Worker:
            replicas: {workers}
            restartPolicy: Never
            template:
              spec:
                containers:
                  - name: tensorflow
                    image: {image}
                    resources: {{requests: {{cpu: 10m, memory: 16Mi}}, limits: {{memory: 16Mi}}}}
      trainjobs: {{target: pods, registration: pod-set}}
"""


class PodSetStack:
    """The stack brought up once for the module, in a namespace it shares."""

    def __init__(self, project: Project, namespace: str) -> None:
        self.project = project
        self.namespace = namespace

    def write(self, **changes: Any) -> None:
        self.project.stack_file(STACK).write_text(_stack_file(self.namespace, **changes))

    def rendered(self) -> list[dict[str, Any]]:
        return render(self.project.stack_file(STACK))

    def up(self) -> None:
        self.project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)

    def pod_set(self) -> dict[str, Any]:
        sets = [r for r in self.project.export(STACK) if r["type"] == POD_SET_TYPE]
        assert len(sets) == 1, [r["type"] for r in self.project.export(STACK)]
        return sets[0]


@pytest.fixture(scope="module")
def stack(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[PodSetStack]:
    namespace = f"podset-{uuid.uuid4().hex[:6]}"
    cluster.ensure_namespace(namespace)
    workdir = tmp_path_factory.mktemp("pulumi-podset")
    project = Project(workdir, kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    project.init(STACK, _stack_file(namespace))
    made = PodSetStack(project, namespace)
    made.up()
    yield made
    project.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK, ok=(0, 255))
    cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)


def _members(objects: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [m for m in objects if m["kind"] in ("Pod", "Service")]


def _key(obj: dict[str, Any]) -> str:
    return f"{obj['kind']} {obj['metadata']['namespace']}/{obj['metadata']['name']}"


def _live(cluster: ControlPlane, obj: dict[str, Any]) -> dict[str, Any] | None:
    meta = obj["metadata"]
    plural = {"Pod": "pods", "Service": "services"}[obj["kind"]]
    return cluster.client.get(f"/api/v1/namespaces/{meta['namespace']}/{plural}/{meta['name']}")


def _uids(cluster: ControlPlane, objects: list[dict[str, Any]]) -> dict[str, str]:
    """The uid of each of ``objects`` the cluster holds."""
    live = {_key(o): _live(cluster, o) for o in objects}
    return {key: found["metadata"]["uid"] for key, found in live.items() if found}


def test_the_state_holds_one_resource_and_the_cluster_what_render_prints(
    stack: PodSetStack, cluster: ControlPlane
) -> None:
    """One pod set in the state for all the job's Pods and Services (no resource of its own
    for any of them), and the cluster holds each rendered object field for field."""
    rendered = stack.rendered()
    state = stack.project.export(STACK)
    assert not [
        r for r in state if r["type"] in ("kubernetes:core/v1:Pod", "kubernetes:core/v1:Service")
    ]
    pod_set = stack.pod_set()
    assert sorted(pod_set["outputs"]["objects"]) == sorted(_key(m) for m in _members(rendered))
    live = read_back(cluster, _members(rendered))
    problems = {
        _key(m): diff
        for m in _members(rendered)
        if (diff := missing_or_different(m, next(v for v in live.values() if _key(v) == _key(m))))
    }
    assert problems == {}
    # Applied by server-side apply under trainjobs' own field manager.
    name = next(m for m in rendered if m["kind"] == "Pod")["metadata"]["name"]
    pod = cluster.client.get(f"/api/v1/namespaces/{stack.namespace}/pods/{name}")
    assert pod is not None
    managers = {(f["manager"], f["operation"]) for f in pod["metadata"]["managedFields"]}
    assert ("trainjobs", "Apply") in managers
    assert pod["metadata"]["labels"][STACK_LABEL]


def test_a_second_up_changes_nothing(stack: PodSetStack) -> None:
    result = stack.project.pulumi(
        "preview", "--expect-no-changes", "--diff", "--stack", STACK, ok=(0, 255)
    )
    assert result.returncode == 0, str(result)


def _trainjobs_preview(stack: PodSetStack, state_dir: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "trainjobs.cli",
            "preview",
            "--json",
            f"--state-dir={state_dir}",
            str(stack.project.stack_file(STACK)),
        ],
        cwd=stack.project.root,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        check=False,
    )


def test_an_image_change_replaces_what_trainjobs_preview_says(
    stack: PodSetStack, cluster: ControlPlane, tmp_path: Path
) -> None:
    """``trainjobs preview`` plans a replace of each worker Pod (a container's image
    replaces a Pod); ``pulumi preview --diff`` names exactly those objects' changes, and
    the up replaces exactly them (new uids), leaving the Services as they were."""
    state_dir = tmp_path / "trainjobs-state"
    first = _trainjobs_preview(stack, state_dir)
    assert first.returncode in (0, 1), first.stderr
    before = _uids(cluster, _members(stack.rendered()))
    stack.write(image="ghcr.io/example/tf-mnist:2.0")
    try:
        ours = _trainjobs_preview(stack, state_dir)
        assert ours.returncode == 1, ours.stdout + ours.stderr
        planned = {
            f"{o['kind']} {o['namespace']}/{o['name']}": o["action"]
            for plan in json.loads(ours.stdout)["plans"]
            for o in plan["objects"]
            if o["action"] not in ("same", "read")
        }
        assert planned and set(planned.values()) == {"replace"}, planned
        theirs = stack.project.pulumi("preview", "--diff", "--stack", STACK)
        plan = stack.project.pulumi("preview", "--json", "--stack", STACK).json()
        steps = [s for s in plan["steps"] if s["op"] not in ("same", "read")]
        assert [(s["op"], s["newState"]["type"]) for s in steps] == [("update", POD_SET_TYPE)]
        old = steps[0]["oldState"]["outputs"]["objects"]
        new = steps[0]["newState"]["inputs"]["objects"]
        assert {k for k in {*old, *new} if old.get(k) != new.get(k)} == set(planned)
        for key in planned:
            assert key in theirs.stdout, theirs.stdout
        assert "tf-mnist:2.0" in theirs.stdout
        stack.up()
        after = _uids(cluster, _members(stack.rendered()))
        replaced = {k for k in after if after[k] != before.get(k)}
        assert replaced == set(planned)
        images = {
            c["image"]
            for o in read_back(cluster, _members(stack.rendered())).values()
            if o["kind"] == "Pod"
            for c in o["spec"]["containers"]
        }
        assert images == {"ghcr.io/example/tf-mnist:2.0"}
    finally:
        stack.write()
        stack.up()


def test_refresh_forgets_a_pod_deleted_out_of_band_and_up_creates_it_again(
    stack: PodSetStack, cluster: ControlPlane
) -> None:
    pod = next(m for m in stack.rendered() if m["kind"] == "Pod")
    name = pod["metadata"]["name"]
    cluster.kubectl(
        "delete", "pod", name, "-n", stack.namespace, "--wait=true", "--grace-period=0", "--force"
    )
    stack.project.pulumi("refresh", "--yes", "--skip-preview", "--stack", STACK)
    assert _key(pod) not in stack.pod_set()["outputs"]["objects"]
    plan = stack.project.pulumi("preview", "--json", "--stack", STACK).json()
    assert [s["op"] for s in plan["steps"] if s["op"] not in ("same", "read")] == ["update"]
    stack.up()
    assert _key(pod) in stack.pod_set()["outputs"]["objects"]
    assert read_back(cluster, [pod])
    again = stack.project.pulumi("preview", "--expect-no-changes", "--stack", STACK, ok=(0, 255))
    assert again.returncode == 0, str(again)


def test_fewer_workers_delete_the_removed_ones_and_replace_what_preview_says(
    stack: PodSetStack, cluster: ControlPlane, tmp_path: Path
) -> None:
    """3 → 2 workers: the third worker's Pod and Service are deleted; the other Pods
    are replaced (each one's TF_CONFIG lists every worker), their Services kept, all
    as ``trainjobs preview`` plans it."""
    state_dir = tmp_path / "trainjobs-state"
    assert _trainjobs_preview(stack, state_dir).returncode in (0, 1)
    everything = _members(stack.rendered())
    before = _uids(cluster, everything)
    stack.write(workers=2)
    try:
        ours = _trainjobs_preview(stack, state_dir)
        planned = {
            f"{o['kind']} {o['namespace']}/{o['name']}": o["action"]
            for plan in json.loads(ours.stdout)["plans"]
            for o in plan["objects"]
        }
        ns = stack.namespace
        assert planned[f"Pod {ns}/gamma-worker-2"] == "delete"
        assert planned[f"Service {ns}/gamma-worker-2"] == "delete"
        stack.up()
        after = _uids(cluster, everything)
        outcome = {
            key: "delete" if key not in after else "same" if after[key] == uid else "replace"
            for key, uid in before.items()
        }
        # An update in place keeps the uid: "update" reads as "same" here, as does an
        # object the plan does not list.
        expected = {k: planned.get(k, "same") for k in before}
        assert outcome == {k: "same" if a == "update" else a for k, a in expected.items()}
        assert "replace" in outcome.values() and "same" in outcome.values()
    finally:
        stack.write()
        stack.up()


def _exists(cluster: ControlPlane, obj: dict[str, Any]) -> bool:
    return _live(cluster, obj) is not None


def test_destroy_deletes_the_set_and_nothing_else(
    stack: PodSetStack, cluster: ControlPlane
) -> None:
    """A neighbour's Pod in the shared namespace survives the destroy, and so does a
    Service someone else made in place of one of the set's (deleted behind the stack's
    back and made again without its owner label). Runs last: the stack is gone after."""
    rendered = _members(stack.rendered())
    ns = stack.namespace
    neighbour = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "neighbour", "namespace": ns},
        "spec": {"containers": [{"name": "c", "image": "example.com/their:1"}]},
    }
    cluster.client.create(f"/api/v1/namespaces/{ns}/pods", neighbour)
    taken = next(m for m in rendered if m["kind"] == "Service")
    cluster.kubectl("delete", "service", taken["metadata"]["name"], "-n", ns, "--wait=true")
    theirs = {
        "apiVersion": "v1",
        "kind": "Service",
        "metadata": {"name": taken["metadata"]["name"], "namespace": ns, "labels": {"team": "b"}},
        "spec": {"clusterIP": "None", "ports": [{"port": 80}]},
    }
    cluster.client.create(f"/api/v1/namespaces/{ns}/services", theirs)
    stack.project.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK)
    assert [r for r in stack.project.export(STACK) if r["type"] == POD_SET_TYPE] == []
    left = sorted(_key(m) for m in rendered if _exists(cluster, m))
    assert left == [_key(taken)]
    assert _exists(cluster, neighbour)


def _refuse_pods_named(cluster: ControlPlane, namespace: str, name: str) -> str:
    """A ValidatingAdmissionPolicy (CEL, in the API server) that refuses to create a Pod
    of that name in ``namespace``, in force once a dry run is refused; its name."""
    policy = f"refuse-{namespace}"
    group = "/apis/admissionregistration.k8s.io/v1"
    cluster.client.create(
        f"{group}/validatingadmissionpolicies",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": policy},
            "spec": {
                "failurePolicy": "Fail",
                "matchConstraints": {
                    "resourceRules": [
                        {
                            "apiGroups": [""],
                            "apiVersions": ["v1"],
                            "operations": ["CREATE"],
                            "resources": ["pods"],
                        }
                    ]
                },
                "validations": [
                    {
                        "expression": f"object.metadata.name != '{name}'",
                        "message": f"{name} is not allowed in this namespace",
                    }
                ],
            },
        },
    )
    cluster.client.create(
        f"{group}/validatingadmissionpolicybindings",
        {
            "apiVersion": "admissionregistration.k8s.io/v1",
            "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": policy},
            "spec": {
                "policyName": policy,
                "validationActions": ["Deny"],
                "matchResources": {
                    "namespaceSelector": {"matchLabels": {"kubernetes.io/metadata.name": namespace}}
                },
            },
        },
    )
    _wait_refused(cluster, namespace, name, refused=True)
    return policy


def _wait_refused(cluster: ControlPlane, namespace: str, name: str, *, refused: bool) -> None:
    probe = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "example.com/probe:1"}]},
    }
    deadline = time.monotonic() + 60
    while True:
        answer = cluster.client.request(
            "POST", f"/api/v1/namespaces/{namespace}/pods?dryRun=All", probe, ok=(403, 422)
        )
        if ("_status" in answer) == refused:
            return
        assert time.monotonic() < deadline, f"the policy is not in force: {answer}"
        time.sleep(0.5)


def _set_objects(cluster: ControlPlane, namespace: str) -> list[str]:
    """The Pods and Services in ``namespace`` (names, by kind)."""
    return sorted(
        f"{kind} {item['metadata']['name']}"
        for kind, plural in (("Pod", "pods"), ("Service", "services"))
        for item in cluster.client.items(f"/api/v1/namespaces/{namespace}/{plural}")
    )


def test_a_refused_create_or_update_leaves_no_object_the_state_does_not_hold(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A cluster policy refuses one worker's Pod. The create fails naming it and the
    policy's words, and deletes again every object it had created: no pod set in the
    state, no Pod or Service of it in the cluster (a destroy would not know them). Then,
    from 3 to 4 workers with the new worker refused, the update fails and its new Service
    is deleted again while the state keeps the 3-worker set. Without the policy both go
    through. Fails if a failed step leaves its objects behind."""
    namespace = f"podset-{uuid.uuid4().hex[:6]}"
    cluster.ensure_namespace(namespace)
    project = Project(
        tmp_path_factory.mktemp("pulumi-podset-refused"),
        kubeconfig=cluster.kubeconfig,
        dirs=pulumi_dirs,
    )
    group = "/apis/admissionregistration.k8s.io/v1"
    policy = _refuse_pods_named(cluster, namespace, "gamma-worker-2")
    try:
        project.init(STACK, _stack_file(namespace))
        failed = str(project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK, ok=(1,)))
        assert f"Pod {namespace}/gamma-worker-2: " in failed, failed
        assert "gamma-worker-2 is not allowed in this namespace" in failed, failed
        assert "The 5 objects this step created are deleted again" in failed, failed
        assert [r for r in project.export(STACK) if r["type"] == POD_SET_TYPE] == []
        assert _set_objects(cluster, namespace) == []

        cluster.client.delete(f"{group}/validatingadmissionpolicybindings/{policy}")
        _wait_refused(cluster, namespace, "gamma-worker-2", refused=False)
        project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)
        assert _set_objects(cluster, namespace) == [
            f"{kind} gamma-worker-{i}" for kind in ("Pod", "Service") for i in range(3)
        ]
        recorded = sorted(PodSetStack(project, namespace).pod_set()["outputs"]["objects"])

        cluster.client.delete(f"{group}/validatingadmissionpolicies/{policy}")
        policy = _refuse_pods_named(cluster, namespace, "gamma-worker-3")
        project.stack_file(STACK).write_text(_stack_file(namespace, workers=4))
        failed = str(project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK, ok=(1,)))
        assert "gamma-worker-3 is not allowed in this namespace" in failed, failed
        assert "The object this step created is deleted again" in failed, failed
        assert "Service gamma-worker-3" not in _set_objects(cluster, namespace)
        assert sorted(PodSetStack(project, namespace).pod_set()["outputs"]["objects"]) == recorded
    finally:
        cluster.client.delete(f"{group}/validatingadmissionpolicybindings/{policy}")
        cluster.client.delete(f"{group}/validatingadmissionpolicies/{policy}")
        project.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK, ok=(0, 255))
        cluster.kubectl("delete", "namespace", namespace, "--wait=false", check=False)
