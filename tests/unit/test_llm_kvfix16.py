"""Task kvfix16: `gpu-garden kv` findings of the issue-15 acceptance audit (audit15 X3-X6, C4, C5), each expected value
from the runtime's source or history, a config.json's arithmetic or the issue's wording."""
from gpu_garden.memory.llm import kv as llm
from support.cli_run import run as _run

GiB, KiB = 1 << 30, 1 << 10
QWEN = ["kv", "--model", "Qwen/Qwen2.5-7B-Instruct"]
LLAMA_NP4 = QWEN + ["--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--ctx", "65536", "--parallel", "4",
                    "--vram", "24", "--json"]


def _flags(r):
    return [f["text"] for f in r["flags"]]


# X5: llama-server's flags by build. ggml-org/llama.cpp#14363 (commit 225e7a14, "version: 5913 (225e7a14)") added
# -kvu / --kv-unified; #15434 (release b6325) made -fa take on|off|auto, a bare switch before.

def test_kvu_only_from_the_build_that_has_it(capsys):
    # before b5913 the cache is one (unified) and llama-server has no -kvu: printing it stops the server
    _, old, _ = _run(LLAMA_NP4 + ["--runtime-version", "b5912"], capsys)
    assert "-np 4" in _flags(old) and "-kvu" not in _flags(old)
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    r = llm.plan(spec, runtime="llama.cpp", ctx=65536, parallel=4, weights_dtype="Q4_K_M", vram=24 * GiB,
                 runtime_version="b5913", kv_unified=True)
    assert "-kvu" in _flags(r)


def test_fa_takes_a_value_only_from_b6325(capsys):
    # b4000: flash attention off is the default (no flag); on is the bare switch
    _, off, _ = _run(LLAMA_NP4 + ["--runtime-version", "b4000"], capsys)
    assert not [t for t in _flags(off) if t.startswith("-fa")]
    assert "llama-server" in off["command"] and " -fa" not in off["command"]
    _, on, _ = _run(LLAMA_NP4 + ["--runtime-version", "b4000", "--flash-attn", "on"], capsys)
    assert "-fa" in _flags(on) and "-fa on" not in _flags(on)
    _, q8, _ = _run(LLAMA_NP4 + ["--runtime-version", "b6324", "--kv-dtype", "q8_0"], capsys)
    assert "-fa" in _flags(q8)  # a quantized V cache switches flash attention on: the bare form
    _, new, _ = _run(LLAMA_NP4 + ["--runtime-version", "b6325", "--flash-attn", "off"], capsys)
    assert "-fa off" in _flags(new)
    _, newest, _ = _run(LLAMA_NP4 + ["--flash-attn", "on"], capsys)
    assert "-fa on" in _flags(newest)


# X3: --parallel N prints --max-num-seqs N; the figures are those of that command (vLLM sizes its sampler and its CUDA
# graph captures by max_num_seqs, not by the requests the user expects)

def test_parallel_figures_are_those_of_the_printed_max_num_seqs():
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    common = dict(runtime="vllm", ctx=32768, parallel=8, vram=int(23.55 * GiB))
    implied = llm.plan(spec, **common)
    explicit = llm.plan(spec, **common, max_num_seqs=8)
    default = llm.plan(spec, runtime="vllm", ctx=32768, vram=int(23.55 * GiB))
    assert "--max-num-seqs 8" in implied["command"]
    assert implied["kv_capacity_tokens"] == explicit["kv_capacity_tokens"]
    assert implied["overhead"] == explicit["overhead"]
    assert implied["vllm_would_print"] == explicit["vllm_would_print"]
    # vLLM's default 256 sequences profile a larger sampler batch than 8 do: the default plan keeps a smaller pool
    assert implied["overhead"]["activation_profile"] < default["overhead"]["activation_profile"]
    assert implied["kv_capacity_tokens"] > default["kv_capacity_tokens"]
    # the figures audit15 X3 recorded for 8 sequences (90b8dfb; the default 256 gave 110,160 / 3.36x): 124,448 tokens,
    # whole 16-token blocks of 28 layers x 4 KV heads x 128 x 2 (K, V) x 2 B = 57,344 B a token, 124448 / 32768 = 3.80x
    # (review16c R10: a wrong sampler or graph term for 8 sequences moves them). egraph18: V1 keeps GRAPH_BASE (80 MiB)
    # of its first capture at any batch, so 8 sequences (16-token captures) hold 93.5 MiB of graphs inside the share
    # from 0.21, not 16 MiB: 1,120 tokens fewer, 123,328 = 3.76x (a pool of 7,072,754,443 B at the 0.90 share).
    # ellm41: from 0.21 vLLM's own default share is 0.92 (vllm#38284, with the graph estimate): ceil(0.92 x
    # 25,286,619,955) = 23,263,690,359 B, 505,732,399 B more than ceil(0.90 x ...) = 22,757,957,960; the pool
    # 7,578,486,842 B / 57,344 = 132,158.5 -> whole 16-token blocks 132,144 = 132144 / 32768 = 4.03x
    at90 = llm.plan(spec, **common, gpu_memory_utilization=0.90)
    assert at90["kv_capacity_tokens"] == 123328 and "123,328 tokens" in at90["vllm_would_print"]
    assert "3.76x" in at90["vllm_would_print"]
    assert 123328 * 57344 <= at90["kv_capacity_bytes"] < (123328 + 16) * 57344
    assert implied["kv_capacity_tokens"] == 132144 and "132,144 tokens" in implied["vllm_would_print"]
    assert "4.03x" in implied["vllm_would_print"]
    assert implied["kv_capacity_bytes"] - at90["kv_capacity_bytes"] == 23263690359 - 22757957960


