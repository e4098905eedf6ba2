"""kv-accuracy round 62 (task ellm40, batches 67 and 68 after first sight)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import sglang as SG
from gpu_garden.memory.units import GiB, MiB

Q9 = "Qwen/Qwen3.5-9B"


# --- SGLang's --mamba-ssm-dtype: the recurrent state's element ---------------------------------------------------------
# batch 67's Ascend row (shun8686/for_debug tc/test_vlm_gdn_warmup.log): Qwen3.5-9B, TP 2, --mem-fraction-static 0.8,
# --mamba-ssm-dtype bfloat16; TP0 'Load weight begin. avail mem=60.42 GB', 'Load weight end ... mem usage=8.96 GB',
# 'Mamba Cache is allocated. max_mamba_cache_size: 1521, conv_state size: 0.84GB, ssm_state size: 17.84GB',
# 'KV Cache is allocated. dtype: torch.bfloat16, #tokens: 1359146, K size: 10.37 GB'
def test_sglang_state_element_sets_the_request_state():
    spec = llm.vllm_per_rank(llm.describe(model=Q9), 2)
    # a rank's request state: 24 DeltaNet layers x (conv 4096 channels x 3 x 2 bytes + 16 of 32 value heads x 128 x 128
    # x the element): 13,172,736 bytes at bfloat16, 25,755,648 at float32 (SGLang's default)
    assert SG.mamba_state_per_req(spec, SG.ssm_state_bytes("bfloat16")) == 24 * (4096 * 3 * 2 + 16 * 128 * 128 * 2) \
        == 13_172_736
    assert SG.mamba_state_per_req(spec, SG.ssm_state_bytes(None)) == 24 * (4096 * 3 * 2 + 16 * 128 * 128 * 4) \
        == 25_755_648
    # the printed ssm_state is bfloat16's: 1521 + 1 states x 24 x 16 x 128 x 128 x 2 bytes = 17.84 GiB (float32: 35.67)
    assert 1522 * 24 * 16 * 128 * 128 * 2 / GiB == pytest.approx(17.84, abs=0.005)
    assert SG.ssm_state_bytes("float16") == 2 and SG.ssm_state_bytes("auto") == 4
    with pytest.raises(UserError, match="mamba-ssm-dtype"):
        SG.ssm_state_bytes("fp8")


def test_sglang_state_pool_at_the_printed_memory():
    # rest = 0.8 x 60.42 GiB - 8.96 GiB = 39.376 GiB = 42,279,658,061 bytes; the states get rest x 0.9 / 1.9 =
    # 20,027,206,450 bytes: 1520 bfloat16 states (20,022,558,720 bytes; printed 1521) where float32's would be 777;
    # the KV pool the rest, (42,279,658,061 - 20,022,558,720) // 16,384 (8 attention layers x 2 KV heads x 256 x 2 x
    # 2 bytes) = 1,358,465 tokens (printed 1,359,146)
    spec = llm.vllm_per_rank(llm.describe(model=Q9), 2)
    vram = 60.42 * GiB + SG.CUDA_CONTEXT + SG.NCCL
    bf16 = SG.evaluate(spec, 262144, "bf16", 8.96 * GiB, vram, 2, 0.8, ssm_bytes=2)
    f32 = SG.evaluate(spec, 262144, "bf16", 8.96 * GiB, vram, 2, 0.8)
    assert bf16["mamba_slots"] == 1520 and f32["mamba_slots"] == 777
    assert bf16["mamba_pool"] == 1520 * 13_172_736 == 20_022_558_720
    assert bf16["tokens"] == 1_358_465
    assert abs(bf16["tokens"] / 1_359_146 - 1) < 0.001


def test_sglang_plan_reads_the_state_element_and_names_its_flag():
    # before round 62: UserError ('sglang does not read mamba_ssm_cache_dtype'); the row is scored now
    spec = llm.describe(model=Q9)
    kw = dict(runtime="sglang", ctx=262144, kv_dtype="bf16", weights_dtype="bf16", tensor_parallel_size=2,
              mem_fraction_static=0.8, vram=64 * GiB)
    bf = llm.plan(spec, mamba_ssm_cache_dtype="bfloat16", **kw)
    f32 = llm.plan(spec, **kw)
    assert "--mamba-ssm-dtype bfloat16" in [f["text"] for f in bf["flags"]]
    assert not any("mamba-ssm" in f["text"] for f in f32["flags"])
    # the ratio split is by bytes: more, smaller states in the same share (13,172,736 against 25,755,648 bytes a
    # state; 1619 against 828 here), within one float32 state of each other
    slots = [int(n.split("hybrid: ")[1].split()[0]) for p in (bf, f32) for n in p["notes"] if n.startswith("hybrid:")]
    assert slots[0] > 1.9 * slots[1]
    assert abs(slots[0] * 13_172_736 - slots[1] * 25_755_648) < 25_755_648
    # a token's K is the printed K size at the printed count: 1,359,146 x 8 x 2 x 256 x 2 bytes = 10.37 GiB
    assert bf["kv_per_token"] == 8 * 2 * 256 * 2 * 2
    assert round(bf["kv_per_token"] / 2 * 1_359_146 / GiB, 2) == 10.37


def test_state_element_refused_where_no_state_or_not_read():
    with pytest.raises(UserError, match="mamba-ssm-dtype"):
        llm.plan(llm.describe(model="Qwen/Qwen3-30B-A3B-Instruct-2507"), runtime="sglang", ctx=4096,
                 mamba_ssm_cache_dtype="bfloat16")
    with pytest.raises(UserError, match="does not read mamba_ssm_cache_dtype"):
        llm.plan(llm.describe(model=Q9), runtime="llama.cpp", ctx=4096, weights_dtype="Q4_K_M",
                 mamba_ssm_cache_dtype="bfloat16")


# --- DeepSeek-Coder-6.7B, from the GGUF fields the row's own log prints -------------------------------------------------
# RedWizurd/axeon-multi-llm-orchestrator ollama.log (Ollama 0.15.4, deepseek-coder:6.7b-instruct-q5_K_M): llama, 32
# blocks, embedding 4096, feed_forward 11008, 32 heads, 32 KV heads, context 16384 (linear x4), n_vocab 32256, 291
# tensors (untied), 'model params = 6.74 B', 'Metal KV buffer size = 2048.00 MiB' at 4096 cells
def test_deepseek_coder_67b_is_built_in():
    s = llm.describe(model="deepseek-coder:6.7b-instruct-q5_K_M")
    assert s.name == "DeepSeek-Coder-6.7B" and s.quant == "Q5_K_M" and not s.tied and not s.generic
    # params by hand, untied: token table and output 2 x 32256 x 4096 = 264,241,152; a layer q/k/v/o 4 x 4096^2 =
    # 67,108,864, mlp 3 x 4096 x 11008 = 135,266,304, two norms 8192: 202,383,360; 32 layers 6,476,267,520; a final
    # norm 4096: 6,740,512,768 (llama.cpp: 6.74 B)
    assert s.params == 6_740_512_768
    assert llm.describe(model="deepseek-ai/deepseek-coder-6.7b-instruct").name == "DeepSeek-Coder-6.7B"
    r = llm.plan(s, "ollama", ctx=4096, runtime_version="0.15.4", flash_attn="auto")
    # the KV buffer: 32 layers x 32 KV heads x 128 x 2 (K, V) x 2 bytes x 4096 cells = 2048 MiB
    assert r["kv_total"] == 32 * 32 * 128 * 2 * 2 * 4096 == 2048 * MiB
