#!/usr/bin/env bash
# The README's test command: sets up .venv (once) and runs the whole suite. Host and browser tiers run
# when COMFYUI_DIR and COMFYUI_PYTHON point at a ComfyUI checkout and its interpreter, else they skip
# with the reason in the summary.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
# torch 2.13.0 (CPU) is what the tracer's unit tests need; pip takes it from local disk where available.
.venv/bin/pip install -q --disable-pip-version-check "torch==2.13.0" pytest hypothesis psutil gguf websocket-client playwright pillow
.venv/bin/pip install -q --disable-pip-version-check --no-deps .
if [ -n "${COMFYUI_DIR:-}" ] && ! command -v chromium >/dev/null 2>&1; then
  echo "note: Debian's chromium is not installed (apt-get install chromium); browser tests will skip" >&2
fi
exec .venv/bin/python -m pytest "$@"
