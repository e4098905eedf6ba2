"""kv-accuracy round 65 (task ellm43, batches 70 and 71 after first sight)."""
from gpu_garden.memory.llm import kv as llm

MiB = 1 << 20


# --- Ollama: the blocks on the GPU are the last ones, each its own size -------------------------------------------------
# AETS-MAGI/vega-hbmx run_20260308_201305 (batch 70): qwen3.5:2b Q8_0 on Ollama 0.17.6's own engine, num_gpu 1 loads
# 'GPULayers:1(23..23)' and prints 'model weights device=ROCm0 size="53.1 MiB"'; num_gpu 2 loads (22..23) and prints
# 112.8 MiB. Qwen3.5-2B (hidden 2048, ffn 6144, 8 heads x 256 with the output gate, 2 KV heads; DeltaNet 16 + 16 heads
# x 128, conv 4) has two kinds of block, worked by hand:
#   full attention: q 2048 x 4096 + k 2048 x 512 + v 2048 x 512 + o 2048 x 2048 = 14,680,064; mlp 3 x 2048 x 6144 =
#     37,748,736; norms 2048 + 2048 + 256 + 256 = 4,608: 52,433,408 parameters
#   DeltaNet: qkv 2048 x 6144 = 12,582,912, z 2048 x 2048 = 4,194,304, b and a 2 x 2048 x 16 = 65,536, conv 6144 x 4 =
#     24,576, out 2048 x 2048 = 4,194,304, A_log and dt_bias 32, norm 128, mlp 37,748,736, norms 4,096: 58,814,624
# every 4th block full (3, 7, ..., 23): 6 x 52,433,408 + 18 x 58,814,624 = 1,373,263,680 parameters in the blocks, which
# kv prices at 1,461,069,824 bytes (weights_by_role "blocks"). Block 23 (full) holds 1,461,069,824 x 52,433,408 /
# 1,373,263,680 = 55,785,987.3 bytes = 53.20 MiB; blocks 22 and 23 (DeltaNet + full) 1,461,069,824 x 111,248,032 /
# 1,373,263,680 = 118,361,203.97 bytes = 112.88 MiB. The even share kv used before, 1,461,069,824 / 24 = 60,877,909.3
# bytes (58.06 MiB), was the mean block, 9.3 % over the printed figure.
def _vega(ngl):
    return llm.plan(llm.describe(model="qwen3.5:2b"), "ollama", ctx=4096, weights_dtype="Q8_0", ngl=ngl,
                    runtime_version="0.17.6", flash_attn="auto", vram=7.0 * (1 << 30))


def test_ollama_places_the_last_blocks_each_its_own_size():
    one, two = _vega(1), _vega(2)
    assert one["weights_by_role"]["blocks"] == 1_461_069_824
    assert one["gpu_weights"] == 55_785_987  # int(55,785,987.29)
    assert two["gpu_weights"] == 118_361_203  # int(118,361,203.97)
    assert round(one["gpu_weights"] / MiB, 1) == 53.2 and abs(one["gpu_weights"] / MiB / 53.1 - 1) < 0.002
    assert abs(two["gpu_weights"] / MiB / 112.8 - 1) < 0.001
    assert one["gpu_weights"] != 1_461_069_824 // 24  # not the mean block


def test_ollama_host_part_is_the_rest():
    # the host holds the token table (tied: also the output) and the blocks left off; every block on: the table alone
    for ngl in (0, 1, 2, 24):
        r = _vega(ngl)
        roles = r["weights_by_role"]
        assert abs(r["host_weights"] + r["gpu_weights"] - roles["embedding"] - roles["blocks"]) <= 1
    assert _vega(24)["host_weights"] == _vega(24)["weights_by_role"]["embedding"] == 540_344_320
    assert _vega(0)["gpu_weights"] == 0
