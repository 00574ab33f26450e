"""The CrossGuard policy pack: its validators, called with what the components register,
reach the same verdicts as ``trainjobs check`` on the same stack."""

from __future__ import annotations

import runpy
from pathlib import Path
from typing import Any

import pulumi
import pulumi_policy as policy
import pytest
from pulumi_policy.proxy import unknown_checking_proxy

from tests.support.paths import ROOT, example_programs, stack_files
from tests.support.pulumi_harness import Registered, run_program
from tests.test_parity import _input_of, _program_cases, job_files_outside_programs
from trainjobs.check import run
from trainjobs.check.rules import RULES, RuleContext, ignored_by, object_violations, silenced
from trainjobs.components import program
from trainjobs.components.platform import register_objects
from trainjobs.components.policy import (
    ENFORCEMENT,
    POD_SET_TYPES,
    UNKNOWN,
    manifest_and_unknowns,
    manifest_from_args,
    policies,
    policy_name,
)
from trainjobs.components.register import logical_name
from trainjobs.errors import Severity
from trainjobs.k8s.yamlio import load_all
from trainjobs.platform.pools.static import DEVICE_PLUGIN_EXEMPTIONS
from trainjobs.render import Rendering, render
from trainjobs.spec import load_path, parse_stack
from trainjobs.spec.stack import Profile, StackSpec

Verdict = tuple[str, str, str]
"""(policy name, resource name, path in the object)."""


