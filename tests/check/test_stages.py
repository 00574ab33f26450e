"""Issue 16 item 2: every finding says which stage of a real cluster refuses it.

Each test pins one stage with a typical finding and cites the upstream code that makes
that stage the one (read, never copied):
  TO   = kubeflow/training-operator v1.9.4 (Go module github.com/kubeflow/training-operator)
  TO181 = kubeflow/training-operator v1.8.1 (MXJob)
  MPI  = kubeflow/mpi-operator v0.8.0
  K8S  = kubernetes v1.36 (pkg/apis/core/validation, staging/src/k8s.io/pod-security-admission)
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.paths import STACKS
from tests.support.v1jobs import document, replica
from trainjobs.check import run
from trainjobs.check.stages import attribute, stage_of
from trainjobs.cli import main
from trainjobs.errors import Finding, Severity, SpecError, Stage
from trainjobs.frameworks.mpi import FRAMEWORK as MPI
from trainjobs.frameworks.mpi_v1 import FRAMEWORK as MPI_V1
from trainjobs.frameworks.mxnet import FRAMEWORK as MX
from trainjobs.frameworks.pytorch import FRAMEWORK as PT
from trainjobs.frameworks.registry import REGISTRY
from trainjobs.frameworks.tensorflow import FRAMEWORK as TF
from trainjobs.k8s.yamlio import dump_all
from trainjobs.render import Rendering
from trainjobs.spec import load_path, parse_documents


def _refused(doc: dict[str, Any], target: str = "operator") -> list[Finding]:
    with pytest.raises(SpecError) as caught:
        run(parse_documents([doc]), target=target)  # type: ignore[arg-type]
    return list(caught.value.findings)


def _passed(doc: dict[str, Any], target: str = "operator") -> Rendering:
    return run(parse_documents([doc]), target=target)  # type: ignore[arg-type]


def _one(findings: list[Finding], code: str) -> Finding:
    (found,) = [f for f in findings if f.code == code]
    return found


def _mpi(launcher: int, name: str = "pi") -> dict[str, Any]:
    container = {"name": "mpi", "image": "mpi:1"}
    spec = {"replicas": launcher, "template": {"spec": {"containers": [container]}}}
    worker = {"replicas": 2, "template": {"spec": {"containers": [dict(container)]}}}
    return {
        "apiVersion": "kubeflow.org/v2beta1",
        "kind": "MPIJob",
        "metadata": {"name": name, "namespace": "ns"},
        "spec": {"mpiReplicaSpecs": {"Launcher": spec, "Worker": worker}},
    }


def test_a_webhook_rule_is_rejected_by_the_operators_webhook() -> None:
    # TO pkg/webhooks/pytorch/pytorchjob_webhook.go validatePyTorchReplicaSpecs: Master
    # replicas "must be 1"; the webhook is registered for PyTorchJob in
    # pkg/webhooks/webhooks.go SupportedSchemeWebhook, so `kubectl apply` fails.
    doc = document(PT, {"Master": replica("pytorch", 2), "Worker": replica("pytorch", 1)}, "pt")
    found = _one(_refused(doc), "pytorch.master_replicas")
    assert (found.stage, found.stage_by) == (Stage.WEBHOOK, "Training Operator v1.9.4")
    assert found.rejected_by == "rejected by the Training Operator v1.9.4 validating webhook"


def test_a_webhook_warning_is_seen_not_rejected() -> None:
    # TO pytorchjob_webhook.go validateSpec: elasticPolicy.nProcPerNode alone is returned
    # as an admission warning (kubectl prints "Warning: …" and creates the job).
    elastic = {"minReplicas": 1, "maxReplicas": 2, "nProcPerNode": 2}
    doc = document(
        PT,
        {"Master": replica("pytorch", 1), "Worker": replica("pytorch", 1)},
        "pt",
        elasticPolicy=elastic,
    )
    found = _one(list(_passed(doc).findings), "pytorch.nproc_deprecated")
    assert found.severity is Severity.WARNING
    assert found.rejected_by == "seen by the Training Operator v1.9.4 validating webhook"


@pytest.mark.parametrize(
    ("doc", "stage", "by"),
    [
        # TO pkg/webhooks/tensorflow/tfjob_webhook.go validateTFJob: NameIsDNS1035Label.
        (document(TF, {"Worker": replica("tensorflow", 1)}, "Bad_Name"), Stage.WEBHOOK, ""),
        # MPI pkg/apis/kubeflow/validation/validation.go validateMPIJobName, run by
        # pkg/controller/mpi_job_controller.go syncHandler: the MPI Operator has no
        # webhook, the job is stored and gets a ValidationError event.
        (_mpi(1, "Bad_Name"), Stage.CONTROLLER, "MPI Operator v0.8"),
        # TO181 pkg/controller.v1/mxnet/mxjob_controller.go Reconcile calls
        # ValidateV1MXJob (NameIsDNS1035Label); the v1.8.1 MXJob webhook only warns.
        (
            document(MX, {"Worker": replica("mxnet", 1)}, "Bad_Name", jobMode="MXTrain"),
            Stage.CONTROLLER,
            "Training Operator v1.8.1",
        ),
    ],
    ids=["tfjob", "mpijob-v2beta1", "mxjob"],
)
def test_one_rule_is_a_webhooks_or_a_controllers_by_the_kind(
    doc: dict[str, Any], stage: Stage, by: str
) -> None:
    found = _one(_refused(doc), "name.dns1035")
    assert found.stage is stage
    assert found.stage_by == (by or "Training Operator v1.9.4")


def test_a_controller_rule_says_the_job_is_created_then_fails() -> None:
    # TO pkg/webhooks/webhooks.go: MPIJob v1 gets `scaffold` (no webhook);
    # pkg/controller.v1/mpi/mpijob_controller.go Reconcile runs ValidateV1MpiJobSpec
    # (pkg/apis/kubeflow.org/v1/mpi_validation.go: "There must be only 1 launcher").
    container = {"name": "mpi", "image": "mpi:1"}
    launcher = {"replicas": 2, "template": {"spec": {"containers": [container]}}}
    doc = {
        "apiVersion": "kubeflow.org/v1",
        "kind": "MPIJob",
        "metadata": {"name": "pi", "namespace": "ns"},
        "spec": {"mpiReplicaSpecs": {"Launcher": launcher}},
    }
    found = _one(_refused(doc), "mpi.launcher_replicas")
    assert (found.stage, found.stage_by) == (Stage.CONTROLLER, MPI_V1.operator)
    assert found.rejected_by == (
        "the Training Operator v1.9.4 controller fails the job (no webhook checks this)"
    )
    mpi = _one(_refused(_mpi(2)), "mpi.launcher_replicas")
    assert (mpi.stage, mpi.stage_by) == (Stage.CONTROLLER, MPI.operator)


@pytest.mark.parametrize(
    ("target", "stage", "by"),
    [
        # Every Training Operator CRD embeds the full PodTemplateSpec schema
        # (TO manifests/base/crds/kubeflow.org_tfjobs.yaml); kubectl's strict field
        # validation refuses the unknown field at apply.
        ("operator", Stage.CRD_SCHEMA, "openAPIV3Schema"),
        # On the pods target the template becomes a Pod: the API server's schema.
        ("pods", Stage.API_SERVER, "OpenAPI schema of Pod"),
    ],
)
def test_a_pod_template_schema_problem_is_the_crds_or_the_pods(
    target: str, stage: Stage, by: str
) -> None:
    worker = replica("tensorflow", 1)
    worker["template"]["spec"]["containers"][0]["comand"] = ["python"]
    found = _one(_refused(document(TF, {"Worker": worker}, "tf"), target), "schema.pod_template")
    assert (found.stage, found.stage_by) == (stage, by)


def test_a_crd_enum_is_the_crd_schemas_and_a_missing_enum_the_controllers(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # MPI manifests/base/kubeflow.org_mpijobs.yaml: mpiImplementation has an enum. The
    # Training Operator CRDs have none: restartPolicy Sometimes is stored, the operator
    # copies it into the pods (TO pkg/core/pod.go SetRestartPolicy) and the API server
    # refuses them, so the job fails after it was created.
    mpi = _mpi(1)
    mpi["spec"]["mpiImplementation"] = "LAM"
    worker = replica("tensorflow", 1, restartPolicy="Sometimes")
    tf = document(TF, {"Worker": worker}, "tf")
    path = tmp_path / "jobs.yaml"
    path.write_text(dump_all([mpi, tf]))
    assert main(["check", str(path)]) == 2
    lines = capsys.readouterr().err.splitlines()
    (implementation,) = [line for line in lines if "mpiImplementation" in line]
    assert implementation.endswith("[rejected by the CRD schema (openAPIV3Schema)]")
    (restart,) = [line for line in lines if "restartPolicy" in line]
    assert restart.endswith(
        "[the Training Operator v1.9.4 controller fails the job (no webhook checks this)]"
    )


@pytest.mark.parametrize(
    ("target", "by"),
    [
        # K8S pkg/apis/core/validation/validation.go validateContainerPorts: 1-65535.
        ("pods", "Pod validation"),
        # The TFJob is stored (its CRD has no port bounds); the API server refuses the
        # pods the operator creates from it (TO pkg/controller.v1/control/pod_control.go).
        ("operator", "Pod validation, when the operator creates the pods"),
    ],
)
def test_a_pod_rule_is_the_api_servers(target: str, by: str) -> None:
    worker = replica("tensorflow", 1)
    worker["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 99999}]
    findings = _refused(document(TF, {"Worker": worker}, "tf"), target)
    (found,) = [f for f in findings if "containerPort" in f.path]
    assert (found.stage, found.stage_by) == (Stage.API_SERVER, by)
    assert found.rejected_by == f"rejected by the API server ({by})"


def test_a_pod_security_control_is_pod_security_admissions() -> None:
    # K8S staging/src/k8s.io/pod-security-admission/policy/check_privileged.go: a
    # privileged container breaks the baseline level the namespace enforces.
    worker = replica("tensorflow", 1)
    worker["template"]["spec"]["containers"][0]["securityContext"] = {"privileged": True}
    found = _one(
        _refused(document(TF, {"Worker": worker}, "tf"), "pods"), "pss.baseline.privileged"
    )
    assert (found.stage, found.stage_by) == (Stage.POD_SECURITY, "baseline")
    assert found.rejected_by == "rejected by Pod Security admission (baseline)"


def test_a_job_that_cannot_be_placed_stays_pending() -> None:
    # Nothing refuses a pod asking for more GPUs than any node has: the scheduler
    # leaves it Pending (K8S pkg/scheduler/framework/plugins/noderesources/fit.go).
    with pytest.raises(SpecError) as caught:
        run(load_path(STACKS / "Pulumi.unfit.yaml"))
    findings = caught.value.findings
    assert findings
    assert {f.stage for f in findings} == {Stage.SCHEDULER}
    gpus = [f for f in findings if f.code.startswith("schedule.")]
    assert gpus
    assert gpus[0].rejected_by == "not refused: the pods stay Pending (scheduler)"


def test_trainjobs_own_rules_are_no_cluster_rule() -> None:
    # A reference to a backend the stack does not declare: trainjobs' own rule.
    doc = document(TF, {"Worker": replica("tensorflow", 1)}, "tf")
    doc["trainjobs"] = {"backend": "nowhere"}
    found = _one(_refused(doc), "ref.unknown")
    assert (found.stage, found.stage_by) == (Stage.TRAINJOBS, "")
    assert found.rejected_by == "trainjobs (not a cluster rule)"


def test_every_finding_of_a_check_has_a_stage() -> None:
    worker = replica("tensorflow", 1, restartPolicy="Never")
    container = worker["template"]["spec"]["containers"][0]
    container["securityContext"] = {"privileged": True}
    del container["resources"]
    worker["template"]["spec"]["restartPolicy"] = "Never"
    findings = _refused(document(TF, {"Worker": worker}, "tf"), "pods")
    assert {f.severity for f in findings} >= {Severity.ERROR, Severity.WARNING}
    assert all(f.stage is not None for f in findings)


def test_only_the_training_operator_kinds_with_a_webhook_say_so() -> None:
    # Training Operator v1.9.4 pkg/webhooks/webhooks.go SupportedSchemeWebhook; v1.8.1's
    # MXJob webhook only warns; the MPI Operator and the seed operators have none.
    # Trainer v2.3.0 validates a TrainJob against its runtime (pkg/webhooks).
    with_webhook = {fw.kind.kind for fw in REGISTRY if fw.webhook_rules}
    assert with_webhook == {
        "TFJob",
        "PyTorchJob",
        "XGBoostJob",
        "PaddleJob",
        "JAXJob",
        "MXJob",
        "TrainJob",
    }


def test_a_stage_already_set_is_kept_and_the_render_shows_it_only_when_asked() -> None:
    finding = Finding(code="pod.invalid", path="jobs[0].spec", message="m")
    (staged,) = attribute([finding.staged(Stage.TRAINJOBS)])
    assert staged.stage is Stage.TRAINJOBS
    assert finding.render() == "error: jobs[0].spec: m"
    assert stage_of(finding) == (Stage.API_SERVER, "Pod validation")
    (done,) = attribute([finding])
    assert done.render(with_stage=True) == (
        "error: jobs[0].spec: m [rejected by the API server (Pod validation)]"
    )


def test_check_json_names_each_findings_stage(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(dump_all([_mpi(2), document(TF, {"Worker": replica("tensorflow", 1)}, "B_")]))
    assert main(["check", "--output", "json", str(bad)]) == 2
    out = capsys.readouterr()
    assert out.err == ""
    report = json.loads(out.out)
    assert report["ok"] is False
    assert report["errors"] == len(report["findings"]) == 2
    by_code = {f["code"]: f for f in report["findings"]}
    assert by_code["mpi.launcher_replicas"]["stage"] == {
        "name": "controller",
        "by": "MPI Operator v0.8",
        "says": "the MPI Operator v0.8 controller fails the job (no webhook checks this)",
    }
    assert by_code["name.dns1035"]["stage"]["name"] == "webhook"
    assert by_code["name.dns1035"]["value"] == "'B_'"
    assert by_code["name.dns1035"]["path"] == "jobs[1].metadata.name"


def test_check_json_of_a_clean_job_lists_its_warnings_with_stages(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = tmp_path / "good.yaml"
    worker = replica("tensorflow", 1)
    del worker["template"]["spec"]["containers"][0]["resources"]
    good.write_text(dump_all([document(TF, {"Worker": worker}, "tf")]))
    assert main(["check", "--output", "json", str(good)]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is True
    assert report["jobs"] == 1
    assert report["errors"] == 0
    assert report["warnings"] + report["advice"] == len(report["findings"]) > 0
    assert all(f["stage"]["name"] == "trainjobs" for f in report["findings"])


def _tf_worker(**container: Any) -> dict[str, Any]:
    worker = replica("tensorflow", 1)
    worker["template"]["spec"]["containers"][0].update(container)
    return worker


@pytest.mark.parametrize(
    ("worker", "code", "stage", "by"),
    [
        # TO manifests/base/crds/kubeflow.org_tfjobs.yaml: resource quantities carry the
        # Quantity pattern, so the TFJob itself is refused at apply.
        (
            _tf_worker(resources={"requests": {"cpu": "lots"}}),
            "quantity.invalid",
            Stage.CRD_SCHEMA,
            "openAPIV3Schema",
        ),
        # The same CRD: containers are a list map keyed by name (server-side apply:
        # "duplicate entries for key [name=...]").
        (
            {
                "replicas": 1,
                "template": {
                    "spec": {
                        "containers": [
                            {"name": "tensorflow", "image": "a:1"},
                            {"name": "tensorflow", "image": "b:1"},
                        ]
                    }
                },
            },
            "pod.invalid",
            Stage.CRD_SCHEMA,
            "openAPIV3Schema",
        ),
        # The CRD does not check label syntax in a template; the operator's pods are
        # refused (K8S apimachinery ValidateLabels) once it creates them.
        (
            {
                **replica("tensorflow", 1),
                "template": {
                    "metadata": {"labels": {"team": "a b"}},
                    "spec": replica("tensorflow", 1)["template"]["spec"],
                },
            },
            "label.invalid",
            Stage.API_SERVER,
            "label and annotation validation, when the operator creates the pods",
        ),
    ],
    ids=["quantity", "duplicate-container", "template-label"],
)
def test_a_pod_rule_the_crd_enforces_is_the_crd_schemas(
    worker: dict[str, Any], code: str, stage: Stage, by: str
) -> None:
    found = _one(_refused(document(TF, {"Worker": worker}, "tf")), code)
    assert (found.stage, found.stage_by) == (stage, by)


def test_an_empty_replica_map_is_stored_and_runs_nothing() -> None:
    # TO tfjob_webhook.go validateTFReplicaSpecs refuses only a nil map ("must be
    # required"); `tfReplicaSpecs: {}` decodes to an empty one, and the CRD's required
    # key is present: the job is stored, the operator has no replica to create.
    found = _one(_refused(document(TF, {}, "tf")), "spec.replicas.empty")
    assert (found.stage, found.stage_by) == (Stage.CONTROLLER, "Training Operator v1.9.4")


def test_every_code_the_tables_name_is_one_trainjobs_emits() -> None:
    # The tables key on codes written elsewhere: a renamed code must not silently fall
    # back to "trainjobs (not a cluster rule)". A code counts where it is written outside
    # the rule sets that name it (the frameworks' webhook_rules/controller_rules).
    from trainjobs.check import stages

    root = Path(stages.__file__).parents[1]
    written = {
        text for path in root.rglob("*.py") if path.name != "stages.py" for text in _strings(path)
    }
    built = {
        "template.name",  # mpi_v1.py: code=f"template.{field}" for image and name
        "spec.trainjob_removed_field",  # trainjob/model.py: a pydantic error type, spec.<type>
    }
    tables: list[Any] = [
        *(fw.webhook_rules for fw in REGISTRY),
        *(fw.controller_rules for fw in REGISTRY),
        *(fw.schema_rules for fw in REGISTRY),
        stages._CREATED_BY_OPERATOR,
        stages._API_SERVER,
        stages._SCHEDULER,
    ]
    codes = {code for table in tables for code in table}
    missing = sorted(codes - built - written)
    assert not missing


@pytest.mark.parametrize("target", ["pods", "trainer"])
def test_without_the_operator_its_rules_are_trainjobs_own(target: str) -> None:
    # On the pods and trainer targets no Training Operator sees the PyTorchJob, so its
    # webhook's rule (pytorchjob_webhook.go: Master replicas "must be 1") is one
    # trainjobs keeps; the cluster has nothing that checks it.
    doc = document(PT, {"Master": replica("pytorch", 2), "Worker": replica("pytorch", 1)}, "pt")
    found = _one(_refused(doc, target), "pytorch.master_replicas")
    assert (found.stage, found.stage_by) == (
        Stage.TRAINJOBS,
        "Training Operator v1.9.4 webhook rule, kept without the operator",
    )
    assert found.rejected_by == (
        "trainjobs (not a cluster rule: Training Operator v1.9.4 webhook rule, kept "
        "without the operator)"
    )


def test_a_job_name_on_the_pods_target_is_refused_with_its_pods() -> None:
    # The pods target creates <job>-<type>-<index> Pods and Services itself; the API
    # server refuses their names (K8S ValidateObjectMeta, DNS-1035 for a Service).
    doc = document(TF, {"Worker": replica("tensorflow", 1)}, "Bad_Name")
    found = _one(_refused(doc, "pods"), "name.dns1035")
    assert (found.stage, found.stage_by) == (Stage.API_SERVER, "Service and Pod names")


def _strings(path: Path) -> set[str]:
    """The string literals of a module, except those of its rule sets (a name ending in
    ``_rules`` or ``_RULES``): where codes are emitted, not where they are classified."""
    tree = ast.parse(path.read_text())
    skipped: set[int] = set()
    for node in ast.walk(tree):
        targets = node.targets if isinstance(node, ast.Assign) else []
        names = [t.id for t in targets if isinstance(t, ast.Name)]
        if any(name.lower().endswith("_rules") for name in names):
            skipped.update(id(n) for n in ast.walk(node))
    return {
        n.value
        for n in ast.walk(tree)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in skipped
    }
