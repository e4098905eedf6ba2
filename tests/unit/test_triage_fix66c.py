"""fix66c: audit aud66b's guide and command findings (issue 14). These change what a guide and its commands say, never
which cause is named (test_triage_unseen keeps the answers). Each test was run on the code before its fix and failed
there unless it says it is a regression check.

The logs under data/fix66c are the auditor's, modelled on public threads (numbers exact, prose and paths rewritten):
  dml_comfy_rx5500xt.log       Comfy-Org/ComfyUI#3869 (a 58982400-byte tensor under --directml on an RX 5500 XT)
  dml_a1111_amdgpu.log         lshqqytiger/stable-diffusion-webui-amdgpu#592 (4915840 bytes, --use-directml)
  dml_script_lstm.log          microsoft/DirectML#355 (nn-morse's LSTM, 81544192 bytes, Radeon VII)
  report_dualclip_desktop.log  Comfy-Org/ComfyUI#6693 (ComfyUI Desktop 0.3.13, DualCLIPLoader "Allocation on device")
  ollama_071_gallocr.log       ollama/ollama#10852 (0.7.1, mistral-small3.1 24B: gallocr could not place a 9791055360-byte CUDA1 buffer)
  apu_512_bogus_free.log       YanWenKun/ComfyUI-Docker#54 (a Ryzen 7 7700's 512 MiB carve-out under ROCm, HIP OOM of 72 MiB)
  vllm_util070_4060.log        vllm-project/vllm#13882 (Qwen2.5-7B AWQ, vLLM 0.7.3 V0, 8 GiB at 0.70: KV rest -1.05 GiB)
"""
from pathlib import Path

import pytest

from gpu_garden.memory.triage import comfy_launch, engine

from support.triage_event import TORCH_OOM_2250

DATA = Path(__file__).resolve().parent / "data" / "fix66c"
PORTABLE = r".\python_embeded\python.exe -s ComfyUI\main.py --windows-standalone-build"


def _answer(text):
    res = engine.triage_text(text)
    return res["cause"], res["events"][res["headline"]]


def _log(name):
    return (DATA / name).read_text(encoding="utf-8")


# --- 1. (finding 4) DirectML: the launch keeps --directml; no ComfyUI line for a script or the WebUI ---------------------

def test_directml_comfyui_launch_keeps_directml():
    """ComfyUI only uses a DirectML card with --directml (comfy/cli_args.py:88); the old line was the portable build's
    without it, so the printed fix ran ComfyUI on no GPU at all."""
    cause, ev = _answer(_log("dml_comfy_rx5500xt.log"))
    assert ev["guide"]["id"] == "directml"
    cmds = [c["text"] for c in ev["guide"]["commands"]]
    assert cmds and all(c.split()[-3:] == ["--directml", "--lowvram", "--use-split-cross-attention"] for c in cmds), cmds


@pytest.mark.parametrize("name", ["dml_a1111_amdgpu.log", "dml_script_lstm.log"])
def test_directml_outside_comfyui_prints_no_comfyui_launch(name):
    cause, ev = _answer(_log(name))
    g = ev["guide"]
    assert g["id"] == "directml" and ev["runtime"] != "comfyui"
    assert "main.py" not in g["markdown"] and not g["commands"], g["commands"]
    assert "Fix 1 - smaller work per step" in g["markdown"]


# --- 2. (finding 5) the launch line of the install the log shows --------------------------------------------------------

def test_desktop_gets_its_settings_not_a_command_line():
    """ComfyUI Desktop has no launch line: its flags go in Settings > Server-Config (Comfy.Server.LaunchArgs)."""
    cause, ev = _answer(_log("report_dualclip_desktop.log"))
    g = ev["guide"]
    assert "main.py" not in g["markdown"] and not any("main.py" in c["text"] for c in g["commands"]), g["commands"]
    # (fix66f, rev66b F6) the panel has no free flag field: this pinned "set `--fp8_e4m3fn-text-enc` there"; now its field
    assert "Server-Config set Text Encoder\nprecision: fp8_e4m3fn" in g["markdown"] or \
        "Server-Config set Text Encoder precision: fp8_e4m3fn" in g["markdown"], g["markdown"]


# a ComfyUI OOM in KSampler, Windows paths; HEAD/TAIL wrap one frame line that shows (or does not show) the install
OOM_HEAD = "got prompt\n!!! Exception during processing !!! Allocation on device\nTraceback (most recent call last):\n"
OOM_TAIL = ("torch.OutOfMemoryError: Allocation on device\n\nGot an OOM, unloading all loaded models.\n"
            "Prompt executed in 12.30 seconds\n")
