"""``pulumi up`` of stacks/Pulumi.demo.yaml (and of the seed systems' stack) with the real
engine, language host and provider.

Each stack is brought up once for the module (against the session's control plane)
and the proofs read it: what the cluster holds equals what ``trainjobs render``
prints, in dependency order; a second ``up`` would change nothing; an image change
plans the same replacements as ``trainjobs preview``; ``destroy`` removes what the
stack made and nothing else. The commands are the ones the README's Pulumi section
shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.cluster.control_plane import ControlPlane
from tests.cluster.pulumi_up.pulumi_cli import REPO, Project, render
from trainjobs.k8s.quantity import parse_quantity

STACK = "demo"
UP_STACKS = ("demo", "seeds", "paddle-edl")
"""Stacks brought up whole: the demo, and the seed systems on their own operators, whose
CRDs the stacks install before their jobs (Caffe2 and MindSpore; PaddlePaddle EDL)."""
Ident = tuple[str, str, str | None, str]
"""apiVersion, kind, namespace, name: one Kubernetes object."""


def ident(obj: Mapping[str, Any]) -> Ident:
    meta = obj.get("metadata") or {}
    return (obj["apiVersion"], obj["kind"], meta.get("namespace") or None, meta["name"])


def missing_or_different(want: Any, have: Any, path: str = "") -> list[str]:
    """Each path where ``have`` lacks or differs from a value ``want`` sets.

    Fields only ``have`` holds (what the API server and the provider add: uid,
    status, defaults, the managed-by label) are not differences. Resource limits and
    requests are quantities: the API server returns ``1`` as ``"1"`` and ``1000m`` as
    ``"1"``, so they are compared by value.
    """
    if isinstance(want, Mapping):
        if not isinstance(have, Mapping):
            return [f"{path or '.'}: {have!r} is not a map"]
        out: list[str] = []
        for key, value in want.items():
            if key not in have:
                out.append(f"{path}.{key}: missing")
            else:
                out.extend(missing_or_different(value, have[key], f"{path}.{key}"))
        return out
    if isinstance(want, list):
        if not isinstance(have, list) or len(have) != len(want):
            return [f"{path}: {have!r} instead of {want!r}"]
        out = []
        for i, (w, h) in enumerate(zip(want, have, strict=True)):
            out.extend(missing_or_different(w, h, f"{path}[{i}]"))
        return out
    if QUANTITY_PATH.search(path) and isinstance(have, str):
        return (
            []
            if parse_quantity(want) == parse_quantity(have)
            else [f"{path}: {have!r} != {want!r}"]
        )
    return [] if want == have else [f"{path}: {have!r} instead of {want!r}"]


QUANTITY_PATH = re.compile(r"\.resources\.(limits|requests)\.[^.\[]+(\.[^.\[]+)*$")


def k8s_resources(state: list[dict[str, Any]]) -> dict[Ident, dict[str, Any]]:
    """The Kubernetes objects the stack manages (its provider resources, and objects it only
    reads, such as a shared namespace, left out)."""
    found: dict[Ident, dict[str, Any]] = {}
    for res in state:
        # A shared namespace is read, and a large unit's barrier (yaml/v2 ConfigGroup)
        # holds no object: neither is one of the stack's objects.
        if res.get("external") or res["type"].startswith("kubernetes:yaml/"):
            continue
        if res["type"].startswith("kubernetes:") and not res["type"].startswith("pulumi:"):
            found[ident(res["outputs"])] = res
    return found


def read_back(cluster: ControlPlane, objects: list[dict[str, Any]]) -> dict[Ident, dict[str, Any]]:
    """The cluster's copy of each object (``kubectl get -f - -o json``)."""
    stream = yaml.safe_dump_all(objects)
    out = cluster.kubectl("get", "-f", "-", "-o", "json", stdin=stream)
    doc = json.loads(out.stdout)
    items = doc.get("items", [doc]) if doc.get("kind") == "List" else [doc]
    return {ident(item): item for item in items}


def events(path: Path) -> list[dict[str, Any]]:
    """The engine's event log (``--event-log``), one event per line."""
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


