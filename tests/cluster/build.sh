#!/usr/bin/env bash
# Builds the real programs the cluster tests run, from the Go module proxy, into
# ~/.cache/trainjobs/<program>-<version>/bin (outside the clone, so a fresh clone on the
# same machine reuses them). Only what is missing is built; the Go build and module
# caches are kept under ~/.cache/trainjobs/go. Versions: tests/cluster/versions.env.
#
#   tests/cluster/build.sh                 build every missing program
#   tests/cluster/build.sh etcd kwok       build only these
#   tests/cluster/build.sh --print-dir P   print P's bin folder (built or not)
#   tests/cluster/build.sh --tidy P        refresh P's go.sum after a version change
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=versions.env
source "$here/versions.env"

cache="${TRAINJOBS_CACHE:-$HOME/.cache/trainjobs}"
export GOMODCACHE="$cache/go/mod" GOCACHE="$cache/go/build" GOPATH="$cache/go/path"
# The machine's own Go builds everything: no toolchain download behind our back.
export GOTOOLCHAIN=local GOFLAGS=-mod=readonly CGO_ENABLED=0

all_programs=(etcd kubernetes kwok training-operator mpi-operator jobset trainer
    pulumi pulumi-language-python pulumi-resource-kubernetes pulumi-language-yaml pulumi-codegen
    kueue)

# program -> "module version binaries..." ; binaries are name=package pairs.
recipe() {
    case "$1" in
    etcd) echo "go.etcd.io/etcd/server/v3 $ETCD_VERSION etcd=go.etcd.io/etcd/server/v3" ;;
    kubernetes)
        echo "k8s.io/kubernetes $KUBERNETES_VERSION" \
            "kube-apiserver=k8s.io/kubernetes/cmd/kube-apiserver" \
            "kube-controller-manager=k8s.io/kubernetes/cmd/kube-controller-manager" \
            "kube-scheduler=k8s.io/kubernetes/cmd/kube-scheduler" \
            "kubectl=k8s.io/kubernetes/cmd/kubectl" ;;
    kwok) echo "sigs.k8s.io/kwok $KWOK_VERSION kwok=sigs.k8s.io/kwok/cmd/kwok" ;;
    training-operator)
        echo "github.com/kubeflow/training-operator $TRAINING_OPERATOR_VERSION" \
            "training-operator=github.com/kubeflow/training-operator/cmd/training-operator.v1" ;;
    mpi-operator)
        echo "github.com/kubeflow/mpi-operator $MPI_OPERATOR_VERSION" \
            "mpi-operator=github.com/kubeflow/mpi-operator/cmd/mpi-operator" ;;
    jobset) echo "sigs.k8s.io/jobset $JOBSET_VERSION jobset=sigs.k8s.io/jobset" ;;
    trainer)
        echo "github.com/kubeflow/trainer/v2 $TRAINER_VERSION" \
            "trainer-controller-manager=github.com/kubeflow/trainer/v2/cmd/trainer-controller-manager" ;;
    kueue)
        # Its manager, and what an install applies beside it: every CRD it watches and
        # its webhook configurations (tests/cluster/kueue.py registers them by URL).
        local m=sigs.k8s.io/kueue crd
        printf '%s ' "$m $KUEUE_VERSION" "kueue=$m/cmd/kueue" \
            "kueue-webhooks.yaml=$m:config/components/webhook/manifests.yaml"
        for crd in admissionchecks clusterqueues cohorts localqueues multikueueclusters \
            multikueueconfigs provisioningrequestconfigs resourceflavors topologies \
            workloadpriorityclasses workloads; do
            printf '%s ' "kueue-crd-$crd.yaml=$m:config/components/crd/bases/kueue.x-k8s.io_$crd.yaml"
        done
        echo ;;
    # A pair name=module[@version]:path copies that file of the module (at the version
    # the recipe's go.mod selects, unless one is given) instead of building a package.
    pulumi)
        echo "github.com/pulumi/pulumi/pkg/v3 $PULUMI_VERSION" \
            "pulumi=github.com/pulumi/pulumi/pkg/v3/cmd/pulumi" ;;
    pulumi-language-python)
        # The host runs the shim beside it; the CLI's release of it matches the SDK. The
        # dynamic provider plugin (trainjobs' generated secrets) ships beside them too.
        echo "github.com/pulumi/pulumi/sdk/v3 $PULUMI_LANGUAGE_PYTHON_VERSION" \
            "pulumi-language-python=github.com/pulumi/pulumi/sdk/v3/python/cmd/pulumi-language-python" \
            "pulumi-language-python-exec=github.com/pulumi/pulumi/sdk/v3@$PULUMI_VERSION:python/cmd/pulumi-language-python-exec" \
            "pulumi-resource-pulumi-python=github.com/pulumi/pulumi/sdk/v3@$PULUMI_VERSION:python/dist/pulumi-resource-pulumi-python" ;;
    pulumi-resource-kubernetes)
        local m=github.com/pulumi/pulumi-kubernetes/provider/v4
        echo "$m $PULUMI_KUBERNETES_PROVIDER_VERSION" \
            "pulumi-resource-kubernetes=trainjobs.test/cluster/pulumi-resource-kubernetes/cmd/pulumi-resource-kubernetes" \
            "pulumi-resource-kubernetes.schema.json=$m:cmd/pulumi-resource-kubernetes/schema.json" \
            "pulumi-resource-kubernetes.terraform-mapping.json=$m:cmd/pulumi-resource-kubernetes/terraform-mapping.json" ;;
    pulumi-language-yaml)
        echo "github.com/pulumi/pulumi-yaml $PULUMI_LANGUAGE_YAML_VERSION" \
            "pulumi-language-yaml=github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml" ;;
    pulumi-codegen)
        # A main of ours on pkg/v3's code generators: the TypeScript and Go SDKs of the
        # trainjobs provider's schema (make sdk).
        echo "github.com/pulumi/pulumi/pkg/v3 $PULUMI_VERSION" \
            "pulumi-codegen=trainjobs.test/cluster/pulumi-codegen/cmd/pulumi-codegen" ;;
    *) echo "unknown program '$1' (known: ${all_programs[*]})" >&2; return 2 ;;
    esac
}

