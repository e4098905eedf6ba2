"""Each guide's command says the same number as its own text, filled from the log (review: guides whose commands
contradicted their text). Expected figures are worked out by hand in the comments from the runtimes' documented
semantics, not by the code under test."""
import re

import pytest
from pathlib import Path

from gpu_garden.memory.triage import advice, guides
from gpu_garden.memory.triage import engine as triage

CORPUS = Path(__file__).parent / "corpus"


def _guide(text, context=None):
    ev = triage.triage_text(text, context)["events"][-1]
    return ev, ev["guide"]


def _corpus(rel):
    lines = (CORPUS / rel).read_text(encoding="utf-8").splitlines(keepends=True)
    return "".join(ln for ln in lines if not re.match(r"# (thread|note|expect|numbers):", ln))


def _cmds(g):
    return [c["text"] for c in g["commands"]]


# A constructed log in llama.cpp's own line formats (llama-model.cpp "using device", load_tensors, llama_context,
# ggml-cuda.cu) with the review's example numbers: 21994 MiB of weights on a 24 GB RTX 4090 and an 8192 MiB KV
# cache for a 32768-token context (256 KiB a token, e.g. 64 layers x 8 KV heads x 128 x K+V x 2 bytes).
LLAMA_4090 = """llama_model_load_from_file_impl: using device CUDA0 (NVIDIA GeForce RTX 4090) - 24080 MiB free
load_tensors: offloaded 65/65 layers to GPU
load_tensors:        CUDA0 model buffer size = 21994.00 MiB
load_tensors:   CPU_Mapped model buffer size =   417.66 MiB
llama_context: n_ctx         = 32768
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 8192.00 MiB on device 0: cudaMalloc failed: out of memory
alloc_tensor_range: failed to allocate CUDA0 buffer of size 8589934592
llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv cache
"""


def test_nice_context_rounding():
    # powers of two and 1.5x them, multiples of 256, at most the figure
    assert [advice.nice_ctx(t) for t in (2200, 3100, 6143, 6144, 255, 256, 700, 100000)] == \
        [2048, 3072, 4096, 6144, 0, 256, 512, 98304]


def test_llamacpp_kv_context_that_fits_is_one_number_in_command_and_text():
    # by hand: 8192 MiB / 32768 tokens = 0.25 MiB a token; 24080 MiB free - 21994 weights - 1024 compute (assumed: the
    # log stops before llama.cpp sizes it) - 512 margin = 550 MiB -> 2200 tokens -> 2048 (half the log's, 16384, needs 4 GiB)
    ev, g = _guide(LLAMA_4090)
    assert ev["causes"][0]["id"] == "kv-cache" and g["id"] == "llamacpp-kv-cache"
    assert "llama-server -m MODEL.gguf -ngl 99 -c 2048 " in _cmds(g)[0]
    md = g["markdown"]
    assert "`-c 2048` is what fits" in md and "2200 tokens" in md and "550.00 MiB" in md
    assert "16384" not in md and "-c 8192" not in md and "half of this log" not in md


def test_llamacpp_kv_half_of_the_log_when_the_card_is_not_printed():
    # abetlen/llama-cpp-python#1944: n_ctx 163840 and the 200 GiB cache request, no free or total figure: half, 81920
    _, g = _guide(_corpus("llamacpp_python_kv_cache_deepseek.log"))
    assert "-c 81920 " in _cmds(g)[0]
    assert "`-c 81920` is half of this log's context (163840)" in g["markdown"]


def test_llamacpp_kv_without_a_context_says_ctx_not_a_number():
    # lemonade-sdk/llamacpp-rocm#79: only the failed 2048 MiB request, no n_ctx line: a placeholder the text explains
    _, g = _guide(_corpus("unseen/batch-29/llamacpp_rocm_rx9060xt_qwen35_27b_kv_cache_2gib_exceeds_vram.log"))
    assert "-c CTX " in _cmds(g)[0]
    assert "`-c CTX`: this log does not print its context" in g["markdown"] and "half of this log" not in g["markdown"]


