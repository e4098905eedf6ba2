"""Review 13b findings (task ellm15). Expected values come from the runtimes' source (named) or hand arithmetic."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


@pytest.mark.parametrize("name", ["GLM-4.6-REAP-218B-A32B-FP8", "GLM-4.6-REAP-268B-A32B", "glm-4.6-air",
                                  "Kimi-K2.5-REAP-500B"])
def test_a_size_or_air_after_glm46_or_kimi_k25_is_another_model(name):
    # Cerebras' REAP checkpoints prune experts (218B / 268B of GLM-4.6's 355B): GLM-4.7's 352.8 B would be a 1.3-1.6x error
    with pytest.raises(UserError, match="unknown model"):
        llm.describe(model=name)


@pytest.mark.parametrize("name,base", [("GLM-4.6", "GLM-4.7"), ("GLM-4.6-FP8", "GLM-4.7"), ("Kimi-K2.5", "Kimi-K2-Thinking"),
                                       ("kimi-k2.6-instruct", "Kimi-K2-Thinking")])
def test_glm46_and_kimi_k25_still_read(name, base):
    assert llm.describe(model=name).name == base


def test_ollama_qwen35_27b_tag_is_sized_as_the_builtin_qwen35_27b():
    # ollama.com/library/qwen3.5:27b is Qwen/Qwen3.5-27B, built in as Qwen3.6-27B's geometry (THUDM/slime
    # scripts/models/qwen3.5-27B.sh): 16 full-attention layers of 4 KV heads x 256 in f16, 48 gated-DeltaNet layers
    # of 16 key heads and 48 value heads x 128 (conv kernel 4) kept in f32 by Ollama
    s = llm.describe(model="qwen3.5:27b")
    assert (s.name, s.quant, s.ollama) == ("Qwen3.6-27B", "Q4_K_M", True)
    assert any("library's default build" in n and "Qwen3.5-27B" in n for n in s.notes)
    full = 16 * 2 * 4 * 256 * 2 * 8192
    state = 48 * (48 * 128 * 128 * 4 + 3 * (2 * 16 * 128 + 48 * 128) * 4)
    assert llm.plan(s, "ollama", ctx=8192, runtime_version="0.24.0")["kv_total"] == full + state
    assert llm.describe(model="qwen3.5:27b-q8_0").quant == "Q8_0"


@pytest.mark.parametrize("kv", ["f16", "q8_0"])
def test_ollama_030_two_cards_table_total_is_the_cards_sum(kv):
    # Ollama >= 0.30 hands llama-server both cards: each holds its own CUDA context (384 MiB), its compute buffer and
    # --fit's 1 GiB target, and its linear layers' recurrent state ("RS buffer size"): Qwen3.6-27B's 48 gated-DeltaNet
    # layers keep 48 x (48 x 128 x 128 x 4 + 3 x (2 x 16 x 128 + 48 x 128) x 4) = 156,893,184 bytes (one sequence)
    from gpu_garden.memory.llm.report import total_all_layers
    r = llm.plan(llm.describe(model="qwen3.6:27b"), "ollama", ctx=32768, runtime_version="0.30.0", vram=24 * GiB,
                 num_gpus=2, kv_dtype=kv)
    assert len(r["devices"]) == 2 and r["per_gpu"]
    assert r["overhead"]["cuda_context"] == 2 * 384 * MiB and r["overhead"]["margin"] == 2 * GiB
    assert sum(d["state"] for d in r["devices"]) == 156_893_184
    assert r["overhead"]["compute_buffer"] == sum(d["compute_buffer"] for d in r["devices"])
    assert abs(total_all_layers(r) - sum(d["total"] for d in r["devices"])) <= 64


def test_ollama_030_prediction_reads_the_whole_file_and_the_gguf_blocks():
    # llm/llama_server.go PredictServerVRAM: os.Stat(model) + 2 x block_count x HeadCountKVMin x (embedding /
    # HeadCountMax) x cells x 2; server/sched.go effectiveModelContext clamps num_ctx to the trained context
    from dataclasses import replace
    from gpu_garden.memory.llm.runtimes import ollama as O
    from gpu_garden.memory.llm.spec import gguf_blocks
    q32 = llm.describe(model="qwen3:32b")                          # 40960 positions, 64 layers, 8 KV heads, 5120 / 64
    assert O.predicted_vram(q32, {"total": 0}, 131072) == 2 * 64 * 8 * 80 * 40960 * 2
    assert O.predicted_vram(q32, {"total": 0}, 8192, parallel=2) == 2 * 64 * 8 * 80 * 16384 * 2
    # a 0 in head_count_kv (an attention-free layer) is the minimum, read as 1
    assert O.predicted_vram(replace(q32, layer_kv_heads=[0] + [8] * 63), {"total": 0}, 8192) == 2 * 64 * 1 * 80 * 8192 * 2
    # GLM-4.5-Air's GGUF: 46 layers + 1 MTP block = block_count 47; 8 KV heads, 4096 // 96 = 42
    air = gguf_blocks(llm.describe(model="GLM-4.5-Air"))
    assert O.predicted_vram(air, {"total": 0}, 8192) == 2 * 47 * 8 * 42 * 8192 * 2
    # qwen3.6's library file holds its vision tensors: the projector's weights are in the stat'd size
    s = llm.describe(model="qwen3.6:27b")
    proj = O.projector(s)
    assert proj and proj["weights"] > 700 * MiB
    assert (O.predicted_vram(s, {"total": 0}, 8192, proj=proj)
            == proj["weights"] + 2 * 64 * 4 * (5120 // 24) * 8192 * 2)


def test_ollama_030_projector_tips_the_80_percent_rule():
    # without the vision tensors the prediction sits under 80 % of the card; with them over it: both cards
    from gpu_garden.memory.llm import weights as W
    s = llm.describe(model="qwen3.6:27b")
    no_proj = W.weights_by_role(s)["total"] + 2 * 64 * 4 * 213 * 8192 * 2
    vram = int(no_proj * 100 / 80) + 1000
    r = llm.plan(s, "ollama", ctx=8192, vram=vram, runtime_version="0.30.0", num_gpus=2)
    assert r.get("devices") and len(r["devices"]) == 2


@pytest.mark.parametrize("gpu, by_itself", [("NVIDIA Jetson AGX Xavier", False), ("Xavier NX", False),
                                            ("Tesla M40", False), ("GeForce GTX 980", False),
                                            ("NVIDIA Jetson AGX Orin", True), ("Tesla V100-SXM2-32GB", True),
                                            ("GeForce RTX 3090", True), (None, True)])
def test_ollama_default_flash_only_on_cards_that_support_it(gpu, by_itself):
    # ml/device.go cudaFlashAttentionSupported: compute < 6 or 7.2 (Jetson Xavier, aa45f7ce2) -> false; Orin is 8.7,
    # V100 7.0. Without flash attention qwen35's graph holds 24 heads x 512 x 131072 x 4 B of scores (> 4 GiB)
    def graph(ctx):
        r = llm.plan(llm.describe(model="qwen3.6:27b"), "ollama", ctx=ctx, runtime_version="0.24.0", gpu_name=gpu)
        return r["overhead"]["compute_buffer"]
    assert (graph(131072) == graph(8192)) is by_itself
    if not by_itself:
        assert graph(131072) > graph(8192) + 4 * GiB


def _qwen7(q, file_bytes):
    from dataclasses import replace
    from gpu_garden.memory.llm import spec as llm_spec
    cfg = {"model_type": "qwen2", "vocab_size": 152064, "hidden_size": 3584, "intermediate_size": 18944,
           "num_hidden_layers": 28, "num_attention_heads": 28, "num_key_value_heads": 4,
           "max_position_embeddings": 32768, "quantization_config": q}
    return replace(llm_spec.from_config(cfg, name="cfg"), weights_bytes=file_bytes)


def test_below_compute_8_a_symmetric_compressed_tensors_file_gets_its_zero_tensor():
    # a compressed-tensors W4A16 symmetric file has no weight_zero_point (CompressedTensorsWNA16.create_weights adds one
    # only when not symmetric); below compute 8.0 ExllamaLinearKernel builds it: 28 x (2 x 3584^2 + 2 x 3584 x 512 +
    # 3 x 3584 x 18944 + 3584 + 1024) = 6,525,417,472 matmul params x 4 / 128 / 8 = 25,489,912 bytes on a T4. A GPTQ
    # file's size already holds its qzeros: nothing added
    ct = {"quant_method": "compressed-tensors", "format": "pack-quantized",
          "config_groups": {"group_0": {"weights": dict(num_bits=4, type="int", strategy="group", group_size=128,
                                                        symmetric=True)}}}
    file = 5_500_000_000
    s = _qwen7(ct, file)
    t4, a100 = (llm.plan(s, "vllm", ctx=4096, vram=14.74 * GiB, gpu_name=g)["weights"] for g in ("Tesla T4", "A100"))
    assert t4 - a100 == 25_489_912
    g = _qwen7({"quant_method": "gptq", "bits": 4, "group_size": 128, "sym": True, "desc_act": False}, file)
    assert len({llm.plan(g, "vllm", ctx=4096, vram=14.74 * GiB, gpu_name=n)["weights"] for n in ("Tesla T4", "A100")}) == 1


def test_qwen35_35b_a3b_is_sized_as_qwen36_35b_a3b():
    # THUDM/slime scripts/models/qwen3.5-35B-A3B.sh: 40 layers, linear-attention frequency 4 (10 full-attention),
    # 2 query groups x 256; qwen36-35B-A3B.sh sources it ("the same language/MoE topology")
    s = llm.describe(model="Qwen/Qwen3.5-35B-A3B")
    assert s.name == "Qwen3.6-35B-A3B" and any("Qwen3.5-35B-A3B" in n for n in s.notes)
    r = llm.plan(s, "llama.cpp", ctx=8192, runtime_version="b7522")
    assert r["kv_per_token"] == 10 * 2 * 2 * 256 * 2            # K and V, f16
    assert llm.describe(model="Qwen3.5-35B-A3B-GPTQ-Int4").name == "Qwen3.6-35B-A3B"
    with pytest.raises(UserError):
        llm.describe(model="Qwen3.5-35B-A5B")
