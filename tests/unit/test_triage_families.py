"""Message families beyond PyTorch's allocator, and what a traceback's source line says.

Each log is modelled on the public thread named beside it: the runtime's own lines and numbers as the
thread shows them, paths and prose rewritten. These are unit tests written while the rules were changed,
NOT unseen cases: they never count towards the first-sight score (tests/unit/corpus/unseen/LEDGER.md).
"""
import pytest

from gpu_garden.memory.triage import categories as C
from gpu_garden.memory.triage import engine as triage
from gpu_garden.memory.triage import parse as P
from gpu_garden.memory.units import GiB

CASES = [
    # (thread, log, cause, runtime, device, numbers)
    ("https://github.com/microsoft/onnxruntime/issues/16307",
     "2023-06-09 10:12:01.000 [E:onnxruntime:, sequential_executor.cc:514 ExecuteKernel] Non-zero status code returned while "
     "running ReduceSum node. Name:'ReduceSum_91' Status Message: /src/onnxruntime/core/framework/bfc_arena.cc:376 "
     "void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) "
     "Failed to allocate memory for requested buffer of size 939524096\n",
     "activations", "onnxruntime", "cuda", {"requested": 939524096}),
    # a size no device has: the input's shape is wrong, not the card too small
    ("https://github.com/microsoft/onnxruntime/issues/22702",
     "onnxruntime.capi.onnxruntime_pybind11_state.RuntimeException: [ONNXRuntimeError] : 6 : RUNTIME_EXCEPTION : Non-zero status "
     "code returned while running Conv node. Name:'/stages.0/blocks.0/mlp/fc1/Conv' Status Message: "
     "/src/onnxruntime/core/framework/bfc_arena.cc:376 void* onnxruntime::BFCArena::AllocateRawInternal(size_t, bool, "
     "onnxruntime::Stream*, bool, onnxruntime::WaitNotificationFn) Failed to allocate memory for requested buffer of size 4585490524328388608\n",
     "other", "onnxruntime", "cuda", {"requested": 4585490524328388608}),
    ("https://github.com/sokrypton/ColabFold/issues/65",
     "/usr/local/lib/python3.7/dist-packages/jax/interpreters/xla.py in _execute_compiled(compiled, avals, handlers, kept_var_idx, *args)\n"
     "--> 960   out_bufs = compiled.execute(input_bufs)\n"
     "RuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 14285187448 bytes.\n",
     "activations", "jax", "cuda", {"requested": 14285187448}),
    ("https://github.com/onpix/LLNeRF/issues/9",
     "$ bash scripts/train.sh\n"
     "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory allocating 20029400304 bytes.\n",
     "activations", "jax", "cuda", {"requested": 20029400304}),
    ("https://github.com/tensorflow/models/issues/7142",
     "ResourceExhaustedError: OOM when allocating tensor with shape[500,17,17,4032] and type float on "
     "/job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n",
     "activations", "tensorflow", "cuda", {}),
    ("https://github.com/kijai/ComfyUI-SUPIR/issues/151",
     "## Error Details\n- **Node ID:** 12\n- **Node Type:** SUPIR_Upscale\n- **Exception Type:** RuntimeError\n"
     "- **Exception Message:** Invalid buffer size: 8.21 GB\n",
     "activations", "comfyui", "mps", {"requested": int(8.21 * GiB)}),
    ("https://github.com/LostRuins/koboldcpp/issues/1371",
     "llama_new_context_with_model: n_ctx = 8192\n"
     "error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n"
     "llama_graph_compute: ggml_backend_sched_graph_compute_async failed with error -1\n"
     "llama_decode: failed to decode, ret = -3\n",
     "activations", "llama.cpp", "metal", {}),
    ("https://github.com/Comfy-Org/ComfyUI/issues/8065",
     "got prompt\n"
     "!!! Exception during processing !!! The paging file is too small for this operation to complete. (os error 1455)\n"
     "Traceback (most recent call last):\n"
     '  File "C:\\Apps\\ComfyUI\\execution.py", line 347, in execute\n'
     "    output_data, output_ui, has_subgraph = get_output_data(obj, input_data_all)\n"
     '  File "C:\\Apps\\ComfyUI\\comfy\\utils.py", line 60, in load_torch_file\n'
     '    with safetensors.safe_open(ckpt, framework="pt", device=device.type) as f:\n'
     "OSError: The paging file is too small for this operation to complete. (os error 1455)\n",
     "host-ram", "comfyui", "cpu", {}),
    ("https://github.com/Comfy-Org/ComfyUI/issues/3430",
     "comfyui     | got prompt\n"
     "comfyui     | /srv/scripts/entrypoint.sh: line 42:     8 Killed                  python3 ./ComfyUI/main.py --listen --port 8188\n",
     "host-ram", None, "cpu", {}),
    ("https://github.com/kijai/ComfyUI-HunyuanVideoWrapper/issues/30",
     "got prompt\n"
     "Loading text encoder model (llm) from: /home/u/ComfyUI/models/LLM/llava-llama-3-8b-text-encoder-tokenizer\n"
     "Loading checkpoint shards:  25%|#####               | 1/4 [00:01<00:05,  1.86s/it][1] \n"
     "60190 killed     python main.py\n",
     "host-ram", None, "cpu", {}),
    ("https://github.com/SYSTRAN/faster-whisper/issues/442",
     "Traceback (most recent call last):\n"
     '  File "/home/u/.local/lib/python3.8/site-packages/faster_whisper/transcribe.py", line 584, in generate_with_fallback\n'
     "    result = self.model.generate(\n"
     "RuntimeError: CUDA failed with error out of memory\n",
     None, "ctranslate2", "cuda", {}),
    ("https://github.com/NovaSky-AI/SkyRL/issues/624",
     "E1103 18:23:55.103160 3413767 gpu_cudamallocasync_allocator.cc:361] gpu_async_1 cuMemAllocAsync failed to allocate "
     "1225195446464 bytes: RESOURCE_EXHAUSTED: : CUDA_ERROR_OUT_OF_MEMORY: out of memory\n",
     None, None, "cuda", {}),
    ("https://github.com/ollama/ollama/issues/15517",
     "Error: 500 Internal Server Error: memory layout cannot be allocated\n",
     "kv-cache", "ollama", None, {}),
    ("https://github.com/ollama/ollama/issues/14980",
     "memory layout cannot be allocated with num_gpu = 26\n",
     "weights-exceed-vram", "ollama", None, {"num_gpu_layers": 26}),
    ("https://github.com/pytorch/pytorch/issues/190972",
     "  File \"H:\\apps\\comfyui\\env\\Lib\\site-packages\\torch\\_tensor.py\", line 1117, in __rdiv__\n"
     "    return self.reciprocal() * other\n"
     "RuntimeError: level_zero backend failed with error: 40 (UR_RESULT_ERROR_OUT_OF_RESOURCES)\n",
     "other", None, "xpu", {}),
]


