"""Round 8: formats read from the runtimes' own sources. stable-diffusion.cpp relays ggml's HIP check ("ROCm error: out
of memory": ggml-cuda.h names the backend GGML_CUDA_NAME, "ROCm" in HIP builds) and names the part whose compute buffer it
sized (ggml_extend.hpp / core/ggml_runner.cpp: "%s compute buffer size: %.2f MB(%s)" with get_desc()); Mesa's RADV relays
the kernel's ENOMEM from the command-submission ioctl (amdgpu_cs.c: "Not enough memory for command submission"); MLX
Swift's fatalError wraps metal::malloc's message over lines; PyTorch honours expandable_segments on ROCm from 2.12 built
for ROCm 7.0+ (pytorch#177974, #179930). Each test fails when its pattern, its fact or its row goes."""
import pytest

from gpu_garden.memory.triage import engine, env, parse
from gpu_garden.memory.units import MiB

# stable-diffusion.cpp on a HIP build decoding a large image untiled (the shape of leejet/stable-diffusion.cpp reports
# of ROCm decodes); the pool line is ggml-cuda.cu's, relayed through sd's log callback
SD_ROCM_VAE = ("[INFO ] stable-diffusion.cpp:3177 - sampling completed, taking 88.41s\n"
               "[INFO ] stable-diffusion.cpp:3190 - decoding 1 latents\n"
               "[DEBUG] ggml_extend.hpp:1554 - vae compute buffer size: 9788.00 MB(VRAM)\n"
               "[DEBUG] ggml_extend.hpp:61   - ROCm pool[0]: alloc of 2430.00 MiB failed, flushing 512.00 MiB of cached buffers and retrying\n"
               "[ERROR] ggml_extend.hpp:70   - ROCm error: out of memory\n"
               "[ERROR] ggml_extend.hpp:70   -   current device: 0, in function alloc at ggml/src/ggml-cuda/ggml-cuda.cu:432\n")
# the same runner encoding a prompt with T5-XXL on an 8 GB CUDA card
SD_T5 = ("[INFO ] stable-diffusion.cpp:2740 - get_learned_condition\n"
         "[DEBUG] ggml_extend.hpp:1554 - t5 compute buffer size: 1874.50 MB(VRAM)\n"
         "[ERROR] ggml_extend.hpp:70   - CUDA error: out of memory\n"
         "[ERROR] ggml_extend.hpp:70   -   current device: 0, in function alloc at ggml/src/ggml-cuda/ggml-cuda.cu:432\n")
# llama.cpp's Vulkan backend on a unified-memory APU loading a model near the GTT limit (the shape of the
# "radv/amdgpu ... ErrorDeviceLost" reports on llama.cpp and Ollama's Vulkan runner)
RADV = ("load_tensors: offloaded 31/31 layers to GPU\n"
        "load_tensors:      Vulkan0 model buffer size = 48150.36 MiB\n"
        "radv/amdgpu: Not enough memory for command submission.\n"
        "ggml_vulkan: device lost on Vulkan0\n"
        "llama_model_load: error loading model: vk::Queue::submit: ErrorDeviceLost\n")
# an MLX Swift app: fatalError prints metal::malloc's message wrapped at a fixed width
MLX_SWIFT = ("MLX/ErrorHandler.swift:345: Fatal error: [metal::malloc] Attempting to allocate\n"
             "137438953472 bytes which is greater than the maximum allowed buffer size of\n"
             "22906503168 bytes.\n")


def test_ggml_rocm_check_is_a_driver_failure_on_rocm():
    ev = parse.recognise("[ERROR] ggml_extend.hpp:70   - ROCm error: out of memory")
    assert (ev["kind"], ev["device_kind"]) == ("cuda.driver", "rocm")


def test_sdcpp_vae_compute_buffer_names_the_decode():
    res = engine.triage_text(SD_ROCM_VAE)
    ev = res["events"][-1]
    assert (res["cause"], ev["runtime"], ev["device_kind"]) == ("vae-decode", "stable-diffusion.cpp", "rocm")
    assert ev["numbers"]["requested"] == round(2430.00 * MiB)
    assert "vae graph" in " ".join(ev["causes"][0]["evidence"])
    # its own guide: sd-cli's flags, not llama-server's
    assert ev["guide"]["id"] == "sdcpp" and "--vae-tiling" in ev["guide"]["commands"][0]["text"]


def test_sdcpp_text_encoder_compute_buffer_names_the_encoder():
    res = engine.triage_text(SD_T5)
    assert res["cause"] == "text-encoder" and res["events"][-1]["guide"]["id"] == "sdcpp"
    assert res["events"][-1]["device_kind"] == "cuda"


def test_radv_command_submission_is_gtt_system_ram():
    ev = parse.recognise("radv/amdgpu: Not enough memory for command submission.")
    assert (ev["kind"], ev["device_kind"]) == ("amdgpu.cs_enomem", "vulkan")
    res = engine.triage_text(RADV)
    ev = res["events"][-1]
    assert (res["cause"], ev["runtime"], ev["device_kind"]) == ("host-ram", "llama.cpp", "vulkan")
    assert "GTT" in ev["causes"][0]["evidence"][0]


