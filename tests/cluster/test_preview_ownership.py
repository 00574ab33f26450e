"""`trainjobs preview --live` says what `pulumi up` does about ownership, read from the
real cluster with the real kubectl (v1.36): refused, adopt, read (shared), or the plan.

Each test makes a namespace the way another team would (the cluster's own kubectl, no
trainjobs), writes a stack of a Pulumi project ``team`` (``stacks/Pulumi.dev.yaml``, so
this stack's objects carry ``trainjobs.dev/stack=team.dev``) that declares it, and runs
`trainjobs preview --live --json`. Each fails without trainjobs/preview/ownership.py: the
namespace then plans as an ordinary update or same, and preview exits 1 where `pulumi up`
stops.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from trainjobs.cli import main
from trainjobs.k8s.ownership import STACK_LABEL

pytestmark = pytest.mark.cluster

Doc = dict[str, Any]
MINE = "team.dev"


@pytest.fixture
def theirs(cluster: ControlPlane, request: pytest.FixtureRequest) -> Iterator[str]:
    """The name of a namespace of the test's own, deleted after it (with all it holds)."""
    words = re.sub(r"[^a-z0-9]+", "-", request.node.name.removeprefix("test_").lower())
    name = "own-" + words[:40].strip("-")
    try:
        yield name
    finally:
        cluster.kubectl("delete", "namespace", name, "--wait=false", check=False)


@pytest.fixture
def live(
    cluster: ControlPlane, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Any:
    """Run `trainjobs preview STACK --live --json [more]` with the cluster's kubectl first on
    PATH; return the exit code and the plan."""
    monkeypatch.setenv("PATH", f"{cluster.bins['kubectl'].parent}{os.pathsep}{os.environ['PATH']}")

    def preview(stack: Path, *more: str) -> tuple[int, Doc]:
        capsys.readouterr()
        command = ["preview", str(stack), "--live", "--kubeconfig", str(cluster.kubeconfig)]
        code = main([*command, "--json", *more])
        out = capsys.readouterr().out
        (plan,) = json.loads(out)["plans"]
        return code, plan

    return preview


def _stack(project: Path, namespace: str, **settings: Any) -> Path:
    """``stacks/Pulumi.dev.yaml`` of project ``team``: one job in ``namespace``."""
    (project / "Pulumi.yaml").write_text("name: team\nruntime: python\nstackConfigDir: stacks\n")
    container = {"name": "tensorflow", "image": "tf:2"}
    job = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "TFJob",
        "metadata": {"name": "tf", "namespace": namespace},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": 1, "template": {"spec": {"containers": [container]}}}
            }
        },
        "trainjobs": {"target": "pods"},
    }
    config = {"trainjobs:jobs": [job], **{f"trainjobs:{k}": v for k, v in settings.items()}}
    (project / "stacks").mkdir(exist_ok=True)
    path = project / "stacks" / "Pulumi.dev.yaml"
    path.write_text(yaml.safe_dump({"config": config}, sort_keys=False))
    return path


def _namespace(plan: Doc, name: str) -> Doc | None:
    found = [o for o in plan["objects"] if o["kind"] == "Namespace" and o["name"] == name]
    return found[0] if found else None


def test_a_namespace_made_by_someone_else_is_refused(
    cluster: ControlPlane, theirs: str, tmp_path: Path, live: Any
) -> None:
    cluster.kubectl("create", "namespace", theirs)
    stack = _stack(tmp_path, theirs, namespaces=[theirs])
    code, plan = live(stack)
    assert code == 4
    refused = _namespace(plan, theirs)
    assert refused is not None and refused["action"] == "refused"
    (finding,) = plan["ownership"]["refused"]
    assert finding == refused["refusal"]
    assert (finding["code"], finding["path"]) == ("stack.not_ours", "trainjobs:namespaces[0]")
    assert finding["message"] == (
        f"Namespace {theirs} already exists in the cluster and was not made by this stack (it "
        f"has no {STACK_LABEL} label); `pulumi up` would take it over, and `pulumi destroy` "
        "would then delete it"
    )
    assert plan["ownership"]["stackLabel"] == MINE
    # The job's objects are not in the cluster: created, as ever.
    assert {o["action"] for o in plan["objects"] if o["kind"] != "Namespace"} == {"create"}


def test_a_namespace_the_stack_adopts_shows_as_adopt(
    cluster: ControlPlane, theirs: str, tmp_path: Path, live: Any
) -> None:
    cluster.kubectl("create", "namespace", theirs)
    stack = _stack(tmp_path, theirs, namespaces=[theirs], adopt=[f"Namespace/{theirs}"])
    code, plan = live(stack)
    assert code == 1
    adopted = _namespace(plan, theirs)
    assert adopted is not None and (adopted["action"], adopted["symbol"]) == ("adopt", "=")
    assert plan["ownership"]["refused"] == []
    assert plan["summary"]["adopt"] == 1


def test_a_namespace_labelled_as_this_stacks_plans_as_ever(
    cluster: ControlPlane,
    theirs: str,
    tmp_path: Path,
    live: Any,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The label is read before the live object is cut down to the render's fields (which
    never set it): read after, the stack's own namespace would be refused."""
    stack = _stack(tmp_path, theirs, namespaces=[theirs])
    assert main(["render", str(stack), "-o", str(tmp_path / "out"), "-q"]) == 0
    (rendered,) = [
        doc
        for file in sorted((tmp_path / "out").glob("*.yaml"))
        for doc in yaml.safe_load_all(file.read_text())
        if doc and doc["kind"] == "Namespace"
    ]
    rendered["metadata"].setdefault("labels", {})[STACK_LABEL] = MINE
    cluster.kubectl("apply", "-f", "-", stdin=yaml.safe_dump(rendered))
    code, plan = live(stack)
    assert code == 1  # the job's objects are created
    assert _namespace(plan, theirs) is None  # the same: not listed
    assert "ownership" not in plan
    # Another stack of the same project (--stack-name) finds it someone else's.
    code, plan = live(stack, "--stack-name", "prod")
    assert code == 4
    (finding,) = plan["ownership"]["refused"]
    assert f"it belongs to stack {MINE}" in finding["message"]


def test_a_shared_namespace_is_read_and_a_missing_one_refused(
    cluster: ControlPlane, theirs: str, tmp_path: Path, live: Any
) -> None:
    stack = _stack(tmp_path, theirs, sharedNamespaces=[theirs])
    code, plan = live(stack)
    assert code == 4
    missing = _namespace(plan, theirs)
    assert missing is not None and missing["action"] == "refused"
    assert missing["refusal"]["path"] == "trainjobs:sharedNamespaces[0]"
    cluster.kubectl("create", "namespace", theirs)
    code, plan = live(stack)
    assert code == 1  # the job's objects are created; the namespace only read
    read = _namespace(plan, theirs)
    assert read is not None and (read["action"], read["symbol"]) == ("read", ">")
    assert plan["summary"]["read"] == 1 and "refused" not in plan["summary"]
