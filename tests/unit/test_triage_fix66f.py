"""fix66f: mend review rev66b's findings on fix66c (guides and commands; issue 14). These change what a guide and its
commands say, never which cause is named (test_triage_unseen keeps the answers). Each test failed on fix66c's merge
(d70b622f) unless it says it is a regression check.

The logs are written here, modelled on the reviewer's repros (/tmp/rev66b/logs) and the public threads they follow
(numbers exact, prose and paths rewritten)."""
import pytest

from gpu_garden.memory.triage import engine, guides

PORTABLE = r".\python_embeded\python.exe -s ComfyUI\main.py --windows-standalone-build"


def _answer(text):
    res = engine.triage_text(text)
    return res["cause"], res["events"][res["headline"]]


def _cmds(ev):
    return [c["text"] for c in ev["guide"]["commands"]]


# --- 1. (rev66b F1) a 2 GiB discrete card keeps the weights fixes; the carve-out advice needs an iGPU sign --------------

def _comfy_2g(device, kind="CUDA", backend_path="D:\\ComfyUI_windows_portable\\ComfyUI"):
    oom = (f"{kind} out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 2.00 GiB of which 0 bytes is "
           "free. Of the allocated memory 1.60 GiB is allocated by PyTorch, and 60.00 MiB is reserved by PyTorch but "
           "unallocated.")
    return ("Total VRAM 2048 MB, total RAM 16310 MB\npytorch version: 2.5.1+cu124\nSet vram state to: LOW_VRAM\n"
            f"Device: {device}\ngot prompt\nmodel_type EPS\nRequested to load BaseModel\nLoading 1 new model\n"
            f"!!! Exception during processing !!! {oom}\nTraceback (most recent call last):\n"
            f'  File "{backend_path}\\execution.py", line 317, in execute\n'
            f'  File "{backend_path}\\nodes.py", line 1429, in sample\n'
            f"torch.OutOfMemoryError: {oom}\n")


@pytest.mark.parametrize("device", ["cuda:0 NVIDIA GeForce GT 1030 : cudaMallocAsync",
                                    "cuda:0 NVIDIA GeForce MX250 : native"])
def test_a_2gib_discrete_card_keeps_fix_1_to_3(device):
    cause, ev = _answer(_comfy_2g(device))
    g = ev["guide"]
    assert g["id"] == "comfyui-weights"
    assert "Fix 1" in g["markdown"] and "carve-out" not in g["markdown"], g["markdown"]
    assert not any(f["id"] == "faq-igpu-carveout" for f in g["faqs"])


def test_a_2gib_discrete_card_in_a_script_keeps_fix_1_to_3():
    text = ("Traceback (most recent call last):\n"
            '  File "C:\\Users\\me\\proj\\train.py", line 40, in <module>\n    model.to("cuda")\n'
            "RuntimeError: CUDA out of memory. Tried to allocate 64.00 MiB (GPU 0; 2.00 GiB total capacity; 1.72 GiB "
            "already allocated; 0 bytes free; 1.74 GiB reserved in total by PyTorch)\n")
    cause, ev = _answer(text)
    g = ev["guide"]
    assert g["id"] == "pytorch-weights"
    assert "Fix 1 - load in half precision" in g["markdown"] and "carve-out" not in g["markdown"]
    assert not g["faqs"] or not any(f["id"] == "faq-igpu-carveout" for f in g["faqs"])


@pytest.mark.parametrize("device", ["cuda:0 AMD Radeon RX 550 / 550 Series : native", "cuda:0 AMD Radeon 520 : native"])
def test_a_2gib_discrete_radeon_under_rocm_keeps_fix_1_to_3(device):
    """(review rev66e #1) a tiny total under ROCm took the carve-out advice whatever the device's name: an RX 550 2 GB
    (gfx803) or a Radeon 520 is a discrete card with no UMA frame buffer to raise."""
    cause, ev = _answer(_comfy_2g(device, kind="HIP", backend_path="/root/ComfyUI").replace("2.5.1+cu124", "2.5.1+rocm5.7"))
    g = ev["guide"]
    assert "Fix 1" in g["markdown"] and "larger carve-out" not in g["markdown"], g["markdown"]
    assert not any(f["id"] == "faq-igpu-carveout" for f in g["faqs"])


