"""kv-accuracy round 98 (task ellm76): batch 102 after its first sight.

1. An expert-pruned variant (REAP, REAM) of a built-in MoE model is not the built-in: it keeps fewer routed experts,
   which only its own config.json or GGUF counts. A name carrying the prune word is read only as a built-in that
   describes that variant (models/*-REAP*.json); otherwise it is refused (names._refuse_pruned), never read as the base
   (crucible-labs/Qwen3.6-35B-A3B-REAP-48-Q3K-mixed-GGUF was read as the 256-expert Qwen3.6-35B-A3B: weights +68 %).
2. Qwen3.6-35B-A3B-REAP-48: Qwen3.6-35B-A3B with 133 of its 256 routed experts, as the GGUF's metadata prints it
   (bloomery's 2026-08-21 spike, section 2.1: qwen35moe.expert_count = 133; every other printed field the base's).
"""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB, MiB

REAP48 = "crucible-labs/Qwen3.6-35B-A3B-REAP-48-Q3K-mixed-GGUF"


# Qwen3.6-35B-A3B counts 34,660,610,688 decoder parameters (llama-bench: 34.66 B). One routed expert a layer is
# gate + up + down 3 x 2048 x 512 = 3,145,728 and its router row 2048: 3,147,776; 256 - 133 = 123 experts pruned in
# each of 40 layers: 123 x 40 x 3,147,776 = 15,487,057,920. 34,660,610,688 - 15,487,057,920 = 19,173,552,768,
# llama.cpp's 'model params = 19.17 B' for this file
def test_reap48_keeps_133_experts_by_hand():
    s = llm.describe(model=REAP48)
    assert s.name == "Qwen3.6-35B-A3B-REAP-48"
    assert (s.n_layers, s.hidden, s.n_kv_heads, s.head_dim_k, s.n_experts, s.n_experts_per_tok, s.moe_intermediate) == (
        40, 2048, 2, 256, 133, 8, 512)
    base = llm.describe(model="Qwen/Qwen3.6-35B-A3B")
    assert base.params == 34_660_610_688 and base.n_experts == 256
    assert s.params == 34_660_610_688 - 123 * 40 * (3 * 2048 * 512 + 2048) == 19_173_552_768
    assert s.vision is None  # the GGUF holds the decoder; a projector is a separate mmproj file


# the cache is the base's: 10 full-attention layers x 2 KV heads x 256 x 2 (K, V) x 2 bytes (f16) = 20,480 bytes a
# cell; 54,784 cells (Boot A) = 1,121,976,320 bytes = 1070.00 MiB, llama.cpp's 'Vulkan0 KV buffer size = 1070.00 MiB'
def test_reap48_cache_by_hand():
    r = llm.plan(llm.describe(model=REAP48), "llama.cpp", ctx=54784, kv_dtype="f16", weights_dtype="Q3_K_S",
                 vram=15.92 * GiB)
    assert r["kv_per_token"] == 10 * 2 * 256 * 2 * 2 == 20480
    assert 54784 * r["kv_per_token"] == 1070 * MiB


# no built-in describes these prunes: refused with what is missing, not sized as the 256-expert model (before this
# round both read as Qwen3.6-35B-A3B: the first through the built-in name it starts with, the second through the
# Qwen3.5-35B-A3B -> Qwen3.6-35B-A3B same-geometry table)
@pytest.mark.parametrize("name", ["someone/Qwen3.6-35B-A3B-REAP-60-GGUF", "someone/Qwen3.5-35B-A3B-REAP",
                                  "someone/Qwen3.6-35B-A3B-pruned", "someone/Qwen3.6-35B-A3B-REAM"])
def test_undescribed_prune_is_refused(name):
    with pytest.raises(UserError, match="expert-pruned"):
        llm.describe(model=name)


# the described prunes and the unpruned models read as before
@pytest.mark.parametrize("name, builtin", [("cerebras/Qwen3-Coder-REAP-25B-A3B", "Qwen3-Coder-REAP-25B-A3B"),
                                           ("mattbucci/Qwen3-Coder-30B-A3B-REAP-AWQ", "Qwen3-Coder-30B-A3B-REAP"),
                                           ("mattbucci/Qwen3-Coder-30B-A3B-REAM-AWQ", "Qwen3-Coder-30B-A3B-REAM"),
                                           ("cerebras/GLM-4.5-Air-REAP-82B-A12B", "GLM-4.5-Air-REAP-82B-A12B"),
                                           ("Qwen/Qwen3.6-35B-A3B", "Qwen3.6-35B-A3B"),
                                           ("unsloth/Qwen3.6-35B-A3B-GGUF:Q4_K_M", "Qwen3.6-35B-A3B")])
def test_described_names_still_read(name, builtin):
    assert llm.describe(model=name).name == builtin


