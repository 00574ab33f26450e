"""The ``trainjobs`` command line.

Every command calls the library (``spec`` → ``check.run``, ``preview``); none
re-implements logic. Exit codes: 0 success (``diff``/``preview``: no
changes), 1 ``diff``/``preview`` found changes, 2 bad input (one line per
finding, no traceback, nothing written), 3 an internal error (a bug: please
report it).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TextIO

from rich.console import Console
from rich.text import Text

from trainjobs import preview, terminal
from trainjobs.check import run
from trainjobs.check.k8s_schema import available_versions
from trainjobs.check.rules import RULES
from trainjobs.errors import Finding, Severity, SpecError, TrainjobsError
from trainjobs.frameworks.crds import GENERATED_DIR, crd_files
from trainjobs.frameworks.paddle_edl import TrainingJob
from trainjobs.frameworks.paddle_edl.inventory import ClusterObject, capacity_node, cluster_objects
from trainjobs.frameworks.paddle_edl.whatif import format_report, what_if
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.graph import stack_graph, to_dot, to_mermaid, to_svg
from trainjobs.k8s.redact import redact
from trainjobs.k8s.yamlio import dump_all, dump_one
from trainjobs.platform.edl_controller import DEFAULT_MAX_LOAD, EdlController
from trainjobs.render import RenderedObject, Rendering
from trainjobs.spec import load_path
from trainjobs.spec.entry import TARGETS, Target
from trainjobs.spec.load import read_documents
from trainjobs.spec.stack import DEFAULT_K8S_VERSION, PROFILES, Profile

__all__ = ["main"]

EXIT_OK = 0
EXIT_CHANGES = 1
EXIT_BAD_INPUT = 2
EXIT_INTERNAL = 3

EXIT_CODES = (
    "Exit codes: 0 success (diff/preview: no changes), 1 diff/preview: changes, "
    "2 bad input (every finding listed), 3 internal error."
)


def _progress_over(paths: Sequence[str], verb: str, quiet: bool) -> Iterator[str]:
    """``paths`` with a progress bar on stderr when there are several and it is a terminal."""
    return terminal.progress(
        paths,
        f"{verb} {len(paths)} stacks",
        terminal.console(sys.stderr),
        total=len(paths),
        enabled=len(paths) > 1 and not quiet,
    )


def _render_paths(
    paths: Sequence[str],
    target: Target | None,
    k8s_version: str | None,
    quiet: bool = True,
    profile: Profile | None = None,
) -> list[Rendering]:
    """Load and render every path; one SpecError with the findings of all of them."""
    renderings: list[Rendering] = []
    findings: list[Finding] = []
    for path in _progress_over(paths, "rendering", quiet):
        try:
            stack = load_path(path)
            renderings.append(run(stack, target=target, k8s_version=k8s_version, profile=profile))
        except SpecError as exc:
            findings.extend(exc.findings)
    if findings:
        raise SpecError.from_findings(findings)
    return renderings


_SEVERITY_STYLES = {Severity.ERROR: "red", Severity.WARNING: "yellow", Severity.ADVICE: "cyan"}


def _print_findings(findings: Sequence[Finding], out: TextIO) -> None:
    console = terminal.console(out)
    for finding in findings:
        console.print(Text(str(finding), style=_SEVERITY_STYLES.get(finding.severity, "")))


def _file_name(index: int, obj: RenderedObject) -> str:
    _, kind, namespace, name = obj.identity
    parts = [f"{index:04d}", kind.lower(), *([namespace] if namespace else []), name]
    return "-".join(parts) + ".yaml"


def write_directory(objects: Sequence[RenderedObject], directory: Path, show_secrets: bool) -> None:
    """Write one file per object into ``directory``, all or nothing.

    The files go to a fresh temporary folder beside ``directory`` first; only
    when every file is written is it swapped in, so a failure leaves the old
    folder exactly as it was. Nothing else beside it is touched: the temporary
    folders (``.<name>.*``) are gone when this returns, whatever happened.
    Raises TrainjobsError when the folder cannot be written.
    """
    directory = directory.resolve()
    if directory.exists() and not directory.is_dir():
        raise TrainjobsError(f"{directory} is not a directory; nothing was written")
    try:
        directory.parent.mkdir(parents=True, exist_ok=True)
        staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}.", dir=directory.parent))
    except OSError as exc:
        raise TrainjobsError(
            f"cannot write {directory}: {exc.strerror or exc}; nothing was written"
        ) from None
    old: Path | None = None
    swapped = False
    try:
        for index, obj in enumerate(objects):
            manifest = obj.manifest if show_secrets else redact(obj.manifest)
            (staging / _file_name(index, obj)).write_text(dump_one(manifest))
        if directory.exists():
            old = Path(tempfile.mkdtemp(prefix=f".{directory.name}.old.", dir=directory.parent))
            os.rename(directory, old / "previous")
        try:
            os.rename(staging, directory)
            swapped = True
        except BaseException:
            if old is not None:
                os.rename(old / "previous", directory)  # put the old folder back
            raise
    except OSError as exc:
        raise TrainjobsError(
            f"cannot write {directory}: {exc.strerror or exc}; nothing was written"
        ) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)
        # Never delete the previous folder unless the new one took its place.
        if old is not None and (swapped or not (old / "previous").exists()):
            shutil.rmtree(old, ignore_errors=True)


def _table(objects: Sequence[RenderedObject]) -> str:
    rows = [("KIND", "NAMESPACE", "NAME")] + [
        (kind, namespace or "-", name) for _, kind, namespace, name in (o.identity for o in objects)
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join(cell.ljust(widths[i]) for i, cell in enumerate(row)).rstrip() for row in rows
    )


def cmd_render(args: argparse.Namespace) -> int:
    renderings = _render_paths(args.paths, args.target, args.k8s_version, args.quiet, args.profile)
    objects = [obj for r in renderings for obj in r.objects]
    for rendering in renderings:
        _print_findings(rendering.findings, sys.stderr)
    if args.output:
        write_directory(objects, Path(args.output), args.show_secrets)
        if not args.quiet:
            print(_table(objects))
            print(f"\nwrote {len(objects)} objects to {args.output}/")
        return EXIT_OK
    manifests = [o.manifest if args.show_secrets else redact(o.manifest) for o in objects]
    sys.stdout.write(dump_all(manifests))
    return EXIT_OK


def _rules_list() -> str:
    rows = [("RULE", "SEVERITY", "PROFILE", "CHECKS")]
    rows += [(r.code, r.severity.value, r.level or "any", r.title) for r in RULES]
    widths = [max(len(row[i]) for row in rows) for i in range(3)]
    return "\n".join(
        "  ".join([*(c.ljust(widths[i]) for i, c in enumerate(row[:3])), row[3]]).rstrip()
        for row in rows
    )


def cmd_check(args: argparse.Namespace) -> int:
    if args.list_rules:
        print(_rules_list())
        print(
            "\nSilence a rule for one job with `trainjobs: {ignore: [CODE]}` beside it, or for a "
            "stack with `trainjobs:ignore: [CODE]`; a code may be a group such as pss.restricted."
        )
        return EXIT_OK
    if not args.paths:
        raise TrainjobsError("check needs a PATH (or --list-rules)")
    renderings = _render_paths(args.paths, args.target, args.k8s_version, args.quiet, args.profile)
    if args.quiet:
        return EXIT_OK
    warnings = [f for r in renderings for f in r.findings if f.severity is not Severity.ERROR]
    _print_findings(warnings, sys.stdout)
    objects = sum(len(r.objects) for r in renderings)
    jobs = sum(len(r.jobs) for r in renderings)
    terminal.console(sys.stdout).print(
        Text(
            f"ok: {jobs} job{'s' * (jobs != 1)}, {objects} object{'s' * (objects != 1)}, "
            f"0 errors, {len(warnings)} warning{'s' * (len(warnings) != 1)}",
            style="green",
        )
    )
    return EXIT_OK


_GRAPH_WRITERS = {".svg": to_svg, ".mmd": to_mermaid, ".md": to_mermaid, ".dot": to_dot}


def _graph_title(path: str) -> str:
    """``stack demo`` for ``stacks/Pulumi.demo.yaml``, else the file's name."""
    name = Path(path).name
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "Pulumi" and parts[2] in ("yaml", "yml"):
        return f"stack {parts[1]}"
    return name