def _as_the_engine_sends(value: Any) -> Any:
    """Numbers as the engine sends them (floats), maps and lists behind its proxies."""
    if isinstance(value, dict):
        return {k: _as_the_engine_sends(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_the_engine_sends(v) for v in value]
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def _args(resource: Registered) -> policy.ResourceValidationArgs:
    timeouts = policy.PolicyCustomTimeouts(0, 0, 0)
    opts = policy.PolicyResourceOptions(False, [], None, [], timeouts, [], resource.parent)
    props = unknown_checking_proxy(_as_the_engine_sends(resource.inputs))
    urn = f"urn:pulumi:test::trainjobs::{resource.type}::{resource.name}"
    return policy.ResourceValidationArgs(resource.type, props, urn, resource.name, opts, None)


def _verdicts(
    resources: list[Registered], pack: list[policy.Policy]
) -> tuple[list[Verdict], list[str]]:
    """What the enabled policies report, as verdicts and as the messages they print."""
    verdicts: list[Verdict] = []
    messages: list[str] = []
    for resource in resources:
        if not resource.custom:
            continue
        args = _args(resource)
        for pol in pack:
            if pol.enforcement_level is policy.EnforcementLevel.DISABLED:
                continue
            assert isinstance(pol, policy.ResourceValidationPolicy)

            def report(
                message: str,
                urn: str | None = None,
                name: str = pol.name,
                resource_name: str = resource.name,
            ) -> None:
                path = message.split(": ", 2)[1]
                verdicts.append((name, resource_name, path))
                messages.append(message)

            pol.validate(args, report)
    return sorted(verdicts), messages


def _expected(rendering: Rendering, stack: StackSpec, profile: Profile) -> list[Verdict]:
    """What ``trainjobs check`` decides for each object of the same rendering."""
    ctx = RuleContext(profile=profile, k8s_version=stack.k8s_version)
    return sorted(
        (policy_name(rule.code), logical_name(obj.manifest), violation.path)
        for obj in rendering.objects
        for rule, violation in object_violations(obj.manifest, ctx)
        if not silenced(rule.code, stack.ignore)
    )


@pytest.mark.parametrize("path", stack_files(), ids=lambda p: p.stem)
def test_stack_programs_get_the_verdicts_of_check(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TRAINJOBS_STACK_DIR", str(path.parent))
    config = load_all(path.read_text())[0]["config"]
    resources = run_program(program, config, stack=path.stem.split(".", 1)[1])
    stack = load_path(path)
    rendering = run(stack)
    verdicts, _ = _verdicts(resources, policies(ignore=stack.ignore))
    assert verdicts == _expected(rendering, stack, "baseline")
    assert {v[0] for v in verdicts} == {
        policy_name(f.code) for f in rendering.findings if RULES.get(f.code)
    }


@pytest.mark.parametrize(
    ("folder", "target"), _program_cases(), ids=lambda v: v.name if isinstance(v, Path) else v
)
def test_example_programs_get_the_verdicts_of_check(folder: Path, target: str) -> None:
    project = f"trainjobs-example-{folder.name}"
    resources = run_program(
        lambda: runpy.run_path(str(folder / "__main__.py")),
        {f"{project}:target": target},
        project=project,
    )
    stack = load_path(_input_of(folder))
    rendering = run(stack, target=target)  # type: ignore[arg-type]
    verdicts, _ = _verdicts(resources, policies())
    assert verdicts == _expected(rendering, stack, "baseline")


def test_every_example_program_is_checked_by_the_pack() -> None:
    assert {f for f, _ in _program_cases()} == set(example_programs())


@pytest.mark.parametrize(
    ("path", "target"),
    job_files_outside_programs(),
    ids=lambda v: f"{v.parent.name}-{v.stem}" if isinstance(v, Path) else v,
)
def test_example_jobs_outside_programs_get_the_verdicts_of_check(path: Path, target: str) -> None:
    stack = load_path(path)
    rendering = run(stack, target=target)  # type: ignore[arg-type]
    verdicts, _ = _verdicts(_register_unchecked(rendering), policies())
    assert verdicts == _expected(rendering, stack, "baseline")


def test_the_run_local_examples_are_among_them() -> None:
    folders = {path.parent.name for path, _ in job_files_outside_programs()}
    assert {f.name for f in (ROOT / "examples").glob("local-*")} <= folders


def test_the_pack_honours_the_exemptions_of_a_platform_kind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path = ROOT / "stacks" / "Pulumi.gpu.yaml"
    monkeypatch.setenv("TRAINJOBS_STACK_DIR", str(path.parent))
    config = load_all(path.read_text())[0]["config"]
    resources = run_program(program, config, stack="gpu")
    stack = load_path(path)
    rendering = render(stack)
    verdicts, _ = _verdicts(resources, policies(profile="restricted"))
    assert verdicts == _expected(rendering, stack, "restricted")
    (plugin,) = [o.manifest for o in rendering.objects if o.manifest["kind"] == "DaemonSet"]
    exempt = {policy_name(e.code) for e in DEVICE_PLUGIN_EXEMPTIONS}
    assert [v for v in verdicts if v[1] == logical_name(plugin) and v[0] in exempt] == []
    # The pack reads the DaemonSet, and the exemptions travel in what Pulumi registers.
    (registered,) = [r for r in resources if r.name == logical_name(plugin) and r.custom]
    seen = manifest_from_args(registered.type, registered.inputs)
    assert seen is not None
    assert ignored_by(seen) == sorted(e.code for e in DEVICE_PLUGIN_EXEMPTIONS)


RESOURCES = {"requests": {"cpu": "2", "memory": "8Gi"}}

VIOLATING = {
    "trainjobs:namespaces": ["training"],
    "trainjobs:backends": [
        {
            "apiVersion": "trainjobs.dev/v1alpha1",
            "kind": "RedisBackend",
            "metadata": {"name": "rdzv", "namespace": "training"},
            # Its job runs on the host network, where no NetworkPolicy can admit it.
            "spec": {"image": "redis", "password": True, "networkPolicy": False},
        },
        {
            "apiVersion": "trainjobs.dev/v1alpha1",
            "kind": "NfsBackend",
            "metadata": {"name": "data", "namespace": "training"},
            "spec": {"server": "nfs.example.com", "path": "/exports/data"},
        },
    ],
    "trainjobs:jobs": [
        {
            "apiVersion": "kubeflow.org/v1",
            "kind": "PyTorchJob",
            "metadata": {"name": "llm", "namespace": "training"},
            "spec": {
                "pytorchReplicaSpecs": {
                    "Worker": {
                        "replicas": 2,
                        "restartPolicy": "Always",
                        "template": {
                            "spec": {
                                "hostNetwork": True,
                                "containers": [
                                    {
                                        "name": "pytorch",
                                        "image": "ghcr.io/example/llm:latest",
                                        "resources": {
                                            "requests": {"nvidia.com/gpu": 2},
                                            "limits": {"nvidia.com/gpu": 4},
                                        },
                                        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
                                    }
                                ],
                            }
                        },
                    }
                }
            },
            "trainjobs": {"backend": "rdzv", "ignore": ["pss.baseline.host_namespaces"]},
        },
        {
            "apiVersion": "kubeflow.org/v2beta1",
            "kind": "MPIJob",
            "metadata": {"name": "pi", "namespace": "training"},
            "spec": {
                "mpiReplicaSpecs": {
                    "Launcher": {
                        "replicas": 1,
                        "template": {
                            "spec": {
                                "containers": [
                                    {"name": "l", "image": "mpi:1", "resources": RESOURCES}
                                ]
                            }
                        },
                    },
                    "Worker": {
                        "replicas": 1,
                        "template": {"spec": {"containers": [{"name": "w", "image": "mpi:1"}]}},
                    },
                }
            },
            "trainjobs": {"backend": "data", "target": "pods"},
        },
    ],
}


def _register_unchecked(rendering: Rendering) -> list[Registered]:
    """What the components would register for a rendering that fails its checks."""

    def program_() -> None:
        for unit in rendering.units:
            name = str(unit.ref).replace(" ", ":")
            parent = pulumi.ComponentResource(f"test:index:{unit.kind}", name)
            register_objects(parent, unit.objects)

    return run_program(program_)


@pytest.mark.parametrize("profile", ["baseline", "restricted"])
def test_violations_the_components_would_register_get_the_verdicts_of_check(
    profile: Profile,
) -> None:
    stack = parse_stack(VIOLATING)
    rendering = render(stack, "operator")
    verdicts, _ = _verdicts(_register_unchecked(rendering), policies(profile=profile))
    expected = _expected(rendering, stack, profile)
    assert verdicts == expected
    codes = {v[0] for v in verdicts}
    assert {
        "image-unpinned",
        "gpu-limits",
        "resources-requests",
        "restart-always",
        "ttl-unset",
        "pss-baseline-capabilities",
    } <= codes
    # The job's own ignore travels in its objects' annotation.
    assert "pss-baseline-host-namespaces" not in codes
    assert ("pss-restricted-volume-types" in codes) is (profile == "restricted")


SILENCE = (
    "silence it for a job with `trainjobs: {ignore: [image.unpinned]}`, for any object with "
    "its annotation `trainjobs.dev/ignore-checks: image.unpinned`, or everywhere with "
    '`"image-unpinned": "disabled"` in the policy pack config'
)
"""The pack cannot tell a job's object (the TFJob) from a backend's (the Redis
Deployment, which takes no ``trainjobs:`` options): its hint names each way it honours."""


def test_a_violation_reads_like_a_finding() -> None:
    stack = parse_stack(VIOLATING)
    rendering = render(stack, "operator")
    pack = [p for p in policies() if p.name == "image-unpinned"]
    _, messages = _verdicts(_register_unchecked(rendering), pack)
    assert sorted(messages) == [
        "warning: spec.pytorchReplicaSpecs.Worker.template.spec.containers[0].image: image of "
        "container 'pytorch' is tagged :latest: what it runs changes when the tag moves, and "
        "replicas pulled at different times run different code (got "
        "'ghcr.io/example/llm:latest'); fix: pin a version tag (repo/trainer:1.4.2) or a "
        "digest (repo/trainer@sha256:…) (rule image.unpinned; " + SILENCE + ")",
        "warning: spec.template.spec.containers[0].image: image of container 'redis' has no "
        "tag, so the node pulls :latest: what it runs changes when the tag moves, and "
        "replicas pulled at different times run different code (got 'redis'); fix: pin a "
        "version tag (repo/trainer:1.4.2) or a digest (repo/trainer@sha256:…) (rule "
        "image.unpinned; " + SILENCE + ")",
    ]


def test_enforcement_follows_severity_and_ignore() -> None:
    pack = {p.name: p for p in policies(ignore=["image"])}
    assert len(pack) == len(RULES)
    for rule in RULES:
        level = pack[policy_name(rule.code)].enforcement_level
        if rule.code == "image.unpinned":
            assert level is policy.EnforcementLevel.DISABLED, rule.code
        else:
            # A rule of the restricted level is enabled; its profile config decides.
            assert level is ENFORCEMENT[rule.severity], rule.code
    assert ENFORCEMENT[Severity.ERROR] is policy.EnforcementLevel.MANDATORY


def _pod_args(config: dict[str, Any] | None, name: str = "p", namespace: str = "ml") -> Any:
    pod = {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"containers": [{"name": "c", "image": "c:1"}]},
    }
    timeouts = policy.PolicyCustomTimeouts(0, 0, 0)
    opts = policy.PolicyResourceOptions(False, [], None, [], timeouts, [], "")
    return policy.ResourceValidationArgs(
        "kubernetes:core/v1:Pod", unknown_checking_proxy(pod), "urn", name, opts, None, config
    )


def _reports(name: str, args: Any) -> list[str]:
    (pol,) = [p for p in policies() if p.name == name]
    assert isinstance(pol, policy.ResourceValidationPolicy)
    seen: list[str] = []

    def report(message: str, urn: str | None = None) -> None:
        seen.append(message)

    pol.validate(args, report)
    return seen


def test_every_policy_declares_its_config_schema() -> None:
    for pol in policies():
        schema = pol.config_schema
        assert schema is not None, pol.name
        assert sorted(schema.properties) == ["ignore", "k8sVersion", "profile"]
        assert schema.properties["profile"]["enum"] == ["baseline", "restricted"]


def test_the_profile_comes_from_the_policy_config() -> None:
    assert _reports("pss-restricted-run-as-non-root", _pod_args(None)) == []
    restricted = _reports("pss-restricted-run-as-non-root", _pod_args({"profile": "restricted"}))
    assert len(restricted) == 1 and "runAsNonRoot" in restricted[0]


def test_the_ignore_list_skips_objects() -> None:
    config = {"profile": "restricted", "ignore": ["ml/*"]}
    assert _reports("pss-restricted-run-as-non-root", _pod_args(config)) == []
    other = _pod_args(config, namespace="training")
    assert len(_reports("pss-restricted-run-as-non-root", other)) == 1


def test_restricted_json_sets_every_restricted_policy() -> None:
    import json

    config = json.loads((ROOT / "policy" / "restricted.json").read_text())
    restricted = sorted(policy_name(r.code) for r in RULES if r.level == "restricted")
    assert sorted(config) == restricted
    assert all(v == {"profile": "restricted"} for v in config.values())


def test_a_value_unknown_at_preview_is_not_reported() -> None:
    """A registry push's image is unknown during a preview: no advisory about it (the
    update checks it), but the rest of the pod is still checked."""
    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    pod = {
        "metadata": {"name": "p"},
        "spec": {"containers": [{"name": "c", "image": unknown}], "hostNetwork": True},
    }
    args = _pod_args(None)
    args.props = unknown_checking_proxy(pod)
    assert _reports("image-unpinned", args) == []
    assert len(_reports("pss-baseline-host-namespaces", args)) == 1


def test_manifest_from_args_reads_only_objects_with_pods() -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "c:1"}]}}
    assert manifest_from_args("kubernetes:core/v1:Pod", pod) == {
        **pod,
        "apiVersion": "v1",
        "kind": "Pod",
    }
    job = manifest_from_args("kubernetes:kubeflow.org/v1:TFJob", {"spec": {}})
    assert job is not None and job["apiVersion"] == "kubeflow.org/v1"
    assert manifest_from_args("pulumi-python:dynamic/trainjobs:GeneratedPassword", {}) is None
    assert manifest_from_args("trainjobs:index:TrainingJob", {}) is None
    # A Secret's generated value is unknown during a preview; it is never read.
    unknown = "04da6b54-80e4-46f7-96ec-b56ff0331ba9"
    secret = unknown_checking_proxy({"stringData": {"password": unknown}})
    assert manifest_from_args("kubernetes:core/v1:Secret", secret) is None
    # A Pod's unknown field is read as UNKNOWN, its path noted (no "can't run" advisory).
    manifest, unknowns = manifest_and_unknowns(
        "kubernetes:core/v1:Pod", unknown_checking_proxy({"spec": unknown})
    )
    assert manifest is not None and manifest["spec"] == UNKNOWN
    assert unknowns == ["spec"]