def test_an_apu_named_by_comfyui_gets_the_carveout_advice():
    """Regression check: an AMD APU under ROCm as ComfyUI names it ("AMD Radeon(TM) Graphics") keeps the carve-out
    paragraph and note."""
    cause, ev = _answer(_comfy_2g("cuda:0 AMD Radeon(TM) Graphics : native", kind="HIP", backend_path="/root/ComfyUI")
                        .replace("2.5.1+cu124", "2.5.1+rocm6.2"))
    g = ev["guide"]
    assert "larger carve-out" in g["markdown"] and "Fix 1" not in g["markdown"]
    assert [f["id"] for f in g["faqs"]] == ["faq-igpu-carveout"]


# --- 2. (rev66b F2) allocation-refused: the carve-out note only with an iGPU sign ---------------------------------------

H200_REFUSED = ("$ vllm serve Qwen/Qwen2.5-32B-Instruct --max-model-len 32768\n"
                "INFO 12-24 08:49:02 [api_server.py:1772] vLLM API server version 0.13.0\n"
                "ERROR 12-24 08:50:35 [core.py:866] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 80.00 MiB. "
                "GPU 0 has a total capacity of 139.72 GiB of which 60.69 MiB is free. Process 691170 has 139.65 GiB memory "
                "in use. Of the allocated memory 139.21 GiB is allocated by PyTorch, and 12.81 MiB is reserved by PyTorch "
                "but unallocated.\n")


def test_an_h200_allocation_refused_answer_has_no_carveout_note():
    cause, ev = _answer(H200_REFUSED)
    g = ev["guide"]
    assert not any(f["id"] == "faq-igpu-carveout" for f in g["faqs"]), (g["id"], [f["id"] for f in g["faqs"]])
    assert "UMA frame buffer" not in g["markdown"] + "".join(f["markdown"] for f in g["faqs"])


def test_allocation_refused_lists_the_carveout_note_only_with_an_igpu_sign():
    all_ = guides.load_all()
    assert [f["id"] for f in guides.render(all_["allocation-refused"], {})["faqs"]] == []
    assert [f["id"] for f in guides.render(all_["allocation-refused"], {"igpu": True})["faqs"]] == ["faq-igpu-carveout"]
    assert guides.render(all_["allocation-refused"], {"igpu": True, "fraction_cap": True})["faqs"] == []


# --- 3-5, 7, 8. vLLM's command (rev66b F3, F3b, F4, F5, F5b, F9, F10) ---------------------------------------------------

def _vllm_log(cmd="$ vllm serve Qwen/Qwen2.5-32B-Instruct --quantization fp8 --max-model-len 8192", version="0.10.0",
              quant="fp8", model="Qwen/Qwen2.5-32B-Instruct", weights="32.41", rest="-0.62", engine="V1", extra=""):
    """Modelled on the reviewer's vllm_online_fp8.log (a V1 start-up that left the cache no memory; figures exact)."""
    return (f"{cmd}\n{extra}"
            f"(APIServer pid=2101) INFO 07-20 10:01:02 [api_server.py:1395] vLLM API server version {version}\n"
            f"(EngineCore_0 pid=2290) INFO 07-20 10:01:20 [core.py:71] Initializing a {engine} LLM engine (v{version}) with "
            f"config: model='{model}', tokenizer='{model}', dtype=torch.bfloat16, max_seq_len=8192, load_format=auto, "
            f"tensor_parallel_size=1, pipeline_parallel_size=1, quantization={quant}, enforce_eager=False, "
            "kv_cache_dtype=auto, device_config=cuda\n"
            f"(EngineCore_0 pid=2290) INFO 07-20 10:02:01 [gpu_model_runner.py:1801] Model loading took {weights} GiB and 38.1 seconds\n"
            f"(EngineCore_0 pid=2290) INFO 07-20 10:02:09 [gpu_worker.py:232] Available KV cache memory: {rest} GiB\n"
            "(EngineCore_0 pid=2290) ERROR 07-20 10:02:09 [core.py:632] EngineCore failed to start.\n"
            "(EngineCore_0 pid=2290) ERROR 07-20 10:02:09 [core.py:632] ValueError: No available memory for the cache "
            "blocks. Try increasing `gpu_memory_utilization` when initializing the engine.\n")


