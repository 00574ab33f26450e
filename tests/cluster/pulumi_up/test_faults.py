"""Faults a platform team's ``pulumi up`` meets, survived (README: "When an update is
interrupted"), with the real engine, provider, API server and Training Operator.

Each test ends the same way: the cluster holds exactly the render (every object labelled
as the stack's is in its state, none is missing), and a second ``pulumi up`` changes
nothing. The recovery is the one command the README documents, :data:`RECOVER`.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.jobs import small_tfjob_entry
from tests.cluster.pulumi_up.pulumi_cli import Project, render
from tests.cluster.pulumi_up.test_demo_stack import (
    Ident,
    ident,
    k8s_resources,
    missing_or_different,
    read_back,
)
from tests.support.processes import descendants
from trainjobs.k8s.ownership import STACK_LABEL, stack_label
from trainjobs.sandbox.programs import Program

pytestmark = pytest.mark.cluster

WORKERS = 50
"""A pods-target TFJob of 50 Workers: 50 Pods, 50 Services and the Namespace (101 objects)."""

RECOVER = "pulumi cancel --yes; PULUMI_K8S_UPSERT_EXISTING_OBJECTS=true pulumi up --refresh --yes"
"""The README's recovery after an interrupted update, run as written in the project folder
(its one stack selected): release the lock the killed process left, then update from a
refreshed state. The variable lets providers from 4.27 on (which refuse to create what
exists) take back the objects the killed run made; trainjobs' guard still refuses any
object not labelled as the stack's. The 4.25 provider built here ignores it."""


def _stack_text(namespace: str, target: str = "pods", workers: int = WORKERS) -> str:
    job = small_tfjob_entry("big", namespace, target, resources=TINY_RESOURCES, replicas=workers)
    return f"""\
config:
  trainjobs:k8sVersion: "1.32"
  trainjobs:namespaces: [{namespace}]
  trainjobs:jobs:
{job}"""


TINY_RESOURCES = "{requests: {cpu: 10m, memory: 16Mi}, limits: {memory: 16Mi}}"
"""Small enough for 50 Workers on one kwok node."""


