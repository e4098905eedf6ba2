"""Task ellm38 (kv-accuracy round 60, batch 65 after its first sight): what vLLM's own Gemma 4 layout holds beyond
the checkpoint, read in the vllm 0.19.0 and 0.22.0 wheels (model_executor/models/gemma4.py, gemma4_mm.py,
layers/rotary_embedding/gemma4_rope.py, the same in both):
  - Gemma4Attention builds one QKVParallelLinear with a K and a V slot in every layer: a KV-shared layer's too (the
    checkpoint has no k_proj / v_proj there), and an attention_k_eq_v global layer's V slot ("K weights are loaded
    into both K and V slots");
  - Gemma4ForConditionalGeneration allocates per_layer_embeddings (max_num_batched_tokens x layers x
    hidden_size_per_layer_input, the model's dtype) inside its language model, so with --language-model-only too;
  - Gemma4RotaryEmbedding (proportional rope) passes rotary_dim = head_size: the global layers' cos/sin table is
    global_head_dim wide, not partial_rotary_factor of it.
Expected figures are derived by hand below from the configs' fields (memory/llm/models/Gemma-4-E4B.json, -31B.json)."""
from dataclasses import replace

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

E4B, G31B = "google/gemma-4-E4B-it", "google/gemma-4-31B-it"
# the batch-65 mharoonz run: `vllm serve` on an L40S (44.42 GiB, under 70 GiB: max_num_batched_tokens 2048, engine/
# arg_utils.py get_batch_defaults, OPENAI_API_SERVER), every multimodal limit 0
L40S = dict(vram=44.42 * GiB, gpu_memory_utilization=0.9, language_model_only=True, gpu_name="NVIDIA L40S")


def _weights(spec, runtime="vllm", **kw):
    return llm.plan(spec, runtime, ctx=4096, parallel=1, runtime_version="0.19.0", weights_dtype="bf16", **kw)["weights"]


def test_shared_layers_keep_k_and_v_slots_in_vllm():
    # Gemma-4-E4B: hidden 2560, 42 layers, the last 18 (24-41) KV-shared; layer_types put a full layer at every 6th,
    # so 29, 35 and 41 of the shared ones are full (2 KV heads x global_head_dim 512), the other 15 sliding
    # (2 KV heads x head_dim 256). K and V slots: 15 x 2 x 2560 x 2 x 256 = 39,321,600 + 3 x 2 x 2560 x 2 x 512 =
    # 15,728,640 -> 55,050,240 parameters (attention_k_eq_v false: no other slot); in bf16 110,100,480 bytes
    spec = llm.describe(model=E4B)
    assert spec.vllm_qkv_slots == 55_050_240
    assert _weights(spec, **L40S) - _weights(replace(spec, vllm_qkv_slots=0), **L40S) == 110_100_480
    # SGLang's weights do not take them (its layout was not read)
    assert _weights(spec, "sglang", vram=44.42 * GiB) == _weights(replace(spec, vllm_qkv_slots=0), "sglang",
                                                                  vram=44.42 * GiB)


def test_k_eq_v_global_layers_keep_a_v_slot_in_vllm():
    # Gemma-4-31B: hidden 5376, 60 layers, 10 full (every 6th) with attention_k_eq_v and 4 global KV heads x 512; no
    # shared layer. V slots: 10 x 5376 x 4 x 512 = 110,100,480 parameters; at tensor parallel 2 half of them in bf16
    # on each GPU: 110,100,480 bytes
    spec = llm.describe(model=G31B)
    assert spec.vllm_qkv_slots == 110_100_480
    tp2 = dict(vram=79.25 * GiB, tensor_parallel_size=2)
    assert _weights(spec, **tp2) - _weights(replace(spec, vllm_qkv_slots=0), **tp2) == 110_100_480
    # a model without Gemma 4's layout has none
    assert llm.describe(model="Qwen/Qwen2.5-7B-Instruct").vllm_qkv_slots == 0