def test_the_pack_program_builds_the_pack_without_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    built: dict[str, Any] = {}

    def capture(name: str, policies: list[policy.Policy], **_: Any) -> None:
        built.update(name=name, policies=policies)

    monkeypatch.setattr(policy, "PolicyPack", capture)
    # The environment no longer configures the pack; its config file does.
    monkeypatch.setenv("TRAINJOBS_PROFILE", "restricted")
    runpy.run_path(str(ROOT / "policy" / "__main__.py"))
    assert built["name"] == "trainjobs"
    assert len(built["policies"]) == len(RULES)
    assert all(p.config_schema is not None for p in built["policies"])
    (pol,) = [p for p in built["policies"] if p.name == "pss-restricted-run-as-non-root"]
    assert pol.config_schema.properties["profile"]["default"] == "baseline"


def test_the_pack_installs_without_this_clone() -> None:
    """Published, the pack folder is all there is: no path outside it."""
    text = (ROOT / "policy" / "PulumiPolicy.yaml").read_text()
    assert "virtualenv: venv" in text
    lines = [
        line.strip()
        for line in (ROOT / "policy" / "requirements.txt").read_text().splitlines()
        if line.strip() and not line.startswith("#")
    ]
    assert lines == ["trainjobs[policy]>=0.1,<0.2", "pulumi-policy>=1.18,<2"]


