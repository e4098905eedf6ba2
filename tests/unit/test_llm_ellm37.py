"""Task ellm37 (kv-accuracy round 59, batch 64 after its first sight): llama.cpp's compute buffer holds the gated
feed-forward's live set. llama-graph.cpp joins gate and up with ggml_swiglu_split / ggml_geglu_split (GGML_OP_GLU), which
ggml-alloc.c's ggml_op_can_inplace does not list, so gate, up and the product are live at once beside the residual
stream; a MoE layer's down projection output, [n_embd, n_expert_used, n_tokens], is allocated while the product is
live; the mask's f16 cast lives through every earlier layer's feed-forward. Expected bytes are derived by hand below
from each model's config.json fields."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import llamacpp as LC
from gpu_garden.memory.units import GiB


def _cb(model, ctx, ubatch, **kw):
    return llm.plan(llm.describe(model=model), "llama.cpp", ctx=ctx, parallel=1, ubatch=ubatch, flash_attn=True,
                    ngl=99, runtime_version="b9849", vram=24 * GiB, **kw)["overhead"]["compute_buffer"]


def test_dense_glu_holds_gate_up_and_product():
    # Qwen2.5-7B (config.json: hidden 3584, intermediate 18944, vocab 152064) at -c 8192 -ub 2048 on b9849 (one row of
    # logits, 4 x (2048 x 3584 + 152064) = 29,968,640): gate, up and their SwiGLU product, 3 x 18944, beside the residual,
    # 3584: 4 x 2048 x 60,416 = 494,927,872, with the mask's f16 cast 2 x 8192 x 2048 = 33,554,432: 528,482,304 B.
    # The term before round 59, 4 x 2048 x (4 x 3584 + 18944) = 272,629,760, and the mask's two copies,
    # 6 x 8192 x 2048 = 100,663,296, are smaller
    assert _cb("Qwen/Qwen2.5-7B-Instruct", 8192, 2048, weights_dtype="Q4_K_M") == 528_482_304


def test_moe_down_projection_output_beside_the_product():
    # Qwen3-30B-A3B (config.json: hidden 2048, moe_intermediate 768, 8 of 128 experts, no dense layer; its
    # intermediate_size 6144 is used by no layer): the routed rows 8 x 768 = 6144. At the GLU 3 x 6144 + 2048 = 20,480;
    # at the down projection the product 6144 + its output 8 x 2048 + the residual 2048 = 24,576, the larger:
    # 4 x 2048 x 24,576 = 201,326,592 + the f16 mask 2 x 8192 x 2048 = 33,554,432 -> 234,881,024 B = 224 MiB
    # (batch 64's HilbertRaum row printed 368.04 MiB on Vulkan: a lower bound; kv gave 112 MiB before)
    assert _cb("Qwen/Qwen3-30B-A3B", 8192, 2048, weights_dtype="Q4_K_M") == 234_881_024
    # Qwen3.6-35B-A3B (config.json text_config: hidden 2048, 8 of 256 experts of 512, every layer MoE, no
    # intermediate_size, which a config reads as 4 x hidden = 8192 and no layer uses): routed 8 x 512 = 4096, the down
    # step 4096 + 8 x 2048 + 2048 = 22,528 (a dense 3 x 8192 + 2048 = 26,624 would be the larger): 4 x 2048 x 22,528
    # = 184,549,376 + the f16 mask of its full-attention layers 2 x 8192 x 2048 = 33,554,432 -> 218,103,808 B
    assert _cb("Qwen/Qwen3.6-35B-A3B", 8192, 2048, weights_dtype="Q4_K_M") == 218_103_808


def test_ungated_mlp_holds_one_row():
    # Nemotron 3 Nano (nemotron_h, config.json: hidden 2688, 6 of 128 experts of 1856, squared ReLU without a gate:
    # ggml_relu and ggml_sqr are in-place): routed 6 x 1856 = 11,136; at the activation 11,136 + 2688 = 13,824, at the
    # down projection 11,136 + 6 x 2688 + 2688 = 29,952 (a gated count, 3 x 11,136 + 2688 = 36,096, would be the larger):
    # 4 x 512 x 29,952 = 61,341,696 + the f16 mask of its attention layers 2 x 16384 x 512 = 16,777,216 -> 78,118,912 B
    assert _cb("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16", 16384, 512, weights_dtype="Q8_0") == 78_118_912


def test_ollama_own_engine_keeps_the_earlier_term():
    # Ollama's own engine runs its own graph (not read): graph="ollama-engine" keeps 4 x ub x (4 x hidden + the widest MLP).
    # Qwen2.5-7B at -ub 512, flash attention, no logits: 4 x 512 x (4 x 3584 + 18944) = 68,157,440
    spec = llm.describe(model="Qwen/Qwen2.5-7B-Instruct")
    assert LC.compute_buffer(spec, 8192, 512, True, logits=False, graph="ollama-engine") == 68_157_440
    # and llama.cpp's: 4 x 512 x (3 x 18944 + 3584) = 123,731,968
    assert LC.compute_buffer(spec, 8192, 512, True, logits=False) == 123_731_968


# ---------------------------------------------------------------- batch 64's two refused models, now built in
def test_ministral3_8b_is_built_in_from_its_printed_fields():
    # Ministral3Config's defaults (transformers 5.24.0, the 8B) and the GGUF's print_info agree: 34 layers, hidden 4096,
    # n_ff 14336, 32 heads, 8 KV heads x 128, vocab 131072, untied. Parameters: token table and output 2 x 131072 x 4096
    # = 1,073,741,824; a layer q 4096 x 4096 + k, v 2 x 4096 x 1024 + o 4096 x 4096 = 41,943,040, MLP 3 x 4096 x 14336
    # = 176,160,768, two norms 8192: 218,112,000 x 34 = 7,415,808,000; final norm 4096 -> 8,489,553,920 ('8.49 B')
    s = llm.describe(model="mistralai/Ministral-3-8B-Instruct-2512")
    assert s.name == "Ministral-3-8B" and s.params == 8_489_553_920
    # KV at -c 8192, f16: 34 layers x 8192 x 1024 x 2 (K, V) x 2 B = 1,140,850,688 B ('Vulkan0 KV buffer size =
    # 1088.00 MiB', HilbertRaum issue399 arch sweep)
    r = llm.plan(s, "llama.cpp", ctx=8192, parallel=1, ubatch=2048, flash_attn=True, ngl=99, runtime_version="b9849",
                 weights_dtype="Q4_K_M", vram=24 * GiB)
    assert r["kv_total"] == 1_140_850_688


def test_granite41_8b_is_built_in_from_its_printed_fields():
    # ROCm/ROCm#6227's b9106 log: granite, 40 layers, hidden 4096, n_ff 12800, 32 heads, 8 KV heads x 128, vocab
    # 100352. Untied: token table and output 2 x 100352 x 4096 = 822,083,584; a layer 41,943,040 (attention, as above)
    # + 3 x 4096 x 12800 = 157,286,400 + 8192 = 199,237,632, x 40 = 7,969,505,280; final norm 4096 -> 8,791,592,960
    # ('model params = 8.79 B'; tied it would be 8,380,551,168)
    s = llm.describe(model="ibm-granite/granite-4.1-8b")
    assert s.name == "Granite-4.1-8B" and s.params == 8_791_592_960 and s.max_ctx == 131072
    # KV at the cells its fit step chose, 31488, f16: 40 x 31488 x 1024 x 2 x 2 = 5,158,993,920 B ('ROCm1 KV buffer
    # size = 4920.00 MiB')
    r = llm.plan(s, "llama.cpp", ctx=31488, parallel=4, kv_unified=True, flash_attn=True, ngl=99,
                 runtime_version="b9106", weights_dtype="Q8_0", vram=16 * GiB)
    assert r["kv_total"] == 5_158_993_920