@pytest.mark.parametrize("thread,log,cause,runtime,device,numbers", CASES, ids=[c[0].split("github.com/")[1] for c in CASES])
def test_message_family_is_recognised(thread, log, cause, runtime, device, numbers):
    res = triage.triage_text(log)
    assert res["found"], thread
    ev = res["events"][-1]
    if cause:
        assert res["cause"] == cause, (thread, ev["causes"])
    if runtime:
        assert ev["runtime"] == runtime, thread
    if device:
        assert ev["device_kind"] == device, thread
    for k, v in numbers.items():
        assert ev["numbers"].get(k) == v, (thread, k)
    assert ev["guide"] and ev["guide"]["markdown"].strip(), thread


def test_each_new_family_has_its_own_guide():
    # the CUDA allocator's remedies do not apply to ONNX Runtime, XLA or the OS refusing memory
    ids = {triage.triage_text(log)["events"][-1]["guide"]["id"] for _, log, *_ in CASES[:5] + CASES[7:9]}
    assert {"onnxruntime", "xla", "os-host-ram"} <= ids


@pytest.mark.parametrize("line", ["Killed by signal handler test", "the process got killed by the OS", "skill 12 killed it",
                                  "Out of memory: nothing here", "train.py finished"])
def test_prose_is_not_an_oom_killer_line(line):
    ev = P.recognise(line)
    assert ev is None or ev["kind"] != "os.oom_killer", line