def test_proportional_rope_table_is_the_whole_global_head():
    # E4B: max_position_embeddings 131072; sliding layers' default rope over head_dim 256, the global layers'
    # proportional rope over global_head_dim 512 (partial_rotary_factor 0.25 would give 128): 131072 x (256 + 512) =
    # 100,663,296 values, 131072 x 384 = 50,331,648 before round 60; in bf16 100,663,296 bytes more
    spec = llm.describe(model=E4B)
    assert spec.rope_cache_elems == 100_663_296
    assert _weights(spec, **L40S) - _weights(replace(spec, rope_cache_elems=50_331_648), **L40S) == 100_663_296
    # 31B: 262144 positions x (256 + 512) = 201,326,592
    assert llm.describe(model=G31B).rope_cache_elems == 201_326_592


def test_per_layer_embeddings_buffer_by_max_num_batched_tokens():
    # at 2048 batched tokens: 2048 x 42 layers x 256 x 2 bytes = 44,040,192
    spec = llm.describe(model=E4B)
    assert spec.ple_width == 256
    assert _weights(spec, **L40S) - _weights(replace(spec, ple_width=0), **L40S) == 44_040_192
    # --max-num-batched-tokens 8192: 8192 x 42 x 256 x 2 = 176,160,768
    big = dict(L40S, max_num_batched_tokens=8192)
    assert _weights(spec, **big) - _weights(replace(spec, ple_width=0), **big) == 176_160_768
    # Gemma-4-31B has no per-layer input
    assert llm.describe(model=G31B).ple_width == 0


def test_batch65_mharoonz_text_only_row_weights():
    # vllm-mharoonz-gemma4-e4b-bf16-l40s-4k-u090-nomm printed 'Model loading took 14.25 GiB' with every multimodal
    # limit 0 ('running in text-only mode': _mark_tower_model swaps both towers for StageMissingLayer). kv gave
    # 13.995 GiB before round 60; the three terms above add 110,100,480 + 44,040,192 + 100,663,296 = 254,803,968 B
    # = 0.237 GiB -> 14.232 GiB, within 0.5 % of the printed figure (1.8 % under before)
    got = _weights(llm.describe(model=E4B), **L40S) / GiB
    assert abs(got - 14.25) / 14.25 < 0.005


# ---------------------------------------------------------------- batch 65's refused model, now built in
def test_qwen25_omni_7b_thinker_from_its_printed_gguf_fields():
    # The thinker's text decoder as the row's GGUF prints it (MEAKCIN/Voice_Bot_Web ollama.log): 28 blocks, hidden 3584,
    # n_ff 18944, 28 heads, 4 KV heads x 128, vocab 152064, 339 tensors (untied: token_embd and output both).
    # Parameters: token table and output 2 x 152064 x 3584 = 1,089,994,752; a block: q and o 2 x 3584^2 = 25,690,112,
    # k and v 2 x 3584 x 512 = 3,670,016, their biases 3584 + 2 x 512 = 4,608, the MLP 3 x 3584 x 18944 =
    # 203,685,888, two norms 7,168 -> 233,057,792, x 28 = 6,525,618,176; + the final norm 3584 -> 7,615,616,512
    # (printed 'model params = 7.62 B')
    spec = llm.describe(model="Qwen/Qwen2.5-Omni-7B")
    assert spec.params == 7_615_616_512 and not spec.tied
    # its cache at 4096 cells, f16: 28 layers x 4096 x 512 x 2 (K, V) x 2 bytes = 234,881,024 B = 224 MiB (printed
    # 'KV buffer size' CPU 128.00 + CUDA0 96.00 MiB)
    res = llm.plan(spec, "ollama", ctx=4096, parallel=1, weights_dtype="Q4_K_M", runtime_version="0.13.5",
                   vram=8 * GiB)
    assert res["kv_total"] == 234_881_024