def test_vllm_fp8_command_uses_the_fp8_length_capped_at_the_model_maximum():
    # vLLM 0.x "max seq len (56000) is larger than the maximum number of tokens that can be stored in KV cache (43328)":
    # f16 43328 -> 43264 (256 steps); fp8 holds twice, 86656, past the 56000 in force (no --max-model-len: the model's): capped, 56000 -> 55808
    _, g = _guide(_corpus("regression/vllm_v0_maxlen_56000.log"))
    cmds = _cmds(g)
    assert any("--max-model-len 43264" in c and "fp8" not in c for c in cmds)
    fp8 = [c for c in cmds if "--kv-cache-dtype fp8" in c and c.startswith("vllm serve")]
    assert fp8 and all("--max-model-len 55808" in c for c in fp8)
    assert "86656" in g["markdown"] and "max_model_len in force, 56000" in g["markdown"]


def test_vllm_fp8_length_is_twice_when_under_the_model_maximum():
    # 13360 tokens at f16 (max model len 163840): 13312; fp8 2 x 13360 = 26720 -> 26624, under the maximum: no cap
    _, g = _guide(_corpus("regression/vllm_v0_maxlen_deepseek_v2.log"))
    fp8 = [c for c in _cmds(g) if "--kv-cache-dtype fp8" in c and c.startswith("vllm serve")]
    assert fp8 and all("--max-model-len 26624" in c for c in fp8)
    assert "maximum length" not in g["markdown"]


# Ollama 0.5.7's runner line (llm/server.go: --ctx-size num_ctx x numParallel, then --parallel) as ollama/ollama#8922
# prints it for llama3.1:70b: --ctx-size 8192 --parallel 4; the failure in llama.cpp's own lines
OLLAMA_057 = """time=2025-02-08T10:12:01.512Z level=INFO source=server.go:376 msg="starting llama server" cmd="/usr/bin/ollama runner --model /usr/share/ollama/.ollama/models/blobs/sha256-de20d2cf2dc4 --ctx-size 8192 --batch-size 512 --n-gpu-layers 81 --threads 16 --parallel 4 --port 39221"
llama_new_context_with_model: n_ctx      = 8192
ggml_backend_cuda_buffer_type_alloc_buffer: allocating 2560.00 MiB on device 0: cudaMalloc failed: out of memory
llama_kv_cache_init: failed to allocate buffer for kv cache
"""
SERVER_CONFIG = 'time=2025-02-08T10:11:58.100Z level=INFO source=routes.go:1238 msg="server config" env="map[OLLAMA_NUM_PARALLEL:4]"\n'


def test_ollama_never_advises_the_context_the_log_already_ran():
    # the runner's 8192 is num_ctx x parallel; with one slot the cache is num_ctx alone, so 4096 halves it
    # (slots unknown: the runner line without its --parallel, which now names the slots)
    _, g = _guide(OLLAMA_057.replace(" --parallel 4", ""))
    assert g["id"] == "ollama-kv-cache"
    assert "OLLAMA_CONTEXT_LENGTH=8192" not in g["markdown"] and "num_ctx 8192" not in g["markdown"]
    serve = [c for c in _cmds(g) if "ollama serve" in c]
    assert serve and all("OLLAMA_CONTEXT_LENGTH=4096" in c for c in serve)
    assert 'Environment="OLLAMA_CONTEXT_LENGTH=4096"' in g["markdown"]


@pytest.mark.parametrize("head", [SERVER_CONFIG, ""])
def test_ollama_with_known_slots_names_num_ctx(head):
    # OLLAMA_NUM_PARALLEL:4 in the server config, or the runner's own --parallel 4: num_ctx = 8192 / 4 = 2048; one slot
    # alone gives 2048, then 1024
    _, g = _guide(head + OLLAMA_057)
    md = g["markdown"]
    assert "num_ctx 2048 x 4 parallel" in md and "OLLAMA_CONTEXT_LENGTH=1024" in md
    assert not any("OLLAMA_CONTEXT_LENGTH" in c for c in _cmds(g))


def _vae_log(torch_version):
    return (f"pytorch version: {torch_version}\nTotal VRAM 24564 MB, total RAM 64207 MB\n"
            "100%|##########| 20/20 [00:30<00:00,  1.52s/it]\nRequested to load AutoencodingEngine\n"
            "!!! Exception during processing !!! Allocation on device \n"
            "torch.OutOfMemoryError: Allocation on device \nGot an OOM, unloading all loaded models.\n")