@pytest.mark.parametrize("line,cat", [
    ("T5_text_encoder = T5EncoderModel(", "text-encoder"),            # kijai/ComfyUI-WanVideoWrapper loader
    ("clip = comfy.sd.load_clip(ckpt_paths=clip_paths, embedding_directory=emb)", "text-encoder"),
    ("prompt_embeds = self.text_encoder(text_input_ids.to(device), attention_mask=mask)", "text-encoder"),
    ("image = self.vae.decode(latents / self.vae.config.scaling_factor, return_dict=False)[0]", "vae-decode"),
    ("pixel_samples[x:x+batch_number] = torch.clamp((self.first_stage_model.decode(samples).cpu().float() + 1.0) / 2.0, min=0.0, max=1.0)",
     "vae-decode"),
    ("loss.backward()", "training"),
    ("optimizer.step()", "training"),
    ('pipe.to("cuda")', "weights-exceed-vram"),
    ("model = AutoModelForCausalLM.from_pretrained(path, torch_dtype=torch.float16)", "weights-exceed-vram"),
    ("x = x.to(device)", None),                          # the input moving, not the model
    ("temp.to(device)", None),
    ("h = self.mid.attn_1(h)", None),
])
def test_source_line_category(line, cat):
    assert C.source_category(line) == cat


def test_source_line_decides_the_phase_when_nothing_else_does():
    # https://github.com/huggingface/diffusers/issues/10350: a script decoding latents with the SD 2.1 VAE
    log = ("Traceback (most recent call last):\n"
           '  File "/work/repro.py", line 17, in <module>\n'
           "    x1 = vae.decode(x0 / vae.config.scaling_factor, return_dict=False)[0]\n"
           '  File "/env/lib/python3.10/site-packages/diffusers/utils/accelerate_utils.py", line 46, in wrapper\n'
           "    return method(self, *args, **kwargs)\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which "
           "7.21 GiB is free. Of the allocated memory 15.26 GiB is allocated by PyTorch, and 12.00 MiB is reserved by PyTorch but "
           "unallocated.\n")
    res = triage.triage_text(log)
    assert res["cause"] == "vae-decode", res["events"][-1]["causes"]
    assert any("source line" in e for e in res["events"][-1]["causes"][0]["evidence"])


def test_backward_in_the_source_line_is_a_training_step():
    # https://github.com/speedinghzl/pytorch-segmentation-toolbox/issues/54 (old message form, slack near the request)
    log = ("Traceback (most recent call last):\n"
           '  File "seg_train.py", line 228, in main\n'
           "    loss.backward()\n"
           "RuntimeError: CUDA out of memory. Tried to allocate 86.00 MiB (GPU 3; 11.75 GiB total capacity; 10.05 GiB already "
           "allocated; 85.81 MiB free; 588.65 MiB cached)\n")
    res = triage.triage_text(log)
    assert res["cause"] == "activations", res["events"][-1]["causes"]


def test_host_ram_failure_is_not_moved_by_the_source_line():
    # a CPU-allocator failure inside VAE decode stays a host-RAM failure (the source line names the phase only)
    log = ("Traceback (most recent call last):\n"
           '  File "/srv/ComfyUI/nodes.py", line 284, in decode\n'
           '    return (vae.decode(samples["samples"]), )\n'
           "RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate 9663676416 bytes.\n")
    assert triage.triage_text(log)["cause"] == "host-ram"


@pytest.mark.parametrize("node,cat", [
    ("DualCLIPLoader", "text-encoder"), ("CLIPLoader", "text-encoder"), ("TripleCLIPLoader", "text-encoder"),
    ("DualCLIPLoaderGGUF", "text-encoder"), ("LoadWanVideoT5TextEncoder", "text-encoder"), ("WanVideoTextEncode", "text-encoder"),
    ("CLIPVisionLoader", "weights-exceed-vram"), ("UNETLoader", "weights-exceed-vram"), ("WanVideoVAEDecode", "vae-decode"),
    ("WanVideoSampler", "activations"),
])
def test_text_encoder_loaders_point_at_the_text_encoder(node, cat):
    # issue 14, class 2: an OOM while a text-encoder loader runs is the text encoder not fitting
    assert C.node_category(node) == cat


