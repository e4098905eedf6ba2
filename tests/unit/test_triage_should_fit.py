"""Version regressions (issue 14, class 7): a load the LLM calculator says fits with room fails -> cause other, "should fit:
N GiB of weights (+ K GiB KV at the log's context) on M GiB; a regression of this version (V) is likely", with the
version-regression guide. Logs written in the runtimes' own start-up and error lines (vLLM V1, llama.cpp, Ollama's
server), with made-up numbers; expected figures by hand:
  Qwen2.5-7B: 7,615,616,512 parameters x 2 bytes (bf16) = 14.19 GiB; its cache 28 layers x 2 (K, V) x 4 KV heads x 128
  x 2 bytes = 57,344 B a token, x 8192 = 448 MiB (0.4 GiB). Q4_K_M (Ollama's default, llama.cpp's printed buffers
  4168.09 + 292.36 MiB) 4.4 GiB. Llama-3.1-8B Q4_K_M 4.6 GiB; its cache 32 x 2 x 8 x 128 x 2 = 131,072 B a token,
  x 8192 = 1.0 GiB.
Deliberate errors each of these catches: the weights sized at 4 bytes (28.4 GiB), the KV cache left out or sized per
query head, FIT_SHARE at 1.0 (the 19.5 GiB card fires) or at 0.5 (the 30 GiB card does not), the version line not
read (no "(vLLM 0.9.2)"), the mid-serving, Transformers-backend, other-process, partial-offload and parameter-mismatch guards dropped."""
from gpu_garden.memory.triage import engine, should_fit
from support.triage_event import LLAMA_KV_OOM

VLLM = """INFO 03-02 10:11:12 [api_server.py:1043] vLLM API server version 0.9.2
INFO 03-02 10:11:20 [core.py:69] Initializing a V1 LLM engine (v0.9.2) with config: model='Qwen/Qwen2.5-7B-Instruct', \
speculative_config=None, tokenizer='Qwen/Qwen2.5-7B-Instruct', dtype=torch.bfloat16, max_seq_len=8192, load_format=auto
INFO 03-02 10:11:25 [gpu_model_runner.py:1329] Starting to load model Qwen/Qwen2.5-7B-Instruct...
{serving}ERROR 03-02 10:11:41 [core.py:586] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.02 GiB. GPU 0 has \
a total capacity of {total} GiB of which 512.00 MiB is free. Including non-PyTorch memory, this process has {this} GiB \
memory in use. Of the allocated memory {alloc} GiB is allocated by PyTorch, and 120.00 MiB is reserved by PyTorch but \
unallocated.
"""

LLAMA = LLAMA_KV_OOM

OLLAMA = """$ ollama run llama3.1:8b
time=2025-03-04T09:12:01.100Z level=INFO source=routes.go:1225 msg="Listening on 127.0.0.1:11434 (version 0.6.1)"
time=2025-03-04T09:12:01.300Z level=INFO source=types.go:130 msg="inference compute" id=GPU-5a1e library=cuda variant=v12 \
compute=8.9 driver=12.8 name="NVIDIA GeForce RTX 4090" total="23.6 GiB" available="23.1 GiB"
time=2025-03-04T09:12:09.410Z level=INFO source=server.go:405 msg="starting llama server" cmd="/usr/lib/ollama/runners/\
cuda_v12_avx/ollama_llama_server runner --model /root/.ollama/models/blobs/sha256-667b0c1932bc --ctx-size 8192 \
--batch-size 512 --n-gpu-layers 33 --threads 8 --parallel 1 --port 40155"
load_tensors: offloaded 33/33 layers to GPU
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 4403.49 MiB on device 0: cudaMalloc failed: out of memory
alloc_tensor_range: failed to allocate CUDA0 buffer of size 4617395200
llama_model_load: error loading model: unable to allocate CUDA0 buffer
"""


def _vllm(total=79.19, this=78.67, serving="", version=True, model=None):
    log = VLLM.format(total=f"{total:.2f}", this=f"{this:.2f}", alloc=f"{this - 0.77:.2f}", serving=serving)
    if not version:
        log = "\n".join(l for l in log.splitlines() if "server version" not in l).replace(" (v0.9.2)", "") + "\n"
    if model:
        log = log.replace("Qwen/Qwen2.5-7B-Instruct", model)
    return engine.triage_text(log)["events"][-1]


def _should_fit(ev):
    return next((e for c in ev["causes"] for e in c["evidence"] if e.startswith("should fit:")), None)


def test_vllm_load_that_fits_names_a_regression_of_its_version():
    ev = _vllm()
    assert ev["causes"][0]["id"] == "other" and ev["runtime"] == "vllm"
    s = _should_fit(ev)
    assert s.startswith("should fit: 14.2 GiB of weights (+ 0.4 GiB KV at the log's context, 8192 tokens) on 79.2 GiB")
    assert s.endswith("a regression of this version (vLLM 0.9.2) is likely")
    faq = ev["guide"]      # (fix68f, aud68c #5) with the verdict the version-regression guide leads, the checklist after it
    assert faq["id"] == "version-regression" and "14.19 GiB of\nweights" in faq["markdown"]
    assert "448.00 MiB of KV cache at the log's 8192-token context" in faq["markdown"]
    assert 'pip install "vllm==' in faq["markdown"] and "git checkout" not in faq["markdown"]
    assert "gpu-garden kv --model Qwen2.5-7B --runtime vllm --ctx 8192 --runtime-version 0.9.2 --vram 79.19" in faq["markdown"]
    assert ev["guide"]["faqs"][0]["id"] == "allocation-refused"
    assert "a regression of vLLM 0.9.2 is likely" in ev["guide"]["faqs"][0]["markdown"]


