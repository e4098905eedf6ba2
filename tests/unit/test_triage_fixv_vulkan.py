"""(fixV) Vulkan's VK_ERROR_OUT_OF_DEVICE_MEMORY outside llama.cpp: the driver's words alone name no program (runtime
"vulkan", generic Vulkan advice, no -ngl), Omniverse Kit's renderer line is Isaac Sim's (kit-vulkan guide), and MLC LLM's
gets MLC's knobs. Hand-made lines in each program's own form; llama.cpp's own Vulkan lines keep their reading."""
import pytest

from support.triage_event import last_event

BARE = ["vkAllocateMemory failed: VK_ERROR_OUT_OF_DEVICE_MEMORY\n",
        "ERROR: VK_ERROR_OUT_OF_DEVICE_MEMORY\nAborted (core dumped)\n",
        "terminate called after throwing an instance of 'vk::OutOfDeviceMemoryError'\n"
        "  what():  vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n"]
KIT = ("2026-03-02 10:15:04 [Info] [omni.kit.app.plugin] Isaac Sim Full Version: 4.5.0\n"
       "2026-03-02 10:15:40 [Error] [carb.graphics-vulkan.plugin] VkResult: ERROR_OUT_OF_DEVICE_MEMORY\n"
       "2026-03-02 10:15:40 [Error] [gpu.foundation.plugin] Failed to allocate memory for buffer\n")
MLC = ("$ mlc_llm chat HF://mlc-ai/Llama-2-7b-chat-hf-q0f16-MLC --device vulkan\n"
       "[vulkan_buffer.cc:61] InternalError: Check failed: (__e == VK_SUCCESS) is false: Vulkan Error, code=-2: "
       "VK_ERROR_OUT_OF_DEVICE_MEMORY\n")


def _advice(ev):
    return " ".join(c["text"] for c in ev["guide"]["commands"])


@pytest.mark.parametrize("text", BARE, ids=["vkAllocateMemory", "bare", "vulkan-hpp"])
def test_the_drivers_words_alone_name_no_program(text):
    res, ev = last_event(text)
    assert (res["cause"], ev["runtime"], ev["device_kind"], ev["guide"]["id"]) == ("other", "vulkan", "vulkan", "vulkan-device-memory")
    assert "runtime not recognised" in ev["causes"][0]["evidence"][0]
    assert "-ngl" not in _advice(ev) and "PYTORCH_CUDA_ALLOC_CONF" not in ev["guide"]["markdown"]


@pytest.mark.parametrize("before", ["ggml_vulkan: Found 1 Vulkan devices:\n",
                                    "load_tensors:      Vulkan0 model buffer size =  4168.09 MiB\n",
                                    "model manager staged compute params (235.06 MB, 196 tensors, 4 blocks) to Vulkan0\n",
                                    "llama_model_load: error loading model: "])
def test_ggml_around_the_same_words_keeps_llama_cpp(before):
    _, ev = last_event(before + "vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n")
    assert ev["runtime"] == "llama.cpp", before


def test_ggml_vulkans_own_wording_keeps_llama_cpp():
    _, ev = last_event("ggml_vulkan: Device memory allocation of size 1073741824 failed.\n"
                       "ggml_vulkan: vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n")
    assert (ev["runtime"], ev["guide"]["id"]) == ("llama.cpp", "llamacpp-weights")


def test_kit_renderer_is_isaac_sims():
    for text in (KIT, "[Error] [carb.graphics-vulkan.plugin] VkResult: ERROR_OUT_OF_DEVICE_MEMORY\n"):
        res, ev = last_event(text)
        assert (res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev["guide"]["id"]) == (
            "other", "kit.vulkan", "isaacsim", "vulkan", "kit-vulkan")
        assert "--headless" in _advice(ev) and "PYTORCH_CUDA_ALLOC_CONF" not in ev["guide"]["markdown"]
    # Kit's host form is system RAM, not this reading (fixY reads it: test_triage_fixy_kit_host.py)
    res, ev = last_event(KIT.replace("DEVICE_MEMORY", "HOST_MEMORY"))
    assert (res["cause"], ev["device_kind"]) == ("host-ram", "cpu") and ev["guide"]["id"] != "kit-vulkan"


def test_mlc_llm_gets_its_own_knobs():
    res, ev = last_event(MLC)
    assert (ev["runtime"], ev["guide"]["id"]) == ("mlc-llm", "mlc-llm")
    assert "q4f16_1" in ev["guide"]["markdown"] and "-ngl " not in ev["guide"]["markdown"]
