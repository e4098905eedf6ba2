#!/bin/bash
# The GPU checks in one device run: the CUDA probe row, Unload Text Encoders, the tracer against CUDA, Fit to Card.
#
#   here:   COMFYUI_DIR=/path/to/ComfyUI bash benchmarks/gpu_checks.sh prepare   # ComfyUI + 2 wheels into build/gg_gpu
#   device: bash benchmarks/gpu_checks.sh run   (carry build/gg_gpu; logs go to $OUT, default benchmarks/results/gpu_logs)
#   here:   python scripts/gpu_results_from_logs.py                         # tables -> benchmarks/results/gpu_*.json
#
# The device machine has torch but neither ComfyUI nor torchsde/trampoline nor PyAV: ComfyUI travels as a copy,
# the two wheels are installed with --target, and PyAV is a stand-in (benchmarks/gpu_stubs/av: import only).
set -u
cd "$(dirname "$0")/.."
G=build/gg_gpu
if [ "${1:-}" = prepare ]; then
  mkdir -p $G/whl && rm -rf $G/ComfyUI && cp -r "${COMFYUI_DIR:?set COMFYUI_DIR}" $G/ComfyUI
  rm -rf $G/ComfyUI/models $G/ComfyUI/output $G/ComfyUI/.git
  python3 -m pip download -q --no-deps --only-binary=:all: -d $G/whl torchsde==0.2.6 trampoline==0.1.2
  du -sh $G; exit 0
fi
OUT=${OUT:-benchmarks/results/gpu_logs}; mkdir -p "$OUT"
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site $G/whl/*.whl 2>&1 | grep -v "already exists"
export PYTHONPATH=$PWD/benchmarks/gpu_stubs:/tmp/site PYTHONUNBUFFERED=1 COMFYUI_DIR=$PWD/$G/ComfyUI
quiet() { grep -v "^WARNING\|comfy_kitchen"; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/nvidia_smi.txt"
python3 -c "import torch;print('torch',torch.__version__,'cuda',torch.version.cuda,'cudnn',torch.backends.cudnn.version())" | tee -a "$OUT/nvidia_smi.txt"
timeout 40 python3 benchmarks/bench_probe.py --n 300 2>&1 | tee "$OUT/probe.txt"
timeout 150 python3 benchmarks/gpu_trace_vs_cuda.py 2>&1 | quiet | tee "$OUT/trace_vs_cuda.txt"
timeout 130 python3 benchmarks/gpu_unload.py --workdir /tmp/ggu 2>&1 | quiet | tee "$OUT/unload.txt"
timeout 200 python3 benchmarks/gpu_fit_to_card.py --workdir /tmp/ggw 2>&1 | quiet | tee "$OUT/fit_to_card.txt"
cp benchmarks/results/gpu_fit_to_card.json "$OUT/" 2>/dev/null