def _serve(text):
    cause, ev = _answer(text)
    assert ev["guide"]["id"] == "vllm-weights", ev["guide"]["id"]
    return ev["guide"], [c for c in _cmds(ev) if "vllm serve" in c]


def test_the_users_own_quantization_stays_in_the_command():
    """A bf16 checkpoint quantized to fp8 as it loads: the engine config's quantization=fp8 is the user's flag, not the
    checkpoint's; dropping --quantization fp8 would serve the weights at twice the size."""
    g, serve = _serve(_vllm_log())
    assert serve and all("--quantization fp8" in c for c in serve), serve
    assert "already quantized" not in g["markdown"]


def test_a_pip_q_line_is_no_quantization():
    """`pip install -q -U vllm` above the command: the old reading took `-u` as the checkpoint's method."""
    g, serve = _serve(_vllm_log(cmd="$ pip install -q -U vllm\n$ vllm serve Qwen/Qwen2.5-14B-Instruct --max-model-len 8192",
                                quant="None", model="Qwen/Qwen2.5-14B-Instruct", weights="27.52"))
    assert "quantization=-u" not in g["markdown"] and "already quantized" not in g["markdown"]
    assert serve and all("--quantization fp8" in c for c in serve), serve     # the guide's own suggestion for bf16 weights


def test_a_checkpoints_own_method_still_drops_the_flag():
    """Regression check: an AWQ checkpoint (config quantization=awq_marlin, no flag on the command) gets no --quantization."""
    g, serve = _serve(_vllm_log(cmd="$ vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --max-model-len 8192", quant="awq_marlin",
                                model="Qwen/Qwen2.5-7B-Instruct-AWQ", weights="5.20"))
    assert serve and not any("--quantization" in c for c in serve), serve
    assert "quantization=awq_marlin" in g["markdown"]


def test_a_version_parse_version_refuses_does_not_crash():
    """vLLM's version redacted to "0.x": fix66c's _v0 called parse_version unguarded and triage exited 2."""
    cause, ev = _answer(_vllm_log(version="0.x"))
    assert ev["guide"]["id"] == "vllm-weights"


def test_v1_serve_on_a_small_card_gets_no_4096():
    """V1 `vllm serve` on a card under 70 GiB already runs 2048 batched tokens (runtimes/vllm.py settings()), so 4096
    would raise the activation peak, not lower it (the reviewer's RTX 5090 log: 4096 kept as "lowers")."""
    from gpu_garden.memory.triage import vllm_command
    f = {"vllm": True, "vllm_v1": True, "vllm_maxlen": 8192, "runtime_version": {"vllm": "0.10.0"}}
    p = vllm_command.params(f, 32 * 2 ** 30)
    assert p["batched_flag"] == "" and p["batched_in_force"] == "2048", p
    # with no card size in the log the flag is left out and the guide says where it would help
    g, serve = _serve(_vllm_log(quant="None"))
    assert serve and not any("--max-num-batched-tokens" in c for c in serve), serve
    assert "70 GiB" in g["markdown"] and "8192" in g["markdown"]