def test_source_lines_are_read_after_the_log_head_too():
    # past the first 512 KiB the scanner skips quiet lines and reads the traceback back from its window
    noise = "".join(f"step {i}: INFO nothing to see here, progress ok\n" for i in range(16000))
    tail = ("Traceback (most recent call last):\n"
            '  File "/work/run_pipeline.py", line 88, in render\n'
            "    frames = self.vae.decode(latents, return_dict=False)[0]\n"
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 6.00 GiB. GPU 0 has a total capacity of 23.65 GiB of which "
            "3.10 GiB is free. Of the allocated memory 19.80 GiB is allocated by PyTorch, and 20.00 MiB is reserved by PyTorch but "
            "unallocated.\n")
    assert len(noise) > 600 << 10
    res = triage.triage_text(noise + tail)
    assert res["cause"] == "vae-decode", res["events"][-1]["causes"]


def test_a_traceback_through_cudagraph_trees_is_graph_capture():
    # https://github.com/pytorch/pytorch/issues/103715 (torch.compile mode="reduce-overhead" on SAM): the message as in
    # the thread; the two frames are torch/_inductor/cudagraph_trees.py's own functions (the thread shows only the message)
    log = ("Traceback (most recent call last):\n"
           '  File "/env/lib/python3.10/site-packages/torch/_inductor/cudagraph_trees.py", line 2004, in record_function\n'
           "    node = CUDAGraphNode(\n"
           '  File "/env/lib/python3.10/site-packages/torch/_inductor/cudagraph_trees.py", line 1203, in _record\n'
           "    static_outputs = model(inputs)\n"
           "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 15.00 GiB. GPU 0 has a total capacty of 39.56 GiB of "
           "which 11.15 GiB is free. Including non-PyTorch memory, this process has 28.41 GiB memory in use. Of the allocated memory "
           "25.28 GiB is allocated by PyTorch, and 1009.77 MiB is reserved by PyTorch but unallocated.\n")
    res = triage.triage_text(log)
    assert res["cause"] == "graph-capture", res["events"][-1]["causes"]


def test_notebook_traceback_frames_and_marked_source_line():
    # https://github.com/huggingface/transformers/issues/25499 (IPython 8 frames, "-->" marks the running line)
    log = ("---------------------------------------------------------------------------\n"
           "OutOfMemoryError                          Traceback (most recent call last)\n"
           "File /opt/conda/lib/python3.10/site-packages/peft/peft_model.py:968, in PeftModelForCausalLM.forward(self, input_ids)\n"
           "    966 prompts = prompts.to(inputs_embeds.dtype)\n"
           "    967 inputs_embeds = torch.cat((prompts, inputs_embeds), dim=1)\n"
           "--> 968 return self.base_model(inputs_embeds=inputs_embeds, **kwargs)\n"
           "File /opt/conda/lib/python3.10/site-packages/torch/autograd/__init__.py:200, in backward(tensors, grad_tensors)\n"
           "--> 200 Variable._execution_engine.run_backward(\n"
           "OutOfMemoryError: CUDA out of memory. Tried to allocate 1.22 GiB. GPU 0 has a total capacty of 14.75 GiB of which "
           "1.06 GiB is free. Process 2480 has 13.69 GiB memory in use. Of the allocated memory 12.33 GiB is allocated by PyTorch, "
           "and 1.22 GiB is reserved by PyTorch but unallocated.\n")
    from gpu_garden.memory.triage.scan import Scan
    s = Scan()
    s.feed_text(log)
    inc = s.incidents[-1]
    assert [f for _, f in inc.frames] == ["forward", "backward"]
    assert inc.sources[-1].startswith("Variable._execution_engine.run_backward(")
    assert triage.triage_text(log)["cause"] == "activations"     # a training step (backward on the stack)


def test_rich_traceback_frames_and_marked_source_line():
    # https://github.com/timothybrooks/instruct-pix2pix/issues/19 (rich traceback: "│ path:line in func", "❱ line │ code")
    log = ("╭─────────────────────────────── Traceback (most recent call last) ────────────────────────────────╮\n"
           "│ /home/u/instruct-pix2pix/edit_cli.py:85 in main                                                   │\n"
           "│                                                                                                  │\n"
           "│ ❱  82 │   model.eval().cuda()                                                                    │\n"
           "╰──────────────────────────────────────────────────────────────────────────────────────────────────╯\n"
           "OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 7.79 GiB total capacity; 7.17 GiB already "
           "allocated; 17.62 MiB free; 7.28 GiB reserved in total by PyTorch)\n")
    from gpu_garden.memory.triage.scan import Scan
    s = Scan()
    s.feed_text(log)
    inc = s.incidents[-1]
    assert inc.frames == [("/home/u/instruct-pix2pix/edit_cli.py", "main")]
    assert inc.sources == ["model.eval().cuda()"]
    assert triage.triage_text(log)["cause"] == "weights-exceed-vram"


