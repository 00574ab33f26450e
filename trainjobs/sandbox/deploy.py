"""``pulumi up`` of a stack onto this folder's sandbox, with the real engine.

The project's Pulumi program runs on the Pulumi CLI, Python language host and Kubernetes
provider the project pins (built like the sandbox's programs, or named by
``TRAINJOBS_BIN_PULUMI`` …); nothing is downloaded (automatic plugin acquisition is off).
State lives in a ``file://`` backend inside the sandbox's folder, so ``trainjobs sandbox
down`` forgets it with the cluster; secrets are encrypted with a fixed passphrase
(:data:`PASSPHRASE`: a local throwaway cluster's state, not a place for real secrets).

The project (``Pulumi.yaml``, ``__main__.py``, its stack folder and ``examples/``) is
copied into the sandbox's folder first: ``pulumi stack init`` writes an encryption salt
into the stack's config file, which must not change the user's tree.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml

from trainjobs.errors import TrainjobsError
from trainjobs.sandbox.binaries import PULUMI_BINARIES, binaries
from trainjobs.sandbox.sandbox import NotRunning, Sandbox

__all__ = ["PASSPHRASE", "Deployment", "PodRow", "deploy", "destroy", "stack_name"]

PASSPHRASE = "trainjobs-sandbox"
"""Encrypts the sandbox stacks' secrets; not a secret itself (see the module doc)."""
PROJECT_FILES = ("Pulumi.yaml", "__main__.py", "requirements.txt")
PROJECT_FOLDERS = ("examples",)
WAIT_PODS = 90.0
"""Seconds to wait for the operators' pods to appear and be placed after an up."""


class PulumiFailed(TrainjobsError):
    """A pulumi command failed; its output was shown as it ran."""


def stack_name(stack_file: Path) -> str:
    """``demo`` for ``stacks/Pulumi.demo.yaml``."""
    name = stack_file.name
    if not (name.startswith("Pulumi.") and name.endswith((".yaml", ".yml"))) or name.count(".") < 2:
        raise TrainjobsError(
            f"{stack_file}: not a stack config file; fix: name one such as stacks/Pulumi.demo.yaml"
        )
    return name.split(".", 1)[1].rsplit(".", 1)[0]


def _project_of(stack_file: Path) -> Path:
    for folder in stack_file.resolve().parents:
        if (folder / "Pulumi.yaml").is_file():
            return folder
    raise TrainjobsError(
        f"{stack_file}: no Pulumi.yaml in its folder or above; fix: name a stack of a "
        "Pulumi project (a trainjobs clone's stacks/Pulumi.<stack>.yaml)"
    )