FRAMES = {
    "portable": r'  File "D:\ComfyUI_windows_portable\python_embeded\Lib\site-packages\torch\nn\modules\module.py", line 1736, in _wrapped_call_impl',
    "manual": r'  File "C:\ComfyUI\venv\Lib\site-packages\torch\nn\modules\module.py", line 1736, in _wrapped_call_impl',
    "unknown": r'  File "C:\ComfyUI\comfy\ldm\modules\attention.py", line 345, in attention_pytorch',
}


@pytest.mark.parametrize("shown,launch", [("portable", PORTABLE), ("manual", "python main.py"), ("unknown", "python main.py")])
def test_the_launch_line_is_the_installs(shown, launch):
    text = OOM_HEAD + r'  File "C:\ComfyUI\execution.py", line 323, in execute' + "\n" + FRAMES[shown] + "\n" + OOM_TAIL
    cause, ev = _answer(text)
    assert ev["runtime"] == "comfyui" and ev["platform"]["os"] == "windows"
    g = ev["guide"]
    runs = [c["text"] for c in g["commands"] if "main.py" in c["text"]]
    assert runs and all(r.startswith(launch + " ") or r == launch for r in runs), runs
    if launch != PORTABLE:
        assert not any(PORTABLE in r for r in runs)
    assert (comfy_launch.UNKNOWN_NOTE in g["markdown"].replace("\n", " ")) == (shown == "unknown")


def test_the_report_says_embedded_python():
    """The frontend's error report prints ComfyUI's embedded_python (server.py:624: sys.executable's folder is
    python_embeded): true is the portable build, false (without Desktop's paths) a manual install."""
    base = _log("report_dualclip_desktop.log").replace(r"AppData\Local\Programs\@comfyorgcomfyui-electron\resources", "ComfyUI_x")
    base = base.replace(r"ComfyUI_x\python\Lib", r"ComfyUI_x\lib64")       # no site-packages path of any install left
    for says, launch in (("true", PORTABLE), ("false", "python main.py")):
        cause, ev = _answer(base.replace("**Embedded Python:** false", f"**Embedded Python:** {says}"))
        runs = [c["text"] for c in ev["guide"]["commands"] if "main.py" in c["text"]]
        assert runs and all(r.startswith(launch + " ") for r in runs), (says, runs)


@pytest.mark.parametrize("line,install", [
    (r'  File "C:\Users\a\AppData\Local\Programs\@comfyorgcomfyui-electron\resources\ComfyUI\nodes.py", line 9, in f', "desktop"),
    ('  File "/Applications/ComfyUI.app/Contents/Resources/ComfyUI/nodes.py", line 9, in f', "desktop"),
    (r'  File "E:\CU\python_embeded\Lib\site-packages\torch\functional.py", line 9, in f', "portable"),
    ("- **Embedded Python:** true", "portable"),
    (r"E:\CU>.\python_embeded\python.exe -s ComfyUI\main.py --windows-standalone-build", "portable"),
    ('  File "/home/a/ComfyUI/.venv/lib/python3.12/site-packages/torch/functional.py", line 9, in f', "manual"),
    ('  File "C:\\Users\\a\\miniconda3\\envs\\comfy\\Lib\\site-packages\\torch\\functional.py", line 9, in f', "manual"),
    ("- **Embedded Python:** false", "manual"),
    (r"C:\Users\a\ComfyUI>python main.py --directml", "manual"),
    ('  File "C:\\ComfyUI\\comfy\\model_management.py", line 9, in f', None),
])
def test_one_table_of_install_signs(line, install):
    from gpu_garden.memory.triage import fact_gate
    f = {}
    for name, m in fact_gate.facts(line):
        if name == "comfy_install":
            comfy_launch.seen(f, m)
    assert comfy_launch.install(f) == install


def test_desktop_wins_over_its_own_venv_and_report():
    f = {"comfy_install": {"manual", "desktop"}}
    assert comfy_launch.install(f) == "desktop"