bin_dir() {
    local fields
    read -r -a fields <<<"$(recipe "$1")"
    echo "$cache/$1-${fields[1]}/bin"
}

ldflags_for() {
    local program=$1 version=$2
    case "$program" in
    kubernetes)
        # Without these /version reports v0.0.0, and clients (pulumi-kubernetes among
        # them) refuse the cluster as too old.
        local minor=${version#v1.}; minor=${minor%%.*}
        local flags="-s -w" pkg
        for pkg in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
            flags+=" -X $pkg.gitVersion=$version -X $pkg.gitMajor=1 -X $pkg.gitMinor=$minor"
            flags+=" -X $pkg.gitTreeState=clean -X $pkg.buildDate=1970-01-01T00:00:00Z"
        done
        echo "$flags" ;;
    pulumi | pulumi-language-python)
        echo "-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$version" ;;
    pulumi-language-yaml)
        echo "-s -w -X github.com/pulumi/pulumi-yaml/pkg/version.Version=${version#v}" ;;
    pulumi-resource-kubernetes)
        # The pseudo-version is the commit of this release (versions.env).
        echo "-s -w -X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$PULUMI_KUBERNETES_RELEASE" ;;
    *) echo "-s -w" ;;
    esac
}

build_one() {
    local program=$1 fields module version out
    read -r -a fields <<<"$(recipe "$program")"
    module=${fields[0]} version=${fields[1]}
    out="$cache/$program-$version"
    local dir="$here/recipes/$program"
    if ! grep -qE "^[[:space:]]*(require )?$module $version( |$)" "$dir/go.mod"; then
        echo "recipes/$program/go.mod does not require $module $version (versions.env);" \
            "edit it and run: $0 --tidy $program" >&2
        return 2
    fi
    local missing=0 pair
    for pair in "${fields[@]:2}"; do
        [ -f "$out/bin/${pair%%=*}" ] || missing=1
    done
    if [ "$missing" = 0 ]; then
        echo "$program $version: built already ($out/bin)"
        return 0
    fi
    echo "$program $version: building into $out/bin"
    local started=$SECONDS tmp
    mkdir -p "$cache"
    tmp="$(mktemp -d "$cache/.$program-$version.XXXXXX")"
    # shellcheck disable=SC2064
    trap "rm -rf '$tmp'" RETURN
    mkdir -p "$tmp/bin"
    local ldflags
    ldflags="$(ldflags_for "$program" "$version")"
    local what module_dir
    for pair in "${fields[@]:2}"; do
        what=${pair#*=}
        case "$what" in
        *:*) # a file of a module the recipe requires: copied, not built
            module_dir="$(cd "$dir" && go mod download "${what%%:*}" &&
                go list -m -f '{{.Dir}}' "${what%%:*}")"
            install -m 0755 "$module_dir/${what#*:}" "$tmp/bin/${pair%%=*}" ;;
        *) (cd "$dir" && go build -trimpath -ldflags "$ldflags" -o "$tmp/bin/${pair%%=*}" "$what") ;;
        esac
    done
    printf '%s %s\nbuilt by tests/cluster/build.sh in %ss with %s\n' \
        "$module" "$version" "$((SECONDS - started))" "$(go version)" >"$tmp/BUILD-INFO"
    rm -rf "$out"
    mv "$tmp" "$out"
    echo "$program $version: built in $((SECONDS - started))s"
}

case "${1:-}" in
--print-dir) bin_dir "$2"; exit 0 ;;
--tidy)
    shift
    for program in "$@"; do
        (cd "$here/recipes/$program" && GOFLAGS=-mod=mod go mod tidy)
    done
    exit 0 ;;
esac

programs=("$@")
[ ${#programs[@]} -gt 0 ] || programs=("${all_programs[@]}")

# Two builds at once (two test runs, a developer and CI) would race on the same folder.
mkdir -p "$cache"
exec 9>"$cache/.build.lock"
flock 9

total=$SECONDS
for program in "${programs[@]}"; do
    build_one "$program"
done
echo "cluster programs ready in $((SECONDS - total))s"
