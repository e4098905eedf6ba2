"""Triage round 16: out-of-memory messages that were not recognised at all, and what their numbers imply, written from the
runtimes' own strings (each with a control that keeps its old reading)."""
import pytest

from support.triage_event import fired, last_event, top as _top
from gpu_garden.memory.triage import parse as P
from gpu_garden.memory.units import GiB, MiB


# --- cudaMallocAsync's report broken after the device (a GUI dialog, a narrow terminal) ------------------------------------
# c10/cuda/CUDAMallocAsyncAllocator.cpp: "Allocation on device N would exceed allowed memory. (out of memory)" and then, one a
# line, "Currently allocated     : ", "Requested               : ", "Device limit            : ", "Free (according to CUDA): ",
# "PyTorch limit (set by user-supplied memory fraction)" with its value on the next line

ASYNC_BLOCK = ("Currently allocated     : 5.10 GiB\n"
               "Requested               : 1.25 GiB\n"
               "Device limit            : 7.78 GiB\n"
               "Free (according to CUDA): 912.00 MiB\n"
               "PyTorch limit (set by user-supplied memory fraction)\n"
               "                        : 17179869184.00 GiB\n")


@pytest.mark.parametrize("head", [
    "torch.OutOfMemoryError: Allocation on device 0 would exceed allowed memory. (out of memory)\n",
    "Error: Allocation on device 0\nwould exceed allowed memory. (out of memory)\n",
    "would exceed allowed memory. (out of memory)\n",
])
def test_the_async_message_is_read_whole_broken_or_from_its_second_half(head):
    res, ev = last_event(head + ASYNC_BLOCK)
    assert ev["kind"] == "torch.cuda_async", ev["kind"]
    n = ev["numbers"]
    assert (n["allocated"], n["requested"], n["device_limit"], n["free"]) == (
        round(5.10 * GiB), round(1.25 * GiB), round(7.78 * GiB), 912 * MiB), n


def test_the_async_block_reflowed_without_its_colons_keeps_its_numbers():
    # a dialog that reflows the block drops the padded colons
    text = ("Allocation on device 0\nwould exceed allowed memory. (out of memory)\nCurrently allocated: 5.10 GiB\n"
            "Requested 1.25 GiB\nDevice limit 7.78 GiB\nFree (according to CUDA): 912.00 MiB\n")
    res, ev = last_event(text)
    n = ev["numbers"]
    assert (n["requested"], n["device_limit"]) == (round(1.25 * GiB), round(7.78 * GiB)), n


def test_prose_about_an_allowed_amount_is_not_the_async_message():
    assert P.recognise("this would exceed allowed memory for the job, so it was queued") is None
    assert P.recognise("Requested 1.25 GiB") is None


# --- vLLM, a hybrid model's state blocks (config/compilation.py resolve_cudagraph_mode_and_sizes, vllm#34094) --------------

MAMBA = ("ValueError: max_num_seqs (512) exceeds available Mamba cache blocks (301). Each decode sequence requires one Mamba "
         "cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 301 or increase "
         "gpu_memory_utilization.\n")


def test_vllm_mamba_blocks_read_as_the_state_cache_with_its_cap():
    cause, c, ev = _top(MAMBA)
    assert ev["kind"] == "vllm.mamba_blocks" and ev["runtime"] == "vllm" and cause == "kv-cache", c
    assert ev["numbers"] == {"max_num_seqs_count": 512, "mamba_blocks_count": 301}
    assert ev["guide"]["id"] == "vllm-mamba-blocks"
    assert "--max-num-seqs 301" in ev["guide"]["commands"][0]["text"]


def test_vllm_mamba_message_relayed_by_the_engine_core_is_read_too():
    # v1's engine core relays a worker's exception inside its own line
    res, ev = last_event("(EngineCore_DP0 pid=812) RuntimeError: Worker failed with error '" + MAMBA.strip().split(": ", 1)[1] + "'\n")
    assert ev["kind"] == "vllm.mamba_blocks" and ev["numbers"]["mamba_blocks_count"] == 301


def test_vllm_mamba_prose_without_the_numbers_is_not_a_failure():
    assert P.recognise("--max-num-seqs must stay under the available Mamba cache blocks") is None


# --- MSVC's std::bad_alloc ("bad allocation") and Android's low-memory killer --------------------------------------------------

@pytest.mark.parametrize("line", [
    "Microsoft.ML.OnnxRuntime.OnnxRuntimeException: [ErrorCode:RuntimeException] bad allocation",
    "Error: bad allocation",
])
def test_msvc_bad_allocation_is_a_host_allocation_failure(line):
    ev = P.recognise(line)
    assert ev and ev["kind"] == "cpp.bad_alloc" and ev["device_kind"] == "cpu", ev


def test_bad_allocation_in_prose_is_not_read():
    assert P.recognise("this looks like a bad allocation strategy in the loader") is None