def test_oom_killer_line_at_the_end_of_a_long_log():
    # the OOM killer's "Killed" is looked for in the head and in the log's last chunk (a long ComfyUI session)
    noise = "".join(f"step {i}: INFO nothing to see here, progress ok\n" for i in range(16000))
    log = noise + "got prompt\nRequested to load WanTEModel\n" + "Killed\n"
    assert len(noise) > 600 << 10
    res = triage.triage_text(log)
    assert res["found"] and res["cause"] == "host-ram", res


@pytest.mark.parametrize("thread,log", [
    ("https://github.com/Comfy-Org/ComfyUI/issues/12763",
     "got prompt\nRequested to load WanTEModel\n"
     "aimdo: src/model-vbar.c:198:ERROR:Could not reseve Virtual Address space for VBAR\n"
     "!!! Exception during processing !!! VBAR allocation failed\n"
     "Traceback (most recent call last):\n"
     '  File "D:\\\\apps\\\\ComfyUI\\\\execution.py", line 524, in execute\n'
     "    output_data, output_ui, has_subgraph, has_pending_tasks = await get_output_data(prompt_id, unique_id, obj)\n"
     "MemoryError: VBAR allocation failed\n"),
    ("https://github.com/abuzreq/ComfyUI-Model-Bending/issues/3",
     "got prompt\nRequested to load BaseModel\n!!! Exception during processing !!! VBAR OOM\n"
     "Traceback (most recent call last):\n"
     '  File "D:\\\\apps\\\\ComfyUI\\\\execution.py", line 525, in execute\n'
     "    output_data, output_ui, has_subgraph, has_pending_tasks = await get_output_data(prompt_id, unique_id, obj)\n"
     "MemoryError: VBAR OOM\n"),
])
def test_aimdo_vbar_memory_error_is_vram_not_host_ram(thread, log):
    # comfy-aimdo raises Python's MemoryError for its VRAM address range (VBAR): not a host-RAM failure
    res = triage.triage_text(log)
    ev = res["events"][-1]
    assert ev["kind"] == "comfy.dynamic_vram", thread
    assert res["cause"] != "host-ram", (thread, ev["causes"])
    # (fix66d) "VBAR OOM" is the VBAR's own range overrun (comfy_aimdo/model_vbar.py alloc): its own guide
    assert ev["guide"]["id"] == ("comfyui-aimdo-vbar-size" if "VBAR OOM" in log else "comfyui-dynamic-vram"), thread


def test_forge_load_lines_name_the_phase():
    # mechanism (not a reported case): Forge names the model it loads in its memory manager's line, as in
    # lllyasviel/stable-diffusion-webui-forge#343 and dvruette/sd-webui-fabric#39; the error is PyTorch's own message form
    log = ("To load target model SDXLClipModel\nBegin to load 1 model\n"
           "[Memory Management] Target: JointTextEncoder, Free GPU: 1234.33 MB, Model Require: 5154.62 MB, Previously Loaded: 0.00 MB, "
           "Inference Require: 1287.00 MB, Remaining: -5207.29 MB, All loaded to GPU.\n"
           "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 64.00 MiB. GPU 0 has a total capacity of 7.75 GiB of which "
           "20.00 MiB is free. Of the allocated memory 6.95 GiB is allocated by PyTorch, and 100.00 MiB is reserved by PyTorch but "
           "unallocated.\n")
    res = triage.triage_text(log)
    ev = res["events"][-1]
    assert res["cause"] == "text-encoder", ev["causes"]
    assert ev["runtime"] == "pytorch"


# --- round 2: the classes batches 14-16 missed, each on threads other than those batches' -----------------------------