@pytest.mark.parametrize("profile", ["baseline", "restricted"])
def test_a_pod_set_is_judged_object_by_object(profile: Profile) -> None:
    """The violating stack on the pods target, its jobs' Pods once in a pod set each: the
    pack reads each Pod inside the pod set and says what it says of the same Pods
    registered one by one, word for word."""

    stack = parse_stack(VIOLATING)
    rendering = render(stack, "pods")

    def on_pods(pod_set: bool) -> list[str]:
        def program_() -> None:
            for unit in rendering.units:
                name = str(unit.ref).replace(" ", ":")
                parent = pulumi.ComponentResource(f"test:index:{unit.kind}", name)
                is_job = any(o.manifest["kind"] == "Pod" for o in unit.objects)
                register_objects(
                    parent, unit.objects, pod_set=f"{name}:pods" if pod_set and is_job else ""
                )

        resources = run_program(program_)
        if pod_set:
            assert [r for r in resources if r.type in POD_SET_TYPES]
            assert not [r for r in resources if r.type == "kubernetes:core/v1:Pod"]
        return sorted(_verdicts(resources, policies(profile=profile))[1])

    one_by_one = on_pods(False)
    assert any("Pod training/llm-worker-0" in m for m in one_by_one)
    assert on_pods(True) == one_by_one