def test_mlx_swift_wrapped_message_keeps_both_numbers():
    res = engine.triage_text(MLX_SWIFT)
    ev = res["events"][-1]
    assert (res["cause"], ev["runtime"], ev["device_kind"]) == ("activations", "mlx", "metal")
    assert ev["numbers"] == {"requested": 137438953472, "max_allowed": 22906503168}


@pytest.mark.parametrize("version, honoured", [
    ("2.5.1+rocm6.2", False), ("2.10.0+rocm7.0", False),      # before pytorch#177974
    ("2.11.0+rocm7.1", None),                                  # upstream 2.11 lacks it, AMD's 2.11 wheels carry it
    ("2.12.0+rocm7.0", True), ("2.13.0.dev20260801+rocm7.2", True),
    ("2.12.0+rocm6.4", False),                                 # gated to ROCm >= 7.0 (pytorch#179930)
    ("2.12.0", None), (None, None), ("unknown", None)])
def test_rocm_expandable_segments_by_version(version, honoured):
    assert env.rocm_expandable(version) is honoured


HIP_FRAG = ("torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 23.98 GiB "
            "of which 1.20 GiB is free. Of the allocated memory 16.50 GiB is allocated by PyTorch, and 5.80 GiB is reserved "
            "by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
            "PYTORCH_HIP_ALLOC_CONF=expandable_segments:True to avoid fragmentation.\n")


def _frag(version_line):
    res = engine.triage_text("/home/u/venv/lib/python3.12/site-packages/torch/__init__.py\n" + version_line + HIP_FRAG)
    ev = res["events"][-1]
    assert res["cause"] == "fragmentation" and ev["platform"]["backend"] == "rocm"
    cmds = "\n".join(c["text"] for c in ev["guide"]["commands"])
    return ev["platform"]["expandable_segments"], cmds, ev["guide"]["markdown"]


def test_rocm_fragmentation_guide_follows_the_version():
    honoured, cmds, _ = _frag("PyTorch version: 2.12.0+rocm7.1\n")
    assert honoured is True and "expandable_segments:True" in cmds
    honoured, cmds, md = _frag("pytorch version: 2.6.0+rocm6.2.4\n")
    assert honoured is False and "expandable_segments:True" not in cmds and "Unknown here" not in md
    honoured, cmds, md = _frag("")
    # version unknown: the guide does not rely on it, and says how to check
    assert honoured is None and "expandable_segments:True" not in cmds and "Unknown here" in md and "torch.version.hip" in cmds


# chnsh/DCRNN_PyTorch#6 (PyTorch <= 2.0's message; the answer: a smaller batch): 0.27 GiB of slack, 14x the request but
# under a quarter of the card, is live tensors' leftovers, not a layout to fix
DCRNN = ("RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 5.80 GiB total capacity; 4.36 GiB already "
         "allocated; 6.69 MiB free; 4.63 GiB reserved in total by PyTorch)\n")


def test_old_message_small_slack_is_the_workload_not_fragmentation():
    res = engine.triage_text(DCRNN)
    assert res["cause"] == "activations"
    assert res["events"][-1]["causes"][1]["id"] == "fragmentation"      # still shown beside it


def test_weight_loading_frames_and_source_lines():
    from gpu_garden.memory.triage.categories import frame_category, source_category
    tgi = "/opt/conda/lib/python3.9/site-packages/text_generation_server/utils/"      # huggingface/text-generation-inference#866
    assert frame_category(tgi + "weights.py", "get_multi_weights_col") == "weights-exceed-vram"
    assert frame_category(tgi + "layers.py", "load_multi") is None
    assert frame_category("/srv/app/model/loader.py", "load_weights") == "weights-exceed-vram"
    # a model class's own cuda() (THUDM/CodeGeeX's FasterTransformer wrapper: self.cuda() maps .cuda() over its weights)
    assert frame_category("/opt/cgx/examples/pytorch/codegeex/utils/codegeex.py", "cuda") == "weights-exceed-vram"
    assert source_category("        self.cuda()") == "weights-exceed-vram"
    assert source_category("        x = self.cuda_graph(x)") is None


def test_cut_message_in_a_training_run_is_the_batch():
    # ultralytics/yolov3#1503: the training command and the message as its title quotes it (cut after the request)
    log = ("CUDA_VISIBLE_DEVICES=1 python train.py --weights '' --data coco/coco.data --cfg coco/yolov3.cfg --batch-size 16\n"
           "CUDA out of memory. Tried to allocate 50.00 MiB\n")
    res = engine.triage_text(log)
    assert res["cause"] == "activations" and res["events"][-1]["numbers"]["requested"] == 50 * MiB
    # ultralytics' trainer: AutoBatch runs only when training (ultralytics/ultralytics#1451's line), and its CLI's train mode
    from gpu_garden.memory.triage import lines as L
    names = lambda t: [n for n, _ in L.facts(t)]
    assert "training_log" in names("AutoBatch: Computing optimal batch size for imgsz=480")
    assert "training_log" in names("!yolo train model=yolov8s.pt batch=-1 data=VisDrone.yaml epochs=30 imgsz=640")
    assert "training_log" not in names("yolo predict model=yolov8s.pt source=bus.jpg")


