"""Facts the triage guides state, checked against the runtimes' own sources: every ComfyUI flag a guide
shows exists in ComfyUI 0.8.0 or carries the version that added it; every node widget an action sets
exists on that node; the LLM servers' flags and environment variables are ones their sources define.
The tables below were read from the sources named with them (not from the guides)."""
import os
import re
from pathlib import Path

import pytest

from gpu_garden.memory.triage import guides

ALL = guides.load_all()
FLAG_RE = re.compile(r"(?<![\w-])--[a-z0-9][a-z0-9_-]*")

# ComfyUI 0.8.0 comfy/cli_args.py (every add_argument), the version the host tier runs
COMFY_080_FLAGS = set("""
--async-offload --auto-launch --base-directory --bf16-text-enc --bf16-unet --bf16-vae --cache-classic --cache-lru
--cache-none --cache-ram --comfy-api-base --cpu --cpu-vae --cuda-device --cuda-malloc --database-url --default-device
--default-hashing-function --deterministic --directml --disable-all-custom-nodes --disable-api-nodes
--disable-async-offload --disable-auto-launch --disable-cuda-malloc --disable-ipex-optimize --disable-manager-ui
--disable-metadata --disable-mmap --disable-pinned-memory --disable-smart-memory --disable-xformers
--dont-print-server --dont-upcast-attention --enable-compress-response-body --enable-cors-header --enable-manager
--enable-manager-legacy-ui --extra-model-paths-config --fast --force-channels-last --force-fp16 --force-fp32
--force-non-blocking --force-upcast-attention --fp16-text-enc --fp16-unet --fp16-vae --fp32-text-enc --fp32-unet
--fp32-vae --fp64-unet --fp8_e4m3fn-text-enc --fp8_e4m3fn-unet --fp8_e5m2-text-enc --fp8_e5m2-unet --fp8_e8m0fnu-unet
--front-end-root --front-end-version --gpu-only --highvram --input-directory --listen --log-stdout --lowvram
--max-upload-size --mmap-torch-files --multi-user --normalvram --novram --oneapi-device-selector --output-directory
--port --preview-method --preview-size --quick-test-for-ci --reserve-vram --supports-fp8-compute --temp-directory
--tls-certfile --tls-keyfile --use-flash-attention --use-pytorch-cross-attention --use-quad-cross-attention
--use-sage-attention --use-split-cross-attention --user-directory --verbose --whitelist-custom-nodes
--windows-standalone-build
""".split())

# Flags newer than 0.8.0: the guide that shows one must say from which ComfyUI it exists (an older
# ComfyUI stops at start with "unrecognized arguments"). Read from Comfy-Org/ComfyUI PRs:
# #12658 (Dynamic VRAM default, --disable-dynamic-vram; 0.16.x logs run with it), #14480 (comfy-aimdo
# 0.4.10, --vram-headroom), #15861 (the Comfy Compiler, --disable-comfy-compiler; 0.35.0 runs with it).
COMFY_NEW_FLAGS = {
    "--disable-dynamic-vram": r"ComfyUI 0\.16\+",
    "--vram-headroom": r"PR #14480",
    "--disable-comfy-compiler": r"ComfyUI 0\.35\+",
}

# ComfyUI 0.8.0 node inputs an action may set (nodes.py CLIPLoader/DualCLIPLoader/VAEDecodeTiled/VAEEncodeTiled,
# comfy_extras/nodes_sd3.py TripleCLIPLoader: three clip_name combos and no device input)
NODE_INPUTS = {
    "CLIPLoader": {"device": ("default", "cpu")},
    "DualCLIPLoader": {"device": ("default", "cpu")},
    "TripleCLIPLoader": {},
    "VAEDecodeTiled": {"tile_size": (64, 4096, 32), "overlap": (0, 4096, 32),
                       "temporal_size": (8, 4096, 4), "temporal_overlap": (4, 4096, 4)},
    "VAEEncodeTiled": {"tile_size": (64, 4096, 64), "overlap": (0, 4096, 32),
                       "temporal_size": (8, 4096, 4), "temporal_overlap": (4, 4096, 4)},
}


