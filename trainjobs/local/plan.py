"""A job's ``pods`` expansion → the processes ``trainjobs run-local`` starts. Pure.

Each replica becomes one process: its container's command and args, run in
this machine's environment plus the container's env (the kubelet's ``$(VAR)``
expansion and fieldRefs applied), with the replica's loopback address standing
in for every name that reaches it (see ``hosts``). Mounted ConfigMaps and
Secrets become files under a scratch folder, and their mount paths are
rewritten to that folder wherever they appear. Bad input — a container with no
command, a reference to an object the job does not render — comes back as
findings with the user's field paths.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trainjobs.errors import Finding, Severity, SpecError
from trainjobs.frameworks.base import Manifest
from trainjobs.frameworks.lifecycle import Lifecycle, Replica
from trainjobs.k8s.generated import Generated
from trainjobs.local import rsh
from trainjobs.local.environment import Machine, PodContext, container_env, object_values
from trainjobs.local.expansion import expand, lookup_in
from trainjobs.local.hosts import HostMap, build_host_map
from trainjobs.render import RenderedJob

__all__ = [
    "RUNNER_ENV",
    "FileSpec",
    "LocalPlan",
    "ProcessSpec",
    "build_plan",
    "rewrite_paths",
]

RUNNER_ENV: Mapping[str, str] = {
    # gloo (torch.distributed, JAX's CPU collectives) binds the address of the
    # interface named here; unset, it resolves this machine's hostname, which
    # may not resolve at all. Every replica is on the loopback interface.
    "GLOO_SOCKET_IFNAME": "lo",
    # Open MPI leaves the loopback interface out of its TCP transports by
    # default; here every "host" of the hostfile is a loopback address.
    "OMPI_MCA_btl_tcp_if_include": "lo",
    "OMPI_MCA_oob_tcp_if_include": "lo",
    # Output goes through a pipe, where Python would otherwise buffer it and
    # the logs would arrive in lumps at exit.
    "PYTHONUNBUFFERED": "1",
}
"""What the runner sets in every replica beyond the rendered env (the container's
own env wins). Also: ``PATH`` starts with the folder of the Python running
trainjobs, so ``python`` in a command is the interpreter the frameworks are
installed in."""


@dataclass(frozen=True)
class FileSpec:
    """A file to write before the processes start (a mounted ConfigMap or Secret key)."""

    path: Path
    content: bytes
    mode: int = 0o644


@dataclass(frozen=True)
class ProcessSpec:
    """One replica's process.

    Attributes:
        replica: the replica it runs.
        address: its loopback address.
        container: the container whose command it runs.
        image: that container's image (reported, never pulled).
        argv: command and args, expanded and rewritten.
        env: the container's env (added to this machine's environment).
        cwd: the working directory.
        ports: (container port, local port) of each declared container port.
        grace_seconds: how long it gets between SIGTERM and SIGKILL.
        skipped: names of containers and init containers not run.
    """

    replica: Replica
    address: str
    container: str
    image: str
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    ports: tuple[tuple[int, int], ...] = ()
    grace_seconds: float = 5.0
    skipped: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        """The log prefix and status-table name: the replica's pod name."""
        return self.replica.workload

    @property
    def command_line(self) -> str:
        return shlex.join(self.argv)


@dataclass(frozen=True)
class LocalPlan:
    """Everything ``run-local`` starts for one job.

    Attributes:
        title: ``TFJob kubeflow/mnist``.
        processes: one per replica, in expansion order.
        files: files to write first.
        hosts: the name → address map every value went through.
        lifecycle: restart and success rules from the framework.
        scratch: the folder the files go to.
        notes: things the user should know (skipped containers, volumes …).
    """

    title: str
    processes: tuple[ProcessSpec, ...]
    files: tuple[FileSpec, ...]
    hosts: HostMap
    lifecycle: Lifecycle
    scratch: Path
    notes: tuple[str, ...] = field(default=())


def rewrite_paths(text: str, mounts: Sequence[tuple[str, str]]) -> str:
    """``text`` with each mount path (as a whole path or a prefix) replaced by its folder."""
    for mount_path, local in sorted(mounts, key=lambda m: len(m[0]), reverse=True):
        target = mount_path.rstrip("/") or "/"
        pattern = re.compile(r"(?<![\w./\-])" + re.escape(target) + r"(?=/|$|[^\w.\-])")
        text = pattern.sub(local.replace("\\", "\\\\"), text)
    return text


def _pod_spec(manifest: Manifest) -> dict[str, Any]:
    if manifest.get("kind") == "Pod":
        return dict(manifest.get("spec") or {})
    return dict(((manifest.get("spec") or {}).get("template") or {}).get("spec") or {})


def _pod_meta(manifest: Manifest) -> Mapping[str, Any]:
    if manifest.get("kind") == "Pod":
        return manifest.get("metadata") or {}
    return ((manifest.get("spec") or {}).get("template") or {}).get("metadata") or {}


def _finding(code: str, path: str, message: str, hint: str, value: Any = None) -> Finding:
    extra = {} if value is None else {"value": value}
    return Finding(code=code, path=path, message=message, hint=hint, **extra)