def test_device_index_printed_as_a_character():
    # PyTorch releases that streamed the int8 DeviceIndex without static_cast<int> print GPU 0 as a NUL byte ("GPU  has");
    # the line as a public GitHub README quotes it (an accelerate DDP run on an RTX 2070 / Quadro P2000 pair, 2025-07)
    line = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 274.00 MiB. GPU  has a total capacity of "
            "4.93 GiB of which 137.69 MiB is free. Including non-PyTorch memory, this process has 4.30 GiB memory in use. Of "
            "the allocated memory 4.14 GiB is allocated by PyTorch, and 35.88 MiB is reserved by PyTorch but unallocated.")
    for text, index in ((line, None), (line.replace("GPU  has", "GPU \x00 has"), 0), (line.replace("GPU  has", "GPU 1 has"), 1)):
        ev = parse.recognise(text)
        assert ev["kind"] == "torch.cuda" and ev["device_index"] == index
        assert ev["numbers"]["total"] == round(4.93 * 2**30) and ev["numbers"]["free"] == round(137.69 * MiB)


def test_vllm_kv_max_len_quoted_without_numbers_or_wrapped():
    # the check's wording (vllm/v1/core/kv_cache_utils.py) quoted without its figures next to the no-blocks error
    bare = ("ValueError: No available memory for the cache blocks.\n"
            "KV cache is needed, which is larger than the available KV cache memory.\n")
    res = engine.triage_text(bare)
    assert res["cause"] == "kv-cache" and res["events"][-1]["kind"] == "vllm.kv_max_len"
    assert "--max-model-len" in res["events"][-1]["causes"][0]["evidence"][0]
    # vllm-project/vllm#25350's message wrapped after its first figure: the bare fragment must not stop the join
    wrapped = ("ValueError: To serve at least one request with the models's max seq len (221000), (10.12 GiB KV cache is needed, "
               "which is larger than the available KV cache memory\n(5.59 GiB). Based on the available memory, the estimated maximum "
               "model length is 122080. Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\n")
    n = engine.triage_text(wrapped)["events"][-1]["numbers"]
    assert n["max_model_len_tokens"] == 221000 and n["estimated_max_len_tokens"] == 122080
    assert n["kv_available"] == round(5.59 * 2**30)


def test_onnx_arena_quoted_without_its_size():
    # bfc_arena.cc's message elided by the quoting thread: read as ONNX Runtime's only where the arena is named
    ev = parse.recognise("bfc_arena.cc ... Failed to allocate memory for requested buffer")
    assert (ev["kind"], ev["runtime"], ev["numbers"]) == ("onnx.alloc", "onnxruntime", {})
    # without it, a failure in any runtime's words (round 13: parse._generic), not the arena's
    assert parse.recognise("Failed to allocate memory for requested buffer")["kind"] == "generic.oom"


def test_ggml_cuda_graph_capture_function_is_graph_capture():
    # ggml's CUDA check naming the function that captures and instantiates the CUDA graph (the lines as a public
    # llama-server harness quotes them; ggml-org/llama.cpp#20027 reports the same function)
    log = ("llama_server: model loaded\nrequest started\nCUDA error: out of memory\n"
           "current device: 1, in function ggml_cuda_graph_evaluate_and_capture\n"
           "cudaGraphInstantiate(&graph->instance, graph->graph, 0, 0, 0)\n")
    res = engine.triage_text(log)
    assert res["cause"] == "graph-capture" and "GGML_CUDA_DISABLE_GRAPHS" in res["events"][-1]["causes"][0]["evidence"][0]
    # the pool's own allocation in the same form stays the compute graph's scratch memory
    res = engine.triage_text(log.replace("ggml_cuda_graph_evaluate_and_capture", "alloc").replace("cudaGraphInstantiate", "cudaMalloc"))
    assert res["cause"] == "activations"


@pytest.mark.parametrize("desc, cause", [("wan_vae", "vae-decode"), ("HunyuanVideoVAE", "vae-decode"), ("qwen2.5vl", "text-encoder"),
                                         ("umt5", "text-encoder"), ("flux", None), ("unet", None)])
def test_sdcpp_part_names(desc, cause):
    # GGMLRunner::get_desc() values of stable-diffusion.cpp's runners (its LLM conditioners by architecture name)
    from gpu_garden.memory.triage import lines as L
    from gpu_garden.memory.triage.predicates import sdcpp_part
    m = dict(L.facts(f"[DEBUG] ggml_extend.hpp:1554 - {desc} compute buffer size: 1234.50 MB(VRAM)"))["sdcpp_compute"]
    assert m.group(1) == desc
    x = type("X", (), {"f": {"sdcpp_part": desc.lower()}})()
    assert sdcpp_part(x) == cause