def test_linux_keeps_the_plain_launch_and_no_note():
    """Regression check (passes on the old code too): off Windows the launch stays the guides' plain one, no note."""
    text = "got prompt\n!!! Exception during processing !!! " + TORCH_OOM_2250 + "\nTraceback (most recent call last):\n" + \
        '  File "/home/a/ComfyUI/execution.py", line 323, in execute\n' + "torch.OutOfMemoryError: " + TORCH_OOM_2250 + "\n"
    cause, ev = _answer(text)
    assert ev["runtime"] == "comfyui" and ev["platform"]["os"] == "linux"
    runs = [c["text"] for c in ev["guide"]["commands"] if "main.py" in c["text"]]
    assert runs and all(r.startswith("python main.py") for r in runs)
    assert comfy_launch.UNKNOWN_NOTE not in ev["guide"]["markdown"].replace("\n", " ")


@pytest.mark.parametrize("exe,main,install", [
    (r"D:\CU\python_embeded\python.exe", r"D:\CU\ComfyUI\main.py", "portable"),
    (r"C:\Users\a\Documents\ComfyUI\.venv\Scripts\python.exe",
     r"C:\Users\a\AppData\Local\Programs\@comfyorgcomfyui-electron\resources\ComfyUI\main.py", "desktop"),
    ("/home/a/ComfyUI/venv/bin/python", "main.py", "manual"),
    (r"C:\Python312\python.exe", "main.py", None),
])
def test_the_panel_reads_the_install_from_the_host(exe, main, install):
    """The OOM panel's excerpt has no frames: the host's own paths say the install (oom_build's context "comfy_install"),
    and the launch follows it."""
    assert comfy_launch.host_install(exe, main) == install
    p = comfy_launch.params({"runtime": "comfyui", "os": "windows"}, {}, {"comfy_install": install})
    assert p["launch"] == (PORTABLE if install == "portable" else "python main.py")
    assert bool(p.get("launch_unknown")) == (install is None)


# --- 3. (finding 3) vLLM "No available memory for the cache blocks": the share from the log's figures ----------------------

def _vllm(text):
    cause, ev = _answer(text)
    g = ev["guide"]
    serve = [c["text"] for c in g["commands"] if c["text"].startswith("vllm serve")]
    return ev, g, serve, {x["name"]: x for x in ev.get("suggestions", [])}


def test_the_share_is_worked_out_from_the_logs_figures():
    """0.70 x 8.00 GiB less the cache's -1.05 GiB: weights 5.20 + non-torch 0.03 + activation peak 1.42 = 6.65 GiB; one
    4096-token request of Qwen2.5-7B (28 layers x 4 KV heads x 128 x 2 x 2 bytes = 56 KiB a token) is 224 MiB; (6.65 GiB +
    224 MiB) / 8 GiB = 0.8586, up to 0.86. The old advice was a flat 0.70 + 0.05 = 0.75, which still leaves no cache."""
    ev, g, serve, sugg = _vllm(_log("vllm_util070_4060.log"))
    assert ev["guide"]["id"] == "vllm-weights"
    assert sugg["--gpu-memory-utilization"]["value"] == "0.86"
    assert serve and all("--gpu-memory-utilization 0.86" in c for c in serve), serve
    assert "6.65 GiB" in sugg["--gpu-memory-utilization"]["reason"]


def test_no_share_fits_says_so():
    """With the cache's rest at -2.50 GiB the three take 8.10 GiB of 8.00: no share up to 0.95 holds them."""
    ev, g, serve, sugg = _vllm(_log("vllm_util070_4060.log").replace("KV Cache is -1.05GiB", "KV Cache is -2.50GiB"))
    x = sugg["--gpu-memory-utilization"]
    assert x["kind"] == "note" and not x["value"] and "no utilization fits" in x["reason"], x


def test_a_quantized_checkpoint_gets_no_quantization_flag():
    """vLLM refuses a --quantization that differs from the checkpoint's (ModelConfig._verify_quantization)."""
    ev, g, serve, sugg = _vllm(_log("vllm_util070_4060.log"))
    assert serve and not any("--quantization" in c for c in serve), serve
    assert "quantization=awq_marlin" in g["markdown"]
    # regression check: weights that are not quantized keep the fp8 suggestion
    ev, g, serve, sugg = _vllm(_log("vllm_util070_4060.log").replace("quantization=awq_marlin", "quantization=None"))
    assert serve and all("--quantization fp8" in c for c in serve), serve


V1_HEAD = "Initializing a V1 LLM engine (v0.8.5)"