ROUND2 = [
    # (thread, log, cause, runtime, device, numbers)
    ("https://github.com/ggml-org/llama.cpp/issues/12728",        # -ctk q8_0: one compute buffer above the Vulkan limit
     "init:    Vulkan0 KV buffer size = 13800.00 MiB\n"
     "ggml_vulkan: Device memory allocation of size 2166360064 failed.\n"
     "ggml_vulkan: Requested buffer size exceeds device memory allocation limit: ErrorOutOfDeviceMemory\n"
     "ggml_gallocr_reserve_n: failed to allocate Vulkan0 buffer of size 2166360064\n"
     "llama_init_from_model: failed to initialize the context: failed to allocate compute pp buffers\n",
     "other", "llama.cpp", "vulkan", {}),
    ("https://github.com/vllm-project/vllm/issues/2391",          # a GPTQ checkpoint mapped into host memory
     "RuntimeError: unable to mmap 18329065000 bytes from file </data/hf/CodeLlama-34B-GPTQ/model.safetensors>: Cannot allocate memory (12)\n",
     "host-ram", None, None, {"requested": 18329065000}),
    ("https://github.com/safetensors/safetensors/issues/528",     # a 24 GB file on a 16 GB RAM machine
     "RuntimeError: unable to mmap 23802932552 bytes from file <./flux1-dev.safetensors>: Cannot allocate memory (12)\n",
     "host-ram", None, None, {"requested": 23802932552}),
    ("https://github.com/chidiwilliams/buzz/issues/439",          # faster-whisper medium on a 6 GB GTX 1060, at model creation
     "Traceback (most recent call last):\n"
     '  File "buzz\\transcriber.py", line 500, in transcribe_faster_whisper\n'
     '  File "faster_whisper\\transcribe.py", line 101, in __init__\n'
     "RuntimeError: CUDA failed with error out of memory\n",
     "weights-exceed-vram", "ctranslate2", "cuda", {}),
    ("https://github.com/ggml-org/llama.cpp/issues/1735",          # WSL2, fixed by GGML_CUDA_NO_PINNED=1
     "CUDA error 2 at /home/u/llama.cpp/ggml-cuda.cu:1241: out of memory\n",
     "host-ram", "llama.cpp", "cuda", {}),
    ("https://github.com/Comfy-Org/ComfyUI/issues/13015",         # Dynamic VRAM on 0.17.2: the VBAR reservation
     "!!! Exception during processing !!! VBAR allocation failed\n"
     "Traceback (most recent call last):\n"
     '  File "C:\\ComfyUI\\execution.py", line 525, in execute\n'
     '  File "C:\\ComfyUI\\comfy\\model_patcher.py", line 1495, in _vbar_get\n'
     '  File "C:\\python\\Lib\\site-packages\\comfy_aimdo\\model_vbar.py", line 51, in __init__\n'
     "MemoryError: VBAR allocation failed\n",
     "other", "comfyui", "cuda", {}),
    ("https://github.com/ollama/ollama/issues/6257",               # Metal under Ollama: the command buffer, no context printed
     "ggml_metal_graph_compute: command buffer 3 failed with status 5\n"
     "error: Insufficient Memory (00000008:kIOGPUCommandBufferCallbackErrorOutOfMemory)\n",
     None, None, "metal", {}),
    ("https://github.com/microsoft/WSL/issues/8447",               # WSL2 training, fixed by pin_memory=False
     "  File \"/home/u/train.py\", line 88, in <module>\n"
     "    for x, y in loader:\n"
     "RuntimeError: CUDA error: out of memory\n",
     "host-ram", "pytorch", "cuda", {}),
]


@pytest.mark.parametrize("thread,log,cause,runtime,device,numbers", ROUND2, ids=[c[0].split("github.com/")[1] for c in ROUND2])
def test_round2_family_is_recognised(thread, log, cause, runtime, device, numbers):
    test_message_family_is_recognised(thread, log, cause, runtime, device, numbers)


def test_metal_command_buffer_with_a_long_context_is_the_kv_cache():
    # ollama/ollama#6257's lines after a context line of 131072 tokens (the size that thread's model runs at)
    log = ("llama_new_context_with_model: n_ctx      = 131072\n" + ROUND2[6][1])
    assert triage.triage_text(log)["cause"] == "kv-cache"
    short = ("llama_new_context_with_model: n_ctx      = 8192\n" + ROUND2[6][1])
    assert triage.triage_text(short)["cause"] != "kv-cache"