def test_android_lmkd_kill_reads_as_the_oom_killer_with_the_apps_resident_size():
    # lmkd (system/memory/lmkd/lmkd.cpp): "Kill '%s' (%d), uid %d, oom_score_adj %d to free %ldkB rss, %ldkB swap; reason: %s"
    line = ("05-02 11:40:21.118  1310  1310 I lowmemorykiller: Kill 'org.example.camera' (9142), uid 10211, oom_score_adj 0 "
            "to free 1918244kB rss, 102400kB swap; reason: device is low on swap (12%) and thrashing (430%)")
    ev = P.recognise(line)
    assert ev and ev["kind"] == "os.oom_killer" and ev["device_kind"] == "cpu", ev
    assert ev["numbers"] == {"this_process": 1918244 * 1024}


def test_the_kernel_lowmemorykiller_line_without_its_size_is_read_too():
    # drivers/staging/android/lowmemorykiller.c: "Killing '%s' (%d), adj %hd,\n   to free %ldkB on behalf of ..."
    ev = P.recognise("[ 5123.441871] lowmemorykiller: Killing 'droid.launcher3' (2281), adj 900,")
    assert ev and ev["kind"] == "os.oom_killer" and ev["numbers"] == {}, ev


def test_lowmemorykiller_settings_are_not_a_kill():
    assert P.recognise("I lowmemorykiller: Using psi monitors for memory pressure detection") is None


# --- a cudaMallocAsync device limit larger than the card ComfyUI measured at start; ComfyUI's low-VRAM mode ---------------------
# ComfyUI (comfy/model_management.py) prints "Total VRAM N MB, total RAM M MB" from torch.cuda.mem_get_info at start, and
# "Set vram state to: LOW_VRAM" when --lowvram is given (older ComfyUI also on a card of 4 GB or less): it then keeps only part of
# each model in VRAM

def _comfy_async(state="LOW_VRAM", limit="11.50 GiB"):
    return ("Total VRAM 3072 MB, total RAM 15934 MB\n"
            + (f"Set vram state to: {state}\n" if state else "")
            + "Device: cuda:0 NVIDIA GeForce GTX 1060 3GB : cudaMallocAsync\n"
            "!!! Exception during processing !!! Allocation on device 0 would exceed allowed memory. (out of memory)\n"
            "Currently allocated     : 2.10 GiB\nRequested               : 400.00 MiB\n"
            f"Device limit            : {limit}\nFree (according to CUDA): 90.00 MiB\n")


def test_a_device_limit_past_the_start_up_total_is_replaced_by_the_card():
    cause, c, ev = _top(_comfy_async())
    assert cause == "weights-exceed-vram", c          # with the 11.50 GiB limit, 9.3 GiB "outside": another program
    ev_text = " ".join(ev["causes"][0]["evidence"])
    assert "of the 3.00 GiB card" in ev_text and "11.50 GiB device limit" in ev_text, ev_text
    assert ev["numbers"]["device_limit"] == round(11.5 * GiB)      # the message's own number is kept as printed


def test_without_low_vram_mode_the_same_numbers_stay_the_working_tensors():
    cause, c, ev = _top(_comfy_async(state=None))
    assert cause == "activations" and "weights-exceed-vram" not in fired(ev), c     # (alt1) only as the runner-up


def test_normal_vram_mode_is_not_low_vram():
    cause, c, ev = _top(_comfy_async(state="NORMAL_VRAM"))
    assert "weights-exceed-vram" not in fired(ev), c


def test_a_device_limit_that_matches_the_card_is_kept():
    # 3.10 GiB on a card ComfyUI measured at 3072 MB: the limit is the card, nothing replaced
    cause, c, ev = _top(_comfy_async(limit="3.10 GiB"))
    assert "of the 3.10 GiB card" in " ".join(ev["causes"][0]["evidence"] + [e for x in ev["causes"] for e in x["evidence"]])


# --- node types: ComfyUI's image-to-video conditioning nodes, upscale-model loaders, kijai's DownloadAndLoad*Model -----------

@pytest.mark.parametrize("node,cat", [
    # comfy_extras/nodes_wan.py, nodes_lt.py, nodes_hunyuan.py, nodes_cosmos.py: vae.encode of the start frames is their GPU work
    ("WanImageToVideo", "vae-decode"), ("LTXVImgToVideo", "vae-decode"), ("HunyuanImageToVideo", "vae-decode"),
    ("CosmosImageToVideoLatent", "vae-decode"), ("WanVaceToVideo", "vae-decode"),
    # the image-to-video text encode is still the text encoder
    ("TextEncodeHunyuanVideo_ImageToVideo", "text-encoder"),
    # the upscale model's loader loads weights; running it is the upscale's working tensors
    ("UpscaleModelLoader", "weights-exceed-vram"), ("ImageUpscaleWithModel", "activations"),
    # kijai's wrappers fetch and place a model in one node
    ("DownloadAndLoadCogVideoModel", "weights-exceed-vram"), ("DownloadAndLoadFlorence2Model", "weights-exceed-vram"),
    ("DownloadAndLoadHyVideoTextEncoder", "text-encoder"),
    ("KSampler", "activations"),
])
def test_node_types_name_their_phase(node, cat):
    from gpu_garden.memory.triage import categories as C
    assert C.node_category(node) == cat