@pytest.mark.parametrize("change,kept", [
    ({}, False),            # V0 (0.7.3) without chunked prefill: max(4096, 2048) = 4096 in force, and no value under it
    # (fix66f, rev66b F5) this pinned the defect (kept): V1 `vllm serve` on this 8 GiB card already runs 2048
    ({"Initializing a V0 LLM engine (v0.7.3)": V1_HEAD}, False),
    ({"Initializing a V0 LLM engine (v0.7.3)": V1_HEAD,
      "Automatically detected platform cuda.": "Chunked prefill is enabled with max_num_batched_tokens=2048."}, False),
    ({"Initializing a V0 LLM engine (v0.7.3)": V1_HEAD,
      "Automatically detected platform cuda.": "Chunked prefill is enabled with max_num_batched_tokens=8192."}, True),
])
def test_max_num_batched_tokens_only_when_it_lowers_what_is_in_force(change, kept):
    text = _log("vllm_util070_4060.log")
    for a, b in change.items():
        assert a in text
        text = text.replace(a, b)
    ev, g, serve, sugg = _vllm(text)
    assert serve and all(("--max-num-batched-tokens 4096" in c) == kept for c in serve), serve


# --- 4. (finding 10) Ollama's compute buffer gets a compute-buffer guide, not the KV cache's --------------------------------

def test_ollama_compute_buffer_gets_the_compute_buffer_guide():
    cause, ev = _answer(_log("ollama_071_gallocr.log"))
    assert cause == "activations" and ev["runtime"] == "ollama" and ev["numbers"]["requested"] == 9791055360
    g = ev["guide"]
    assert g["id"] == "ollama-activations"
    cmds = [c["text"] for c in g["commands"]]
    assert "/set parameter num_batch 128" in cmds
    assert not any("OLLAMA_KV_CACHE_TYPE" in c for c in cmds)
    names = {x["name"] for x in ev["suggestions"]}
    assert "num_batch" in names and "OLLAMA_KV_CACHE_TYPE" not in names, ev["suggestions"]


# llama.cpp's own compute-buffer failure (the same gallocr line under llama-server): its own guide stays (regression check)
LLAMA_GALLOCR = """build: 5000 (abcdef12) with cc (GCC) 13.3.0 for x86_64-linux-gnu
llama_context: n_ctx         = 32768
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 9337.50 MiB on device 0: cudaMalloc failed: out of memory
ggml_gallocr_reserve_n: failed to allocate CUDA0 buffer of size 9791055360
llama_init_from_model: failed to initialize the context: failed to allocate compute buffers
"""


def test_llamacpp_compute_buffer_keeps_its_guide():
    cause, ev = _answer(LLAMA_GALLOCR)
    assert ev["runtime"] == "llama.cpp" and ev["guide"]["id"] == "llamacpp-activations", (ev["runtime"], ev["guide"]["id"])


def test_ollama_kv_cache_failure_keeps_the_kv_guide():
    """Regression check: a KV-cache allocation under Ollama still gets the cache's guide (its q8_0 cache is the fix there)."""
    text = ("time=2025-05-25T10:00:00.000Z level=INFO source=server.go:135 msg=\"system memory\"\n"
            "ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4096.00 MiB on device 0: cudaMalloc failed: out of memory\n"
            "llama_kv_cache_unified: failed to allocate buffer for kv cache\n"
            "llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache\n"
            "Error: llama runner process has terminated: error loading model: unable to allocate CUDA0 buffer\n")
    cause, ev = _answer(text)
    assert ev["runtime"] == "ollama" and ev["guide"]["id"] != "ollama-activations", (ev["runtime"], cause, ev["guide"]["id"])


# --- 5. (finding 8) a tiny integrated-GPU carve-out: the carve-out paragraph, not the 8-24 GB card's fixes -----------------

def test_a_tiny_carveout_gets_the_carveout_paragraph():
    cause, ev = _answer(_log("apu_512_bogus_free.log"))
    assert ev["numbers"]["total"] == 512 * 2 ** 20
    g = ev["guide"]
    assert g["id"] == "comfyui-weights"
    md = g["markdown"] + "".join(f["markdown"] for f in g["faqs"])
    assert "UMA frame buffer" in md and "BIOS/UEFI" in md and "`--cpu`" in md
    assert "--reserve-vram" not in md and "8-12 GB cards" not in md, md
    assert [f["id"] for f in g["faqs"]] == ["faq-igpu-carveout"]


