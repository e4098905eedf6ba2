#!/bin/bash
# The GPU checks in one device run: the CUDA probe row, Unload Text Encoders, the tracer against CUDA, Fit to Card,
# and the untiled VAE decode peaks under inference mode.
#
#   here:   COMFYUI_DIR=/path/to/ComfyUI bash benchmarks/gpu_checks.sh prepare   # ComfyUI + 2 wheels into build/gg_gpu
#   device: bash benchmarks/gpu_checks.sh run [probe trace unload fit peaks need large nocudnn context fitasync needasync]
#           (default: probe trace unload fit, in that
#           order; named checks run in the order named; carry build/gg_gpu; logs go to $OUT, default
#           benchmarks/results/gpu_logs; TRACE_S, PEAKS_S, FIT_S override those checks' timeouts)
#   here:   python scripts/gpu_results_from_logs.py                         # tables -> benchmarks/results/gpu_*.json
#
# The device machine has torch but neither ComfyUI nor torchsde/trampoline nor PyAV: ComfyUI travels as a copy,
# the two wheels are installed with --target, and PyAV is a stand-in (benchmarks/gpu_stubs/av: import only).
# Each check has its own timeout and one failing does not stop the next; a results file is copied to $OUT only
# when this run wrote it (the checkout's committed one is never passed off as new).
set -u
cd "$(dirname "$0")/.."
G=build/gg_gpu
if [ "${1:-}" = prepare ]; then
  mkdir -p $G/whl && rm -rf $G/ComfyUI && cp -r "${COMFYUI_DIR:?set COMFYUI_DIR}" $G/ComfyUI
  rm -rf $G/ComfyUI/models $G/ComfyUI/output $G/ComfyUI/.git
  python3 -m pip download -q --no-deps --only-binary=:all: -d $G/whl torchsde==0.2.6 trampoline==0.1.2
  du -sh $G; exit 0
fi
[ "${1:-}" = run ] || { echo "usage: $0 prepare | run [probe trace unload fit peaks]" >&2; exit 2; }
shift
CHECKS=" ${*:-probe trace unload fit} "
for c in $CHECKS; do case $c in probe|trace|unload|fit|peaks|need|large|nocudnn|context|fitasync|needasync) ;; *) echo "unknown check: $c" >&2; exit 2;; esac; done
# Fit to Card alone may take longer; every timeout together stays well under the device's 600 s a command
if [ "$CHECKS" = " fit " ] || [ "$CHECKS" = " fit peaks " ]; then FIT_S=${FIT_S:-360}; else FIT_S=${FIT_S:-200}; fi
OUT=${OUT:-benchmarks/results/gpu_logs}; mkdir -p "$OUT"
START=$(mktemp)
python3 -m pip install -q --no-index --no-deps --no-compile --target /tmp/site $G/whl/*.whl 2>&1 | grep -v "already exists"
export PYTHONPATH=$PWD/benchmarks/gpu_stubs:/tmp/site PYTHONUNBUFFERED=1 COMFYUI_DIR=$PWD/$G/ComfyUI
quiet() { grep -v "^WARNING\|comfy_kitchen"; }
fresh() { if [ "$1" -nt "$START" ]; then cp "$1" "$OUT/$2"; else echo "$1: not written by this run ($3)"; fi; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$OUT/nvidia_smi.txt"
python3 -c "import torch;print('torch',torch.__version__,'cuda',torch.version.cuda,'cudnn',torch.backends.cudnn.version())" | tee -a "$OUT/nvidia_smi.txt"
probe() { timeout 40 python3 benchmarks/bench_probe.py --n 300 2>&1 | tee "$OUT/probe.txt"; }
trace() { timeout "${TRACE_S:-150}" python3 benchmarks/gpu_trace_vs_cuda.py 2>&1 | quiet | tee "$OUT/trace_vs_cuda.txt"; }
unload() { timeout 130 python3 benchmarks/gpu_unload.py --workdir /tmp/ggu 2>&1 | quiet | tee "$OUT/unload.txt"; }
fit() {
  timeout "$FIT_S" python3 benchmarks/gpu_fit_to_card.py --workdir /tmp/ggw --time-limit $((FIT_S - 60)) 2>&1 | quiet | tee "$OUT/fit_to_card.txt"
  fresh benchmarks/results/gpu_fit_to_card.json gpu_fit_to_card.json "see fit_to_card.txt"
}
# the untiled decode peaks of each family's VAE (fit's three and Wan 2.2's at its own 1280x704x121)
peaks() {
  timeout "${PEAKS_S:-120}" python3 benchmarks/gpu_fit_to_card.py --decode-peaks --family sdxl flux1 wan21 wan22 --workdir /tmp/ggw 2>&1 | quiet | tee "$OUT/decode_peaks.txt"
  fresh benchmarks/results/gpu_fit_vae_decode.json gpu_fit_vae_decode_inference.json "see decode_peaks.txt"
}
# the smallest room each untiled decode runs in, the allocator capped (bisection)
need() {
  timeout 200 python3 benchmarks/gpu_fit_to_card.py --decode-need --family wan21 sdxl wan22 --workdir /tmp/ggw 2>&1 | quiet | tee "$OUT/decode_need.txt"
  fresh benchmarks/results/gpu_fit_vae_decode_need.json gpu_fit_vae_decode_need.json "see decode_need.txt"
}
# fit and need again as ComfyUI's main.py runs: the cudaMallocAsync backend, the smaller card made by holding the rest
# of it outside PyTorch (a fraction caps only the native allocator); results under their own names
fitasync() {
  timeout "$FIT_S" python3 benchmarks/gpu_fit_to_card.py --emulate ballast --allocator async --workdir /tmp/ggw --time-limit $((FIT_S - 60)) 2>&1 | quiet | tee "$OUT/fit_to_card_ballast_async.txt"
  fresh benchmarks/results/gpu_fit_to_card_ballast_async.json gpu_fit_to_card_ballast_async.json "see fit_to_card_ballast_async.txt"
}
needasync() {
  timeout 200 python3 benchmarks/gpu_fit_to_card.py --decode-need --emulate ballast --allocator async --family wan21 sdxl wan22 --workdir /tmp/ggw 2>&1 | quiet | tee "$OUT/decode_need_ballast_async.txt"
  fresh benchmarks/results/gpu_fit_vae_decode_need_ballast_async.json gpu_fit_vae_decode_need_ballast_async.json "see decode_need_ballast_async.txt"
}
# two video decodes at their models' own sizes, too slow for the default list
large() { timeout 170 python3 benchmarks/gpu_trace_vs_cuda.py --cases wan22:decode:1280x704x121,hunyuan-video:decode:1280x720x129 2>&1 | quiet | tee "$OUT/trace_vs_cuda_large.txt"; }
# the decodes again with cuDNN off: what its convolution algorithms save against PyTorch's own
nocudnn() { timeout 120 python3 benchmarks/gpu_trace_vs_cuda.py --no-cudnn --cases sd1:decode:512x512,sdxl:decode:1024x1024,wan21:decode:832x480x17,qwen-image:decode:1024x1024,ltxv:decode:768x512x97,hunyuan-video:decode:848x480x61 2>&1 | quiet | tee "$OUT/trace_vs_cuda_no_cudnn.txt"; }
context() { timeout 60 python3 benchmarks/gpu_cuda_context.py 2>&1 | tee "$OUT/cuda_context.txt"; }
for c in $CHECKS; do $c; done
rm -f "$START"