# 3. vLLM's ngram speculative method has no drafter model: NgramProposer (vllm/v1/spec_decode/ngram_proposer.py) keeps
#    host numpy buffers (max_num_seqs x k int32) and the model runner builds it with no device; SpeculativeConfig's
#    __repr__ names no model for it. Accepted (it was refused: "its drafter's memory is not modelled"), sized as the
#    target alone plus what num_speculative_tokens asks of every method (MambaSpec num_speculative_blocks: a state page
#    more a request each, layers/mamba/abstract.py; the graph capture sizes).
NGRAM3 = {"method": "ngram", "num_speculative_tokens": 3, "prompt_lookup_max": 4, "prompt_lookup_min": 2}
L4 = dict(gpu_memory_utilization=0.9, max_num_seqs=4, runtime_version="0.20.1", enforce_eager=True)


def _vllm(model, sc=None):
    knobs = dict(L4, **({"speculative_config": dict(sc)} if sc else {}))
    return llm.plan(llm.describe(model=model), "vllm", ctx=4096, weights_dtype="bf16", vram=24 * GiB, **knobs)


# Qwen2.5-7B, full attention: 28 layers x 4 KV heads x 128 x 2 (K, V) x 2 bytes = 57,344 bytes a token, with or
# without ngram; the weights are the target's alone (no drafter: the same bytes as without), and the pool the same
def test_ngram_is_the_target_alone_by_hand():
    plain, ngram = _vllm("Qwen/Qwen2.5-7B-Instruct"), _vllm("Qwen/Qwen2.5-7B-Instruct", NGRAM3)
    assert ngram["kv_per_token"] == plain["kv_per_token"] == 28 * 4 * 128 * 2 * 2 == 57344
    assert ngram["weights"] == plain["weights"]
    assert ngram["kv_capacity_tokens"] == plain["kv_capacity_tokens"]
    assert any("ngram drafting (3 speculative tokens): no drafter model" in n for n in ngram["notes"])
    flag = next(f for f in ngram["flags"] if f["name"] == "--speculative-config")
    assert flag["value"] == '{"method":"ngram","num_speculative_tokens":3,"prompt_lookup_max":4,"prompt_lookup_min":2}'


# Qwen3.5-9B (gated DeltaNet): vLLM gives each request 1 + num_speculative_tokens state pages under any speculative
# method, so ngram's 3 tokens reach the pool arithmetic as MTP's do (before: refused)
def test_ngram_spec_tokens_reach_the_state_pages():
    r = _vllm("Qwen/Qwen3.5-9B", NGRAM3)
    assert r["kv_detail"]["pool_args"]["spec_tokens"] == 3
    assert r["kv_capacity_tokens"] < _vllm("Qwen/Qwen3.5-9B")["kv_capacity_tokens"]


def test_other_model_free_methods_still_refused():
    with pytest.raises(UserError, match="'suffix': its drafter's memory is not modelled"):
        _vllm("Qwen/Qwen2.5-7B-Instruct", {"method": "suffix", "num_speculative_tokens": 3})


# 4. Only llama-server caps the logits its prompt graph reserves (n_outputs_max = -np x (1 + draft), OUTPUTS_MAX from
#    b9453); a program on libllama's context defaults (bloomery's daemon: the Rust crate llama-cpp-2 with
#    LlamaContextParams::default()) keeps n_outputs_max 0 -> n_batch, a whole ubatch's logits.
# Qwen3.6-35B-A3B-REAP-48 on Vulkan at b10200, 54,784 cells, ubatch 512, every layer on the GPU: the logits 512 x 248320
# x 4 bytes = 508,559,360 and the normed input 512 x 2048 x 4 = 4,194,304: 512,753,664 bytes = 489.0 MiB (printed
# 'Vulkan0 compute buffer size = 493.00 MiB'); as llama-server (one row of logits) the reserve is far smaller. The row's
# gpu_name does not say Vulkan, so mask_under_logits (the f32 mask copy under the logits, 512 x 54784 x 4 bytes more)
# is not taken: with it the reserve would be 596 MiB, over the print (left open, round 98)
BLOOMERY = dict(ctx=54784, kv_dtype="f16", weights_dtype="Q3_K_S", vram=15.92 * GiB, flash_attn=None, ubatch=512, ngl=999,
                runtime_version="b10200", gpu_name="NVIDIA GeForce RTX 5080")  # the row's gpu_name


def _bloomery(**knobs):
    kw = dict(BLOOMERY, **knobs)
    kw.pop("flash_attn")
    return llm.plan(llm.describe(model=REAP48), "llama.cpp", **kw)["overhead"]["compute_buffer"]


def test_library_entrypoint_reserves_a_whole_ubatch_of_logits_by_hand():
    assert _bloomery(llamacpp_entrypoint="library") == (512 * 248320 + 512 * 2048) * 4 == 512_753_664
    assert _bloomery(llamacpp_entrypoint="library") / MiB == 489.0
    assert _bloomery() < 200 * MiB  # llama-server: -np 1 row of logits
    assert _bloomery(llamacpp_entrypoint="server") == _bloomery()


def test_llamacpp_entrypoint_checked():
    with pytest.raises(UserError, match="--llamacpp-entrypoint must be server or library"):
        _bloomery(llamacpp_entrypoint="cli")
    with pytest.raises(UserError):
        llm.plan(llm.describe(model="Qwen/Qwen2.5-7B-Instruct"), "vllm", ctx=4096, weights_dtype="bf16", vram=24 * GiB,
                 llamacpp_entrypoint="library")
