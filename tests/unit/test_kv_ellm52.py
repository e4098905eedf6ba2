"""kv-accuracy round 74 (task ellm52, batch 79 after first sight): GLM-5.2 on llama.cpp b10505 (glm-dsa), 4x RTX PRO
6000 Blackwell Max-Q, --n-cpu-moe 54 --tensor-split 54,9,8,8, f16 cache (dfch/biz.dfch.LlmOps)."""
from dataclasses import replace

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.weights import expert_layer_bytes

MiB = 1 << 20
FILE = int(523.83 * 1024 * MiB)  # 'file size = 523.83 GiB (5.97 BPW)' (UD-Q5_K_XL)


# --- --n-cpu-moe over several GPUs ---------------------------------------------------------------------------------
# Qwen3-30B-A3B Q4_K_M over two GPUs (-ts 1,1, 48 layers + output: 25 / 23), --n-cpu-moe 10: layers 0-9 are the first
# GPU's, so their experts (each layer's gate / up / down at Q4_K, down at Q6_K on use_more_bits' layers) leave its
# weights and only its; the GPUs' weights still sum to the plan's GPU weights
def test_n_cpu_moe_over_two_gpus_takes_the_first_devices_experts_off():
    s = llm.describe(model="Qwen/Qwen3-30B-A3B")
    kw = dict(runtime_version="b7000", ngl=999, num_gpus=2, tensor_split=[1, 1])
    moe = llm.plan(s, "llama.cpp", ctx=4096, kv_dtype="f16", weights_dtype="Q4_K_M", vram=24 << 30, n_cpu_moe=10, **kw)
    whole = llm.plan(s, "llama.cpp", ctx=4096, kv_dtype="f16", weights_dtype="Q4_K_M", vram=24 << 30, **kw)
    moved = sum(expert_layer_bytes(s, "Q4_K_M")[:10])
    assert [d["layers"] for d in moe["devices"]] == [25, 23]
    assert whole["devices"][0]["weights"] - moe["devices"][0]["weights"] == moved == moe["host_experts_full"]
    assert moe["devices"][1]["weights"] == whole["devices"][1]["weights"]
    assert sum(d["weights"] for d in moe["devices"]) == moe["gpu_weights"]


# a file known by its size alone (--weights-gib 523.83, the UD-Q5_K_XL file's 5.97 bits a parameter; the ends of an
# Unsloth Dynamic range are such files too): each MoE block's experts at those bits, not at the checkpoint's 16 (256 x 3
# x 6144 x 2048 x 2 bytes = 18 GiB a block, which over 54 blocks is more than the whole file: the GPU's weights went
# negative)
def test_a_file_known_by_its_size_prices_its_experts_at_its_bits():
    s = replace(llm.describe(model="zai-org/GLM-5"), weights_bytes=FILE)
    bpp = FILE * 8 / s.params
    assert 5.9 < bpp < 6.1
    per = expert_layer_bytes(s, None)
    assert per[:3] == [0, 0, 0] and set(per[3:]) == {int(256 * 3 * 6144 * 2048 * bpp / 8)}
