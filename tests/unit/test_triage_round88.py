"""Triage round 88 (task tune88: batches 315, 316, 317, 318, 320, 321, 322 and 323 after first sight; test_triage_tune88.py
is the older task's, batches 88-90), written from the runtimes' own message formats:
- ONNX Runtime's arena at its memory limit (BFCArena::Extend through AllocateRawInternal: "Available memory of N is smaller
  than requested bytes of M"): the arena's refusal (onnx.alloc), what it had left and the request, bytes.
- PaddlePaddle's host allocator ("Fail to alloc memory of N size, error code is 12.": posix_memalign refused, system RAM) and
  its own CUDA check ("(External) CUDA error(2), out of memory."); PaddlePaddle's runtime id is "paddle", the corpus's.
- The TPU runtime's program reservation quoted a sentence a line ("Attempting to reserve N at the bottom of memory." /
  "That was not possible. There are M free, ..."): joined, read as the one line is.
- TensorRT's "Cuda Runtime (out of memory)" (its error code kCUDA_RUNTIME) names TensorRT; TensorRT-LLM's marker still wins.
- Isaac Gym's own CUDA check ("[carb.gym.plugin] Gym cuda error: out of memory"): a CUDA call of the simulator's own.
- Slurm srun's task line ("srun: error: <node>: tasks 0-3: Out Of Memory") and Ray's memory monitor ("N Workers (tasks /
  actors) killed due to memory pressure (OOM)"): the host's memory, as the OOM killer's other lines.
- Clockwork's own source paths in the check that failed name it.
The paths, sizes and prose are made up in the messages' layout; the expected values are worked out by hand."""

from support.triage_event import kinds as _kinds, read as _read  # (cause, kind, runtime, device kind, numbers); every event's kind


def test_onnxruntime_arena_at_its_limit_reads_what_was_left_and_the_request():
    text = ("onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero "
            "status code returned while running MatMul node. Name:'/attn/MatMul' Status Message: /onnxruntime_src/onnxruntime/core/"
            "framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, "
            "onnxruntime::WaitNotificationFn) Available memory of 16777216 is smaller than requested bytes of 268435456\n")
    cause, kind, runtime, _, numbers = _read(text)
    assert (cause, kind, runtime) == ("activations", "onnx.alloc", "onnxruntime")
    assert numbers == {"available": 16777216, "requested": 268435456}


def test_available_memory_in_other_words_is_not_the_arena():
    assert "onnx.alloc" not in _kinds("Available memory of 2048 MB is smaller than requested bytes\n")


def test_paddle_host_allocator_refusal_is_host_ram():
    text = "ResourceExhaustedError: Fail to alloc memory of 34359738368 size, error code is 12.\n"
    assert _read(text) == ("host-ram", "os.enomem", "paddle", "cpu", {"requested": 34359738368})


def test_paddle_cuda_check_out_of_memory_is_paddles():
    cause, kind, runtime, device, _ = _read("OSError: (External) CUDA error(2), out of memory.\n")
    assert (kind, runtime, device) == ("cuda.driver", "paddle", "cuda")


def test_paddle_own_oom_names_the_runtime_paddle():
    text = ("ResourceExhaustedError: \n\nOut of memory error on GPU 0. Cannot allocate 64.000000MB memory on GPU 0, 7.500000GB memory "
            "has been allocated and available memory is only 12.000000MB.\n")
    assert _read(text)[1:4] == ("paddle.oom", "paddle", "cuda")


def test_tpu_reservation_quoted_a_sentence_a_line_is_read_whole():
    text = ("jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Error loading program 'jit_step': \n"
            "Attempting to reserve 24.50G at the bottom of memory. \n"
            "That was not possible. There are 9.25G free, 0B reserved, and 9.25G reservable.\n")
    _, kind, runtime, device, numbers = _read(text)
    assert (kind, runtime, device) == ("xla.oom", "jax", "tpu")
    assert numbers == {"requested": 26306674688, "free": 9932111872}      # 24.50 and 9.25 GiB


def test_tpu_allocation_quoted_a_sentence_a_line_reads_the_same():
    text = "Attempting to allocate 1.50G.\nThat was not possible. There are 512.00M free.\n"
    assert _read(text)[4] == {"requested": 1610612736, "free": 536870912}


def test_tensorrt_cuda_runtime_error_code_names_tensorrt():
    for text in ("Error Code 1: Cuda Runtime (out of memory)\n", "Cuda Runtime (out of memory)\n"):
        assert _read(text)[1:4] == ("cuda.driver", "tensorrt", "cuda"), text


def test_tensorrt_cuda_runtime_under_tensorrt_llm_stays_tensorrt_llm():
    text = ("[TensorRT-LLM][INFO] Loaded engine size: 12034 MiB\n"
            "[TensorRT-LLM][ERROR] [resizingAllocator.cpp::allocate::78] Error Code 1: Cuda Runtime (out of memory)\n")
    assert _read(text)[2] == "tensorrt-llm"


def test_isaac_gym_cuda_error_is_the_simulators_own_buffers():
    text = ("Physics Device: cuda:0\nGPU Pipeline: enabled\n"
            "[Error] [carb.gym.plugin] Gym cuda error: out of memory: ../../../source/plugins/carb/gym/impl/Gym/GymPhysX.cpp: 1721\n")
    assert _read(text)[:4] == ("activations", "cuda.driver", "isaacsim", "cuda")


def test_slurm_srun_tasks_out_of_memory_is_the_oom_killer():
    for line in ("srun: error: node042: tasks 0-3: Out Of Memory\n", "srun: error: gpu-a17: task 2: Out Of Memory\n",
                 "srun: error: cn05: tasks 0,2-3: Out Of Memory\n"):
        assert _read(line)[:4] == ("host-ram", "os.oom_killer", "pytorch", "cpu"), line


def test_out_of_memory_without_slurms_task_is_not_a_kill():
    assert "os.oom_killer" not in _kinds("srun: error: node042: Out Of Memory in the last epoch\n")


def test_ray_memory_monitor_killing_workers_is_host_ram():
    text = ("(raylet) [2024-11-02 10:11:12,131 E 811 811] (raylet) node_manager.cc:3069: 3 Workers (tasks / actors) killed due to "
            "memory pressure (OOM), 0 Workers crashed due to other reasons at node (ID: 4f2a, IP: 10.0.0.7) over the last time "
            "period.\n")
    assert _read(text)[:2] == ("host-ram", "os.oom_killer")


def test_clockwork_source_path_names_clockwork():
    text = ("terminate called after throwing an instance of 'dmlc::Error'\n"
            "  what():  [09:10:11] /opt/src/clockwork/src/clockwork/memory.cpp:88: Check failed: e == cudaSuccess || e == "
            "cudaErrorCudartUnloading: CUDA: out of memory\n")
    assert _read(text)[2] == "clockwork"
