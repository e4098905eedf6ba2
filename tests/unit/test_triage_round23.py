"""Triage round 23 (batches 44-45, after first sight): the Vulkan validation layer's refusal of one buffer over
maxBufferSize (VUID-VkBufferCreateInfo-size-06409). Lines written from the layer's format (layers/stateless/sl_buffer.cpp:
"vkCreateBuffer(): pCreateInfo->size (%llu) is larger than the maximum allowed buffer size
VkPhysicalDeviceMaintenance4Properties.maxBufferSize (%llu)."; releases before 2023: "vkCreateBuffer: pCreateInfo->size is
larger than the maximum allowed buffer size VkPhysicalDeviceMaintenance4Properties.maxBufferSize", no numbers)."""
import pytest

from support.triage_event import last_event
from gpu_garden.memory.triage import engine

VUID = "Validation Error: [ VUID-VkBufferCreateInfo-size-06409 ] Object 0: handle = 0x5581d2e0, type = VK_OBJECT_TYPE_DEVICE;\n"
NEW = ("vkCreateBuffer(): pCreateInfo->size (5368709120) is larger than the maximum allowed buffer size "
       "VkPhysicalDeviceMaintenance4Properties.maxBufferSize (4294967296).\n")
OLD = ("vkCreateBuffer: pCreateInfo->size is larger than the maximum allowed buffer size "
       "VkPhysicalDeviceMaintenance4Properties.maxBufferSize\n")
SPEC = "The Vulkan spec states: size must be less than or equal to VkPhysicalDeviceMaintenance4Properties::maxBufferSize\n"
LLAMA_VK = ("ggml_vulkan: Found 1 Vulkan devices:\n"
            "ggml_vulkan: 0 = AMD Radeon Pro VII (RADV VEGA20) (radv) | uma: 0 | fp16: 1 | warp size: 64\n"
            "load_tensors: offloading 48 repeating layers to GPU\n")


@pytest.mark.parametrize("log", [NEW, VUID + NEW + SPEC, LLAMA_VK + VUID + NEW + SPEC])
def test_the_layers_maxbuffersize_refusal_is_one_buffer_over_a_cap(log):
    res, ev = last_event(log)
    assert ev["kind"] == "vulkan.max_buffer" and ev["device_kind"] == "vulkan", ev["kind"]
    assert ev["numbers"] == {"requested": 5 * 2**30, "max_allowed": 4 * 2**30}, ev["numbers"]
    assert res["cause"] == "other" and ev["causes"][0]["confidence"] >= 0.9, ev["causes"][:2]
    assert ev["runtime"] == "llama.cpp", ev["runtime"]
    assert ev["guide"]["id"] == "vulkan-max-buffer" and "Vulkan Configurator" in ev["guide"]["markdown"]


def test_the_older_form_without_numbers_is_read_the_same():
    res, ev = last_event(OLD)
    assert (ev["kind"], ev["numbers"], res["cause"]) == ("vulkan.max_buffer", {}, "other")


def test_the_evidence_names_both_sizes_and_the_layer():
    _, ev = last_event(NEW)
    why = " ".join(ev["causes"][0]["evidence"])
    assert "5.00 GiB" in why and "4.00 GiB" in why and "layer" in why, why


def test_runtime_comes_from_the_log_around_it():
    # the layer serves any Vulkan program: Ollama's server log names Ollama
    _, ev = last_event('time=2025-03-01T10:00:00Z level=INFO source=server.go:405 msg="starting llama server" cmd="ollama runner"\n' + NEW)
    assert ev["runtime"] == "ollama", ev["runtime"]


@pytest.mark.parametrize("line", [
    "ValueError: the pickled object size is larger than the maximum allowed buffer size\n",    # python-blosc
    "vkCreateBuffer(): pCreateInfo->size (4096) must not be 0\n",
])
def test_other_buffer_size_words_are_no_failure(line):
    assert not engine.triage_text(line)["found"]


def test_ggml_own_limit_message_gets_the_same_guide():
    _, ev = last_event(LLAMA_VK + "ggml_vulkan: Requested buffer size exceeds device memory allocation limit: ErrorOutOfDeviceMemory\n")
    assert ev["kind"] == "ggml.vulkan_limit" and ev["guide"]["id"] == "vulkan-max-buffer", (ev["kind"], ev["guide"]["id"])


# llama.cpp's speculative MTP draft path: the server's command line and the compute-buffer failure as llama.cpp prints them
MTP_CMD = "$ llama-server -m Qwen3-30B-A3B-MTP-Q4_K_M.gguf -c 65536 --spec-type draft-mtp --parallel 4\n"
COMPUTE_FAIL = ("ggml_backend_cuda_buffer_type_alloc_buffer: allocating 1204.50 MiB on device 0: cudaMalloc failed: out of memory\n"
                "ggml_gallocr_reserve_n_impl: failed to allocate CUDA0 buffer of size 1263010816\n"
                "llama_init_from_model: failed to allocate compute buffers\n")


@pytest.mark.parametrize("cmd", [MTP_CMD, MTP_CMD.replace("--spec-type draft-mtp", "--spec-type=ngram-mod,draft-mtp")])
def test_an_mtp_draft_run_is_told_about_gpu_draft_sampling(cmd):
    res, ev = last_event(cmd + COMPUTE_FAIL)
    assert res["cause"] == "activations" and ev["guide"]["id"] == "llamacpp-activations", (res["cause"], ev["guide"]["id"])
    assert "--no-spec-draft-backend-sampling" in ev["guide"]["markdown"]


@pytest.mark.parametrize("cmd", [MTP_CMD.replace("--parallel 4", "--parallel 4 --no-spec-draft-backend-sampling"),
                                 MTP_CMD.replace("draft-mtp", "draft-simple"),
                                 "$ llama-server -m Qwen3-30B-A3B-Q4_K_M.gguf -c 65536 --parallel 4\n"])
def test_no_mtp_hint_without_gpu_draft_sampling(cmd):
    _, ev = last_event(cmd + COMPUTE_FAIL)
    assert "--no-spec-draft-backend-sampling" not in ev["guide"]["markdown"]