def test_without_a_version_line_the_version_in_use():
    s = _should_fit(_vllm(version=False))
    assert s.endswith("a regression of the runtime version in use is likely") and "0.9.2" not in s


def test_clear_room_is_under_four_fifths_of_what_vllm_may_use():
    # utilization 0.9 (vLLM's default); the calculator's need for Qwen2.5-7B at 8192 tokens is about 16 GiB
    assert should_fit.FIT_SHARE == 0.8
    assert _should_fit(_vllm(total=30.0, this=29.48))            # 16 of 27.0 GiB: 0.6
    assert _should_fit(_vllm(total=19.5, this=18.98)) is None    # 16 of 17.55 GiB: 0.9, fits without clear room


def test_no_verdict_mid_serving_for_another_process_an_unknown_or_a_too_large_model():
    assert _should_fit(_vllm(serving="INFO 03-02 10:12:01 [loggers.py:118] Engine 000: Avg prompt throughput: 812.3 tokens/s\n")) is None
    assert _should_fit(_vllm(this=38.67)) is None                # 40 GiB held by another process
    assert _should_fit(_vllm(model="facebook/opt-125m")) is None  # no built-in description: no guess
    fallback = "WARNING 03-02 10:11:24 [utils.py:152] Qwen2ForCausalLM has no vLLM implementation, falling back to Transformers implementation.\n"
    assert _should_fit(_vllm(serving=fallback)) is None           # the Transformers backend: not what kv describes
    big = _vllm(model="Qwen/Qwen2.5-72B-Instruct")                 # 135.5 GiB of bf16 weights on 79 GiB
    assert _should_fit(big) is None and big["causes"][0]["id"] != "other"


def test_llamacpp_kv_cache_failure_that_fits():
    ev = engine.triage_text(LLAMA.format(params="7.62", off=29))["events"][-1]
    assert ev["causes"][0]["id"] == "other" and ev["runtime"] == "llama.cpp"
    s = _should_fit(ev)
    assert s.startswith("should fit: 4.4 GiB of weights (+ 0.4 GiB KV at the log's context, 8192 tokens) on 22.5 GiB")
    assert s.endswith("a regression of this version (llama.cpp b4069) is likely")
    assert ev["guide"]["id"] == "version-regression" and "git checkout b" in ev["guide"]["markdown"]


def test_llamacpp_no_verdict_on_a_partial_offload_or_another_model():
    part = engine.triage_text(LLAMA.format(params="7.62", off=20))["events"][-1]
    assert _should_fit(part) is None and part["causes"][0]["id"] == "kv-cache"
    other = engine.triage_text(LLAMA.format(params="14.77", off=29))["events"][-1]   # general.name says 7B, the file 14.77 B
    assert _should_fit(other) is None


def test_ollama_weights_refused_on_a_card_with_room():
    ev = engine.triage_text(OLLAMA)["events"][-1]
    assert ev["causes"][0]["id"] == "other" and ev["runtime"] == "ollama"
    s = _should_fit(ev)
    assert s.startswith("should fit: 4.6 GiB of weights (+ 1.0 GiB KV at the log's context, 8192 tokens) on 23.6 GiB")
    assert s.endswith("a regression of this version (Ollama 0.6.1) is likely")
    assert ev["guide"]["id"] == "version-regression" and "github.com/ollama/ollama/releases" in ev["guide"]["markdown"]


def test_ollama_no_verdict_without_the_context():
    log = OLLAMA.replace("--ctx-size 8192 ", "")
    assert _should_fit(engine.triage_text(log)["events"][-1]) is None


def test_the_calculator_failing_gives_no_verdict(monkeypatch):
    from gpu_garden.memory.llm import kv

    def boom(**_):
        raise RuntimeError("calculator down")
    monkeypatch.setattr(kv, "describe", boom)
    ev = engine.triage_text(OLLAMA)["events"][-1]
    assert _should_fit(ev) is None and ev["causes"]


def test_the_new_gate_keys_hide_no_other_fact():
    """The fact gate finds keys without overlap, longest first: a should_fit key extending another fact's key ("vllm serve"
    over "vllm", "vLLM API server version" over "vLLM") would keep that fact from its line (fails with those keys)."""
    from gpu_garden.memory.triage import lines as L
    mine = ("runtime_version", "llm_model", "gguf_meta", "ollama_total", "vllm_transformers")
    others = {k for name, keys in L.FACT_KEYS.items() if name not in mine for k in keys}
    for name in mine:
        for k in L.FACT_KEYS[name]:
            assert not any(k != o and k.startswith(o) for o in others), (name, k)
    for line, fact in (("VLLM_USE_V1=1 vllm serve Qwen/Qwen3-8B --max-model-len 8192", "vllm_marker"),
                       ("INFO 01-02 [api_server.py:1] vLLM API server version 0.9.2", "vllm_marker"),
                       ("$ ollama run llama3.1:8b", "ollama_marker"), ("ollama version is 0.6.1", "ollama_marker")):
        assert fact in {n for n, _ in L.facts(line)}, line