@dataclass
class Deployment:
    """The project copy, Pulumi's home and state, and the environment pulumi runs in."""

    sandbox: Sandbox
    source: Path
    """The project the stack belongs to."""

    def __post_init__(self) -> None:
        self.workdir = self.sandbox.root / "pulumi"
        self.project = self.workdir / "project"
        self.state = self.workdir / "state"
        self.home = self.workdir / "home"

    def prepare(self, progress: TextIO) -> None:
        """Copy the project (fresh each time: the user may have edited it) and find pulumi."""
        for folder in (self.state, self.home):
            folder.mkdir(parents=True, exist_ok=True)
        salts = self._salts()
        if self.project.exists():
            shutil.rmtree(self.project)
        self.project.mkdir(parents=True)
        for name in PROJECT_FILES:
            if (self.source / name).is_file():
                shutil.copy2(self.source / name, self.project / name)
        config_dir = self._config_dir(self.source)
        for name in (*PROJECT_FOLDERS, config_dir):
            if (self.source / name).is_dir():
                shutil.copytree(
                    self.source / name, self.project / name, ignore=shutil.ignore_patterns(".*")
                )
        self._restore_salts(salts)
        self._use_this_python()
        bins = binaries(PULUMI_BINARIES, progress=progress)
        dirs = sorted({str(p.parent) for p in bins.values()})
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PULUMI_", "KUBE"))}
        env.update(
            {
                # The venv's python first: the language host runs the `python3` on PATH.
                "PATH": os.pathsep.join([str(Path(sys.executable).parent), *dirs, env["PATH"]]),
                "PULUMI_PYTHON_CMD": sys.executable,
                "PYTHONPATH": str(self.source),
                "PULUMI_HOME": str(self.home),
                # No `.attrs` sidecars: a kill mid-write leaves one empty and the stack
                # unreadable (docs/shared-cluster.md, "When an update is interrupted").
                "PULUMI_BACKEND_URL": f"file://{self.state}?metadata=skip",
                "PULUMI_CONFIG_PASSPHRASE": PASSPHRASE,
                "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION": "true",
                "PULUMI_SKIP_UPDATE_CHECK": "true",
                "PULUMI_SKIP_CONFIRMATIONS": "true",
                "KUBECONFIG": str(self.sandbox.kubeconfig),
                "NO_COLOR": "1",
            }
        )
        self.env = env
        self._write_env_file(dirs)

    def _config_dir(self, project: Path) -> str:
        doc = yaml.safe_load((project / "Pulumi.yaml").read_text()) or {}
        return str(doc.get("stackConfigDir") or ".")

    def _salts(self) -> dict[str, str]:
        """Each stack copy's encryption salt (its state was encrypted with it)."""
        salts: dict[str, str] = {}
        if not self.project.exists():
            return salts
        folder = self.project / self._config_dir(self.project)
        for path in folder.glob("Pulumi.*.yaml"):
            doc = yaml.safe_load(path.read_text()) or {}
            if isinstance(doc, dict) and doc.get("encryptionsalt"):
                salts[path.name] = str(doc["encryptionsalt"])
        return salts

    def _restore_salts(self, salts: Mapping[str, str]) -> None:
        folder = self.project / self._config_dir(self.project)
        for name, salt in salts.items():
            path = folder / name
            if path.is_file():
                text = path.read_text()
                path.write_text(f"encryptionsalt: {salt}\n{text}")

    def _use_this_python(self) -> None:
        path = self.project / "Pulumi.yaml"
        doc = yaml.safe_load(path.read_text())
        runtime = doc.get("runtime")
        if isinstance(runtime, dict):
            runtime.setdefault("options", {})["virtualenv"] = sys.prefix
            path.write_text(yaml.safe_dump(doc, sort_keys=False))

    def _write_env_file(self, dirs: Sequence[str]) -> None:
        """``env.sh``: what to source to run pulumi and kubectl against the sandbox by hand."""
        state = self.sandbox.recorded()
        kubectl_dir = str(Path(state.binaries["kubectl"]).parent) if state else ""
        keep = (
            "PULUMI_HOME",
            "PULUMI_BACKEND_URL",
            "PULUMI_CONFIG_PASSPHRASE",
            "PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION",
            "PULUMI_SKIP_UPDATE_CHECK",
            "PULUMI_PYTHON_CMD",
            "PYTHONPATH",
            "KUBECONFIG",
        )
        lines = ["# source this file: pulumi and kubectl then talk to the sandbox"]
        lines += [f"export {k}={shlex.quote(self.env[k])}" for k in keep]
        path = os.pathsep.join([str(Path(sys.executable).parent), *dirs, kubectl_dir])
        lines.append(f'export PATH={shlex.quote(path)}:"$PATH"')
        (self.sandbox.root / "env.sh").write_text("\n".join(lines) + "\n")

    def pulumi(
        self, *args: str, stream: TextIO | None = None, ok: Sequence[int] = (0,)
    ) -> subprocess.CompletedProcess[str]:
        """Run ``pulumi ARGS`` in the project copy; its output goes to ``stream`` as it runs
        (or is captured). :class:`PulumiFailed` unless it exits with ``ok``."""
        argv = ["pulumi", *args, "--non-interactive", "--color=never"]
        if stream is not None:
            proc = subprocess.run(
                argv, cwd=self.project, env=self.env, stdout=stream, stderr=stream, text=True
            )
            result = subprocess.CompletedProcess(argv, proc.returncode, "", "")
        else:
            result = subprocess.run(
                argv, cwd=self.project, env=self.env, capture_output=True, text=True
            )
        if result.returncode not in ok:
            detail = "" if stream is not None else f":\n{result.stderr or result.stdout}"
            raise PulumiFailed(f"pulumi {' '.join(args)} exited {result.returncode}{detail}")
        return result

    def ensure_stack(self, name: str) -> None:
        listed = self.pulumi("stack", "ls", "--json").stdout
        if name not in {s.get("name") for s in json.loads(listed or "[]")}:
            self.pulumi("stack", "init", name, "--secrets-provider=passphrase")

    def resources(self, name: str) -> list[dict[str, Any]]:
        """The Kubernetes objects of the stack's state (``pulumi stack export``)."""
        exported = json.loads(self.pulumi("stack", "export", "--stack", name).stdout)
        found = exported.get("deployment", {}).get("resources") or []
        return [r for r in found if str(r.get("type", "")).startswith("kubernetes:")]