def test_v0_above_32k_has_2048_in_force():
    """V0 turns chunked prefill on above a 32K max_model_len, at 2048 (runtimes/vllm.py settings()); fix66c said 65536."""
    from gpu_garden.memory.triage import vllm_command
    f = {"vllm": True, "vllm_v0": True, "vllm_maxlen": 65536, "runtime_version": {"vllm": "0.7.3"}}
    assert vllm_command.batched_in_force(f, 8 * 2 ** 30)[0] == 2048
    assert vllm_command.batched_in_force(dict(f, vllm_maxlen=16384), 8 * 2 ** 30)[0] == 16384


def test_v1_serve_on_a_large_card_keeps_4096_only_where_the_card_is_named():
    """8192 in force on a card of 70 GiB or more, which 4096 lowers; but vLLM's V1 rule makes an A100-80GB 2048 (4096
    raises it), and a vLLM log names no card: a large card with no name is as unknown as no card (review rev66e #2:
    fix66f kept the flag on an unnamed 79.15 GiB card)."""
    from gpu_garden.memory.triage import vllm_command
    f = {"vllm": True, "vllm_v1": True, "vllm_maxlen": 8192, "runtime_version": {"vllm": "0.10.0"}}
    named = dict(f, device="NVIDIA H100 80GB HBM3")
    assert vllm_command.batched_in_force(named, 80 * 2 ** 30)[0] == 8192
    assert "batched_flag" not in vllm_command.params(named, 80 * 2 ** 30)
    assert vllm_command.batched_in_force(dict(f, device="NVIDIA A100-SXM4-80GB"), 79.15 * 2 ** 30)[0] == 2048
    assert vllm_command.batched_in_force(f, 79.15 * 2 ** 30) == (None, "card")
    assert vllm_command.params(f, 79.15 * 2 ** 30)["batched_flag"] == ""
    assert vllm_command.params(f, 24 * 2 ** 30)["batched_flag"] == ""


def test_the_q_check_reads_the_line_once():
    """(review rev66e #3) each -q match searched the whole line again (a 100 KB line of ' -q=a' took 54 s through the
    handler): the line is read once; what it decides is unchanged. (fix67f) The reading is vllm_short_q.quants."""
    from gpu_garden.memory.triage import vllm_command
    from gpu_garden.memory.triage.vllm_command import BATCHED_RE
    calls = []
    line = "$ vllm serve X" + " -q=a" * 200
    old = vllm_command.short_quants
    vllm_command.short_quants = lambda *a: calls.append(a) or old(*a)
    try:
        f = {}
        vllm_command.seen(f, BATCHED_RE.search(line), line)
    finally:
        vllm_command.short_quants = old
    assert len(calls) == 1 and f.get("vllm_own_quant") == "a"


def test_no_utilization_fits_leaves_the_flag_out():
    """The list says no utilization fits (8.10 GiB of 8.00 held beside the cache); the command said 0.95 all the same."""
    text = ("INFO 02-26 09:53:31 __init__.py:207] Automatically detected platform cuda.\n"
            "INFO 02-26 09:53:40 llm_engine.py:234] Initializing a V0 LLM engine (v0.7.3) with config: "
            "model='Qwen/Qwen2.5-7B-Instruct-AWQ', tokenizer='Qwen/Qwen2.5-7B-Instruct-AWQ', dtype=torch.float16, "
            "max_seq_len=4096, tensor_parallel_size=1, quantization=awq_marlin, enforce_eager=False\n"
            "INFO 02-26 09:54:05 worker.py:267] the current vLLM instance can use total_gpu_memory (8.00GiB) x "
            "gpu_memory_utilization (0.70) = 5.60GiB\n"
            "INFO 02-26 09:54:05 worker.py:267] model weights take 6.80GiB; non_torch_memory takes 0.03GiB; PyTorch "
            "activation peak memory takes 1.42GiB; the rest of the memory reserved for KV Cache is -2.65GiB.\n"
            "[rank0]: ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
            "initializing the engine.\n")
    cause, ev = _answer(text)
    serve = [c for c in _cmds(ev) if "vllm serve" in c]
    assert serve and not any("--gpu-memory-utilization" in c for c in serve), serve
    assert "`--gpu-memory-utilization` is left out" in ev["guide"]["markdown"]


