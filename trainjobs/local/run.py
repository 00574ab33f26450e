"""``trainjobs run-local``: load a job, render its ``pods`` expansion, check that it can run
here, and supervise its replicas as local processes.

Bad input — no such job, a container without a command, a command that is not
installed, a port or address that cannot be bound — raises SpecError before
anything starts (the CLI prints every finding and exits 2).
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import socket
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TextIO

from trainjobs import limits
from trainjobs.check import run
from trainjobs.errors import Finding, Rule, SpecError, TrainjobsError
from trainjobs.k8s.generated import Generated
from trainjobs.local.environment import Machine
from trainjobs.local.plan import RUNNER_ENV, Backend, FileSpec, LocalPlan, build_plan
from trainjobs.local.supervisor import Outcome, Supervisor
from trainjobs.local.ui import Console
from trainjobs.output import printable
from trainjobs.platform.registry import PLATFORM
from trainjobs.render import RenderedJob, Rendering, base_plan
from trainjobs.spec import load_path
from trainjobs.spec.entry import JobEntry
from trainjobs.spec.stack import StackSpec

__all__ = ["backends_of", "local_environ", "preflight", "run_local", "select_job", "write_files"]


def select_job(stack: StackSpec, name: str | None) -> JobEntry:
    """The job called ``name``, or the only job; a finding names the choices otherwise."""
    names = [e.job.name for e in stack.jobs]
    chosen = [e for e in stack.jobs if name is None or e.job.name == name]
    if len(chosen) == 1:
        return chosen[0]
    if name is None:
        message, hint = "the input has several jobs", "choose one with --job NAME"
    else:
        message, hint = f"the input has no job named {name!r}", "choose one with --job NAME"
    raise SpecError.from_findings(
        [
            Finding(
                code="local.job",
                path="",
                message=message,
                value=names,
                hint=f"{hint} (one of: {', '.join(names) or 'none'})",
                source=stack.source,
            )
        ]
    )


class _Generated:
    """One random value per generated placeholder for this run, the same wherever it appears."""

    def __init__(self) -> None:
        self._values: dict[tuple[str, str], str] = {}

    def __call__(self, generated: Generated) -> str:
        key = (generated.kind, generated.group)
        if key not in self._values:
            # Key pairs are placeholders only: run-local replaces ssh, nothing reads them.
            self._values[key] = secrets.token_hex(16)
        return self._values[key]


def local_environ(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """This machine's environment plus the runner's additions (see ``plan.RUNNER_ENV``)."""
    env = dict(os.environ if environ is None else environ)
    env.update(RUNNER_ENV)
    python_dir = str(Path(sys.executable).parent)
    path = env.get("PATH", "")
    if python_dir not in path.split(os.pathsep):
        env["PATH"] = os.pathsep.join(p for p in (python_dir, path) if p)
    return env


def backends_of(rendering: Rendering, rendered: RenderedJob) -> list[Backend]:
    """The Deployments of the backends ``rendered`` depends on (a RedisBackend's server)."""
    needed = set(rendered.depends_on)
    found: list[Backend] = []
    for unit in rendering.units:
        if unit.ref not in needed or unit.ref.category != "backend":
            continue
        kind = PLATFORM.by_kind(unit.kind)
        for obj in unit.objects:
            if obj.manifest.get("kind") == "Deployment":
                found.append(
                    Backend(
                        workload=str(obj.manifest["metadata"]["name"]),
                        kind=unit.kind,
                        entrypoint=kind.local_entrypoint if kind else (),
                        origin=unit.origin,
                        source=unit.source,
                    )
                )
    return found


def _bind_problem(address: str, port: int) -> str | None:
    """Why ``address:port`` cannot be listened on, or None when it can."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As servers do: lingering connections that allow reuse do not block the port.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((address, port))
            return None
        except OSError as exc:
            if exc.errno != errno.EADDRINUSE:
                return exc.strerror or str(exc)
    target = "127.0.0.1" if address == "0.0.0.0" else address
    try:
        socket.create_connection((target, port), timeout=1).close()
    except OSError:
        # Nobody answers: closed connections of an earlier run still hold the port.
        return (
            "closed connections of an earlier run still hold it (TIME_WAIT, up to a "
            "minute); wait, or change the port"
        )
    return "another process is listening on it"


NO_WORKING_DIR = Rule(
    "local.working_dir",
    "the working directory does not exist on this machine",
    hint="create it, or drop workingDir so the job file's folder is used",
)
NO_COMMAND = Rule(
    "local.command",
    "the command is not installed on this machine",
    hint="install it (see the example's README), or fix the command",
)
PORT_TAKEN = Rule(
    "local.port",
    "cannot listen on {address}:{port}: {problem}",
    hint="stop what uses the port, or change the containerPort",
)


def preflight(plan: LocalPlan, environ: Mapping[str, str], all_addresses: bool) -> list[Finding]:
    """What would stop the processes from starting: working directories, commands, ports."""
    findings: list[Finding] = []
    for process in plan.processes:
        where = f"{process.name} (container {process.container!r})"
        if not process.cwd.is_dir():
            findings.append(NO_WORKING_DIR.at(f"{where}: workingDir", str(process.cwd)))
            continue
        program = process.argv[0]
        path = {**environ, **process.env}.get("PATH", "")
        found = (
            (process.cwd / program).exists()
            if "/" in program
            else shutil.which(program, path=path) is not None
        )
        if not found:
            findings.append(NO_COMMAND.at(f"{where}: command", program))
        for port, local in process.ports:
            address = "0.0.0.0" if all_addresses else process.address
            problem = _bind_problem(address, local)
            if problem:
                findings.append(
                    PORT_TAKEN.at(
                        f"{where}: containerPort {port}",
                        local,
                        address=address,
                        port=local,
                        problem=problem,
                    )
                )
    return findings


def write_files(files: Sequence[FileSpec], scratch: Path, folders: Sequence[Path] = ()) -> None:
    """Make the volume ``folders``, then write the mounted ConfigMap and Secret keys with
    their modes, all inside ``scratch``.

    The plan already refused paths that leave a volume; this is the last guard: a file
    whose folder resolves outside ``scratch``, or that is a symbolic link, is never written,
    and no folder is made outside it.
    """
    root = scratch.resolve()

    def outside(path: Path) -> TrainjobsError:
        return TrainjobsError(
            f"run-local would write {printable(str(path))} outside its scratch folder "
            f"{root}; nothing of the job ran"
        )

    for folder in folders:
        if not Path(os.path.normpath(folder.resolve())).is_relative_to(root):
            raise outside(folder)
        folder.mkdir(parents=True, exist_ok=True)
    for spec in files:
        # By name first (no folder is made outside), then as the file system resolves it.
        if not Path(os.path.normpath(spec.path.resolve().parent / spec.path.name)).is_relative_to(
            root
        ):
            raise outside(spec.path)
        spec.path.parent.mkdir(parents=True, exist_ok=True)
        if not spec.path.parent.resolve().is_relative_to(root):
            raise outside(spec.path)
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        handle = os.open(spec.path, flags, 0o600)
        with os.fdopen(handle, "wb") as out:
            out.write(spec.content)
        spec.path.chmod(spec.mode)


def run_local(
    path: str | Path,
    *,
    job: str | None = None,
    timeout: float | None = None,
    out: TextIO | None = None,
    err: TextIO | None = None,
    environ: Mapping[str, str] | None = None,
    restart_delay: float = 1.0,
) -> Outcome:
    """Run one job of ``path`` as local processes; the outcome's code is the exit code.

    Raises SpecError (every finding) when the job cannot run here.
    """
    out = sys.stdout if out is None else out
    err = sys.stderr if err is None else err
    stack = load_path(path)
    entry = select_job(stack, job)
    _refuse_too_many_replicas(entry)
    rendering = run(replace(stack, jobs=(entry,)), target="pods")
    rendered = rendering.jobs[0]
    base_dir = Path(entry.source).resolve().parent if entry.source else Path.cwd()
    env = local_environ(environ)
    scratch = Path(tempfile.mkdtemp(prefix=f"trainjobs-{entry.job.name}-"))
    try:
        plan = build_plan(
            rendered,
            scratch=scratch,
            base_dir=base_dir,
            machine=Machine(socket.gethostname(), os.cpu_count() or 1, _memory()),
            generate=_Generated(),
            others=rendering.manifests,
            backends=backends_of(rendering, rendered),
            python=sys.executable,
        )
        problems = preflight(plan, env, entry.framework.listens_on_all_addresses)
        if problems:
            raise SpecError.from_findings([f.located(entry.source) for f in problems])
        write_files(plan.files, scratch, plan.folders)
        console = Console(out, err, color=err.isatty())
        console.header(plan)
        outcome = Supervisor(plan, console, env, timeout=timeout, restart_delay=restart_delay).run()
        console.message(outcome.message)
        return outcome
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _refuse_too_many_replicas(entry: JobEntry) -> None:
    """Refuse, before expanding it, a job with more replicas than one machine runs."""
    count = base_plan(entry).plan.pods
    if count <= limits.LOCAL_REPLICAS.value():
        return
    raise SpecError.from_findings(
        [
            Finding(
                code="local.too_many_replicas",
                path=entry.path,
                message=f"the job has {count:,} replicas; {limits.LOCAL_REPLICAS.exceeded()}",
                hint="run a smaller copy of the job (fewer replicas) locally; if it is right, "
                f"raise the limit with {limits.LOCAL_REPLICAS.env}=N",
                source=entry.source,
            )
        ]
    )


def _memory() -> int:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError):
        return 1 << 30
