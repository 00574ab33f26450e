"""Same value, other spelling: what ``pulumi preview --diff`` does, and that trainjobs agrees.

A stack of one TFJob on the pods target (a Pod) and one on the operator target (the
TFJob itself) is brought up with the real engine, provider and API server. Then the
stack file is respelled — a quantity (``cpu: "1"`` → ``1`` or ``"1000m"``, ``"500m"``
→ ``"0.5"``, ``memory: "1Gi"`` → ``1073741824``), a label map or ``resources`` written
in another key order — and ``pulumi preview --diff --json`` must plan, per object,
what ``trainjobs diff`` of the two renders, ``trainjobs preview`` (against the render
stored before) and ``trainjobs preview --live`` (against the cluster) plan.

What the engine does (pulumi-kubernetes 4.25, kube-apiserver 1.36), which
trainjobs/preview/spelling.py relies on: the provider compares what the API server
would store (a dry run), not the inputs, so a Pod is the same after any respelling the
server stores as the same text, and replaced after ``"1Gi"`` → ``1073741824`` (stored
as ``1073741824``); a TFJob keeps what it is given, so every quantity respelling
updates it. Key order is never a change. The canonical texts themselves are checked
against the server with a dry run (``canonical_quantity``).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.jobs import small_tfjob_entry
from tests.cluster.pulumi_up.pulumi_cli import REPO, Project
from trainjobs.k8s.quantity import canonical_quantity

STACK = "spelling"
Obj = tuple[str, str]
"""kind, name."""


RESOURCES = (
    '                      requests: {cpu: "500m", memory: "1Gi"}\n'
    '                      limits: {cpu: "1", memory: "1Gi"}\n'
)


def _entry(name: str, target: str) -> str:
    return small_tfjob_entry(
        name, "spelling", target, labels="{team: vision, tier: batch}", resources="\n" + RESOURCES
    )


STACK_FILE = (
    'config:\n  trainjobs:k8sVersion: "1.32"\n  trainjobs:namespaces: [spelling]\n'
    "  trainjobs:jobs:\n" + _entry("podjob", "pods") + _entry("opjob", "operator")
)
POD: Obj = ("Pod", "podjob-worker-0")
TFJOB: Obj = ("TFJob", "opjob")
EDITS: dict[str, tuple[str, str, dict[Obj, str]]] = {
    # edit: (text, its respelling, the engine's op per changed object)
    "cpu-1-as-int": ('limits: {cpu: "1"', "limits: {cpu: 1", {TFJOB: "update"}),
    "cpu-1-as-1000m": ('limits: {cpu: "1"', 'limits: {cpu: "1000m"', {TFJOB: "update"}),
    "cpu-500m-as-0.5": ('requests: {cpu: "500m"', 'requests: {cpu: "0.5"', {TFJOB: "update"}),
    "memory-1Gi-as-bytes": (
        'memory: "1Gi"}\n                      limits',
        "memory: 1073741824}\n                      limits",
        {POD: "replace", TFJOB: "update"},
    ),
    "labels-reordered": ("{team: vision, tier: batch}", "{tier: batch, team: vision}", {}),
    "resources-reordered": (RESOURCES, "".join(reversed(RESOURCES.splitlines(True))), {}),
}


def _trainjobs(*args: str, cwd: Path, path: str = "") -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"}
    if path:  # where `preview --live` finds kubectl
        env["PATH"] = os.pathsep.join([path, env.get("PATH", "")])
    return subprocess.run(
        [sys.executable, "-m", "trainjobs.cli", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )


def _planned(result: subprocess.CompletedProcess[str]) -> dict[Obj, str]:
    """The changed objects of a ``trainjobs diff|preview --json`` plan and their actions."""
    assert result.returncode in (0, 1), result.stdout + result.stderr
    return {
        (o["kind"], o["name"]): o["action"]
        for plan in json.loads(result.stdout)["plans"]
        for o in plan["objects"]
        if o["action"] != "same"
    }


def _steps(preview: Any) -> dict[Obj, str]:
    """The Kubernetes objects a ``pulumi preview --json`` changes, and how."""
    found: dict[Obj, str] = {}
    for step in preview.get("steps", []):
        state = step.get("newState") or step.get("oldState") or {}
        if state.get("type", "").startswith("kubernetes:") and step["op"] != "same":
            meta = (state.get("inputs") or state.get("outputs") or {}).get("metadata") or {}
            found[(state["type"].rsplit(":", 1)[1], meta["name"])] = step["op"]
    return found


class Brought:
    """The stack after its ``up``: the project copy, its first render, the stored preview."""

    def __init__(self, project: Project, workdir: Path, cluster: ControlPlane) -> None:
        self.project = project
        self.cluster = cluster
        self.workdir = workdir
        self.render = workdir / "render-before"
        self.state = workdir / "preview-before"


@pytest.fixture(scope="module")
def brought(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Brought]:
    workdir = tmp_path_factory.mktemp("pulumi-spelling")
    project = Project(workdir, kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    project.init(STACK, STACK_FILE)
    stack_file = project.stack_file(STACK)
    up = Brought(project, workdir, cluster)
    rendered = _trainjobs("render", str(stack_file), "-o", str(up.render), cwd=project.root)
    assert rendered.returncode == 0, rendered.stderr
    stored = _trainjobs(
        "preview", "--json", f"--state-dir={up.state}", str(stack_file), cwd=project.root
    )
    assert stored.returncode in (0, 1), stored.stderr
    project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)
    yield up
    shutil.rmtree(workdir / "state" / ".pulumi" / "locks", ignore_errors=True)
    project.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK, ok=(0, 255))


@pytest.mark.parametrize("edit", list(EDITS))
def test_a_respelling_plans_what_pulumi_preview_does(
    brought: Brought, edit: str, tmp_path: Path
) -> None:
    """The engine's op per object is pinned, and ``trainjobs diff``, ``preview`` and
    ``preview --live`` match it.

    Fails if the provider starts comparing inputs (then ``cpu: 1`` would replace the
    Pod) or trainjobs stops comparing quantities as the API server stores them (before
    that, ``diff`` and ``preview`` planned a Pod replace for ``cpu: 1``, and ``--live``,
    comparing by value, no TFJob update for any respelling and no Pod replace for bytes).
    """
    old, new, expected = EDITS[edit]
    assert STACK_FILE.count(old) == 2, edit  # both jobs are respelled
    project = brought.project
    stack_file = project.stack_file(STACK)
    stack_file.write_text(STACK_FILE.replace(old, new))
    try:
        theirs = project.pulumi("preview", "--diff", "--json", "--stack", STACK)
        rendered = _trainjobs("render", str(stack_file), "-o", str(tmp_path / "r"), cwd=REPO)
        assert rendered.returncode == 0, rendered.stderr
        diff = _trainjobs("diff", str(brought.render), str(tmp_path / "r"), "--json", cwd=REPO)
        state = tmp_path / "state"
        shutil.copytree(brought.state, state)
        preview = _trainjobs(
            "preview", "--json", f"--state-dir={state}", str(stack_file), cwd=project.root
        )
        live = _trainjobs(
            "preview",
            "--json",
            "--live",
            f"--kubeconfig={brought.cluster.kubeconfig}",
            f"--state-dir={tmp_path / 'live-state'}",
            str(stack_file),
            cwd=project.root,
            path=str(Path(brought.cluster.bins["kubectl"]).parent),
        )
    finally:
        stack_file.write_text(STACK_FILE)
    assert _steps(theirs.json()) == expected, str(theirs)
    assert _planned(diff) == expected, diff.stdout
    assert _planned(preview) == expected, preview.stdout
    assert _planned(live) == expected, live.stdout


SPELLINGS: tuple[Any, ...] = (
    "1", 1, 1.0, "1000m", "500m", 0.5, "0.5", "1000", "1Gi", "1024Mi", 1073741824,
    "0.5Ki", "1536Mi", "1e3", "1.5e3", "1e-7", 1e-7, "0.0000000001", "1500u", "0", "0Gi",
)  # fmt: skip


def test_canonical_quantity_is_what_the_api_server_stores(cluster: ControlPlane) -> None:
    """Each spelling, sent as JSON in a Pod's memory request (a dry run, nothing is created),
    comes back as :func:`canonical_quantity` spells it."""
    pods = {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": f"q{i}", "namespace": "default"},
                "spec": {
                    "containers": [
                        {"name": "c", "image": "busybox", "resources": {"requests": {"memory": v}}}
                    ]
                },
            }
            for i, v in enumerate(SPELLINGS)
        ],
    }
    out = cluster.kubectl(
        "create", "--dry-run=server", "-o", "json", "-f", "-", stdin=json.dumps(pods)
    )
    items, text, at = [], out.stdout, 0  # kubectl prints one JSON document per object
    decoder = json.JSONDecoder()
    while text[at:].strip():
        item, at = decoder.raw_decode(text, at + len(text[at:]) - len(text[at:].lstrip()))
        items.append(item)
    stored = {
        item["metadata"]["name"]: item["spec"]["containers"][0]["resources"]["requests"]["memory"]
        for item in items
    }
    assert stored == {f"q{i}": canonical_quantity(v) for i, v in enumerate(SPELLINGS)}
