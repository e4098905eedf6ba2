"""Triage round 91 (task tune91: batches 337-342, 344-348, 351 and 352 after first sight), written from the runtimes' own message
formats:
- ONNX Runtime's Python binding relaying MSVC's std::bad_alloc in its status layout ("[ONNXRuntimeError] : 1 : FAIL : bad
  allocation"): a C++ allocation failure, host RAM (cpp.bad_alloc), as the wrapped forms already read; the runtime onnxruntime.
- TensorFlow's eager op error with the op's name after its message ("failed to allocate memory [Op:Cast]", on its own line under
  "ResourceExhaustedError:"): TensorFlow's op-level refusal, read as its op-kernel form is (xla.oom, no figures), runtime tensorflow.
- A CUDA program's own cudaSafeCall check at "out of memory" ("cudaSafeCall() failed: out of memory", NVIDIA Parabricks';
  InfiniTAM's "cudaSafeCall() Runtime API error : out of memory."): a runtime call of the program's own (cuda.driver, form
  runtime_call), runtime cuda unless the log's marker names the program.
- COLMAP's SIFT matcher ("Not enough GPU memory to match N features. Reduce the maximum number of matches."): its buffers for
  max_num_matches, the matching pass's working memory (activations), runtime colmap.
- Inductor's "No valid triton configs" quoting Triton's out-of-resource error with the kernel's name and without commas
  ("out of resource: triton_flex_attention Required: N Hardware limit: M"): the same two numbers as the comma form.
- TensorFlow's own hint under a graph-mode OOM ("add report_tensor_allocations_upon_oom to RunOptions"): a TensorFlow marker,
  so an XLA:TPU compile failure above it is TensorFlow's run, not JAX's.
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, last_event as _last, read as _read  # (cause, kind, runtime, device kind, numbers)


def test_onnxruntime_python_status_bad_allocation_is_host_ram():
    text = "onnxruntime.capi.onnxruntime_pybind11_state.Fail: [ONNXRuntimeError] : 1 : FAIL : bad allocation\n"
    assert _read(text) == ("host-ram", "cpp.bad_alloc", "onnxruntime", "cpu", {})


def test_onnxruntime_status_bad_allocation_without_its_module_reads_the_same():
    assert _read("[ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : bad allocation\n")[:4] == (
        "host-ram", "cpp.bad_alloc", "onnxruntime", "cpu")


def test_bad_allocation_in_prose_is_not_read():
    assert "cpp.bad_alloc" not in _kinds("the log said bad allocation : twice before the run went on\n")


def test_tensorflow_eager_op_failed_to_allocate_memory_is_tensorflows_oom():
    text = ("tensorflow.python.framework.errors_impl.ResourceExhaustedError:\n"
            "{{function_node __wrapped__Mul_device_/job:localhost/replica:0/task:0/device:GPU:0}}\n"
            "failed to allocate memory [Op:Mul]\n")
    assert _read(text) == ("activations", "xla.oom", "tensorflow", "cuda", {})


def test_tensorflow_eager_op_line_alone_reads_the_same():
    assert _read("failed to allocate memory [Op:MatMul]\n")[1:3] == ("xla.oom", "tensorflow")


def test_op_name_without_the_memory_words_is_not_read():
    assert "xla.oom" not in _kinds("InvalidArgumentError: Incompatible shapes: [4,3] vs. [4,5] [Op:AddV2]\n")


def test_cudasafecall_out_of_memory_is_the_programs_own_cuda_call():
    text = "[PB Error][src/pair_kernel.cu:812] cudaSafeCall() failed: out of memory, exiting.\n"
    res, ev = _last(text)
    assert (res["cause"], ev["kind"], ev["runtime"], ev["device_kind"], ev["numbers"], ev.get("form")) == (
        "activations", "cuda.driver", "cuda", "cuda", {}, "runtime_call")


def test_cudasafecall_runtime_api_error_form_reads_the_same_and_a_marker_names_the_program():
    text = "/src/ITMLib/Engines/Meshing/Mesh.h(88) : cudaSafeCall() Runtime API error : out of memory.\n"
    res, ev = _last(text)
    assert (ev["kind"], ev.get("form")) == ("cuda.driver", "runtime_call")
    assert _read(text)[2] == "infinitam"


def test_cudasafecall_with_another_error_is_not_read():
    assert "cuda.driver" not in _kinds("[PB Error][src/align.cu:77] cudaSafeCall() failed: invalid device function, exiting.\n")


def test_colmap_sift_matcher_is_its_working_memory():
    text = "E20250310 10:00:00.000000 12345 sift.cc:1530] Not enough GPU memory to match 32768 features. Reduce the maximum number of matches.\n"
    assert _read(text)[:3] == ("activations", "colmap.sift_match", "colmap")


def test_colmap_sift_matcher_with_its_placeholder_reads_the_same():
    assert _read("ERROR: Not enough GPU memory to match N features.\n")[1:3] == ("colmap.sift_match", "colmap")


def test_inductor_no_valid_triton_configs_without_commas_reads_both_numbers():
    text = ("No valid triton configs. OutOfMemoryError: out of resource: triton_flex_attention Required: 163840 Hardware limit: "
            "101376 Reducing block sizes or `num_stages` may help.\n")
    res, ev = _last(text)
    assert (res["cause"], ev["kind"]) == ("other", "triton.shared_memory")
    assert (ev["numbers"]["requested"], ev["numbers"]["max_allowed"]) == (163840, 101376)


def test_tensorflow_runoptions_hint_names_tensorflow_above_a_tpu_compile_failure():
    text = ("Compilation failure: Ran out of memory in memory space hbm. Used 9.10G of 8.00G hbm. Exceeded hbm capacity by 1.10G.\n"
            "\tTPU compilation failed\n"
            "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to "
            "RunOptions for current allocation info.\n")
    assert _read(text)[1:4] == ("xla.oom", "tensorflow", "tpu")
    assert _read(text.rsplit("Hint:", 1)[0])[2] == "jax"
