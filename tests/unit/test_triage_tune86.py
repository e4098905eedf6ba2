"""Triage round 86 (task tune86: batches 305, 306, 307 and 308 after first sight), written from the runtimes' own message
formats:
- WebGPU's validation (Dawn) refusing one buffer over the adapter's caps: createBuffer's "Buffer size (N) exceeds the max
  buffer size limit (M)" and a bind group's "Binding size (N) of [Buffer ...] is larger than the maximum storage buffer
  binding size (M)": a per-buffer cap of the platform (other), the device WebGPU, its two numbers; the runtime the one the
  log's other lines name, WebGPU's own when none does.
- MPSGraph refusing a tensor whose dimensions pass INT_MAX ("MPSGraph does not support tensor dims larger than INT_MAX"):
  a cap of the platform on one tensor (R5: other), PyTorch's MPS backend, no figures.
- LiteRT-LM's Kotlin/Java package and classes ("com.google.ai.edge.litertlm.LiteRtLmJniException") name TensorFlow Lite
  (LiteRT is TFLite renamed).
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, read as _read  # (cause, kind, runtime, device kind, numbers); every event's kind


def test_webgpu_buffer_over_max_buffer_size_is_a_cap():
    text = "Buffer size (2147483648) exceeds the max buffer size limit (268435456).\n"
    assert _read(text) == ("other", "webgpu.max_buffer", "webgpu", "webgpu", {"requested": 2147483648, "max_allowed": 268435456})


def test_webgpu_storage_binding_over_its_cap_is_a_cap():
    text = ("Binding size (402653184) of [Buffer \"weights\"] is larger than the maximum storage buffer binding size (134217728).\n"
            " - While validating entries[1] as a Buffer.\n")
    assert _read(text) == ("other", "webgpu.max_buffer", "webgpu", "webgpu", {"requested": 402653184, "max_allowed": 134217728})


def test_webgpu_uniform_binding_over_its_cap_reads_the_same():
    text = "Binding size (131072) of [Buffer (unlabeled)] is larger than the maximum uniform buffer binding size (65536).\n"
    assert _read(text)[:2] == ("other", "webgpu.max_buffer")
    assert _read(text)[4] == {"requested": 131072, "max_allowed": 65536}


def test_webgpu_binding_size_without_its_numbers_is_not_read():
    assert "webgpu.max_buffer" not in _kinds("Binding size of the buffer is larger than the maximum storage buffer binding size\n")


def test_litert_lm_classes_name_tflite_under_a_webgpu_cap():
    text = ("OpenCL not supported on this platform. Using WebGPU instead.\n"
            "Validation error: Binding size (268435456) of [Buffer (unlabeled)] is larger than the maximum storage buffer "
            "binding size (134217728).\n"
            "FAILURE: com.google.ai.edge.litertlm.LiteRtLmJniException: Failed to create engine\n")
    assert _read(text) == ("other", "webgpu.max_buffer", "tflite", "webgpu", {"requested": 268435456, "max_allowed": 134217728})


def test_mpsgraph_tensor_dims_over_int_max_is_a_cap():
    text = ("  File \"/Users/me/venv/lib/python3.12/site-packages/torch/nn/functional.py\", line 6102, in scaled_dot_product_attention\n"
            "RuntimeError: MPSGraph does not support tensor dims larger than INT_MAX\n")
    assert _read(text) == ("other", "mps.int_max_dims", "pytorch", "mps", {})


def test_int_max_in_other_words_is_not_mpsgraphs_cap():
    assert "mps.int_max_dims" not in _kinds("GGML_ASSERT(nbytes <= INT_MAX) failed: tensor larger than INT_MAX bytes\n")
