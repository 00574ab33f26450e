// Distributed deep-learning training on Kubernetes as typed components: training jobs, rendezvous backends, GPU node pools and operators.
package trainjobs
