"""plan/jobset.py: the JobSet controller's rules a framework and a target both read."""

from __future__ import annotations

from typing import Any

from trainjobs.plan.jobset import claim_volumes, defaulted_spec, job_name


def test_the_defaults_of_jobset_s_webhook_fill_a_copy() -> None:
    spec: dict[str, Any] = {
        "replicatedJobs": [{"name": "node", "template": {"spec": {}}}],
        "failurePolicy": {"rules": [{"action": "FailJobSet"}]},
        "volumeClaimPolicies": [{"templates": []}],
    }
    out = defaulted_spec(spec)
    assert out["successPolicy"] == {"operator": "All"}
    assert out["startupPolicy"] == {"startupPolicyOrder": "AnyOrder"}
    (rjob,) = out["replicatedJobs"]
    assert (rjob["groupName"], rjob["replicas"]) == ("default", 1)
    assert rjob["template"]["spec"]["completionMode"] == "Indexed"
    assert rjob["template"]["spec"]["template"]["spec"]["restartPolicy"] == "OnFailure"
    assert out["network"] == {"enableDNSHostnames": True, "publishNotReadyAddresses": True}
    assert out["failurePolicy"]["restartStrategy"] == "Recreate"
    assert out["failurePolicy"]["rules"][0]["name"] == "failurePolicyRule0"
    assert out["volumeClaimPolicies"][0]["retentionPolicy"] == {"whenDeleted": "Delete"}
    assert "successPolicy" not in spec and "groupName" not in spec["replicatedJobs"][0]


def test_set_values_are_kept() -> None:
    spec = {"successPolicy": {"operator": "Any"}, "network": {"enableDNSHostnames": False}}
    out = defaulted_spec(spec)
    assert out["successPolicy"] == {"operator": "Any"}
    assert out["network"]["enableDNSHostnames"] is False


def test_only_mounted_claims_become_volumes_named_per_jobset() -> None:
    spec = {
        "volumeClaimPolicies": [
            {"templates": [{"metadata": {"name": "ckpt"}}, {"metadata": {"name": "unused"}}]}
        ]
    }
    pod = {"containers": [{"name": "node", "volumeMounts": [{"name": "ckpt", "mountPath": "/c"}]}]}
    assert claim_volumes("tj", spec, pod) == [
        {"name": "ckpt", "persistentVolumeClaim": {"claimName": "ckpt-tj"}}
    ]
    assert claim_volumes("tj", {}, pod) == []
    assert job_name("tj", "node", 3) == "tj-node-3"