def write_file(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` whole or not at all (a temporary file, then a rename)."""
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, staging = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(handle, "w") as out:
            out.write(text)
        os.replace(staging, path)
    except BaseException:
        Path(staging).unlink(missing_ok=True)
        raise


def cmd_graph(args: argparse.Namespace) -> int:
    writer = to_mermaid
    if args.output:
        suffix = Path(args.output).suffix.lower()
        if suffix not in _GRAPH_WRITERS:
            raise TrainjobsError(
                f"cannot tell the format of {args.output!r}: name it .svg (Graphviz), "
                ".mmd or .md (Mermaid) or .dot (Graphviz source)"
            )
        writer = _GRAPH_WRITERS[suffix]
    (rendering,) = _render_paths([args.path], args.target, args.k8s_version, profile=args.profile)
    _print_findings(rendering.findings, sys.stderr)
    text = writer(stack_graph(rendering, _graph_title(args.path)))
    if not args.output:
        sys.stdout.write(text)
        return EXIT_OK
    write_file(Path(args.output), text)
    units, objects = len(rendering.units), len(rendering.objects)
    print(f"wrote {args.output}: {units} unit{'s' * (units != 1)}, {objects} objects")
    return EXIT_OK


def _show_plans(plans: Sequence[tuple[preview.Plan, str | None]], args: argparse.Namespace) -> int:
    """Print plans as JSON or for people; the exit code says whether anything changes."""
    changed = any(plan.changed for plan, _ in plans)
    if args.json:
        sys.stdout.write(preview.plans_document(plans))
    elif not args.quiet:
        out: Console = terminal.console(sys.stdout)
        for index, (plan, stack) in enumerate(plans):
            if index:
                out.print()
            heading = f"{stack}: " if stack else ""
            heading += f"{plan.old_label} → {plan.new_label}"
            preview.print_plan(plan, out, heading=heading, diffs=not args.no_diff)
    return EXIT_CHANGES if changed else EXIT_OK


def cmd_diff(args: argparse.Namespace) -> int:
    if args.against is None:
        if len(args.paths) != 2:
            raise TrainjobsError(
                "diff takes two render outputs (OLD NEW), or stack files with --against REF"
            )
        return _show_plans([(preview.diff_outputs(args.paths[0], args.paths[1]), None)], args)
    plans: list[tuple[preview.Plan, str | None]] = []
    findings: list[Finding] = []
    for path in _progress_over(args.paths, "comparing", args.quiet):
        try:
            plan = preview.diff_against(
                Path(path), args.against, target=args.target, k8s_version=args.k8s_version
            )
            plans.append((plan, None))
        except SpecError as exc:
            findings.extend(exc.findings)
    if findings:
        raise SpecError.from_findings(findings)
    return _show_plans(plans, args)


def cmd_preview(args: argparse.Namespace) -> int:
    kubectl = (
        preview.Kubectl(kubeconfig=args.kubeconfig, context=args.context) if args.live else None
    )
    previews: list[preview.StackPreview] = []
    findings: list[Finding] = []
    for path in _progress_over(args.paths, "previewing", args.quiet):
        try:
            previews.append(
                preview.preview_stack(
                    Path(path),
                    target=args.target,
                    k8s_version=args.k8s_version,
                    state_dir=Path(args.state_dir) if args.state_dir else None,
                    kubectl=kubectl,
                )
            )
        except SpecError as exc:
            findings.extend(exc.findings)
    if findings:
        raise SpecError.from_findings(findings)
    code = _show_plans([(p.plan, p.store.stack) for p in previews], args)
    for stack_preview in previews:
        stack_preview.save()
    return code


def cmd_frameworks(args: argparse.Namespace) -> int:
    rows = [("FRAMEWORK", "KIND", "TARGETS", "OPERATOR", "NOTE")]
    for fw in REGISTRY:
        note = "legacy" if fw.legacy else ""
        rows.append(
            (
                fw.name,
                f"{fw.kind.api_version} {fw.kind.kind}",
                ",".join(fw.targets),
                fw.operator,
                note,
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for row in rows:
        print("  ".join(c.ljust(widths[i]) for i, c in enumerate(row)).rstrip())
    return EXIT_OK


def cmd_run_local(args: argparse.Namespace) -> int:
    # Imported here: the runner is not needed by the other commands.
    from trainjobs.local import run_local

    return run_local(args.path, job=args.job, timeout=args.timeout).code


def write_crds(directory: Path) -> list[str]:
    """Write every generated CRD under ``directory``; remove files in its ``generated/``
    folder that no framework generates any more. Returns the paths written."""
    files = crd_files()
    for relative, text in files.items():
        target = directory / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        staging = target.with_name(f".{target.name}.tmp")
        staging.write_text(text)
        os.replace(staging, target)
    owned = directory / GENERATED_DIR
    for path in sorted(owned.glob("*.yaml")) if owned.is_dir() else []:
        if str(path.relative_to(directory)) not in files:
            path.unlink()
    return list(files)


def cmd_crds(args: argparse.Namespace) -> int:
    if args.output is None:
        sys.stdout.write("".join(f"---\n{text}" for text in crd_files().values()))
        return EXIT_OK
    for relative in write_crds(Path(args.output)):
        print(f"wrote {Path(args.output) / relative}")
    return EXIT_OK


def _parallelism(texts: Sequence[str]) -> tuple[dict[str, int], list[Finding]]:
    counts: dict[str, int] = {}
    findings = []
    for text in texts:
        name, _, number = text.rpartition("=")
        if not name or not number.lstrip("-").isdigit():
            findings.append(
                Finding(
                    code="edl.parallelism",
                    path="--parallelism",
                    message="expected NAME=N (or NAMESPACE/NAME=N)",
                    value=text,
                    hint="e.g. --parallelism example=4",
                )
            )
            continue
        counts[name] = int(number)
    return counts, findings


def cmd_edl_scale(args: argparse.Namespace) -> int:
    findings: list[Finding] = []
    edl_jobs: list[TrainingJob] = []
    max_loads: list[float] = []
    for path in args.paths:
        try:
            stack = load_path(path)
            rendering = run(stack, k8s_version=args.k8s_version)
        except SpecError as exc:
            findings += exc.findings
            continue
        _print_findings(rendering.findings, sys.stderr)
        edl_jobs += [u.job for u in rendering.jobs if isinstance(u.job, TrainingJob)]
        controllers = [e.resource for e in stack.platform if isinstance(e.resource, EdlController)]
        max_loads += [c.spec.max_load_desired for c in controllers]
    if not edl_jobs and not findings:
        findings.append(
            Finding(
                code="edl.no_jobs",
                path="",
                message="no TrainingJob (paddlepaddle.org/v1) in the input",
                value=list(args.paths),
                hint="name a file holding EDL TrainingJobs",
            )
        )
    objects: list[ClusterObject] = []
    for path in args.cluster or []:
        try:
            objects += cluster_objects(read_documents(Path(path)), path)
        except SpecError as exc:
            findings += exc.findings
    for index, text in enumerate(args.capacity or []):
        node, problems = capacity_node(text, index)
        findings += problems
        if node is not None:
            objects.append(ClusterObject(node, f"--capacity[{index}]"))
    parallelism, problems = _parallelism(args.parallelism or [])
    findings += problems
    if findings:
        raise SpecError.from_findings(findings)
    max_load = args.max_load
    if max_load is None:
        max_load = max_loads[0] if max_loads else DEFAULT_MAX_LOAD
    result = what_if(edl_jobs, objects, max_load=max_load, parallelism=parallelism)
    sys.stdout.write(format_report(result))
    return EXIT_OK


_EDL_SCALE_HELP = """\
Cluster input: --cluster takes what `kubectl get nodes,pods,jobs -A -o yaml` prints
(a List, or separate documents; other kinds are ignored): Nodes give capacity
(status.allocatable), Pods that have not finished give requests and limits (init
containers too) and each job's trainer pods (label paddle-job=<name>), and a Job
<name>-trainer gives a job's current trainers. --capacity adds a node by hand:
cpu=8,memory=32Gi[,gpu=2][,name=n1]; repeat it for more nodes. Without any Pod the
jobs' own pods are simulated (trainers at their current count, each pod on the first
node by name with room, else Pending). Current trainers: --parallelism NAME=N, else
the trainer Job, else min-instance. GPUs count under nvidia.com/gpu and the legacy
alpha.kubernetes.io/nvidia-gpu. The decision is one round of the EDL controller's
autoscaler (see trainjobs/frameworks/paddle_edl/autoscaler.py for its rules).
"""


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trainjobs",
        description="Render, check and preview distributed training jobs on Kubernetes.",
        epilog=EXIT_CODES
        + " Colour only on a terminal; NO_COLOR=1 turns it off, FORCE_COLOR=1 on.",
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def quiet(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "-q", "--quiet", action="store_true", help="print only errors; the exit code tells"
        )

    def paths_and_checks(
        p: argparse.ArgumentParser,
        paths_help: str = "a stack config (stacks/Pulumi.<name>.yaml) or a YAML file of jobs",
        optional: bool = False,
    ) -> None:
        p.add_argument("paths", nargs="*" if optional else "+", metavar="PATH", help=paths_help)
        quiet(p)
        p.add_argument(
            "--target",
            choices=TARGETS,
            help="render every job to this target, overriding the jobs' own",
        )
        p.add_argument(
            "--k8s-version",
            metavar="X.Y",
            help=(
                f"Kubernetes version to check against (default: the stack's, else "
                f"{DEFAULT_K8S_VERSION}; bundled: {', '.join(available_versions())})"
            ),
        )

    def profile(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--profile",
            choices=PROFILES,
            help=(
                "Pod Security Standards level every pod is checked against (default: the "
                "stack's trainjobs:podSecurity, else baseline)"
            ),
        )

    render = sub.add_parser(
        "render",
        help="render jobs to Kubernetes manifests",
        description=(
            "Render jobs to manifests. Without -o: one multi-document YAML stream on stdout. "
            "With -o DIR: one file per object, written all or nothing, and a summary table."
        ),
    )
    paths_and_checks(render)
    profile(render)
    render.add_argument("-o", "--output", metavar="DIR", help="write one file per object here")
    render.add_argument(
        "--show-secrets", action="store_true", help="print Secret values instead of <redacted>"
    )
    render.set_defaults(func=cmd_render)

    check = sub.add_parser(
        "check",
        help="run every check; exit 0 when clean",
        description=(
            "Render and run every check: schemas, names, operator rules and the rule set "
            "(--list-rules). Errors exit 2; warnings and advice print and exit 0."
        ),
    )
    paths_and_checks(check, optional=True)
    profile(check)
    check.add_argument("--list-rules", action="store_true", help="list the check rules and exit")
    check.set_defaults(func=cmd_check)

    graph = sub.add_parser(
        "graph",
        help="draw a stack: its jobs, backends, node pools, queues, operators and dependencies",
        description=(
            "Draw a stack: one box per job, backend, node pool, queue, operator and namespace, "
            "with its objects (replicas of one role grouped), and an arrow from each to what "
            "needs it. Without -o: Mermaid text on stdout. -o FILE.svg draws SVG with "
            "Graphviz's dot; -o FILE.mmd writes Mermaid; -o FILE.dot the Graphviz source."
        ),
    )
    graph.add_argument("path", metavar="PATH", help="a stack config or a YAML file of jobs")
    graph.add_argument("-o", "--output", metavar="FILE", help="write here (.svg, .mmd, .dot)")
    graph.add_argument("--target", choices=TARGETS, help="render every job to this target")
    graph.add_argument("--k8s-version", metavar="X.Y", help="Kubernetes version to check against")
    profile(graph)
    graph.set_defaults(func=cmd_graph)

    local = sub.add_parser(
        "run-local",
        help="run a job's pods as processes on this machine",
        description=(
            "Run one job's pods-target expansion as local processes: the container's command "
            "with its env, each replica on its own loopback address (127.0.0.2, …), the job's "
            "restart and success rules. Images are not pulled. Exit codes: 0 the job "
            "succeeded, 1 it failed, 2 bad input, 124 timed out, 130 interrupted."
        ),
    )
    local.add_argument("path", metavar="PATH", help="a stack config or a YAML file of jobs")
    local.add_argument("--job", metavar="NAME", help="the job to run when PATH has several")
    local.add_argument(
        "--timeout",
        metavar="S",
        type=float,
        help="stop every replica after S seconds (exit 124); default: no limit",
    )
    local.set_defaults(func=cmd_run_local)

    def plan_output(p: argparse.ArgumentParser) -> None:
        p.add_argument(
            "--json",
            action="store_true",
            help="print the plan as JSON (schema: trainjobs/preview/plan.schema.json)",
        )
        p.add_argument(
            "--no-diff", action="store_true", help="leave out the YAML diff of each object"
        )

    diff = sub.add_parser(
        "diff",
        help="what would change between two renders, or a stack and its version at a git ref",
        description=(
            "trainjobs diff OLD NEW: compare two render outputs (directories written by "
            "`render -o`, YAML streams, or - for stdin). trainjobs diff --against REF PATH...: "
            "compare each stack or job file with the same file (and the files it references) "
            "at git REF. Per object: + create, ~ update, - delete, +- replace (by the Pulumi "
            "Kubernetes provider's rules), in words per job; Secret values never shown. "
            "--target and --k8s-version apply to the renders --against makes."
        ),
        epilog="Exit codes: 0 no changes, 1 changes, 2 bad input, 3 internal error.",
    )
    paths_and_checks(diff, "OLD NEW render outputs; with --against, stack or job files")
    diff.add_argument(
        "--against", metavar="REF", help="compare PATH with its version at this git ref"
    )
    plan_output(diff)
    diff.set_defaults(func=cmd_diff)

    preview_cmd = sub.add_parser(
        "preview",
        help="what would change since the last preview of a stack (or against the cluster)",
        description=(
            "Render each stack and compare it with the render the last preview of that stack "
            "stored (<project>/.trainjobs/<stack>/last.yaml, git-ignored), then store this "
            "one. With --live, compare with what the cluster holds instead, read with "
            "`kubectl get -o json` (never written to)."
        ),
        epilog="Exit codes: 0 no changes, 1 changes, 2 bad input, 3 internal error.",
    )
    paths_and_checks(preview_cmd)
    plan_output(preview_cmd)
    preview_cmd.add_argument(
        "--live", action="store_true", help="compare with the cluster (needs kubectl)"
    )
    preview_cmd.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig for --live")
    preview_cmd.add_argument("--context", metavar="NAME", help="kubeconfig context for --live")
    preview_cmd.add_argument(
        "--state-dir",
        metavar="DIR",
        help="keep last renders here instead of <project>/.trainjobs",
    )
    preview_cmd.set_defaults(func=cmd_preview)

    frameworks = sub.add_parser("frameworks", help="list the frameworks and their targets")
    frameworks.set_defaults(func=cmd_frameworks)

    crds = sub.add_parser(
        "crds",
        help="write the CRDs generated from the framework models",
        description=(
            "Generate a structural CRD for every framework whose upstream CRD had no schema. "
            "Without -o: one YAML stream on stdout. With -o DIR (normally crds/): each file at "
            f"DIR/<its crd_file>; stale files in DIR/{GENERATED_DIR}/ are removed."
        ),
    )
    crds.add_argument("-o", "--output", metavar="DIR", help="the crds/ folder to write into")
    crds.set_defaults(func=cmd_crds)

    edl = sub.add_parser(
        "edl-scale",
        help="show how the PaddlePaddle EDL autoscaler would scale TrainingJobs on a cluster",
        description="Run one round of the EDL autoscaler over the TrainingJobs in PATH and "
        "print each job's trainers now and the count EDL would set.",
        epilog=_EDL_SCALE_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    edl.add_argument("paths", nargs="+", metavar="PATH", help="files or stacks with TrainingJobs")
    edl.add_argument(
        "--cluster",
        "--nodes",
        action="append",
        metavar="FILE",
        help="YAML/JSON of the cluster's Nodes (and Pods, Jobs); repeatable",
    )
    edl.add_argument(
        "--capacity",
        action="append",
        metavar="SPEC",
        help="a node by hand: cpu=8,memory=32Gi[,gpu=2][,name=n1]; repeatable",
    )
    edl.add_argument(
        "--parallelism",
        action="append",
        metavar="NAME=N",
        help="a job's current trainer count (default: its trainer Job, else min-instance)",
    )
    edl.add_argument(
        "--max-load",
        type=float,
        metavar="F",
        help=f"-max_load_desired (default: the EdlController's in PATH, else {DEFAULT_MAX_LOAD})",
    )
    edl.add_argument("--k8s-version", metavar="X.Y", help="Kubernetes version to check against")
    edl.set_defaults(func=cmd_edl_scale)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = args.func
    try:
        return func(args)
    except SpecError as exc:
        _print_findings(exc.findings, sys.stderr)
        count = len(exc.errors)
        print(f"{count} error{'s' * (count != 1)}; nothing was written", file=sys.stderr)
        return EXIT_BAD_INPUT
    except TrainjobsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # a bug: say so in one line, traceback only on request
        if os.environ.get("TRAINJOBS_DEBUG"):
            raise
        print(
            f"internal error: {type(exc).__name__}: {exc} "
            "(set TRAINJOBS_DEBUG=1 for the traceback and please report it)",
            file=sys.stderr,
        )
        return EXIT_INTERNAL


if __name__ == "__main__":
    raise SystemExit(main())