def test_the_uma_sentence_has_one_source():
    from gpu_garden.memory.triage import guides
    having = {gid for gid, g in guides.load_all().items() if "UMA frame buffer" in g["markdown"]}
    assert having == {"faq-igpu-carveout"}
    r = guides.render(guides.load_all()["allocation-refused"], {"igpu": True})     # (fix66f) only with an iGPU sign
    assert [f["id"] for f in r["faqs"]] == ["faq-igpu-carveout"]
    assert "UMA frame buffer" in r["faqs"][0]["markdown"]


def test_a_full_card_keeps_the_weights_fixes():
    """Regression check: a 24 GB card's weights failure keeps Fix 1-3 and no carve-out note."""
    text = "got prompt\n!!! Exception during processing !!! " + TORCH_OOM_2250 + "\nTraceback (most recent call last):\n" + \
        '  File "/home/a/ComfyUI/comfy/model_management.py", line 540, in load_models_gpu\n' + \
        "torch.OutOfMemoryError: " + TORCH_OOM_2250 + "\n"
    cause, ev = _answer(text)
    g = ev["guide"]
    assert not any(f["id"] == "faq-igpu-carveout" for f in g["faqs"])
    assert "carve-out" not in g["markdown"]


# --- 6. (finding 12b) vLLM commands take the log's model and --tensor-parallel-size -------------------------------------

# modelled on vllm-project/vllm#17462 (vLLM 0.8.5 V1, `vllm serve Qwen3-32B --tensor-parallel-size 2` on two L20s: CUDA out
# of memory while capturing graphs after "GPU KV cache size: 67,856 tokens"); paths and prose rewritten
VLLM_TP2 = """$ vllm serve Qwen3-32B --tensor-parallel-size 2
INFO 04-30 16:18:02 [api_server.py:1043] vLLM API server version 0.8.5
INFO 04-30 16:20:37 [kv_cache_utils.py:634] GPU KV cache size: 67,856 tokens
INFO 04-30 16:20:37 [kv_cache_utils.py:637] Maximum concurrency for 16,384 tokens per request: 4.14x
(VllmWorker rank=1 pid=12171) ERROR 04-30 16:21:27 [multiproc_executor.py:380] WorkerProc hit an exception
(VllmWorker rank=1 pid=12171) ERROR 04-30 16:21:27 [multiproc_executor.py:380] Traceback (most recent call last):
(VllmWorker rank=1 pid=12171) ERROR 04-30 16:21:27 [multiproc_executor.py:380]   File "/opt/venv/lib/python3.10/site-packages/vllm/v1/worker/gpu_model_runner.py", line 1600, in capture_model
(VllmWorker rank=1 pid=12171) ERROR 04-30 16:21:27 [multiproc_executor.py:380]     self._dummy_run(num_tokens)
(VllmWorker rank=1 pid=12171) ERROR 04-30 16:21:27 [multiproc_executor.py:380]   File "/opt/venv/lib/python3.10/site-packages/torch/cuda/graphs.py", line 84, in capture_end
(VllmWorker rank=1 pid=12171) ERROR 04-30 16:21:27 [multiproc_executor.py:380]     super().capture_end()
(VllmWorker rank=1 pid=12171) ERROR 04-30 16:21:27 [multiproc_executor.py:380] RuntimeError: CUDA error: out of memory
"""


def test_vllm_commands_take_the_logs_model_and_tensor_parallel_size():
    cause, ev = _answer(VLLM_TP2)
    serve = [c["text"] for c in ev["guide"]["commands"] if c["text"].startswith("vllm serve")]
    assert serve, ev["guide"]["id"]
    assert all(c.startswith("vllm serve Qwen3-32B --tensor-parallel-size 2") for c in serve), serve
    assert not any("MODEL" in c for c in serve)


def test_a_guides_own_tensor_parallel_suggestion_stays_and_one_gpu_adds_none():
    """Regression checks: a log without a model name keeps MODEL; a single-GPU log gets no --tensor-parallel-size."""
    ev = _answer(VLLM_TP2.replace("$ vllm serve Qwen3-32B --tensor-parallel-size 2\n", ""))[1]
    serve = [c["text"] for c in ev["guide"]["commands"] if c["text"].startswith("vllm serve")]
    assert serve and all(c.startswith("vllm serve MODEL") and "--tensor-parallel-size" not in c for c in serve), serve


def test_the_util070_log_names_its_model():
    ev = _answer(_log("vllm_util070_4060.log"))[1]
    serve = [c["text"] for c in ev["guide"]["commands"] if c["text"].startswith("vllm serve")]
    assert serve == ["vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --gpu-memory-utilization 0.86 --enforce-eager"], serve
