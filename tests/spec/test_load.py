"""Loading jobs and stacks: every finding at once, with the user's field paths."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.paths import ROOT
from trainjobs.errors import SpecError
from trainjobs.frameworks.tensorflow import TFJob
from trainjobs.spec import JobEntry, load_path, parse_documents, parse_stack

JOB = {
    "apiVersion": "kubeflow.org/v1",
    "kind": "TFJob",
    "metadata": {"name": "mnist"},
    "spec": {
        "tfReplicaSpecs": {
            "Worker": {
                "replicas": 2,
                "template": {"spec": {"containers": [{"name": "tensorflow", "image": "tf:1"}]}},
            }
        }
    },
}


def _messages(exc: SpecError) -> list[str]:
    return [f.render() for f in exc.findings]


def test_upstream_job_is_valid_input_as_it_is() -> None:
    stack = parse_documents([JOB])
    (entry,) = stack.jobs
    assert isinstance(entry.job, TFJob)
    assert entry.framework.name == "tensorflow"
    assert entry.options.target is None
    assert entry.path == "jobs[0]"


def test_options_live_beside_the_job() -> None:
    stack = parse_documents([{**JOB, "trainjobs": {"target": "pods"}}])
    assert stack.jobs[0].options.target == "pods"
    assert "trainjobs" not in stack.jobs[0].job.to_manifest()


def test_every_finding_at_once_with_paths() -> None:
    bad = {
        **JOB,
        "metadata": {"name": "mnist", "nmespace": "x"},
        "spec": {
            "tfReplicaSpecs": {
                "Worker": {"replicas": "2", "restartPolicy": "Sometimes", "template": {}}
            },
            "runPolicy": {"backoffLimit": -1},
        },
        "trainjobs": {"target": "cluster"},
    }
    with pytest.raises(SpecError) as err:
        parse_documents([bad], source="jobs.yaml")
    assert _messages(err.value) == [
        "error: jobs.yaml: jobs[0].trainjobs.target: input should be 'operator', 'pods', "
        "'trainer' or 'jobset' "
        "(got 'cluster'); fix: use one of the values listed",
        "error: jobs.yaml: jobs[0].metadata.nmespace: unknown field (got 'x'); "
        "fix: did you mean 'namespace'?",
        "error: jobs.yaml: jobs[0].spec.runPolicy.backoffLimit: input should be greater than "
        "or equal to 0 (got -1); fix: change the number to fit the bound",
        "error: jobs.yaml: jobs[0].spec.tfReplicaSpecs.Worker.replicas: input should be a valid "
        "integer (got '2'); fix: write a whole number without quotes, e.g. 2",
        "error: jobs.yaml: jobs[0].spec.tfReplicaSpecs.Worker.restartPolicy: input should be "
        "'Always', 'OnFailure', 'Never' or 'ExitCode' (got 'Sometimes'); fix: use one of the "
        "values listed",
    ]


def test_a_kind_served_at_two_versions_names_both() -> None:
    with pytest.raises(SpecError) as err:
        parse_documents(
            [
                {**JOB, "apiVersion": "kubeflow.org/v2", "kind": "MPIJob"},
                {"kind": "MPIJob", "metadata": {"name": "pi"}, "spec": {}},
            ]
        )
    assert _messages(err.value) == [
        "error: jobs[0].kind: no framework handles this apiVersion and kind "
        "(got 'kubeflow.org/v2 MPIJob'); fix: MPIJob is served as kubeflow.org/v2beta1 or "
        "kubeflow.org/v1; change apiVersion",
        "error: jobs[1].apiVersion: required field is missing; fix: add apiVersion: "
        "kubeflow.org/v2beta1 or kubeflow.org/v1",
    ]


def test_unknown_kind_and_missing_fields() -> None:
    with pytest.raises(SpecError) as err:
        parse_documents(
            [
                {**JOB, "kind": "TfJob"},
                {**JOB, "apiVersion": "kubeflow.org/v2", "kind": "PyTorchJob"},
                {"kind": "TFJob"},
                {**JOB, "metadata": {}},
                ["not", "a", "job"],
            ]
        )
    assert _messages(err.value) == [
        "error: jobs[0].kind: no framework handles this apiVersion and kind "
        "(got 'kubeflow.org/v1 TfJob'); fix: did you mean 'TFJob' (kubeflow.org/v1)?",
        "error: jobs[1].kind: no framework handles this apiVersion and kind "
        "(got 'kubeflow.org/v2 PyTorchJob'); fix: PyTorchJob is served as kubeflow.org/v1; "
        "change apiVersion",
        "error: jobs[2].apiVersion: required field is missing; fix: add apiVersion: "
        "kubeflow.org/v1",
        "error: jobs[3].metadata.name: required field is missing; fix: add the required field "
        "'name'",
        "error: jobs[4]: a job must be a mapping with apiVersion, kind, metadata and spec, "
        "not a list; fix: check the indentation of this entry",
    ]


def test_exported_objects_are_accepted_and_server_fields_dropped() -> None:
    exported = {
        **JOB,
        "metadata": {"name": "mnist", "uid": "u", "resourceVersion": "7", "generation": 2},
        "status": {"conditions": []},
    }
    manifest = parse_documents([exported]).jobs[0].job.to_manifest()
    assert manifest["metadata"] == {"name": "mnist"}
    assert "status" not in manifest


def test_stack_config_with_file_entries(tmp_path: Path) -> None:
    (tmp_path / "jobs").mkdir()
    (tmp_path / "jobs" / "tf.yaml").write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: a}\n"
        "spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: "
        "[{name: tensorflow, image: 'tf:1'}]}}}}}\n"
    )
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text(
        "config:\n"
        "  kubernetes:context: prod\n"
        "  trainjobs:target: pods\n"
        "  trainjobs:namespaces: [training]\n"
        "  trainjobs:jobs:\n"
        "    - file: jobs/tf.yaml\n"
        "      trainjobs: {target: operator}\n"
    )
    stack = load_path(stack_file)
    assert stack.target == "pods"
    assert stack.namespaces == ("training",)
    (entry,) = stack.jobs
    assert entry.options.target == "operator"
    assert entry.source == str(tmp_path / "jobs" / "tf.yaml")


def test_stack_errors() -> None:
    with pytest.raises(SpecError) as err:
        parse_stack(
            {
                "trainjobs:targt": "pods",
                "trainjobs:k8sVersion": 1.3,
                "trainjobs:jobs": [{"file": "missing.yaml"}],
            },
            source="Pulumi.x.yaml",
            base_dir=Path("/nonexistent"),
        )
    assert [f.path for f in err.value.findings] == [
        "trainjobs:targt",
        "trainjobs:k8sVersion",
        "jobs[0].file",
    ]
    assert err.value.findings[2].message == "cannot read the file: No such file or directory"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "holds no YAML documents"),
        # kubectl get -o yaml of no objects: not "no documents", which looks wrong.
        (b"apiVersion: v1\nkind: List\nitems: []\n", "holds only an empty List (items: [])"),
        (b"\x00\x01binary", "is a binary file, not YAML"),
        (
            b"a: [1\n",
            "invalid YAML at line 2, column 1: did not find expected ',' or ']'",
        ),
        (b"\xff\xfe", "is not UTF-8 text"),
    ],
)
def test_unreadable_files(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "jobs.yaml"
    path.write_bytes(content)
    with pytest.raises(SpecError) as err:
        load_path(path)
    (finding,) = err.value.findings
    assert finding.message == message
    assert finding.source == str(path)


@pytest.mark.parametrize("items", ["items: {a: 1}\n", "items: 3\n", ""])
def test_a_list_whose_items_are_not_a_list_says_so(tmp_path: Path, items: str) -> None:
    # It read as a document of an unknown kind: "no framework handles v1 List".
    path = tmp_path / "jobs.yaml"
    path.write_text("apiVersion: v1\nkind: List\n" + items)
    with pytest.raises(SpecError) as err:
        load_path(path)
    (finding,) = err.value.findings
    assert (finding.code, finding.path, finding.message) == (
        "spec.list_items",
        "jobs[0].items",
        "a List holds its objects as a list under items",
    )


def test_python_api_entry() -> None:
    entry = JobEntry.of(TFJob.model_validate(JOB), target="pods")
    assert entry.target() == "pods"
    assert entry.framework.name == "tensorflow"


def test_the_stack_programs_own_setting_is_a_known_stack_setting(tmp_path: Path) -> None:
    # `pulumi config set trainjobs:allowNoJobs true` (README) writes it into the stack
    # file, which `trainjobs check` and `render` read in CI next.
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text("config:\n  trainjobs:allowNoJobs: 'true'\n  trainjobs:jobs: []\n")
    assert load_path(stack_file).jobs == ()
    assert parse_stack({"trainjobs:allowNoJobs": False, "trainjobs:jobs": [JOB]}).jobs
    with pytest.raises(SpecError) as err:
        parse_stack({"trainjobs:allowNoJobs": "yes"}, source="s.yaml")
    assert _messages(err.value) == [
        "error: s.yaml: trainjobs:allowNoJobs: allowNoJobs must be true or false (got 'yes'); "
        "fix: pulumi config set trainjobs:allowNoJobs true"
    ]


def test_a_finding_about_an_option_beside_file_names_the_stack(tmp_path: Path) -> None:
    # The option is written in the stack, beside `file:`; the job file has none, so a
    # finding naming the job file sent the user to the wrong file.
    from trainjobs.check import run

    (tmp_path / "tf.yaml").write_text(
        "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: a}\n"
        "spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: "
        "[{name: tensorflow, image: 'tf:1'}]}}}}}\n"
        "trainjobs: {queue: mine}\n"
    )
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text(
        "config:\n"
        "  trainjobs:jobs:\n"
        "    - file: tf.yaml\n"
        "      trainjobs: {backend: redis, queue: theirs}\n"
    )
    stack = load_path(stack_file)
    with pytest.raises(SpecError) as err:
        run(stack)
    located = sorted((f.path, f.source) for f in err.value.findings)
    assert located == [
        ("jobs[0].trainjobs.backend", str(stack_file)),
        # The job's own option wins over the one beside `file:`, and is its file's.
        ("jobs[0].trainjobs.queue", str(tmp_path / "tf.yaml")),
    ]


@pytest.mark.parametrize("project", ["Pulumi.yaml", "examples/tf-mnist/Pulumi.yaml"])
def test_a_pulumi_project_file_is_named_as_such(project: str) -> None:
    # `trainjobs render Pulumi.yaml` read the project's typed config declarations as
    # settings and reported each declaration as a bad value (11 findings).
    with pytest.raises(SpecError) as err:
        load_path(ROOT / project)
    assert _messages(err.value) == [
        f"error: {ROOT / project}: runtime: this is a Pulumi project file (Pulumi.yaml), "
        "not a stack config; fix: name the stack's settings file, e.g. "
        "stacks/Pulumi.demo.yaml (Pulumi.<stack>.yaml beside Pulumi.yaml, or in its "
        "stackConfigDir)"
    ]


def test_stack_settings_without_config_are_named_as_such(tmp_path: Path) -> None:
    # Read as a job, the file got "jobs[0].apiVersion: required field is missing".
    stack_file = tmp_path / "Pulumi.dev.yaml"
    stack_file.write_text("trainjobs:target: pods\ntrainjobs:jobs:\n  - file: tf.yaml\n")
    with pytest.raises(SpecError) as err:
        load_path(stack_file)
    assert _messages(err.value) == [
        f"error: {stack_file}: trainjobs:target: stack settings belong under config:, which "
        "the file lacks; fix: add a line config: above them and indent them by two spaces, "
        "as in stacks/Pulumi.demo.yaml"
    ]


def test_a_file_entry_naming_a_stack_config_says_so(tmp_path: Path) -> None:
    # The stack was read as a job: "jobs[0].apiVersion: required field is missing".
    (tmp_path / "Pulumi.inner.yaml").write_text("config:\n  trainjobs:jobs: []\n")
    outer = tmp_path / "Pulumi.outer.yaml"
    outer.write_text("config:\n  trainjobs:jobs:\n    - file: Pulumi.inner.yaml\n")
    with pytest.raises(SpecError) as err:
        load_path(outer)
    assert _messages(err.value) == [
        f"error: {outer}: jobs[0].file: names a stack config (it holds config:); file takes "
        "a file of jobs; fix: name its job files here, or render the two stacks one by one"
    ]


def test_a_value_no_member_of_a_union_takes_is_one_finding() -> None:
    # nodePool is a pool name or a map of role to pool: each member reported its own
    # expectation, two contradicting errors for one mistake.
    def errors(node_pool: object) -> list[str]:
        with pytest.raises(SpecError) as err:
            parse_documents([{**JOB, "trainjobs": {"nodePool": node_pool}}])
        return _messages(err.value)

    assert errors(5) == [
        "error: jobs[0].trainjobs.nodePool: input should be a valid string or a valid "
        'dictionary (got 5); fix: quote the value so it is a string, e.g. "1"; or write a '
        "mapping (key: value pairs) here"
    ]
    # A map fits the second member: only what is wrong inside it is reported.
    assert errors({"Worker": 5}) == [
        "error: jobs[0].trainjobs.nodePool.Worker: input should be a valid string (got 5); "
        'fix: quote the value so it is a string, e.g. "1"'
    ]


def test_a_bad_wait_timeout_says_how_to_write_one() -> None:
    # The validator's words came with no fix at all.
    with pytest.raises(SpecError) as err:
        parse_documents([{**JOB, "trainjobs": {"waitTimeout": "90 m"}}])
    assert _messages(err.value) == [
        "error: jobs[0].trainjobs.waitTimeout: must be a whole number of s, m or h "
        "(got '90 m'); fix: write e.g. 90m or 2h"
    ]
