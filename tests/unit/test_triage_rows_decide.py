"""Rules added in triage round 2 whose removal no other unit test noticed.

test_triage_unseen.py only holds the regression sets above a FLOOR share, so dropping a single row that decides one or
two regression cases passes it. The cases below are the regression-set logs (batches the rules were tuned on, see
corpus/unseen/LEDGER.md) that one round-2 row alone decides: each row was removed in turn and these were the cases
that flipped. The messages after them pin what the rows that decide no case add: their evidence line, or their
weight through a confidence worked out by hand from memory/triage/rules.py."""
import pytest

from gpu_garden.memory.triage import engine as triage

from support import unseen_corpus as U

PATHS = {p.name: p for ps in U.batches().values() for p in ps}

# case -> the row (memory/triage/rules.py) without which it is misread
DECIDED_BY_ONE_ROW = {
    "comfyui_hip_ksampleradvanced_wan_reserved.log": 'fragmentation 3.0: slack many times the request',
    "fooocus_directml_6gb_unet_weight_load.log": "weights-exceed-vram 2.5: DirectML names a model parameter (PARAM_RE)",
    "cylinder3d_t4_backward_first_step.log": "activations 1.2: a training step whose frames are not a weight load",
    "fast_sd_colab_hires_vae_attention.log": "vae-decode 1.5: one request of >= 10 % of the card inside VAE code",
    "wanvideo_umt5_bf16_12gb.log": "text-encoder 3.0: the traceback source line is a text encoder",
    "swarmui_wan_cuda_error_after_update.log": "host-ram 1.4: PyTorch's bare CUDA check in ComfyUI (pinned memory)",
    "comfyui_pinned_ceiling_lora_cast_5080_laptop.log": "host-ram 1.4: PyTorch's bare CUDA check in ComfyUI (pinned memory)",
    "onnxruntime_cpu_ocr_conv_nchwc_285mb.log": "host-ram 6.0: ONNX Runtime's CPU arena",
}


def test_the_cases_are_in_regression_sets():
    tuned = {b["batch"] for b in U.read_ledger()["batches"] if b.get("tuned_on")}
    for name in DECIDED_BY_ONE_ROW:
        assert PATHS[name].parent.name in tuned, f"{name}: not a regression case (a first-sight case must not steer rules)"


@pytest.mark.parametrize("case", sorted(DECIDED_BY_ONE_ROW))
def test_case_decided_by_one_row_stays_right(case):
    r = U.score(PATHS[case])
    assert r["cause_ok"], f"{case}: got {r['got']}, expected {r['expect']} (row: {DECIDED_BY_ONE_ROW[case]})"


def _causes(log):
    res = triage.triage_text(log)
    return res["cause"], {c["id"]: c for c in res["events"][-1]["causes"]}


def test_ipex_4gb_block_limit_is_a_per_allocation_limit():
    # intel/intel-extension-for-pytorch#325 (the machine line of batch-16's comfyui_ipex_a770_4gb_block_8gib.log):
    # other = 6.0 (the 4 GB block message) + 3.0 (an XPU request >= 4 GiB); activations 2.4 (8.00 of 15.11 GiB >= half)
    cause, c = _causes("Current platform can NOT allocate memory block with size larger than 4GB! Tried to allocate 8.00 GiB "
                       "(GPU  0; 15.11 GiB total capacity; 1.83 GiB already allocated; 1.87 GiB reserved in total by PyTorch)\n")
    assert cause == "other"
    assert c["other"]["confidence"] == round(9.0 / 12.15, 2) and c["activations"]["confidence"] == round(2.4 / 12.15, 2)
    assert any("per-allocation limit" in e for e in c["other"]["evidence"])