# X4: a context beyond the model's limit. vLLM (ModelConfig._get_and_verify_max_len) raises "User-specified max_model_len
# (N) is greater than the derived max_model_len (max_position_embeddings=... in model's config.json) ... To allow
# overriding this maximum, set the env var VLLM_ALLOW_LONG_MAX_MODEL_LEN=1"; Ollama from 0.9.3 lowers num_ctx to the
# GGUF's context_length (ollama#11175, "requested context size too large for model"); llama.cpp warns and runs it.

def test_vllm_derived_max_len_from_config_json():
    from gpu_garden.memory.llm.spec import vllm_max_len
    assert vllm_max_len({"max_position_embeddings": 32768}) == 32768
    # Qwen2.5's model card: YaRN factor 4 over original_max_position_embeddings 32768 -> 131072
    yarn = {"max_position_embeddings": 32768,
            "rope_scaling": {"type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}}
    assert vllm_max_len(yarn) == 131072
    # llama3 / longrope tables are not multiplied (Llama-3.1: 131072 as written); linear is (4096 x 2)
    assert vllm_max_len({"max_position_embeddings": 131072, "rope_scaling": {"rope_type": "llama3", "factor": 8.0}}) == 131072
    assert vllm_max_len({"max_position_embeddings": 4096, "rope_scaling": {"type": "linear", "factor": 2.0}}) == 8192
    # Gemma 3's length is scaled already; the smallest key wins; model_max_length allows more
    assert vllm_max_len({"model_type": "gemma3_text", "max_position_embeddings": 131072,
                         "rope_scaling": {"rope_type": "linear", "factor": 8.0}}) == 131072
    assert vllm_max_len({"max_position_embeddings": 8192, "seq_length": 4096}) == 4096
    assert vllm_max_len({"max_position_embeddings": 8192, "model_max_length": 131072}) == 131072


def test_vllm_refuses_a_max_model_len_above_the_model(capsys):
    # Qwen2.5-7B-Instruct config.json: max_position_embeddings 32768, no rope_scaling
    rc, r, _ = _run(QWEN + ["--ctx", "131072", "--vram", "23.55", "--json"], capsys)
    assert rc == 1 and r["fits"] is False and r["fits_as_requested"] is False
    assert "VLLM_ALLOW_LONG_MAX_MODEL_LEN=1" in r["refused"]
    assert "--max-model-len 32768" in r["command"] and "131072" not in r["command"]
    assert "vllm_would_print" not in r
    rc, text, _ = _run(QWEN + ["--ctx", "131072", "--vram", "23.55"], capsys)
    assert "vLLM refuses --max-model-len 131,072" in text and ": fits" not in text
    rc, ok, _ = _run(QWEN + ["--ctx", "32768", "--vram", "23.55", "--json"], capsys)
    assert rc == 0 and ok["fits_as_requested"] and "refused" not in ok


def test_ollama_lowers_num_ctx_to_the_trained_context_from_0_9_3(capsys):
    _, new, _ = _run(["kv", "--model", "qwen2.5:7b", "--ctx", "65536", "--vram", "23", "--json"], capsys)
    _, at, _ = _run(["kv", "--model", "qwen2.5:7b", "--ctx", "32768", "--vram", "23", "--json"], capsys)
    assert new["ctx"] == 32768 and new["kv_total"] == at["kv_total"]
    assert any("requested context size too large for model" in n for n in new["notes"])
    _, old, _ = _run(["kv", "--model", "qwen2.5:7b", "--ctx", "65536", "--vram", "23", "--runtime-version", "0.9.2",
                      "--json"], capsys)
    assert old["ctx"] == 65536 and old["kv_total"] == 2 * at["kv_total"]


def test_llama_cpp_says_it_runs_beyond_the_trained_context(capsys):
    # the library warns and runs it; llama-server from b6925 caps the slot instead (test_kv_fix66b, aud66a F6)
    base = QWEN + ["--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--vram", "24", "--json",
                   "--llamacpp-entrypoint", "library"]
    _, one, _ = _run(base + ["--ctx", "65536"], capsys)
    assert one["ctx"] == 65536 and any("training context overflow" in n for n in one["notes"])
    _, four, _ = _run(base + ["--ctx", "65536", "--parallel", "4"], capsys)  # 16384 a slot: within 32768
    assert not any("training context overflow" in n for n in four["notes"])


# C4, C5 and the minor findings

def test_options_another_runtime_reads_are_refused_in_one_message(capsys):
    rc, _, err = _run(QWEN + ["--ctx", "8192", "--vram", "24", "--runtime", "vllm", "--flash-attn", "off", "--ubatch",
                              "64", "--ngl", "10", "--mmproj"], capsys)
    assert rc == 2 and all(f in err for f in ("--flash-attn", "--ubatch", "--ngl", "--mmproj"))
    rc, _, err = _run(QWEN + ["--ctx", "8192", "--vram", "24", "--runtime", "llama.cpp", "--gpu-memory-utilization",
                              "0.9", "--enforce-eager", "--max-num-batched-tokens", "512"], capsys)
    assert rc == 2 and all(f in err for f in ("--gpu-memory-utilization", "--enforce-eager", "--max-num-batched-tokens"))
    rc, _, err = _run(QWEN + ["--ctx", "8192", "--vram", "24", "--runtime", "llama.cpp", "--mla-cache", "full"], capsys)
    assert rc == 2 and "MLA" in err
    rc, _, _ = _run(QWEN + ["--ctx", "8192", "--vram", "24", "--runtime", "llama.cpp", "--flash-attn", "on"], capsys)
    assert rc == 0


def test_mem_fraction_static_is_a_share(capsys):
    base = QWEN + ["--ctx", "8192", "--vram", "24", "--runtime", "sglang"]
    for bad in ("2", "0", "-0.5", "1.01"):
        rc, _, err = _run(base + ["--mem-fraction-static", bad], capsys)
        assert rc == 2 and "--mem-fraction-static" in err
    rc, _, _ = _run(base + ["--mem-fraction-static", "1"], capsys)
    assert rc in (0, 1)


def test_empty_ollama_tag_is_an_error(capsys):
    rc, _, err = _run(["kv", "--model", "qwen2.5:", "--ctx", "8192", "--vram", "24"], capsys)
    assert rc == 2 and "empty" in err


def test_weights_note_names_the_dtype_used(capsys):
    _, r, _ = _run(["kv", "--model", "Qwen/Qwen2.5-7B-Instruct-AWQ", "--weights-dtype", "fp8", "--ctx", "8192", "--vram",
                    "24", "--json"], capsys)
    assert r["weights_dtype"] == "fp8"
    assert not any("taken as awq" in n for n in r["notes"]) and any("sized as fp8" in n for n in r["notes"])


def test_llama_server_command_loads_the_projector_it_counts(capsys):
    _, r, _ = _run(["kv", "--model", "gemma3:12b", "--runtime", "llama.cpp", "--ctx", "8192", "--vram", "24", "--mmproj",
                    "--json"], capsys)
    assert r["projector"]["on_gpu"] and "--mmproj" in r["command"]


# X6: the MLA cache follows the build. DeepSeek-V2-Lite config.json: 27 layers, 16 heads, qk_nope_head_dim 128 +
# qk_rope_head_dim 64, v_head_dim 128, kv_lora_rank 512. Full per-head K/V: 27 x 16 x (192 + 128) x 2 bytes; the
# latent plus V (ggml-org/llama.cpp#12801): 27 x (512 + 64 + 512) x 2 bytes.

def test_mla_cache_default_follows_the_build(capsys):
    base = ["kv", "--model", "DeepSeek-V2-Lite", "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--ctx", "32768",
            "--vram", "24", "--json"]
    _, old, _ = _run(base + ["--runtime-version", "b3000"], capsys)
    assert old["kv_per_token"] == 27 * 16 * (192 + 128) * 2 == 270 * KiB
    _, mid, _ = _run(base + ["--runtime-version", "b5913"], capsys)
    assert mid["kv_per_token"] == 27 * (512 + 64 + 512) * 2
    _, unknown, _ = _run(base + ["--runtime-version", "b5000"], capsys)  # between the known builds: said so
    assert any("not pinned" in n and "--mla-cache full" in n for n in unknown["notes"])
    _, given, _ = _run(base + ["--runtime-version", "b5000", "--mla-cache", "full"], capsys)
    assert given["kv_per_token"] == old["kv_per_token"]
