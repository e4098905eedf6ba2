"""llama_model_load's "unable to allocate <buffer> buffer" names the device by its buffer, as ggml's other buffer
messages do: one table (servers._GGML_BUF_KIND). Lines from llama.cpp's format ("unable to allocate %s buffer",
ggml_backend_buft_name: CUDA0, ROCm0, Vulkan0, SYCL0, Metal/MTL0, CPU)."""
import pytest

from support.triage_event import last_event


@pytest.mark.parametrize("buf, device", [("Vulkan0", "vulkan"), ("ROCm0", "rocm"), ("SYCL0", "xpu"), ("Metal", "metal"),
                                         ("MTL0", "metal"), ("CUDA0", "cuda"), ("CPU", "cpu")])
def test_a_lone_load_failure_is_read_on_its_buffers_device(buf, device):
    res, ev = last_event(f"llama_model_load: error loading model: unable to allocate {buf} buffer\n")
    assert (ev["kind"], ev["runtime"], ev["device_kind"]) == ("ggml.model_load", "llama.cpp", device)


def test_the_old_backend_buffer_form_names_no_device():
    res, ev = last_event("llama_model_load: error loading model: unable to allocate backend buffer\n")
    assert ev["kind"] == "ggml.model_load" and ev["device_kind"] != "vulkan"