READ_ONLY = "read (shared)"
"""The MADE BY of an object the stack reads but does not own (``sharedNamespaces``)."""


@dataclass(frozen=True)
class PodRow:
    """One row of the table: an object the stack made, or a pod in its namespaces."""

    kind: str
    namespace: str
    name: str
    node: str = ""
    phase: str = ""
    made_by: str = "the stack"


def _running(sandbox: Sandbox) -> None:
    if sandbox.status().state != "running":
        raise NotRunning(
            f"no sandbox runs in {sandbox.folder}; fix: `trainjobs sandbox up` (or `make demo`)"
        )


def deploy(stack_file: Path, *, out: TextIO, progress: TextIO) -> int:
    """``pulumi up`` the stack onto the sandbox, then print every object it made and, for
    each pod in its namespaces, its node and phase. The exit code: 0 when done."""
    sandbox = Sandbox()
    _running(sandbox)
    name = stack_name(stack_file)
    run = Deployment(sandbox, _project_of(stack_file))
    run.prepare(progress)
    run.ensure_stack(name)
    began = time.monotonic()
    print(f"pulumi up --stack {name} (project copy: {run.project})", file=progress, flush=True)
    run.pulumi("up", "--yes", "--skip-preview", "--stack", name, stream=progress)
    print(f"pulumi up done in {time.monotonic() - began:.1f}s", file=progress, flush=True)
    objects = [_object_row(r) for r in run.resources(name)]
    namespaces = sorted({r.namespace for r in objects if r.namespace} | _namespaces(objects))
    pods = _settled_pods(sandbox, namespaces, WAIT_PODS)
    print(_table(objects, pods), file=out)
    _how_to_look_further(sandbox, name, stack_file, out)
    return 0


def destroy(stack_file: Path, *, progress: TextIO) -> int:
    """``pulumi destroy`` the stack from the sandbox (nothing to do when none runs)."""
    sandbox = Sandbox()
    name = stack_name(stack_file)
    if sandbox.status().state != "running":
        print(f"no sandbox runs here: nothing of {name} to destroy", file=progress)
        return 0
    run = Deployment(sandbox, _project_of(stack_file))
    if not run.state.exists():
        print(f"stack {name} was never deployed to this sandbox", file=progress)
        return 0
    run.prepare(progress)
    listed = json.loads(run.pulumi("stack", "ls", "--json").stdout or "[]")
    if name not in {s.get("name") for s in listed}:
        print(f"stack {name} was never deployed to this sandbox", file=progress)
        return 0
    run.pulumi("destroy", "--yes", "--skip-preview", "--stack", name, stream=progress)
    run.pulumi("stack", "rm", name, "--yes", "--force")
    return 0