class Stack:
    """One stack of this module: its project copy, name and render."""

    def __init__(self, project: Project, name: str, cluster: ControlPlane) -> None:
        self.project = project
        self.name = name
        self.cluster = cluster
        self.label = stack_label("trainjobs", name)
        self.rendered = render(project.stack_file(name))

    def pulumi(self, *args: str, ok: tuple[int, ...] = (0,)) -> str:
        result = self.project.pulumi(*args, "--stack", self.name, ok=ok)
        return result.stdout + result.stderr

    def start(self, *args: str) -> subprocess.Popen[bytes]:
        """``pulumi ARGS`` in the background, in a process group of its own."""
        return subprocess.Popen(
            ["pulumi", *args, "--yes", "--skip-preview", "--non-interactive", "--stack", self.name],
            cwd=self.project.root,
            env=self.project.env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def start_recovery(self) -> subprocess.Popen[bytes]:
        """:data:`RECOVER` in the background, in a process group of its own."""
        return subprocess.Popen(
            ["sh", "-c", RECOVER],
            cwd=self.project.root,
            env={**self.project.env, "PULUMI_SKIP_CONFIRMATIONS": "true"},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )

    def recover(self, command: str = RECOVER) -> None:
        result = subprocess.run(
            ["sh", "-c", command],
            cwd=self.project.root,
            env={**self.project.env, "PULUMI_SKIP_CONFIRMATIONS": "true"},
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert result.returncode == 0, f"{command}\n{result.stdout[-4000:]}\n{result.stderr}"

    def labelled(self) -> set[Ident]:
        """Every object in the cluster labelled as this stack's, of the render's kinds."""
        found: set[Ident] = set()
        for api_version, kind in sorted({(m["apiVersion"], m["kind"]) for m in self.rendered}):
            out = self.cluster.kubectl(
                "get",
                kind if "/" not in api_version else f"{kind}.{api_version.split('/')[0]}",
                "-A",
                "-l",
                f"{STACK_LABEL}={self.label}",
                "-o",
                "json",
            )
            for item in json.loads(out.stdout)["items"]:
                if (item["metadata"].get("deletionTimestamp")) is None:
                    found.add(ident(item))
        return found

    def assert_equals_render(self) -> None:
        """The cluster holds the render, every labelled object is in the state, and a
        second update would change nothing."""
        want = {ident(m): m for m in self.rendered}
        state = set(k8s_resources(self.project.export(self.name)))
        assert self.labelled() == set(want) == state
        live = read_back(self.cluster, list(want.values()))
        problems = {
            key: missing_or_different(obj, live.get(key, {}))
            for key, obj in want.items()
            if missing_or_different(obj, live.get(key, {}))
        }
        assert problems == {}
        self.pulumi("preview", "--expect-no-changes")

    def destroy(self) -> None:
        self.pulumi("destroy", "--yes", "--skip-preview")
        assert self.labelled() == set()


@pytest.fixture
def make_stack(
    cluster: ControlPlane,
    pulumi_dirs: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
    kwok_node: str,
) -> Iterator[Callable[..., Stack]]:
    made: list[Stack] = []

    def make(name: str, **kwargs: Any) -> Stack:
        project = Project(
            tmp_path_factory.mktemp(f"faults-{name}"),
            kubeconfig=cluster.kubeconfig,
            dirs=pulumi_dirs,
        )
        project.init(name, _stack_text(name, **kwargs))
        stack = Stack(project, name, cluster)
        made.append(stack)
        return stack

    yield make
    # The state is thrown away with the folder; deleting each stack's namespace (without
    # waiting) frees the session cluster at a fraction of a destroy's time.
    for stack in made:
        cluster.kubectl("delete", "namespace", stack.name, "--ignore-not-found", "--wait=false")


def _wait(condition: Callable[[], bool], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.2)


def _kill(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL ``pulumi`` with its language host and plugins, as a CI runner cancelling a
    job does. The engine starts each plugin in a process group of its own, so the CLI's
    group alone would leave the Kubernetes provider running, orphaned."""
    groups = {g for g in map(_group, descendants(process.pid)) if g is not None}
    for group in sorted((groups | {process.pid}) - {os.getpgrp()}):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(group, signal.SIGKILL)
    process.wait(30)


def _group(pid: int) -> int | None:
    """The process group of ``pid``; None once it is gone."""
    try:
        return os.getpgid(pid)
    except ProcessLookupError:
        return None


def _interrupt_at(stack: Stack, process: subprocess.Popen[bytes], fraction: float) -> None:
    """SIGKILL ``process`` once ``fraction`` of the stack's objects exist."""
    target = max(1, int(len(stack.rendered) * fraction))
    _wait(lambda: len(stack.labelled()) >= target or process.poll() is not None, 600, "objects")
    assert process.poll() is None, f"the update ended before {fraction:.0%} could be interrupted"
    _kill(process)
    assert target <= len(stack.labelled()) <= len(stack.rendered)


def test_pulumi_killed_early_midway_and_late_then_recovered(
    make_stack: Callable[..., Stack],
) -> None:
    """SIGKILL ``pulumi up`` once 5% of the 101 objects exist, then SIGKILL the README's
    recovery once 50% exist, then the next recovery once 95% exist; the last recovery
    completes the update and adopts nothing but the stack's own. Each kill point is thus
    followed by the recovery command (the first two interrupted in turn, which a real
    cancelled retry also meets), at the cost of one update instead of three.

    Fails without the owner label (the guard would refuse the objects a killed run made:
    they are in no state), and without the file backend's ``metadata=skip`` (a kill while
    the backend writes a checkpoint's ``.attrs`` sidecar leaves it empty, and every later
    command fails "failed to load checkpoint: EOF")."""
    stack = make_stack("killed")
    process = stack.start("up")
    for fraction in (0.05, 0.5, 0.95):
        _interrupt_at(stack, process, fraction)
        if fraction < 0.95:
            process = stack.start_recovery()
    stack.recover()
    stack.assert_equals_render()


def _program(cluster: ControlPlane, name: str) -> Program:
    (found,) = [p for p in cluster.programs if p.name == name]
    return found


def _api_ready(cluster: ControlPlane) -> bool:
    try:
        return cluster.client.ready()
    except OSError:  # refused while it starts
        return False


def _revive(cluster: ControlPlane) -> None:
    """Start again any program of the control plane that exited while the API server was
    away (a controller that lost its leader lease exits, as in a real cluster)."""
    for program in cluster.programs:
        if not program.running():
            program.start()


def test_api_server_away_for_20_seconds_during_up(
    make_stack: Callable[..., Stack], cluster: ControlPlane
) -> None:
    """Stop kube-apiserver for 20 s once 20 objects exist; the update fails on what it
    could not apply, and the README's recovery completes it. Fails without the owner
    label (objects the provider created while the update failed around them are in no
    state, so the guard would refuse them)."""
    stack = make_stack("apiserver-away")
    process = stack.start("up")
    _wait(lambda: len(stack.labelled()) >= 20, 600, "the update to be under way")
    apiserver = _program(cluster, "kube-apiserver")
    apiserver.stop(grace=0)
    try:
        time.sleep(20)
    finally:
        apiserver.start()
        _wait(lambda: _api_ready(cluster), 120, "the API server to be ready again")
    process.wait(900)
    _revive(cluster)
    stack.recover()
    stack.assert_equals_render()


def test_training_operator_killed_while_its_job_runs(
    make_stack: Callable[..., Stack], cluster: ControlPlane
) -> None:
    """SIGKILL the Training Operator while its TFJob's pods exist: an update meanwhile is
    a no-op, and the restarted operator keeps the same pods (same UIDs). Fails if the
    stack owned anything the operator makes (an update would then fight it) or if the
    job's objects drifted from the render."""
    stack = make_stack("operator-killed", target="operator", workers=2)
    stack.pulumi("up", "--yes", "--skip-preview")
    pods = f"/api/v1/namespaces/{stack.name}/pods"
    _wait(lambda: len(cluster.client.items(pods)) == 2, 120, "the operator's pods")
    uids = {p["metadata"]["uid"] for p in cluster.client.items(pods)}
    operator = _program(cluster, "training-operator")
    assert operator.process is not None
    os.killpg(operator.process.pid, signal.SIGKILL)
    operator.process.wait(30)
    # While it is away, the stack is unchanged: an update is a no-op.
    stack.pulumi("up", "--yes", "--skip-preview")
    operator.start()
    _wait(operator.running, 30, "the Training Operator")
    time.sleep(5)  # a reconcile of the job after the restart
    assert {p["metadata"]["uid"] for p in cluster.client.items(pods)} == uids
    stack.assert_equals_render()


def test_destroy_interrupted_then_run_again(make_stack: Callable[..., Stack]) -> None:
    """SIGKILL ``pulumi destroy`` once half the objects are gone; ``pulumi cancel`` and a
    second destroy remove the rest and empty the state. Fails without the file backend's
    ``metadata=skip`` (an empty ``.attrs`` after the kill fails every later command)."""
    stack = make_stack("destroy-killed")
    stack.pulumi("up", "--yes", "--skip-preview")
    stack.assert_equals_render()
    process = stack.start("destroy")
    half = len(stack.rendered) // 2
    _wait(lambda: len(stack.labelled()) <= half or process.poll() is not None, 600, "deletes")
    assert process.poll() is None, "the destroy ended before it could be interrupted"
    _kill(process)
    stack.recover("pulumi cancel --yes; pulumi destroy --yes")
    assert stack.labelled() == set()
    assert k8s_resources(stack.project.export(stack.name)) == {}
