"""Round 9 (tuned on regression batches 01-28): formats read from the runtimes' own sources. FlashInfer's AlignedAllocator
(include/flashinfer/allocator.h) overflowing the fixed workspace its caller allocated; LMDeploy's TurboMind CUDA check
(src/turbomind/utils/allocator.h); ggml's old CUDA check quoted without its location ("CUDA error 2: out of memory");
MLX's per-buffer maximum quoted without its "[metal::malloc]" prefix; Electron's render-process-gone with reason "oom"
(Comfy Desktop's window). Each test fails when its pattern or its row goes."""
from gpu_garden.memory.triage import engine, parse
from support.triage_event import last_event as _event

# vLLM 0.19 with the FlashInfer backend on B300 at a high --max-num-seqs (the form of the vllm-project/vllm report on
# nvidia/Qwen3.5-397B-A17B-NVFP4: a plan's temporary over the workspace left)
FLASHINFER = ("$ vllm serve nvidia/Qwen3.5-397B-A17B-NVFP4 --attention-backend FLASHINFER --max-num-seqs 528\n"
              "RuntimeError: Error in function 'aligned_alloc' at /workspace/include/flashinfer/allocator.h:49: Buffer overflow "
              "when allocating memory for batch_prefill_tmp_v with size 536346624 and alignment 16, but only 413138944 bytes "
              "available in AlignedAllocator. Increase the workspace buffer size.\n")
# FlashInfer before 0.2 (SGLang's scheduler, sgl-project/sglang#2102's form)
FLASHINFER_OLD = "RuntimeError: Failed to allocate memory for batch_prefill_tmp_v with size 435814400 and alignment 16 in AlignedAllocator"
# LMDeploy's TurboMind aborting under load (InternLM/lmdeploy#277's form)
TURBOMIND = ("terminate called after throwing an instance of 'std::runtime_error'\n"
             "  what():  [TM][ERROR] CUDA runtime error: out of memory /opt/lmdeploy/src/turbomind/utils/allocator.h:223\n")
# Ollama 0.1.12 with ggml's CUDA check as the thread title gives it (ollama/ollama#1465)
OLLAMA_OLD = ("ollama[25964]: 2023/12/11 18:31:37 llama.go:292: 39320 MB VRAM available, loading up to 101 GPU layers\n"
              "ollama[25964]: ggml_init_cublas: found 4 CUDA devices:\n"
              "CUDA error 2: out of memory\n")
# MLX's per-buffer maximum as libc++abi prints the uncaught exception (riccardomusmeci/mlx-llm#22)
MLX_NO_PREFIX = ("libc++abi: terminating due to uncaught exception of type std::runtime_error: Attempting to allocate 19081554496 "
                 "bytes which is greater than the maximum allowed buffer size of 17179869184 bytes.\n")
# Comfy Desktop's app log when Chromium killed the window's renderer (artokun/comfyui-mcp-panel#1952's form)
ELECTRON = "[2026-08-27T18:59:02.379Z] [CRITICAL] render-process-gone reason=oom exitCode=-536870904\n"


def test_flashinfer_workspace_is_the_workspace_not_the_gpu():
    res, ev = _event(FLASHINFER)
    assert ev["numbers"] == {"requested": 536346624, "available": 413138944}
    assert (res["cause"], ev["runtime"]) == ("other", "vllm")
    assert ev["guide"]["id"] == "flashinfer-workspace"
    assert "workspace" in ev["causes"][0]["evidence"][0] and ev["causes"][0]["confidence"] >= 0.8
    assert "VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE" in ev["guide"]["markdown"]


def test_flashinfer_old_form_has_no_available_figure():
    ev = parse.recognise(FLASHINFER_OLD)
    assert ev["kind"] == "flashinfer.workspace" and ev["numbers"] == {"requested": 435814400}
    assert engine.triage_text(FLASHINFER_OLD)["cause"] == "other"


def test_turbomind_is_lmdeploy_and_its_kv_cache():
    res, ev = _event(TURBOMIND)
    assert (ev["runtime"], ev["device_kind"], res["cause"]) == ("lmdeploy", "cuda", "kv-cache")
    assert ev["guide"]["id"] == "lmdeploy" and "--cache-max-entry-count" in ev["guide"]["markdown"]


def test_ggml_cuda_code_without_location_in_ollama_is_its_estimate():
    res, ev = _event(OLLAMA_OLD)
    assert (ev["runtime"], ev["device_kind"]) == ("ollama", "cuda")
    assert res["cause"] == "other"
    # a line that only contains the words is not the check
    assert parse.recognise("the thread says CUDA error 2: out of memory happens on 0.1.12") is None