def test_an_env_prefixed_serve_line_takes_the_model_and_tp():
    from gpu_garden.memory.triage import vllm_command
    guide = {"markdown": "```bash\nVLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE=$((1024*1024*1024)) vllm serve MODEL\n```\n"}
    f = {"vllm": True, "llm_model": (None, "nvidia/Qwen3.5-397B-A17B-NVFP4"), "vllm_tensor_parallel": 4}
    vllm_command.apply(guide, f, guides.commands)
    assert ("VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE=$((1024*1024*1024)) vllm serve nvidia/Qwen3.5-397B-A17B-NVFP4 "
            "--tensor-parallel-size 4") in guide["markdown"], guide["markdown"]


# --- 6. (rev66b F7, F8) the portable build's launch line only on Windows; its own folder is a sign ---------------------

ECHO_OOM = ("Error occurred when executing Echo_LoadModel:\n\n"
            "CUDA out of memory. Tried to allocate 58.00 MiB. GPU 0 has a total capacity of 3.95 GiB of which 54.88 MiB is "
            "free. Including non-PyTorch memory, this process has 3.89 GiB memory in use. Of the allocated memory 3.68 GiB "
            "is allocated by PyTorch, and 128.03 MiB is reserved by PyTorch but unallocated.\n\n")


def _launches(ev):
    return [c for c in _cmds(ev) if "main.py" in c]


def test_a_linux_log_with_a_pasted_python_embeded_path_gets_a_linux_launch():
    """Modelled on smthemex/ComfyUI_EchoMimic#48 with one custom node's message naming a python_embeded folder."""
    text = ("[custom node] skipping /mnt/d/comfy/python_embeded/Lib/site-packages/insightface (not a Linux wheel)\n" + ECHO_OOM +
            '  File "/home/user/ComfyUI/execution.py", line 317, in execute\n'
            '  File "/home/user/ComfyUI/execution.py", line 192, in get_output_data\n'
            "torch.OutOfMemoryError: " + ECHO_OOM.split("\n\n")[1] + "\n")
    cause, ev = _answer(text)
    launches = _launches(ev)
    assert launches and all(c.startswith("python main.py") for c in launches), launches


def test_frames_under_comfyui_windows_portable_get_the_portable_line():
    """Modelled on the auditor's c6 log (a WanVideoWrapper block swap, frames under C:\\ComfyUI_windows_portable\\ and no
    python_embeded path): the portable build's line, as before fix66c."""
    text = ("got prompt\nSwapping 20 transformer blocks\n!!! Exception during processing !!! CUDA error: out of memory\n"
            "Traceback (most recent call last):\n"
            '  File "C:\\ComfyUI_windows_portable\\ComfyUI\\execution.py", line 327, in execute\n'
            '  File "C:\\ComfyUI_windows_portable\\ComfyUI\\custom_nodes\\ComfyUI-WanVideoWrapper\\nodes.py", line 1402, in process\n'
            '  File "C:\\ComfyUI_windows_portable\\ComfyUI\\custom_nodes\\ComfyUI-WanVideoWrapper\\wanvideo\\modules\\model.py", '
            "line 1104, in forward\n    block.to(self.main_device, non_blocking=self.use_non_blocking)\n"
            "RuntimeError: CUDA error: out of memory\n")
    cause, ev = _answer(text)
    launches = _launches(ev)
    assert launches and all(c.startswith(PORTABLE) for c in launches), launches


# --- 9. (rev66b F11) Ollama: the compute buffer is case.py's stage reading, with its order -----------------------------

