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

from trainjobs.errors import Finding, Rule, Severity, SpecError
from trainjobs.k8s.data import Manifest
from trainjobs.k8s.generated import Generated
from trainjobs.k8s.pods import each_container
from trainjobs.k8s.redact import secret_words
from trainjobs.local import rsh
from trainjobs.local.environment import Machine, PodContext, container_env
from trainjobs.local.expansion import expand, lookup_in
from trainjobs.local.hosts import HostMap, build_host_map, service_env
from trainjobs.local.indexed import indexed_pods
from trainjobs.local.volumes import FileSpec, Volumes, mounts_of
from trainjobs.plan import Replica, RunRules
from trainjobs.render import RenderedJob

__all__ = [
    "RUNNER_ENV",
    "Backend",
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

_NPROC = "PET_NPROC_PER_NODE"
"""torchrun's ``--nproc-per-node`` as Trainer's torch policy sets it (``auto`` with GPUs)."""


@dataclass(frozen=True)
class Backend:
    """A workload the job needs running first: the Deployment of a backend (Redis).

    Attributes:
        workload: the Deployment's name.
        kind: the backend's kind (``RedisBackend``), its role in the status table.
        entrypoint: the command its image runs when the container sets none.
        origin: its path in the input (``backends[0]``), prefix of findings.
        source: the file it came from.
    """

    workload: str
    kind: str
    entrypoint: tuple[str, ...] = ()
    origin: str = ""
    source: str = ""


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
        backend: True for a backend the job needs (started first, until ready).
        secrets: values that came from Secrets; run-local never prints them.
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
    backend: bool = False
    secrets: frozenset[str] = frozenset()

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
        processes: backends first, then one per replica, in expansion order.
        files: files to write first.
        hosts: the name → address map every value went through.
        lifecycle: restart and success rules from the framework.
        scratch: the folder the files go to.
        notes: things the user should know (volumes, the ssh stand-in …).
        folders: volume folders to make first (emptyDir, a shared claim …); default none.
    """

    title: str
    processes: tuple[ProcessSpec, ...]
    files: tuple[FileSpec, ...]
    hosts: HostMap
    lifecycle: RunRules
    scratch: Path
    notes: tuple[str, ...] = field(default=())
    folders: tuple[Path, ...] = field(default=())


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


def _pick_container(spec: Mapping[str, Any], replica: Replica) -> tuple[int, Mapping[str, Any]]:
    containers = [c for _, _, c in each_container(spec, ("containers",))]
    for i, container in enumerate(containers):
        if replica.container and container.get("name") == replica.container:
            return i, container
    return 0, containers[0] if containers else {}


NO_COMMAND = Rule(
    "local.command",
    "the container sets no command; run-local runs commands on this machine and cannot read "
    "the image's entrypoint",
    hint="set command (and args) in the pod template, e.g. command: [python, train.py]",
)
UNSUPPORTED = Rule(
    "local.unsupported",
    "the {framework} framework does not describe its replicas (Framework.run_rules), so "
    "run-local cannot run it",
    hint="run it on a cluster, or add run_rules() to the framework plugin",
)
NO_WORKLOAD = Rule(
    "local.workload",
    "the pods target rendered no Pod or Job named {workload!r}",
    hint="this is a bug in the framework plugin; please report it",
)


@dataclass
class _Builder:
    """Turns one workload (a replica's Pod or Job, a backend's Deployment) into a process."""

    hosts: HostMap
    objects: Mapping[tuple[str, str], Manifest]
    namespace: str
    scratch: Path
    base_dir: Path
    machine: Machine
    generate: Callable[[Generated], str]
    python: str
    services: Mapping[str, str] = field(default_factory=dict)
    dependents: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    files: list[FileSpec] = field(default_factory=list)
    folders: list[Path] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def build(
        self,
        replica: Replica,
        manifest: Manifest,
        template: str,
        source: str,
        entrypoint: tuple[str, ...] = (),
    ) -> ProcessSpec | None:
        """``template`` is the pod spec's path in the user's input, prefix of findings."""
        spec, meta = _pod_spec(manifest), _pod_meta(manifest)
        address = self.hosts.addresses[replica.workload]
        volumes = Volumes(
            spec, self.scratch / replica.workload, self.objects, self.hosts, self.generate, template
        )
        self.files += volumes.files
        self.folders += [f for f in volumes.made if f not in self.folders]
        self.findings += [f.located(source) for f in volumes.findings]
        self.notes += [f"{replica.workload}: {n}" for n in volumes.notes]
        index, container = _pick_container(spec, replica)
        where = f"{template}.containers[{index}]"
        mounts = mounts_of(container, volumes)

        def literal(text: str) -> str:
            return rewrite_paths(self.hosts.rewrite(text), mounts)

        pod = PodContext(
            name=replica.workload,
            namespace=self.namespace,
            address=address,
            labels=meta.get("labels") or {},
            annotations=meta.get("annotations") or {},
            service_account=str(spec.get("serviceAccountName") or "default"),
            objects=self.objects,
            machine=self.machine,
            generate=self.generate,
        )
        services = self.services if spec.get("enableServiceLinks", True) else {}
        env, problems = container_env(container, pod, literal, where, services)
        self.findings += [f.located(source) for f in problems]
        if "TMPDIR" not in env:
            # A pod has a /tmp of its own; here the replicas share one machine's, where
            # two MPI "hosts" race to make the same session folder (Open MPI's orted:
            # mkdir /tmp/ompi.<host>.<uid>/jf.<job>: File exists).
            tmp = self.scratch / replica.workload / "tmp"
            env = {**env, "TMPDIR": str(tmp)}
            self.folders.append(tmp)
        command = [str(c) for c in container.get("command") or entrypoint]
        args = [str(a) for a in container.get("args") or []]
        if not command and not replica.remote_shell:
            self.findings.append(self._no_command(replica, container, where, source))
            return None
        argv = tuple(expand(literal(part), lookup_in(env)) for part in command + args)
        if replica.remote_shell:  # no sshd here: run-local stands in for it
            argv = (self.python, "-m", "trainjobs.local.agent", "serve", replica.workload)
        working = container.get("workingDir")
        cwd = Path(literal(str(working))) if working else self.base_dir
        if not cwd.is_absolute():
            cwd = self.base_dir / cwd
        grace = spec.get("terminationGracePeriodSeconds")
        return ProcessSpec(
            replica=replica,
            address=address,
            container=str(container.get("name", "")),
            image=str(container.get("image", "")),
            argv=argv,
            env=env,
            cwd=cwd,
            ports=tuple(
                (port, self.hosts.port(replica.workload, port))
                for port in (p.get("containerPort") for p in container.get("ports") or [])
                if isinstance(port, int)
            ),
            grace_seconds=min(float(grace), 5.0) if isinstance(grace, int) else 5.0,
            skipped=tuple(
                str(c.get("name"))
                for c in [*(spec.get("initContainers") or []), *(spec.get("containers") or [])]
                if c is not container
            ),
            # A password given on the command line is hidden like one read from a Secret.
            secrets=frozenset(pod.secrets | set(secret_words(argv))),
        )

    def _no_command(
        self, replica: Replica, container: Mapping[str, Any], where: str, source: str
    ) -> Finding:
        found = NO_COMMAND.at(f"{where}.command", container.get("name")).located(source)
        waiting = self.dependents.get(replica.role)
        if not waiting:
            return found
        # A Trainer initializer: its image's own program does the work, and the trainer
        # must not start without it.
        return replace(
            found,
            message=f"{found.message} ({container.get('image')}); "
            f"{', '.join(repr(w) for w in waiting)} starts only once {replica.role!r} has "
            "completed (JobSet dependsOn), so run-local cannot run this job",
            hint=f"give the runtime's {replica.role} container a command that does its work "
            "on this machine (it gets the same env and volumes), or run the job on a cluster",
        )


def _with_remote_shell(
    processes: list[ProcessSpec], folder: Path, python: str
) -> tuple[list[ProcessSpec], list[FileSpec]]:
    """Point every replica's MPI at run-local's ssh agent; describe each remote-shell host."""
    agent = folder / "agent"
    files = [FileSpec(agent, rsh.agent_script(python, folder).encode(), 0o755)]
    names = {name for p in processes for name in p.env}
    # Every replica is a host the agent can reach: with runLauncherAsWorker the
    # launcher is in the hostfile too.
    for process in processes:
        unset = names - set(process.env)
        content = rsh.host_file(process.name, process.cwd, process.env, sorted(unset))
        files.append(FileSpec(folder / f"{process.address}.json", content, 0o600))
    # The agent wins over the container's own setting: there is no ssh (or kubectl) here.
    env = rsh.agent_env(str(agent))
    return [replace(p, env={**p.env, **env}) for p in processes], files


def _unsupported(rendered: RenderedJob) -> SpecError:
    entry, job = rendered.entry, rendered.job
    return SpecError.from_findings(
        [
            UNSUPPORTED.at(
                entry.path, f"{job.api_version} {job.kind}", framework=entry.framework.name
            ).located(entry.source)
        ]
    )


def build_plan(
    rendered: RenderedJob,
    *,
    scratch: Path,
    base_dir: Path,
    machine: Machine,
    generate: Callable[[Generated], str],
    others: Sequence[Manifest] = (),
    backends: Sequence[Backend] = (),
    python: str = "python",
) -> LocalPlan:
    """The processes, files and host map for one rendered job (``pods`` target).

    ``scratch`` is where mounted files will go; ``base_dir`` the working
    directory of containers that set none (the job file's folder); ``machine``
    what fieldRefs report as the node; ``generate`` the value of each generated
    secret; ``others`` the stack's other objects (a backend's Secret, Service and
    Deployment) that env, volumes and ``backends`` refer to; ``python`` the
    interpreter that runs run-local's own helpers (the ssh stand-in). Raises
    SpecError with every finding.
    """
    entry, plan = rendered.entry, rendered.plan
    lifecycle = entry.framework.run_rules(rendered.job)
    if lifecycle is None:
        raise _unsupported(rendered)
    in_namespace = [
        m
        for m in [*others, *(o.manifest for o in rendered.objects)]
        if (m.get("metadata") or {}).get("namespace", plan.namespace) == plan.namespace
    ]
    # An Indexed Job (JobSet's) runs several pods: each is a replica, named by its hostname.
    pods = list(indexed_pods(in_namespace))
    made_by = {
        str(p["metadata"]["name"]): str(p["metadata"]["name"]).rpartition("-")[0] for p in pods
    }
    in_namespace += pods
    objects = {
        (str(m.get("kind")), str((m.get("metadata") or {}).get("name"))): m for m in in_namespace
    }
    dependents: dict[str, tuple[str, ...]] = {}
    for replica in lifecycle.replicas:
        for role, _ in replica.depends_on:
            if replica.role not in dependents.get(role, ()):
                dependents[role] = (*dependents.get(role, ()), replica.role)
    served = [
        (Replica(b.kind, 0, b.workload, "Always"), b)
        for b in backends
        if ("Deployment", b.workload) in objects
    ]
    hosts = build_host_map(
        in_namespace,
        [*lifecycle.replicas, *(replica for replica, _ in served)],
        plan.namespace,
        distinct_ports=plan.listens_on_all_addresses,
    )
    builder = _Builder(
        hosts,
        objects,
        plan.namespace,
        scratch,
        base_dir,
        machine,
        generate,
        python,
        service_env(in_namespace, hosts, plan.namespace),
        dependents,
    )
    processes: list[ProcessSpec] = []
    for replica, backend in served:
        template = f"{backend.origin} → Deployment {backend.workload}: spec.template.spec"
        process = builder.build(
            replica,
            objects[("Deployment", backend.workload)],
            template,
            backend.source,
            backend.entrypoint,
        )
        if process is not None:
            processes.append(replace(process, backend=True))
    template_paths = {ref.role: ref.path for ref in plan.pod_sets}
    for replica in lifecycle.replicas:
        manifest = objects.get(("Pod", replica.workload)) or objects.get(("Job", replica.workload))
        template = f"{entry.path}.{template_paths.get(replica.role, 'spec')}.spec"
        if replica.workload in made_by:  # where checks locate a Job's fields
            template = (
                f"{entry.path} → Job {plan.namespace}/{made_by[replica.workload]}: "
                "spec.template.spec"
            )
        if manifest is None:
            builder.findings.append(
                NO_WORKLOAD.at(template, workload=replica.workload).located(entry.source)
            )
            continue
        process = builder.build(replica, manifest, template, entry.source)
        if process is not None:
            processes.append(process)
    errors = [f for f in builder.findings if f.severity is Severity.ERROR]
    if errors:
        raise SpecError.from_findings(errors)
    files, notes = builder.files, builder.notes
    if any(p.replica.remote_shell for p in processes):
        processes, extra = _with_remote_shell(processes, scratch / "rsh", python)
        files += extra
        notes.append("ssh to the workers is played by run-local's agent (trainjobs.local.agent)")
    auto = [p.name for p in processes if p.env.get(_NPROC) == "auto"]
    if auto:
        notes.append(
            f"{_NPROC}=auto ({', '.join(auto)}): torchrun starts one process per GPU, or per "
            f"CPU without one ({machine.cpus} here), where a cluster node has its own count"
        )
    return LocalPlan(
        title=f"{plan.kind.kind} {plan.namespace}/{plan.name}",
        processes=tuple(processes),
        files=tuple(files),
        hosts=hosts,
        lifecycle=lifecycle,
        scratch=scratch,
        notes=tuple(notes),
        folders=tuple(builder.folders),
    )