def test_conv3d_paragraph_only_for_pytorch_29_and_not_for_an_image():
    # PyTorch 2.9's conv3d regression (ComfyUI PR 10373) concerns 2.9 only, and only video VAEs (3D convolutions)
    old = _guide(_vae_log("2.5.1+cu124"), {"node_type": "VAEDecode"})[1]
    new = _guide(_vae_log("2.9.0+cu128"), {"node_type": "VAEDecode"})[1]
    img = _guide(_vae_log("2.9.0+cu128"), {"node_type": "VAEDecode", "latent": {"width": 1024, "height": 1024, "frames": 1}})[1]
    assert old["id"] == new["id"] == "comfyui-vae-decode"
    assert "conv3d" not in old["markdown"] and "conv3d" in new["markdown"] and "conv3d" not in img["markdown"]


def test_empty_cache_faq_only_where_it_is_relevant():
    plain = _guide(_vae_log("2.5.1+cu124"), {"node_type": "VAEDecode"})[1]
    assert not plain["faqs"]
    p = {"empty_cache_relevant": True}
    g = guides.render(guides.load_all()["pytorch-activations"], p)
    assert [f["id"] for f in g["faqs"]] == ["faq-empty-cache"]
    assert guides.render(guides.load_all()["pytorch-activations"], {})["faqs"] == []


def test_conditional_blocks_need_their_end():
    try:
        guides.parse("---\nid: x\ntitle: x\n---\n<!-- if a -->\ntext\n", "x.md")
    except ValueError as e:
        assert "<!-- end -->" in str(e)
    else:
        raise AssertionError("an unclosed block must be refused")
    g = guides.parse("---\nid: x\ntitle: x\n---\nA\n<!-- if a !b -->\nB {{v}}\n<!-- end -->\nC\n", "x.md")
    assert guides.render(g, {"a": True, "v": "1"})["markdown"] == "A\nB 1\nC\n"
    assert guides.render(g, {"a": True, "b": True})["markdown"] == "A\nC\n"


def test_mps_evidence_is_not_said_twice():
    from gpu_garden.memory.triage.render import distinct
    a = "MPS already holds 17.21 GiB of 18.13 GiB"
    b = "MPS: PyTorch alone holds 17.21 GiB of the 18.13 GiB limit and a small request fails: the model fills it"
    c = "ComfyUI was loading SD3 when it failed"
    assert distinct([a, b, c]) == [b, c]
    assert distinct([a, "MPS holds 9.00 GiB of 18.13 GiB"]) == [a, "MPS holds 9.00 GiB of 18.13 GiB"]


# ux21: a ComfyUI log with only "cudaMallocAsync refused an allocation" (no size, no free figure) read "Here a large
# block was requested with too little free (more than was free short)" and called the default --reserve-vram 1.0
# "Computed from this log". Without the numbers the guide now says neither; with them it says both, as before.

def test_activations_guide_without_numbers_claims_none():
    for gid, params in (("comfyui-activations", {}), ("pytorch-activations", {})):
        md = guides.render(guides.load_all()[gid], params)["markdown"]
        assert "more than was free" not in md and "a large block" not in md, gid
        assert "Computed from this log" not in md, gid
    md = guides.render(guides.load_all()["comfyui-activations"], {})["markdown"]
    assert "--reserve-vram 1.0" in md and "A starting point: the log gives no shortfall" in md


def test_activations_guide_with_numbers_says_them():
    p = {"requested": "1.18 GiB", "shortfall": "1.18 GiB", "reserve_vram_gb": "1.8"}
    md = guides.render(guides.load_all()["comfyui-activations"], p)["markdown"]
    assert "Here 1.18 GiB was requested with too little free (1.18 GiB short)." in md
    assert "--reserve-vram 1.8" in md and "(Computed from this log: the shortfall plus the usual reserve.)" in md
    assert "A starting point" not in md
    md = guides.render(guides.load_all()["comfyui-activations"], {"requested": "512.00 MiB"})["markdown"]
    assert "Here 512.00 MiB was requested; the log does not say how much was free." in md
    md = guides.render(guides.load_all()["pytorch-activations"], {"requested": "20.00 MiB", "shortfall": "8.00 MiB"})["markdown"]
    assert "Here 20.00 MiB was requested with 8.00 MiB missing." in md