def _comfy_checkout():
    for d in (os.environ.get("COMFYUI_DIR"), "/work/hostenv/ComfyUI"):
        if d and (Path(d) / "comfy" / "cli_args.py").is_file():
            return Path(d)
    return None


def test_the_comfyui_flag_table_is_the_checkouts():
    root = _comfy_checkout()
    if root is None:
        pytest.skip("no ComfyUI checkout here (COMFYUI_DIR)")
    if (root / "comfyui_version.py").read_text().find('"0.8.0"') < 0:
        pytest.skip("the checkout is not ComfyUI 0.8.0")
    found = set(re.findall(r'add_argument\(\s*"(--[^"]+)"', (root / "comfy" / "cli_args.py").read_text()))
    assert found == COMFY_080_FLAGS


def _allowed(value, spec):
    if isinstance(spec, tuple) and spec and isinstance(spec[0], str):
        return value in spec
    lo, hi, step = spec
    return isinstance(value, int) and lo <= value <= hi and (value - lo) % step == 0


@pytest.mark.parametrize("gid", sorted(g for g in ALL if ALL[g].get("actions")))
def test_every_widget_an_action_sets_exists_on_its_node(gid):
    g = ALL[gid]
    for params in ({}, {"tile_size": 256, "overlap": 32, "temporal_size": 32, "temporal_overlap": 8}):
        for a in guides.render(g, params).get("actions", []):
            if a["kind"] == "set_widget":
                for node in a["node"]:
                    assert node in NODE_INPUTS, (gid, node)
                    assert a["widget"] in NODE_INPUTS[node], (gid, node, a["widget"])
                    assert _allowed(a["value"], NODE_INPUTS[node][a["widget"]]), (gid, node, a["value"])
            elif a["kind"] == "swap_node":
                for node in (a["from"], a["to"]):
                    assert node in NODE_INPUTS or node in ("VAEDecode", "VAEEncode"), (gid, node)
                for w, v in a["widgets"].items():
                    assert w in NODE_INPUTS[a["to"]], (gid, a["to"], w)
                    assert _allowed(v, NODE_INPUTS[a["to"]][w]), (gid, a["to"], w, v)


def _comfy_guides():
    return sorted(gid for gid, g in ALL.items() if "comfyui" in g["runtimes"])


# flags of other programs that ComfyUI guides name in passing (not ComfyUI's)
NOT_COMFY = {"--query-compute-apps", "--format",  # nvidia-smi
             "--use-directml", "--medvram"}     # the SD WebUI's (directml.md's fix for logs that are not ComfyUI's, fix66c)


@pytest.mark.parametrize("gid", _comfy_guides())
def test_every_comfyui_flag_exists_and_a_new_one_says_from_which_version(gid):
    g = ALL[gid]
    text = guides.render(g, {})["markdown"] + "\n" + guides.render(g, {"launch": guides.FALLBACK["launch"]})["markdown"]
    for flag in set(FLAG_RE.findall(text)) - NOT_COMFY:
        assert flag in COMFY_080_FLAGS or flag in COMFY_NEW_FLAGS, (gid, flag)
        if flag in COMFY_NEW_FLAGS:
            assert re.search(COMFY_NEW_FLAGS[flag], g["markdown"]), (gid, flag, "say which ComfyUI has it")


# llama.cpp common/arg.cpp (2026): the options the guides use, short and long names
LLAMA_FLAGS = {"-m", "--model", "-ngl", "--gpu-layers", "--n-gpu-layers", "-c", "--ctx-size", "-b", "--batch-size",
               "-ub", "--ubatch-size", "-fa", "--flash-attn", "-ctk", "--cache-type-k", "-ctv", "--cache-type-v",
               "--no-mmap", "--mlock", "-fit", "--fit", "-ts", "--tensor-split", "-ot", "--override-tensor",
               "-ncmoe", "--n-cpu-moe", "-np", "--parallel",
               # (fixY) tools/server/README.md at ggml-org/llama.cpp 00dc8057: "-cram, --cache-ram N" (the prompt cache, MiB)
               # and "-lm, --load-mode MODE" (auto, none, mmap, mlock, mmap+mlock, dio), which replaced --mlock / --no-mmap
               "-cram", "--cache-ram", "-lm", "--load-mode", "--help"}