def _object_row(resource: Mapping[str, Any]) -> PodRow:
    outputs = resource.get("outputs") or {}
    meta = outputs.get("metadata") or {}
    kind = outputs.get("kind") or str(resource["type"]).rsplit(":", 1)[-1]
    # A shared namespace is read into the state, never made or deleted by the stack.
    made_by = READ_ONLY if resource.get("external") else "the stack"
    return PodRow(kind, meta.get("namespace") or "", meta.get("name") or "", made_by=made_by)


def _namespaces(objects: Sequence[PodRow]) -> set[str]:
    return {o.name for o in objects if o.kind == "Namespace"}


def _pods(sandbox: Sandbox, namespaces: Sequence[str]) -> list[dict[str, Any]]:
    api = sandbox.api()
    pods: list[dict[str, Any]] = []
    for namespace in namespaces:
        pods += api.items(f"/api/v1/namespaces/{namespace}/pods")
    return pods


def _settled(pod: Mapping[str, Any]) -> bool:
    """Placed and past Pending, or refused by the scheduler (its condition says why)."""
    status = pod.get("status") or {}
    if status.get("phase") not in (None, "Pending"):
        return True
    return any(
        c.get("type") == "PodScheduled" and c.get("reason") == "Unschedulable"
        for c in status.get("conditions") or []
    )


def _settled_pods(
    sandbox: Sandbox, namespaces: Sequence[str], timeout: float
) -> list[dict[str, Any]]:
    """The pods once every one is settled and their number held for two looks (the
    operators make theirs after the up); what there is when ``timeout`` runs out."""
    deadline = time.monotonic() + timeout
    last = -1
    pods = _pods(sandbox, namespaces)
    while time.monotonic() < deadline:
        if pods and len(pods) == last and all(_settled(p) for p in pods):
            break
        last = len(pods)
        time.sleep(1)
        pods = _pods(sandbox, namespaces)
    return pods


def pod_row(pod: Mapping[str, Any]) -> PodRow:
    meta = pod.get("metadata") or {}
    owners = meta.get("ownerReferences") or []
    made_by = f"{owners[0]['kind']} {owners[0]['name']}" if owners else "the stack"
    status = pod.get("status") or {}
    return PodRow(
        "Pod",
        meta.get("namespace", ""),
        meta.get("name", ""),
        (pod.get("spec") or {}).get("nodeName") or "-",
        status.get("phase") or "Pending",
        made_by,
    )


def _table(objects: Sequence[PodRow], pods: Sequence[Mapping[str, Any]]) -> str:
    from trainjobs.output import format_table

    pod_rows = {(p.namespace, p.name): p for p in map(pod_row, pods)}
    rows = [("KIND", "NAMESPACE", "NAME", "NODE", "PHASE", "MADE BY")]
    for obj in objects:
        if obj.kind == "Pod" and (obj.namespace, obj.name) in pod_rows:
            continue  # listed with its node and phase below
        rows.append((obj.kind, obj.namespace or "-", obj.name, "", "", obj.made_by))
    for pod in sorted(pod_rows.values(), key=lambda p: (p.namespace, p.name)):
        rows.append((pod.kind, pod.namespace, pod.name, pod.node, pod.phase, pod.made_by))
    return format_table(rows)


def _relative(path: Path) -> str:
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)


def _how_to_look_further(sandbox: Sandbox, stack: str, stack_file: Path, out: TextIO) -> None:
    shown = _relative(sandbox.root / "env.sh")
    print(
        "\nlook further:\n"
        f"  source {shown}            # kubectl and pulumi now talk to the sandbox\n"
        "  kubectl get pods -A -o wide\n"
        f"  pulumi -C {_relative(sandbox.root / 'pulumi' / 'project')} stack --stack {stack}\n"
        f"  trainjobs preview --live --kubeconfig {_relative(sandbox.kubeconfig)} {stack_file}\n"
        f"tear down: trainjobs sandbox destroy {stack_file} && trainjobs sandbox down"
        " (make demo-down does both for the demo)",
        file=out,
    )