class _Volumes:
    """The files of one replica's volumes and where each volume lives locally."""

    def __init__(
        self,
        spec: Mapping[str, Any],
        folder: Path,
        objects: Mapping[tuple[str, str], Manifest],
        hosts: HostMap,
        generate: Callable[[Generated], str],
        path: str,
    ) -> None:
        self._generate = generate
        self.folders: dict[str, Path] = {}
        self.files: list[FileSpec] = []
        self.findings: list[Finding] = []
        self.notes: list[str] = []
        for i, volume in enumerate(spec.get("volumes") or []):
            name = str(volume.get("name", ""))
            local = folder / "volumes" / name
            self.folders[name] = local
            where = f"{path}.volumes[{i}]"
            if "configMap" in volume:
                self._keys("ConfigMap", volume["configMap"], "name", local, objects, hosts, where)
            elif "secret" in volume:
                self._keys("Secret", volume["secret"], "secretName", local, objects, None, where)
            elif "hostPath" in volume:
                self.folders[name] = Path(str(volume["hostPath"].get("path", "/")))
            elif "emptyDir" not in volume:
                kind = next((k for k in volume if k != "name"), "?")
                self.notes.append(f"volume {name!r} ({kind}) is an empty folder here: {local}")

    def _keys(
        self,
        kind: str,
        source: Mapping[str, Any],
        name_key: str,
        local: Path,
        objects: Mapping[tuple[str, str], Manifest],
        hosts: HostMap | None,
        where: str,
    ) -> None:
        name = str(source.get(name_key, ""))
        manifest = objects.get((kind, name))
        if manifest is None:
            if not source.get("optional"):
                self.findings.append(
                    _finding(
                        "local.volume",
                        f"{where}.{kind[0].lower() + kind[1:]}",
                        f"the {kind} {name!r} is not part of the job, so run-local cannot mount it",
                        f"render the {kind} with the job, or mark the volume optional",
                        name,
                    )
                )
            return
        values = object_values(manifest, self._generate)
        mode = _mode(source.get("defaultMode"), 0o644)
        items = source.get("items")
        chosen = (
            [
                (str(i["key"]), str(i.get("path", i["key"])), _mode(i.get("mode"), mode))
                for i in items
            ]
            if items
            else [(key, key, mode) for key in values]
        )
        for key, rel, file_mode in chosen:
            if key not in values:
                if not source.get("optional"):
                    self.findings.append(
                        _finding(
                            "local.volume",
                            f"{where}.items",
                            f"the {kind} {name!r} has no key {key!r}",
                            "fix the key",
                            key,
                        )
                    )
                continue
            content = values[key]
            if hosts is not None:  # a hostfile names replicas; a Secret never does
                content = hosts.rewrite(content.decode(errors="replace")).encode()
            self.files.append(FileSpec(local / rel, content, file_mode))


def _mode(value: Any, default: int) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _mounts(container: Mapping[str, Any], volumes: _Volumes) -> list[tuple[str, str]]:
    mounts: list[tuple[str, str]] = []
    for mount in container.get("volumeMounts") or []:
        folder = volumes.folders.get(str(mount.get("name", "")))
        if folder is None:
            continue
        sub = str(mount.get("subPath") or "")
        mounts.append((str(mount.get("mountPath", "")), str(folder / sub if sub else folder)))
    return mounts


def _pick_container(spec: Mapping[str, Any], replica: Replica) -> tuple[int, Mapping[str, Any]]:
    containers = [c for c in spec.get("containers") or [] if isinstance(c, Mapping)]
    for i, container in enumerate(containers):
        if replica.container and container.get("name") == replica.container:
            return i, container
    return 0, containers[0] if containers else {}


def _with_remote_shell(
    processes: list[ProcessSpec], folder: Path, python: str
) -> tuple[list[ProcessSpec], list[FileSpec]]:
    """Point every replica's MPI at run-local's ssh agent; describe each remote-shell host."""
    agent = folder / "agent"
    files = [FileSpec(agent, rsh.agent_script(python, folder).encode(), 0o755)]
    names = {name for p in processes for name in p.env}
    for process in processes:
        if process.replica.remote_shell:
            unset = names - set(process.env)
            content = rsh.host_file(process.name, process.cwd, process.env, sorted(unset))
            files.append(FileSpec(folder / f"{process.address}.json", content, 0o600))
    # The agent wins over the container's own setting: there is no ssh (or kubectl) here.
    env = rsh.agent_env(str(agent))
    return [replace(p, env={**p.env, **env}) for p in processes], files