def test_an_image_to_video_node_in_the_error_report_reads_as_the_vae():
    # ComfyUI's error report (app/logger, the frontend's "ComfyUI Error Report") with the allocator's cut message
    log = ("# ComfyUI Error Report\n## Error Details\n- **Node ID:** 52\n- **Node Type:** WanImageToVideo\n"
           "- **Exception Type:** torch.OutOfMemoryError\n- **Exception Message:** Allocation on device \n")
    cause, c, ev = _top(log)
    assert cause == "vae-decode", c


# --- Ollama's server relaying its runner's end names Ollama as the runtime of the error it relays ----------------------------
# (llm/server.go: "llama runner process has terminated: <the runner's last error>"; a cuBLAS or CUDA error inside it is
# ggml's CUDA backend in Ollama's runner, not PyTorch's CUDA check)

@pytest.mark.parametrize("log", [
    "Error: llama runner process has terminated: CUDA error: CUBLAS_STATUS_ALLOC_FAILED\n",
    "CUDA error: out of memory\nError: llama runner process has terminated: CUDA error: CUBLAS_STATUS_ALLOC_FAILED\n",
])
def test_an_error_relayed_by_ollamas_server_is_ollamas(log):
    res, ev = last_event(log)
    assert ev["runtime"] == "ollama" and res["cause"] == "other", (ev["runtime"], ev["causes"])
    assert "estimate" in ev["causes"][0]["evidence"][0]


def test_the_same_cuda_check_without_the_relay_stays_pytorchs():
    res, ev = last_event("RuntimeError: CUDA error: out of memory\n")
    assert ev["runtime"] == "pytorch"


# --- the stream executor's paths: TensorFlow >= 2.15 builds XLA as external/local_xla, JAX as external/xla -------------------

@pytest.mark.parametrize("prefix,runtime", [
    ("external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:1509", "tensorflow"),     # TensorFlow 2.15+
    ("external/xla/xla/stream_executor/cuda/cuda_driver.cc:1609", "jax"),                  # jaxlib 0.4.2x
    ("external/org_tensorflow/tensorflow/compiler/xla/stream_executor/cuda/cuda_driver.cc:802", "jax"),   # older jaxlib
    ("tensorflow/stream_executor/cuda/cuda_driver.cc:789", "tensorflow"),                  # TensorFlow 1.x/2.x before XLA moved
])
def test_the_stream_executor_path_names_its_runtime(prefix, runtime):
    ev = P.recognise(f"2024-03-02 10:11:12.345678: I {prefix}] failed to allocate 3.41G (3661365248 bytes) from device: "
                     "CUDA_ERROR_OUT_OF_MEMORY: out of memory")
    assert ev and ev["kind"] == "cuda.driver" and ev["runtime"] == runtime, ev


def test_the_guide_sizes_its_reserve_on_the_start_up_card_too():
    # the guide's numbers follow the same card as the ranking: 3072 MB less 90 MiB free less 2.10 GiB allocated leaves
    # 0.81 GiB outside PyTorch, + 0.5 = --reserve-vram 1.4 (above the 310 MiB shortfall + 0.6, under half the card).
    # The 11.50 GiB limit would put 9.3 GiB outside PyTorch and ask for 5.8
    _, ev = last_event(_comfy_async())
    cmds = " ".join(c["text"] for c in ev["guide"]["commands"])
    assert "--reserve-vram 1.4" in cmds, cmds


def test_a_larger_second_gpu_keeps_its_own_limit():
    # ComfyUI-MultiGPU: "Total VRAM" is the 8 GB card ComfyUI started on, the error is on device 1 (a 24 GB card) and
    # PyTorch holds 20 GiB there: more than the start-up card could hold, so the 23.57 GiB limit is that GPU's own
    text = ("Total VRAM 8192 MB, total RAM 65536 MB\nDevice: cuda:0 NVIDIA GeForce RTX 3070 : cudaMallocAsync\n"
            "!!! Exception during processing !!! Allocation on device 1 would exceed allowed memory. (out of memory)\n"
            "Currently allocated     : 20.00 GiB\nRequested               : 2.00 GiB\n"
            "Device limit            : 23.57 GiB\nFree (according to CUDA): 1.20 GiB\n")
    _, c, ev = _top(text)
    ev_text = " ".join(e for x in ev["causes"] for e in x["evidence"])
    assert "23.57 GiB" in ev_text and "of the 8.00 GiB card" not in ev_text, ev_text
