"""The rule set inside every render: errors fail, warnings print, ignores silence."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.paths import example_job_files, stack_files
from trainjobs.check import run
from trainjobs.check.rules import RULES, ignored_by
from trainjobs.errors import Severity, SpecError
from trainjobs.render import IGNORE_ANNOTATION, with_ignored
from trainjobs.spec import load_path, parse_documents, parse_stack

RESOURCES = {"requests": {"cpu": "8", "memory": "32Gi"}, "limits": {"nvidia.com/gpu": 8}}


def _rdma_job(**options: Any) -> dict[str, Any]:
    container = {
        "name": "pytorch",
        "image": "ghcr.io/example/llm:3.1",
        "resources": RESOURCES,
        "securityContext": {"capabilities": {"add": ["IPC_LOCK"]}},
    }
    doc: dict[str, Any] = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "PyTorchJob",
        "metadata": {"name": "llm", "namespace": "training"},
        "spec": {
            "runPolicy": {"ttlSecondsAfterFinished": 600},
            "pytorchReplicaSpecs": {
                "Worker": {
                    "replicas": 4,
                    "template": {"spec": {"hostNetwork": True, "containers": [container]}},
                }
            },
        },
    }
    if options:
        doc["trainjobs"] = options
    return doc


def test_an_rdma_job_is_named_as_needing_the_privileged_level() -> None:
    with pytest.raises(SpecError) as caught:
        run(parse_documents([_rdma_job()], source="llm.yaml"), target="pods")
    assert [f.render() for f in caught.value.findings] == [
        "error: llm.yaml: jobs[0].spec.pytorchReplicaSpecs.Worker.template.spec.hostNetwork: "
        "hostNetwork: true shares the node's network (NCCL over RoCE/InfiniBand without an "
        "RDMA-aware network plugin does this); job training/llm needs the privileged Pod "
        "Security level (got true); fix: remove it; if the job needs it, run the job in a "
        "namespace labelled pod-security.kubernetes.io/enforce=privileged and add "
        "`trainjobs: {ignore: [pss.baseline.host_namespaces]}`",
        "error: llm.yaml: jobs[0].spec.pytorchReplicaSpecs.Worker.template.spec.containers[0]"
        ".securityContext.capabilities.add[0]: container 'pytorch' adds capability IPC_LOCK "
        "(pins memory for RDMA (InfiniBand, RoCE, GPUDirect)), beyond the baseline set; job "
        "training/llm needs the privileged Pod Security level (got 'IPC_LOCK'); fix: remove "
        "it; if the job needs it, run the job in a namespace labelled "
        "pod-security.kubernetes.io/enforce=privileged and add "
        "`trainjobs: {ignore: [pss.baseline.capabilities]}`",
    ]


@pytest.mark.parametrize("target", ["operator", "pods"])
def test_ignoring_per_job_silences_and_annotates_every_object(target: str) -> None:
    ignore = ["pss.baseline.capabilities", "pss.baseline.host_namespaces"]
    rendering = run(parse_documents([_rdma_job(ignore=ignore)]), target=target)  # type: ignore[arg-type]
    assert rendering.findings == ()
    for manifest in rendering.manifests:
        assert manifest["metadata"]["annotations"][IGNORE_ANNOTATION] == ",".join(ignore)
        assert ignored_by(manifest) == ignore


def test_ignoring_a_group_per_stack() -> None:
    config = {"trainjobs:jobs": [_rdma_job()], "trainjobs:ignore": ["pss.baseline"]}
    rendering = run(parse_stack(config), target="pods")
    assert rendering.findings == ()
    assert all("annotations" not in m["metadata"] for m in rendering.manifests)


def test_unknown_ignore_codes_are_errors_with_a_suggestion() -> None:
    config = {
        "trainjobs:jobs": [_rdma_job(ignore=["pss.baseline", "image.unpined"])],
        "trainjobs:ignore": ["nothing"],
    }
    with pytest.raises(SpecError) as caught:
        run(parse_stack(config, source="Pulumi.x.yaml"))
    assert [f.render() for f in caught.value.findings] == [
        "error: Pulumi.x.yaml: jobs[0].trainjobs.ignore[1]: no check rule has this code "
        "(got 'image.unpined'); fix: did you mean image.unpinned?",
        "error: Pulumi.x.yaml: trainjobs:ignore[0]: no check rule has this code (got "
        "'nothing'); fix: `trainjobs check --list-rules` lists them",
    ]


def test_the_profile_comes_from_the_stack_or_the_caller() -> None:
    job = _rdma_job(ignore=["pss.baseline"])
    restricted = parse_stack({"trainjobs:jobs": [job], "trainjobs:podSecurity": "restricted"})
    with pytest.raises(SpecError) as caught:
        run(restricted)
    assert {f.code for f in caught.value.findings} == {
        "pss.restricted.privilege_escalation",
        "pss.restricted.run_as_non_root",
        "pss.restricted.seccomp",
        "pss.restricted.capabilities",
    }
    assert run(restricted, profile="baseline").findings == ()


def test_warnings_and_advice_come_back_with_the_rendering() -> None:
    job = _rdma_job(ignore=["pss.baseline"])
    del job["spec"]["runPolicy"]
    job["spec"]["pytorchReplicaSpecs"]["Worker"]["restartPolicy"] = "Always"
    rendering = run(parse_documents([job]))
    assert [(f.severity, f.code, f.path) for f in rendering.findings] == [
        (
            Severity.WARNING,
            "restart.always",
            "jobs[0].spec.pytorchReplicaSpecs.Worker.restartPolicy",
        ),
        (Severity.ADVICE, "ttl.unset", "jobs[0].spec.runPolicy.ttlSecondsAfterFinished"),
    ]


def test_a_bad_pod_security_level_in_the_stack() -> None:
    with pytest.raises(SpecError) as caught:
        parse_stack({"trainjobs:podSecurity": "strict", "trainjobs:ignore": "all"}, source="s.yaml")
    assert [f.render() for f in caught.value.findings] == [
        "error: s.yaml: trainjobs:podSecurity: unknown Pod Security Standards level (got "
        "'strict'); fix: use one of baseline, restricted",
        "error: s.yaml: trainjobs:ignore: ignore must be a list of check rule codes (got 'all'); "
        "fix: e.g. ignore: [image.unpinned]; `trainjobs check --list-rules` lists the codes",
    ]


def _static_pool_stack(**config: Any) -> dict[str, Any]:
    pool = {
        "apiVersion": "trainjobs.dev/v1alpha1",
        "kind": "GpuNodePool",
        "metadata": {"name": "t4"},
        "spec": {
            "provider": "static",
            "gpu": "t4",
            "gpusPerNode": 4,
            "cpu": 46,
            "memory": "180Gi",
            "maxNodes": 2,
            "labels": {"gpu-pool": "t4"},
        },
    }
    return {"trainjobs:nodePools": [pool], **config}


@pytest.mark.parametrize("profile", ["baseline", "restricted"])
def test_a_platform_kind_exempts_its_object_through_the_ignore_annotation(profile: str) -> None:
    rendering = run(parse_stack(_static_pool_stack()), profile=profile)  # type: ignore[arg-type]
    (plugin,) = rendering.manifests
    assert ignored_by(plugin) == [
        "pss.baseline.host_path",
        "pss.restricted.run_as_non_root",
        "pss.restricted.volume_types",
    ]
    assert rendering.findings == ()


def test_a_platform_exemption_silences_only_its_rules() -> None:
    config = _static_pool_stack()
    config["trainjobs:nodePools"][0]["spec"]["static"] = {"devicePluginImage": "nvidia/plugin"}
    rendering = run(parse_stack(config, source="Pulumi.x.yaml"), profile="restricted")
    assert [f.render() for f in rendering.findings] == [
        "warning: Pulumi.x.yaml: nodePools[0] → DaemonSet kube-system/nvidia-device-plugin-t4: "
        "spec.template.spec.containers[0].image: image of container 'nvidia-device-plugin-ctr' "
        "has no tag, so the node pulls :latest: what it runs changes when the tag moves, and "
        "replicas pulled at different times run different code (got 'nvidia/plugin'); fix: pin "
        "a version tag (repo/trainer:1.4.2) or a digest (repo/trainer@sha256:…) (rule "
        "image.unpinned; silence it for the stack with `trainjobs:ignore: [image.unpinned]`)"
    ]
    # The way the hint names works: a node pool takes no `trainjobs:` options (the hint
    # named those, which the loader refuses beside a platform resource).
    config["trainjobs:ignore"] = ["image.unpinned"]
    silenced = run(parse_stack(config, source="Pulumi.x.yaml"), profile="restricted")
    assert silenced.findings == ()


def test_exemptions_and_a_jobs_ignore_share_the_annotation() -> None:
    manifest = {"kind": "Pod", "metadata": {"annotations": {IGNORE_ANNOTATION: "ttl.unset"}}}
    merged = with_ignored(manifest, ["pss.baseline.host_path", "ttl.unset"])
    assert merged["metadata"]["annotations"] == {
        IGNORE_ANNOTATION: "pss.baseline.host_path,ttl.unset"
    }
    assert with_ignored(manifest, []) is manifest


def test_every_exemption_of_every_platform_object_names_a_rule_and_a_reason() -> None:
    exemptions = 0
    for path in [*stack_files(), *example_job_files()]:
        stack = load_path(path)
        resources = [entry.resource for entry in stack.platform]
        for entry in stack.platform:
            for manifest in entry.plugin.manifests_in(entry.resource, resources):
                for exemption in entry.plugin.check_exemptions(entry.resource, manifest):
                    assert RULES.get(exemption.code) is not None, (path.name, exemption)
                    assert exemption.reason, (path.name, exemption)
                    exemptions += 1
    assert exemptions > 0