def test_ollama_kv_cache_then_gallocr_keeps_the_kv_suggestions():
    """The KV cache failed first and gallocr then refused a 1 MiB buffer: the cause is the KV cache (case.py's stage
    "kv-cache-failed" comes before "compute-failed"), and the suggestions must be the cache's, not num_batch's."""
    text = ('time=2025-05-25T10:00:00.000Z level=INFO source=server.go:135 msg="system memory"\n'
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory\n"
            "llama_kv_cache_unified: failed to allocate buffer for kv cache\n"
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n"
            "ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 1048576\n"
            "Error: llama runner process has terminated: error loading model: unable to allocate CUDA0 buffer\n")
    cause, ev = _answer(text)
    assert cause == "kv-cache" and ev["runtime"] == "ollama"
    names = [s["name"] for s in ev.get("suggestions", [])]
    assert not any("num_batch" in n for n in names), names
    assert "num_batch 128" not in ev["guide"]["markdown"]


# --- 10. (rev66b F6) ComfyUI Desktop: the Server-Config panel's fields, else its settings file -------------------------

def _desktop(md):
    from gpu_garden.memory.triage import comfy_launch
    return " ".join(comfy_launch.for_desktop(md).split())


@pytest.mark.parametrize("flag", ["--disable-pinned-memory", "--cache-ram 8", "--disable-comfy-compiler",
                                  "--disable-dynamic-vram", "--vram-headroom 1", "--cache-none"])
def test_desktop_flags_with_no_panel_field_say_so(flag):
    """The panel (ComfyUI_frontend serverConfig.ts; the bundled 1.35.9 and 1.58.1 alike) has no field for these: the
    sentence names the settings file Desktop reads its launch arguments from, not the panel."""
    text = _desktop(f"Try:\n\n```bash\npython main.py {flag}\n```\n")
    name, _, value = flag[2:].partition(" ")
    assert "no field for" in text and "not settable there" in text, text
    assert f'`"{name}": "{value}"`' in text and "Comfy.Server.LaunchArgs" in text and "comfy.settings.json" in text, text
    assert "main.py " + flag not in text


@pytest.mark.parametrize("flag,field", [("--reserve-vram 0.7", "Reserved VRAM (GB): 0.7"),
                                        ("--lowvram", "VRAM management mode: lowvram"),
                                        ("--disable-cuda-malloc", "Use CUDA malloc for memory allocation: disable"),
                                        ("--use-split-cross-attention", "Cross attention method: split"),
                                        ("--cpu-vae", "Run VAE on CPU: on")])
def test_desktop_flags_map_to_the_panels_fields(flag, field):
    text = _desktop(f"```bash\npython main.py {flag}\n```\n")
    assert f"Server-Config set {field} (`{flag}`)" in text and "no field" not in text, text


def test_desktop_mixed_flags_name_both():
    text = _desktop("```bash\npython main.py --disable-smart-memory --cache-none\n```\n")
    assert "Disable smart memory management: on (`--disable-smart-memory`)" in text, text
    assert 'no field for `--cache-none`' in text and '`"cache-none": ""`' in text, text


@pytest.mark.parametrize("line,want", [("$ pip install -q -U vllm", {}),
                                       ("$ uv run vllm serve Qwen/X -q awq", {"vllm_own_quant": "awq"}),
                                       ("$ vllm serve X --quantization=fp8", {"vllm_own_quant": "fp8"}),
                                       ("with config: quantization=awq_marlin, kv_quantization=x",
                                        {"vllm_ckpt_quant": "awq_marlin"})])
def test_which_line_says_which_quantization(line, want):
    """(rev66b F3b) -q counts only on a line that runs vLLM and installs nothing; the config line's quantization= is the
    engine's method, a command's --quantization the user's."""
    from gpu_garden.memory.triage import vllm_command
    f = {}
    vllm_command.seen(f, None, line)
    assert f == want


def test_desktop_env_prefixed_launch_is_no_command():
    """(rev66b F6, the macOS Desktop log) `VAR=value python main.py` was left as a command line for Desktop, which has no
    launch line and no setting for environment variables."""
    text = _desktop("```bash\nPYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0 python main.py\n```\n")
    assert "```" not in text and "no setting for environment variables" in text, text
    assert "`PYTORCH_MPS_HIGH_WATERMARK_RATIO=0.0`" in text