LLAMA_CACHE_TYPES = {"f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "iq4_nl", "q5_0", "q5_1"}


def _llama_lines(md):
    return [ln.strip().strip("`") for ln in re.findall(r"llama-server [^\n`]*", md)]


@pytest.mark.parametrize("gid", sorted(gid for gid, g in ALL.items() if "llama-server" in g["markdown"]))
def test_every_llama_server_flag_exists_with_a_valid_value(gid):
    md = guides.render(ALL[gid], {})["markdown"]
    for line in _llama_lines(md):
        toks = line.split()[1:]
        for i, t in enumerate(toks):
            if not t.startswith("-"):
                continue
            assert t in LLAMA_FLAGS, (gid, t, line)
            nxt = toks[i + 1] if i + 1 < len(toks) else ""
            if t in ("-fa", "--flash-attn", "-fit", "--fit"):
                assert nxt in (("on", "off", "auto") if "fa" in t else ("on", "off")), (gid, line)
            if t in ("-ctk", "-ctv", "--cache-type-k", "--cache-type-v"):
                assert nxt in LLAMA_CACHE_TYPES, (gid, line)
    if "-fa on" in md:
        # '-fa on|off|auto' since late August 2025 (llama.cpp b63xx); before it '-fa' took no value
        assert "bare `-fa`" in md, (gid, "say that older builds take a bare -fa")


def test_fit_is_described_as_adjusting_only_unset_arguments():
    # common/arg.cpp: "--fit [on|off] whether to adjust unset arguments to fit in device memory" (default on)
    for gid, g in ALL.items():
        if "--fit" in g["markdown"]:
            assert "unset" in g["markdown"] and "--fit on" not in g["markdown"], gid


def test_rocm_and_expandable_segments_name_the_builds_that_support_it():
    # PyTorch ignored expandable_segments on ROCm until the HIP VMM port (pytorch#173330, relanded as #177974
    # in March 2026, gated to ROCm >= 7.0 by #179930): a guide that tells ROCm users it is ignored must say
    # which builds that is (ROCm 7.0+ with PyTorch 2.12 or later support it)
    for gid, g in ALL.items():
        for para in g["markdown"].split("\n\n"):
            if "ROCm" in para and "expandable" in para.lower():
                assert "pytorch#177974" in para and "ROCm 7.0" in para, (gid, para[:80])


def test_max_split_with_expandable_segments_is_described_as_the_assert_it_raises():
    # pytorch/pytorch#123548 (and #119452): with both options, release_cached_blocks frees an expandable block
    # with cudaFree and the allocator fails "!block->expandable_segment_ INTERNAL ASSERT FAILED"; nothing in
    # the thread is about reserved memory growing
    cited = [gid for gid, g in ALL.items() if "#123548" in g["markdown"]]
    assert cited
    for gid in cited:
        md = ALL[gid]["markdown"]
        assert "without bound" not in md and "expandable_segment_" in md, gid


def test_the_two_allocator_variable_names_are_explained_as_pytorch_reads_them():
    # PyTorch 2.9.1-2.11 ignore expandable_segments given only in PYTORCH_ALLOC_CONF on CUDA (pytorch/pytorch#183387),
    # so 'PyTorch 2.9+ reads PYTORCH_ALLOC_CONF' is wrong for the one option the guides set; they set both names
    for gid, g in ALL.items():
        md = g["markdown"]
        assert "reads `PYTORCH_ALLOC_CONF`" not in md, gid
        if "expandable_segments:True" in md and "export PYTORCH_ALLOC_CONF=expandable_segments" in md:
            assert "export PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True" in md, gid


def test_xla_defaults_and_variable_names():
    # JAX docs (GPU memory allocation): preallocate 75 % unless XLA_PYTHON_CLIENT_PREALLOCATE=false,
    # XLA_PYTHON_CLIENT_MEM_FRACTION, XLA_PYTHON_CLIENT_ALLOCATOR=platform; TensorFlow's GPU guide: "By default,
    # TensorFlow maps nearly all of the GPU memory of all GPUs" (growth only with set_memory_growth)
    md = ALL["xla"]["markdown"]
    names = set(re.findall(r"XLA_PYTHON_CLIENT_[A-Z_]+", md))
    assert names and names <= {"XLA_PYTHON_CLIENT_PREALLOCATE", "XLA_PYTHON_CLIENT_MEM_FRACTION", "XLA_PYTHON_CLIENT_ALLOCATOR"}
    assert "75 %" in md and "maps nearly all" in md and "grows into all" not in md


# Ollama envconfig/config.go (0.5-0.12): the variables the guides set
OLLAMA_VARS = {"OLLAMA_NUM_PARALLEL", "OLLAMA_MAX_LOADED_MODELS", "OLLAMA_FLASH_ATTENTION", "OLLAMA_KV_CACHE_TYPE",
               "OLLAMA_CONTEXT_LENGTH", "OLLAMA_GPU_OVERHEAD", "OLLAMA_KEEP_ALIVE", "OLLAMA_MAX_QUEUE",
               "OLLAMA_SCHED_SPREAD", "OLLAMA_LOAD_TIMEOUT", "OLLAMA_HOST", "OLLAMA_MODELS", "OLLAMA_DEBUG"}
# vLLM vllm/engine/arg_utils.py (0.10-0.12), SGLang server_args.py, TGI launcher, trtllm-serve (click options)
SERVER_FLAGS = {
    "vllm serve": {"--gpu-memory-utilization", "--dtype", "--kv-cache-dtype", "--max-model-len", "--max-num-seqs",
                   "--enforce-eager", "--max-num-batched-tokens", "--compilation-config", "--quantization",
                   "--tensor-parallel-size", "--cpu-offload-gb", "--kv-cache-memory-bytes", "--enable-sleep-mode",
                   "--kv-offloading-size"},     # (fixY) vLLM 0.20.2 arg_utils.py (CacheConfig.kv_offloading_size, GiB)
    "sglang.launch_server": {"--model-path", "--max-running-requests", "--chunked-prefill-size",
                             "--mem-fraction-static", "--context-length", "--kv-cache-dtype", "--quantization", "--tp",
                             "--tp-size", "--attention-backend", "--page-size"},
    "text-generation-launcher": {"--model-id", "--max-batch-prefill-tokens", "--max-input-tokens", "--max-total-tokens",
                                 "--quantize", "--num-shard", "--cuda-memory-fraction"},
    "trtllm-serve": {"--max_num_tokens", "--max_batch_size", "--max_seq_len", "--kv_cache_free_gpu_memory_fraction",
                     "--tp_size", "--free_gpu_memory_fraction"},
}


def test_every_ollama_variable_is_one_ollama_reads():
    for gid, g in ALL.items():
        for name in re.findall(r"OLLAMA_[A-Z_]+", g["markdown"]):
            assert name in OLLAMA_VARS, (gid, name)


def test_every_llm_server_flag_exists():
    for gid, g in ALL.items():
        md = guides.render(g, {})["markdown"]
        for launcher, known in SERVER_FLAGS.items():
            for line in re.findall(re.escape(launcher) + r"[^\n`]*", md):
                for flag in FLAG_RE.findall(line):
                    assert flag in known, (gid, launcher, flag)
        # flags named in prose next to the launcher's guide
        if g["runtimes"][:1] == ["vllm"]:
            for flag in re.findall(r"`(--[a-z][a-z0-9-]*)", md):
                assert flag in SERVER_FLAGS["vllm serve"], (gid, flag)


def test_a_verify_line_quoting_the_classic_load_line_also_quotes_dynamic_vrams():
    # comfy/model_patcher.py logs "loaded completely; ..." / "loaded partially; ..." only on classic loading; under
    # Dynamic VRAM (the default since ComfyUI 0.16 on NVIDIA) the load line is "Model X prepared for dynamic VRAM
    # loading. NMB Staged." (ComfyUI PR #12658's log), so a Verify that waits for the classic line never sees it
    for gid, g in ALL.items():
        verify = g["markdown"].split("**Verify.**")[-1] if "**Verify.**" in g["markdown"] else ""
        if "loaded completely" in verify:
            assert "prepared for dynamic VRAM loading" in verify, gid


def test_the_other_process_reserve_is_not_described_as_protecting_memory_comfyui_already_leaves_alone():
    # comfy/model_management.py get_free_memory reads torch.cuda.mem_get_info (free on the device, other
    # programs' use excluded) and --reserve-vram adds to minimum_inference_memory: the reserve is room kept free
    # beyond what others hold at planning time, i.e. for their growth
    md = ALL["comfyui-other-process"]["markdown"]
    assert "leave that memory alone" not in md and "growth" in md


def test_comfyui_pinned_memory_defaults():
    # ComfyUI 0.8.0 comfy/model_management.py: pinning on unless --disable-pinned-memory, for is_nvidia() or
    # is_amd(), MAX_PINNED_MEMORY = 45 % of RAM on Windows ("Windows limit is apparently 50%"), 95 % elsewhere
    md = ALL["comfyui-pinned-memory"]["markdown"]
    assert "AMD" in md and "45 %" in md and "--disable-pinned-memory" in md


def test_the_windows_page_file_path_goes_through_the_advanced_tab():
    # Windows: System Properties > Advanced > Performance Settings opens Performance Options, whose *Advanced* tab
    # holds Virtual memory (Change...)
    for gid, g in ALL.items():
        if "Virtual memory" in g["markdown"]:
            assert re.search(r"Performance[^\n]*\n?[^\n]*Advanced > Virtual memory", g["markdown"]), gid


def test_lowvram_is_described_as_what_it_does():
    # ComfyUI 0.8.0 model_management.py: partial loading ("loaded partially") runs in NORMAL_VRAM as in LOW_VRAM
    # (load_models_gpu computes lowvram_model_memory for both); what --lowvram adds is text_encoder_device()
    # returning the CPU, and on DirectML (lowvram_available = False) turning partial loading on. 2026 cli_args.py:
    # "Doesn't do anything if dynamic vram is enabled. If dynamic vram isn't being used this option makes the
    # text encoders run on the CPU."
    for gid in _comfy_guides():
        md = ALL[gid]["markdown"]
        if "{{launch}} --lowvram" not in md:
            continue
        if gid == "directml":
            assert "partial loading" in md, gid
        else:
            assert "text encoders on the CPU" in md or "text encoders on\nthe CPU" in md, gid
            assert "split the model between VRAM and RAM:" not in md and "can also split the model" not in md, gid


def test_a_comfyui_max_split_fix_keeps_the_native_allocator():
    # ComfyUI's cuda_malloc.py appends backend:cudaMallocAsync to PYTORCH_CUDA_ALLOC_CONF unless
    # --disable-cuda-malloc; PyTorch's async backend ignores max_split_size_mb ("backend:cudaMallocAsync ignores
    # max_split_size_mb ...")
    for gid in _comfy_guides():
        for c in guides.render(ALL[gid], {})["commands"]:
            if "max_split_size_mb" in c["text"] and "main.py" in c["text"]:
                assert "--disable-cuda-malloc" in c["text"], gid


def test_dynamic_vram_is_not_described_as_cuda_only():
    # ComfyUI PR #15633 (in v0.34.0's notes): "Enable dynamic vram by default on ROCm 7.14 and higher"
    md = ALL["comfyui-compiler"]["markdown"]
    assert "on a CUDA card" not in md and "ROCm 7.14" in md