def build_plan(
    rendered: RenderedJob,
    *,
    scratch: Path,
    base_dir: Path,
    machine: Machine,
    generate: Callable[[Generated], str],
    others: Sequence[Manifest] = (),
    python: str = "python",
) -> LocalPlan:
    """The processes, files and host map for one rendered job (``pods`` target).

    ``scratch`` is where mounted files will go; ``base_dir`` the working
    directory of containers that set none (the job file's folder); ``machine``
    what fieldRefs report as the node; ``generate`` the value of each generated
    secret; ``others`` the stack's other objects (a backend's Secret) that env
    and volumes may refer to; ``python`` the interpreter that runs run-local's own
    helpers (the ssh stand-in). Raises SpecError with every finding.
    """
    entry = rendered.entry
    framework = entry.framework
    job = rendered.job
    lifecycle = framework.lifecycle(job)
    if lifecycle is None:
        raise SpecError.from_findings(
            [
                Finding(
                    code="local.unsupported",
                    path=entry.path,
                    message=(
                        f"the {framework.name} framework does not describe its replicas "
                        "(Framework.lifecycle), so run-local cannot run it"
                    ),
                    value=f"{job.api_version} {job.kind}",
                    hint="run it on a cluster, or add lifecycle() to the framework plugin",
                    source=entry.source,
                )
            ]
        )
    manifests = [o.manifest for o in rendered.objects]
    hosts = build_host_map(
        manifests,
        lifecycle.replicas,
        job.namespace,
        distinct_ports=framework.listens_on_all_addresses,
    )
    objects = {
        (str(m.get("kind")), str((m.get("metadata") or {}).get("name"))): m
        for m in [*others, *manifests]
        if (m.get("metadata") or {}).get("namespace", job.namespace) == job.namespace
    }
    template_paths = {ref.role: ref.path for ref in framework.pod_templates(job)}
    processes: list[ProcessSpec] = []
    files: list[FileSpec] = []
    findings: list[Finding] = []
    notes: list[str] = []
    for replica in lifecycle.replicas:
        manifest = objects.get(("Pod", replica.workload)) or objects.get(("Job", replica.workload))
        template = f"{entry.path}.{template_paths.get(replica.role, 'spec')}.spec"
        if manifest is None:
            findings.append(
                _finding(
                    "local.workload",
                    template,
                    f"the pods target rendered no Pod or Job named {replica.workload!r}",
                    "this is a bug in the framework plugin; please report it",
                )
            )
            continue
        spec, meta = _pod_spec(manifest), _pod_meta(manifest)
        address = hosts.addresses[replica.workload]
        volumes = _Volumes(spec, scratch / replica.workload, objects, hosts, generate, template)
        files += volumes.files
        findings += volumes.findings
        notes += [f"{replica.workload}: {n}" for n in volumes.notes]
        index, container = _pick_container(spec, replica)
        where = f"{template}.containers[{index}]"
        mounts = _mounts(container, volumes)

        def literal(text: str, mounts: list[tuple[str, str]] = mounts) -> str:
            return rewrite_paths(hosts.rewrite(text), mounts)

        pod = PodContext(
            name=replica.workload,
            namespace=job.namespace,
            address=address,
            labels=meta.get("labels") or {},
            annotations=meta.get("annotations") or {},
            service_account=str(spec.get("serviceAccountName") or "default"),
            objects=objects,
            machine=machine,
            generate=generate,
        )
        env, problems = container_env(container, pod, literal, where)
        findings += problems
        command = [str(c) for c in container.get("command") or []]
        args = [str(a) for a in container.get("args") or []]
        if not command and not replica.remote_shell:
            findings.append(
                _finding(
                    "local.command",
                    f"{where}.command",
                    "the container sets no command; run-local runs commands on this "
                    "machine and cannot read the image's entrypoint",
                    "set command (and args) in the pod template, e.g. command: [python, train.py]",
                    container.get("name"),
                )
            )
            continue
        argv = tuple(expand(literal(part), lookup_in(env)) for part in command + args)
        if replica.remote_shell:  # no sshd here: run-local stands in for it
            argv = (python, "-m", "trainjobs.local.agent", "serve", replica.workload)
        working = container.get("workingDir")
        cwd = Path(literal(str(working))) if working else base_dir
        if not cwd.is_absolute():
            cwd = base_dir / cwd
        skipped = tuple(
            str(c.get("name"))
            for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
            if c is not container
        )
        ports = tuple(
            (int(p["containerPort"]), hosts.port(replica.workload, int(p["containerPort"])))
            for p in container.get("ports") or []
            if isinstance(p.get("containerPort"), int)
        )
        grace = spec.get("terminationGracePeriodSeconds")
        processes.append(
            ProcessSpec(
                replica=replica,
                address=address,
                container=str(container.get("name", "")),
                image=str(container.get("image", "")),
                argv=argv,
                env=env,
                cwd=cwd,
                ports=ports,
                grace_seconds=min(float(grace), 5.0) if isinstance(grace, int) else 5.0,
                skipped=skipped,
            )
        )
    errors = [f.located(entry.source) for f in findings if f.severity is Severity.ERROR]
    if errors:
        raise SpecError.from_findings(errors)
    if any(p.replica.remote_shell for p in processes):
        processes, extra = _with_remote_shell(processes, scratch / "rsh", python)
        files += extra
        notes.append("ssh to the workers is played by run-local's agent (trainjobs.local.agent)")
    return LocalPlan(
        title=f"{job.kind} {job.namespace}/{job.name}",
        processes=tuple(processes),
        files=tuple(files),
        hosts=hosts,
        lifecycle=lifecycle,
        scratch=scratch,
        notes=tuple(notes),
    )