# rows that decide no case, and rows whose removal another row hides (the same cause wins without them): what they
# add is their evidence line. (thread, message, cause, a piece of that row's evidence)
EVIDENCE = [
    ("https://github.com/Comfy-Org/ComfyUI/issues/13015",         # Dynamic VRAM's VBAR reservation refused
     "!!! Exception during processing !!! VBAR allocation failed\nMemoryError: VBAR allocation failed\n",
     "other", "virtual address space"),
    # Unified Runtime's enum (oneapi-src/unified-runtime ur_api.h: OUT_OF_HOST_MEMORY = 38, next to OUT_OF_RESOURCES = 40,
    # the form PyTorch XPU raises in test_triage_families.py)
    ("ur_api.h", "RuntimeError: level_zero backend failed with error: 38 (UR_RESULT_ERROR_OUT_OF_HOST_MEMORY)\n",
     "host-ram", "Intel Level Zero could not allocate host"),
    ("https://github.com/pytorch/pytorch/issues/190972",          # a ComfyUI XPU run
     "RuntimeError: level_zero backend failed with error: 40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)\n",
     "other", "Intel Level Zero refused a device allocation"),
    ("https://github.com/kijai/ComfyUI-SUPIR/issues/151",
     "- **Exception Message:** Invalid buffer size: 8.21 GB\n", "activations", "largest Metal buffer"),
    ("https://github.com/patientx/ComfyUI-Zluda/issues/38",       # batch-16's swarm_zluda_flux_gguf_system_memory_98pct.log
     "15:56:37.001 [Warning] Your system memory usage exceeded 98.2% just before the backend process failed. "
     "This might indicate a memory overload.\n", "host-ram", "98.2% used just before the backend died"),
    ("https://github.com/microsoft/onnxruntime/issues/22702",
     "Non-zero status code returned while running Conv node. Name:'/stages.0/blocks.0/mlp/fc1/Conv' Status Message: "
     "bfc_arena.cc:376 Failed to allocate memory for requested buffer of size 4585490524328388608\n", "other", "a size computed wrong"),
    ("https://github.com/Yuliang-Liu/MonkeyOCR/issues/25",        # one Triton kernel 2 bytes over the 64 KiB per-block limit
     "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 65538, Hardware limit: 65536. "
     "Reducing block sizes or `num_stages` may help.\n", "other", "needs 65538 bytes of shared memory per block and this GPU allows 65536"),
]


@pytest.mark.parametrize("thread,log,cause,evidence", EVIDENCE, ids=[e[3][:30] for e in EVIDENCE])
def test_row_evidence(thread, log, cause, evidence):
    got, c = _causes(log)
    assert got == cause, thread
    assert any(evidence in e for e in c[cause]["evidence"]), (thread, c[cause]["evidence"])


# thresholds: a request of twice (or half) the share a row reads must change its answer


def _flux70(requested):
    # black-forest-labs/flux#70 (batch-06's flux_dev_4070_12gb.log): FLUX.1 on a 12 GB RTX 4070, the message alone;
    # the request is varied around predicates.PARAM_SHARE, 5 % of the card (11.99 GiB: 5 % = 613.9 MiB)
    return (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {requested}. GPU 0 has a total capacity of 11.99 GiB of "
            "which 0 bytes is free. Of the allocated memory 10.93 GiB is allocated by PyTorch, and 280.79 MiB is reserved by PyTorch "
            "but unallocated.\n")


def test_a_per_tensor_request_on_a_full_card_reads_as_weights():
    assert triage.triage_text(_flux70("46.00 MiB"))["cause"] == "weights-exceed-vram"     # the thread's 0.4 %
    assert triage.triage_text(_flux70("200.00 MiB"))["cause"] == "weights-exceed-vram"    # 1.6 %
    assert triage.triage_text(_flux70("480.00 MiB"))["cause"] == "weights-exceed-vram"    # 3.9 %: under 5 %, over 2.5 %


def test_a_request_above_the_per_tensor_share_is_not_read_as_weights():
    assert triage.triage_text(_flux70("740.00 MiB"))["cause"] != "weights-exceed-vram"    # 6 %: over 5 %, under 10 %


METAL_STATUS_5 = ("ggml_metal_graph_compute: command buffer 3 failed with status 5\n"        # ollama/ollama#6257
                  "error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n")


def test_metal_command_buffer_at_32k_context_is_the_kv_cache():
    # the row reads a context of 32768 tokens or more (test_triage_families.py has 131072 and 8192: a doubled bound passed)
    log = "llama_new_context_with_model: n_ctx      = 32768\n" + METAL_STATUS_5
    assert triage.triage_text(log)["cause"] == "kv-cache"
    assert triage.triage_text(log.replace("32768", "16384"))["cause"] != "kv-cache"
