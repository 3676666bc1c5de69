#!/usr/bin/env bash
# Build and push the cluster image, then point every manifest at it (deploy/kuberay/kustomization.yaml's
# `images:` entry, which kustomize applies to every RayCluster/RayJob/RayService container, and deploy/cluster.yaml).
#
#   deploy/build-image.sh registry.example.com/ml/raygent:0.1.0
#
# DOCKER=podman uses another builder; PUSH=0 builds without pushing; MANIFESTS_ONLY=1 only rewrites the manifests
# (an image built elsewhere). Then: kubectl apply -k deploy/kuberay  ·  ray up deploy/cluster.yaml
set -euo pipefail

IMAGE="${1:-}"
last="${IMAGE##*/}"
if [[ -z "$IMAGE" || "$IMAGE" != */* || "$last" != *:* || "${IMAGE##*:}" == "" ]]; then
  echo "error: IMAGE must name a registry, a repository and a tag, e.g. registry.example.com/ml/raygent:0.1.0 (got '${IMAGE}')" >&2
  exit 2
fi
name="${IMAGE%:*}"
tag="${IMAGE##*:}"
deploy="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(dirname "$deploy")"
DOCKER="${DOCKER:-docker}"

if [[ "${MANIFESTS_ONLY:-0}" != 1 ]]; then
  cd "$root"
  rm -f dist/raygent-*.whl
  python -m pip wheel --no-deps --no-build-isolation -q -w dist .
  "$DOCKER" build -f deploy/Dockerfile -t "$IMAGE" .
  if [[ "${PUSH:-1}" != 0 ]]; then
    "$DOCKER" push "$IMAGE"
  fi
fi

sed -i -E "s|^(    newName: ).*|\1${name}|; s|^(    newTag: ).*|\1${tag}|" "$deploy/kuberay/kustomization.yaml"
sed -i -E "s|^(  image: ).*|\1${IMAGE}|" "$deploy/cluster.yaml"
echo "manifests now use ${IMAGE}: kubectl apply -k deploy/kuberay  ·  ray up deploy/cluster.yaml"
