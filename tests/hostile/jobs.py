"""Small valid inputs the hostile tests start from."""

from __future__ import annotations

JOB = """\
apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: mnist, namespace: training}
spec:
  tfReplicaSpecs:
    Worker:
      replicas: 1
      template:
        spec:
          containers:
            - {name: tensorflow, image: "tf:2", command: [python, train.py]}
"""
"""One TFJob of one worker: renders clean on every target."""