OLD_FORM = ("RuntimeError: CUDA out of memory. Tried to allocate 256.00 MiB (GPU 0; 14.56 GiB total capacity; 13.30 GiB already "
            "allocated; 230.50 MiB free; 13.65 GiB reserved in total by PyTorch)")       # deepspeedai/DeepSpeed#3208
NEW_FORM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 150.00 MiB. GPU 2 has a total capacity of 23.52 GiB of "
            "which 11.69 MiB is free. Process 2920103 has 23.50 GiB memory in use. Of the allocated memory 21.00 GiB is allocated by "
            "PyTorch, and 54.91 MiB is reserved by PyTorch but unallocated.")             # vllm-project/vllm#27782


@pytest.mark.parametrize("msg", [OLD_FORM, NEW_FORM])
def test_lower_cased_message_reads_the_same_numbers(msg):
    # forum quotes and some trainers' logs lower-case the whole message (bmaltais/kohya_ss#3329)
    want, got = P.recognise(msg), P.recognise(msg.lower())
    assert got and got["numbers"] == want["numbers"] and got["kind"] == want["kind"]


def test_new_form_cut_after_is_free_keeps_its_numbers():
    # invoke-ai/InvokeAI#6193 quotes the message up to "is free"
    ev = P.recognise("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 26.00 MiB. GPU 0 has a total capacity "
                     "of 11.73 GiB of which 7.12 MiB is free")
    assert ev["numbers"] == {"requested": 26 << 20, "total": round(11.73 * GiB), "free": round(7.12 * (1 << 20))}


def test_driver_error_of_an_extension_is_not_read_as_pinned_memory():
    # nunchaku's own allocation ("(at .../Tensor.h:88)") is VRAM, not PyTorch's pinned host buffers (nunchaku-tech/ComfyUI-nunchaku#150)
    ev = P.recognise("CUDA error: out of memory (at /src/nunchaku/src/Tensor.h:88)")
    assert ev["form"] == "extension"
    res = triage.triage_text("got prompt\n!!! Exception during processing !!! CUDA error: out of memory (at /src/nunchaku/src/Tensor.h:88)\n")
    assert res["events"][-1]["causes"][0]["id"] != "host-ram"


@pytest.mark.parametrize("line,cat", [
    ("weights = fake_torch_load_zipped(open(path, 'rb'), load_weights=1)", "weights-exceed-vram"),   # tinygrad llama.py
    ("    load_weight(k, v)", "weights-exceed-vram"),
    ("return self.prepare_model(obj, device_placement=device_placement)", "weights-exceed-vram"),     # accelerate
])
def test_round2_source_lines(line, cat):
    assert C.source_category(line) == cat


ROUND2B = [
    ("https://github.com/Yuliang-Liu/MonkeyOCR/issues/25",        # one Triton kernel 2 bytes over the 64 KiB per-block limit
     "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 65538, Hardware limit: 65536. "
     "Reducing block sizes or `num_stages` may help.\n",
     "other", "pytorch", "cuda", {"requested": 65538, "max_allowed": 65536}),
    ("https://github.com/xinntao/ESRGAN/issues/134",              # a 4x upscale on a 128 GB Mac: one array over 4 GiB
     "/AppleInternal/Library/BuildRoots/0000/Library/Caches/com.apple.xbs/Sources/MetalPerformanceShaders/MPSCore/Types/"
     "MPSNDArray.mm:724: failed assertion `[MPSNDArray initWithDevice:descriptor:] Error: total bytes of NDArray > 2**32'\n",
     "activations", "pytorch", "mps", {}),
    ("https://github.com/rowanz/neural-motifs/issues/58",          # PyTorch 1.0's allocator (THC), no numbers
     "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/THCTensorRandom.cu:25\n",
     None, "pytorch", "cuda", {}),
    ("https://github.com/pytorch/pytorch/issues/87861",            # shared-memory tensors for a replay buffer: ENOMEM
     "RuntimeError: unable to mmap 29764 bytes from file </torch_10182_3020184674_63991>: Cannot allocate memory (12)\n",
     "host-ram", None, None, {"requested": 29764}),
]


@pytest.mark.parametrize("thread,log,cause,runtime,device,numbers", ROUND2B, ids=[c[0].split("github.com/")[1] for c in ROUND2B])
def test_round2b_family_is_recognised(thread, log, cause, runtime, device, numbers):
    test_message_family_is_recognised(thread, log, cause, runtime, device, numbers)
