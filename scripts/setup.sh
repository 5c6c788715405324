#!/usr/bin/env bash
# Set up mafialab on a fresh machine: system packages, a virtual environment in .venv,
# the package with its test/dev extras. Idempotent; safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = "0" ] && command -v apt-get >/dev/null 2>&1; then
  # chromium: the viewer's browser tests (no browser is ever downloaded at run time)
  if ! command -v chromium >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  fi
  # a C++ compiler: llama-cpp-python (the embedded model) builds from source
  if ! command -v g++ >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq build-essential >/dev/null
  fi
fi

# llama-cpp-python builds llama.cpp from source (pip caches the wheel afterwards): build only
# the library, on every core
export CMAKE_ARGS="${CMAKE_ARGS:--DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAVA_BUILD=OFF}"
export CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}"

PY=${PYTHON:-python3}
[ -x .venv/bin/python ] || "$PY" -m venv .venv
.venv/bin/python -m pip install -q --upgrade pip
# dev: tests and tooling; embedded: llama-cpp-python and the default embedded model
.venv/bin/python -m pip install -q -e ".[dev,embedded]"