def test_mlx_buffer_maximum_without_prefix():
    res, ev = _event(MLX_NO_PREFIX)
    assert (ev["runtime"], ev["device_kind"]) == ("mlx", "metal")
    assert ev["numbers"] == {"requested": 19081554496, "max_allowed": 17179869184}
    # (tri67) 1.11 times the cap: docs/triage-causes.md R5 reads a per-buffer cap the machine's memory would hold as other
    # (rules_other.mlx_cap_within_memory); the thread's label, activations, is the one R5 lists against its majority, and
    # MLX's working-array row still fires, second
    assert res["cause"] == "other"
    assert [c["id"] for c in ev["causes"][:2]] == ["other", "activations"]


def test_electron_renderer_oom_is_the_window_not_the_gpu():
    res, ev = _event(ELECTRON)
    assert (ev["runtime"], ev["device_kind"], res["cause"]) == ("comfyui", "cpu", "leak")
    assert ev["guide"]["id"] == "electron-renderer"
    assert parse.recognise("render-process-gone reason=crashed exitCode=-1073741819") is None


# ComfyUI on the torch 2.9.0+cu128 wheel (cuDNN 91002) decoding a Wan video (the form of Comfy-Org/ComfyUI#10373's reports)
def _vae_log(torch_version, extra=""):
    return (f"pytorch version: {torch_version}\n"
            "Device: cuda:0 NVIDIA GeForce RTX 4090 : cudaMallocAsync\n" + extra +
            "Requested to load WanVAE\n"
            "!!! Exception during processing !!! Allocation on device 0 would exceed allowed memory. (out of memory)\n"
            "Currently allocated     : 17.02 GiB\n"
            "Requested               : 5.06 GiB\n"
            "Device limit            : 23.99 GiB\n"
            "Free (according to CUDA): 1.12 GiB\n"
            "PyTorch limit (set by user-supplied memory fraction)\n"
            "                        : 17179869184.00 GiB\n"
            "Traceback (most recent call last):\n"
            '  File "/ComfyUI/nodes.py", line 296, in decode\n'
            "    images = vae.decode(samples[\"samples\"])\n")


def _conv3d_note(res):
    return [e for c in res["events"][-1]["causes"] for e in c["evidence"] if "conv3d" in e]


def test_torch29_conv3d_regression_is_named_on_a_vae_decode():
    res = engine.triage_text(_vae_log("2.9.0+cu128"))
    assert res["cause"] == "vae-decode" and _conv3d_note(res)
    assert "working around nvidia conv3d memory bug" in res["events"][-1]["guide"]["markdown"]
    # other versions, or a ComfyUI that already works around it, do not get the note
    assert not _conv3d_note(engine.triage_text(_vae_log("2.8.0+cu128")))
    assert not _conv3d_note(engine.triage_text(_vae_log("2.9.0+cu128", "working around nvidia conv3d memory bug.\n")))


# oMLX's scheduler stopping a long prefill at its memory ceiling (jundot/omlx#1522's lines)
OMLX = ("omlx.scheduler - WARNING - Prefill force-stopped at 1441 tokens: memory 42.8GB exceeds ceiling 42.0GB\n"
        "omlx.scheduler - ERROR   - Prefill failed for chatcmpl-5d1e: Memory limit exceeded during prefill\n")


def test_omlx_prefill_ceiling_is_the_prefill_working_memory():
    res, ev = _event(OMLX)
    assert (ev["runtime"], ev["device_kind"], res["cause"]) == ("mlx", "metal", "activations")
    assert ev["numbers"]["allocated"] > ev["numbers"]["max_allowed"] > 0
    assert "prefill" in ev["causes"][0]["evidence"][0]


# PyTorch's message with every number cut, as a script's user quotes it (Nightmare-n/DepthAnyVideo#9's form)
TORCH_NO_NUMBERS = ("torch.OutOfMemoryError: CUDA out of memory. See documentation for Memory Management  "
                    "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)\n")


def test_torch_message_without_numbers_in_a_script_leans_to_the_workload():
    res, ev = _event(TORCH_NO_NUMBERS)
    assert (ev["runtime"], res["cause"]) == ("pytorch", "activations")
    assert ev["causes"][0]["confidence"] <= 0.6        # weakly: the numbers that would decide are cut