class Demo:
    """The demo stack, brought up once: the project copy, the render, the up's events."""

    def __init__(
        self,
        project: Project,
        rendered: list[dict[str, Any]],
        log: Path,
        preexisting: set[str],
        stack: str = STACK,
    ) -> None:
        self.stack = stack
        self.project = project
        self.rendered = rendered
        self.log = log
        self.preexisting = preexisting
        """Namespaces the cluster had before the up."""


@pytest.fixture(scope="module")
def demo(
    cluster: ControlPlane, pulumi_dirs: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Demo]:
    yield from _brought_up(STACK, cluster, pulumi_dirs, tmp_path_factory)


@pytest.fixture(scope="module", params=UP_STACKS)
def brought_up(
    request: pytest.FixtureRequest,
    cluster: ControlPlane,
    pulumi_dirs: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Demo]:
    """Each stack of UP_STACKS brought up (the demo stack is the ``demo`` fixture's).

    The seed stack installs operators as Deployments, which the provider waits to be
    ready: a kwok node runs their pods."""
    if request.param == STACK:
        yield request.getfixturevalue("demo")
    else:
        request.getfixturevalue("kwok_node")
        yield from _brought_up(request.param, cluster, pulumi_dirs, tmp_path_factory)


def _brought_up(
    stack: str,
    cluster: ControlPlane,
    pulumi_dirs: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[Demo]:
    workdir = tmp_path_factory.mktemp(f"pulumi-{stack}")
    project = Project(workdir, kubeconfig=cluster.kubeconfig, dirs=pulumi_dirs)
    rendered = render(REPO / "stacks" / f"Pulumi.{stack}.yaml")
    # Namespaces the cluster had before (kubeflow, where the session's operators run, which
    # the demo stack uses as a shared namespace): a plain destroy must leave them.
    before = {ns["metadata"]["name"] for ns in cluster.client.items("/api/v1/namespaces")}
    project.init(stack)
    # The session's control plane installed the operators' CRDs itself, so a stack that
    # installs an operator meets them: it adopts them, as a platform team would (CRDs are
    # retained on delete). The demo stack declares nothing the cluster has.
    existing = [m for m in rendered if _exists(cluster, m)]
    if stack == STACK:
        assert existing == []
    for i, obj in enumerate(existing):
        meta = obj["metadata"]
        entry = "/".join(p for p in (obj["kind"], meta.get("namespace"), meta["name"]) if p)
        project.pulumi("config", "set", "--path", f"trainjobs:adopt[{i}]", entry, "--stack", stack)
    log = workdir / "up.events.jsonl"
    project.pulumi("up", "--yes", "--skip-preview", "--stack", stack, f"--event-log={log}")
    yield Demo(project, rendered, log, before, stack)
    project.pulumi("destroy", "--yes", "--skip-preview", "--stack", stack)


def test_up_creates_exactly_what_render_prints(brought_up: Demo, cluster: ControlPlane) -> None:
    """The stack's state and the cluster hold the rendered objects, field for field.

    Fails when the program registers an object `trainjobs render` does not print (or
    misses one), or when an object in the cluster lacks or changes a rendered field
    (a lost label, an int sent as a float, a dropped env var).
    """
    demo = brought_up
    state = k8s_resources(demo.project.export(demo.stack))
    want = {ident(m): m for m in demo.rendered}
    assert sorted(state, key=str) == sorted(want, key=str)
    live = read_back(cluster, demo.rendered)
    assert sorted(live, key=str) == sorted(want, key=str)
    problems = {
        f"{kind} {ns}/{name}": diff
        for (api, kind, ns, name), m in want.items()
        if (diff := missing_or_different(m, live[(api, kind, ns, name)]))
    }
    assert problems == {}


def test_state_keeps_no_python_stack_traces(brought_up: Demo) -> None:
    """The stack program's resources carry no stack trace or source position in the state.

    They would name trainjobs' own frames, never the user's YAML (issue 35: 1.8 kB per
    object). Fails if ``__main__.py`` stops calling ``lean_sdk.lighten``.
    """
    demo = brought_up
    state = demo.project.export(demo.stack)
    programs = [r for r in state if r["type"].startswith(("kubernetes:core/", "trainjobs:"))]
    assert programs
    assert [r["urn"] for r in programs if r.get("stackTrace") or r.get("sourcePosition")] == []


def test_up_creates_dependencies_first(brought_up: Demo) -> None:
    """Each Namespace (and CRD) exists before anything is created in it (or of its kind).

    Read from the engine's event log: the step that creates a namespaced object starts
    after the step creating its Namespace finished. Fails if the components lose their
    depends_on, which lets the engine create them in parallel.
    """
    demo = brought_up
    urn_ident = {
        res["urn"]: ident(res["outputs"])
        for res in demo.project.export(demo.stack)
        if res["type"].startswith("kubernetes:")
        and not res.get("external")
        and not res["type"].startswith("kubernetes:yaml/")
    }
    started: dict[Ident, int] = {}
    finished: dict[Ident, int] = {}
    for event in events(demo.log):
        for key, table in (("resourcePreEvent", started), ("resOutputsEvent", finished)):
            meta = (event.get(key) or {}).get("metadata") or {}
            if meta.get("op") == "create" and meta.get("urn") in urn_ident:
                table.setdefault(urn_ident[meta["urn"]], event["sequence"])
    assert set(started) == set(urn_ident.values())
    crds = {
        (m["spec"]["group"], m["spec"]["names"]["kind"]): ident(m)
        for m in demo.rendered
        if m["kind"] == "CustomResourceDefinition"
    }
    late = []
    for obj in started:
        api, kind, ns, _ = obj
        needs: list[Ident] = []
        if ns is not None and ("v1", "Namespace", None, ns) in finished:
            needs.append(("v1", "Namespace", None, ns))
        crd = crds.get((api.rpartition("/")[0], kind))
        if crd is not None:
            needs.append(crd)
        late += [
            f"{obj} started before {n} was created" for n in needs if started[obj] < finished[n]
        ]
    assert late == []


def test_second_up_changes_nothing(brought_up: Demo) -> None:
    """``pulumi preview --expect-no-changes`` after the up exits 0.

    Fails when anything the program registers differs between two runs (a random
    name, an unordered map) or when the provider sees a diff against what it created.
    """
    result = brought_up.project.pulumi(
        "preview", "--expect-no-changes", "--diff", "--stack", brought_up.stack, ok=(0, 255)
    )
    assert result.returncode == 0, str(result)


def _trainjobs(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "trainjobs.cli", *args],
        cwd=cwd,
        env={**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1"},
        capture_output=True,
        text=True,
        check=False,
    )


def test_image_change_replaces_what_trainjobs_preview_says(demo: Demo, tmp_path: Path) -> None:
    """After changing job mnist's image, Pulumi's plan and trainjobs' agree object by object.

    ``pulumi preview --diff --json`` against the cluster, and ``trainjobs preview
    --json`` against the render before the change: the same objects are replaced,
    updated, created and deleted. Fails when trainjobs' replace rules (k8s/replace.py)
    and the provider's disagree. The stack's files are restored afterwards.
    """
    project = demo.project
    stack_file = project.stack_file(STACK)
    job_file = project.root / "examples" / "tf-mnist" / "tfjob.yaml"
    original = job_file.read_text()
    state_dir = tmp_path / "trainjobs-state"
    first = _trainjobs(
        "preview", "--json", f"--state-dir={state_dir}", str(stack_file), cwd=project.root
    )
    assert first.returncode in (0, 1), first.stderr
    images = {
        c["image"]
        for spec in yaml.safe_load(original)["spec"]["tfReplicaSpecs"].values()
        for c in spec["template"]["spec"]["containers"]
    }
    changed = original
    for image in images:
        changed = changed.replace(image, f"{image.rsplit(':', 1)[0]}:changed-by-test")
    job_file.write_text(changed)
    try:
        ours = _trainjobs(
            "preview", "--json", f"--state-dir={state_dir}", str(stack_file), cwd=project.root
        )
        assert ours.returncode == 1, ours.stdout + ours.stderr
        theirs = project.pulumi("preview", "--diff", "--json", "--stack", STACK)
    finally:
        job_file.write_text(original)
    planned = {
        (o["apiVersion"], o["kind"], o["namespace"], o["name"]): o["action"]
        for plan in json.loads(ours.stdout)["plans"]
        for o in plan["objects"]
        if o["action"] not in ("same", "read")
    }
    steps: dict[Ident, str] = {}
    for step in theirs.json().get("steps", []):
        st = step.get("newState") or step.get("oldState") or {}
        # A read (the shared kubeflow namespace) is no change of the stack's.
        if not st.get("type", "").startswith("kubernetes:") or step["op"] in ("same", "read"):
            continue
        obj = st.get("inputs") or st.get("outputs") or {}
        steps[ident(obj)] = step["op"]
    assert planned, "trainjobs preview planned no change: the test changed nothing"
    assert steps == planned


def test_refresh_after_out_of_band_delete_plans_the_recreate(
    demo: Demo, cluster: ControlPlane
) -> None:
    """A Pod deleted behind Pulumi's back: ``refresh`` forgets it, the next up re-creates it.

    This is the re-create the README warns about (a finished job deleted by the
    cluster trains again). Fails if refresh keeps the Pod in the state or the preview
    after it plans anything but creating that one Pod. The Pod is re-created by an up
    so the later proofs see the whole stack.
    """
    pod = next(m for m in demo.rendered if m["kind"] == "Pod")
    ns, name = pod["metadata"]["namespace"], pod["metadata"]["name"]
    cluster.kubectl("delete", "pod", name, "-n", ns, "--wait=true", "--grace-period=0", "--force")
    project = demo.project
    project.pulumi("refresh", "--yes", "--skip-preview", "--stack", STACK)
    assert ident(pod) not in k8s_resources(project.export(STACK))
    plan = project.pulumi("preview", "--json", "--stack", STACK).json()
    changes = {
        ident((s.get("newState") or {}).get("inputs") or {}): s["op"]
        for s in plan.get("steps", [])
        # A read (the shared kubeflow namespace) is no change of the stack's.
        if s["op"] not in ("same", "read")
        and (s.get("newState") or {}).get("type", "").startswith("kubernetes:")
    }
    assert changes == {ident(pod): "create"}
    project.pulumi("up", "--yes", "--skip-preview", "--stack", STACK)
    assert ident(pod) in read_back(cluster, [pod])


def test_destroy_removes_the_stack_and_nothing_else(demo: Demo, cluster: ControlPlane) -> None:
    """A plain ``pulumi destroy`` deletes every object the stack created, and no other
    namespace: ``kubeflow`` (where the session's operators live) is one of the demo
    stack's ``sharedNamespaces``, read and never owned.

    Runs last: the stack is gone afterwards. Fails when an object of the stack survives,
    or a namespace outside the stack goes (before issue 31 the provider adopted
    ``kubeflow`` and this destroy deleted it, operators and all).
    """
    project = demo.project
    namespaces_before = {n["metadata"]["name"] for n in cluster.client.items("/api/v1/namespaces")}
    assert "kubeflow" in demo.preexisting
    project.pulumi("destroy", "--yes", "--skip-preview", "--stack", STACK)
    assert k8s_resources(project.export(STACK)) == {}
    created_namespaces = {m["metadata"]["name"] for m in demo.rendered if m["kind"] == "Namespace"}
    assert "kubeflow" not in created_namespaces
    namespaced_left = [
        ident(m)
        for m in demo.rendered
        if m["kind"] not in ("Namespace", "CustomResourceDefinition") and _exists(cluster, m)
    ]
    assert namespaced_left == []
    namespaces_after = {
        n["metadata"]["name"]
        for n in cluster.client.items("/api/v1/namespaces")
        if n["status"].get("phase") != "Terminating"
    }
    assert namespaces_before - created_namespaces <= namespaces_after
    assert "kubeflow" in namespaces_after
    crds_left = [
        ident(m)
        for m in demo.rendered
        if m["kind"] == "CustomResourceDefinition" and not _exists(cluster, m)
    ]
    assert crds_left == [], "CRDs are retained on delete"


def _exists(cluster: ControlPlane, obj: Mapping[str, Any]) -> bool:
    out = cluster.kubectl(
        "get", "-f", "-", "-o", "name", "--ignore-not-found", stdin=yaml.safe_dump(dict(obj))
    )
    return bool(out.stdout.strip())
