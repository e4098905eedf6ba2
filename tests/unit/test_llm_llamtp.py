"""llama.cpp --spec-type draft-mtp (task llamtp; batches 33 and 35 after first sight). Read from llama.cpp's source:
the target context gets n_rs_seq = --spec-draft-n-max (common.h need_n_rs_seq) and llama_memory_recurrent sizes its
state mem_size x (1 + n_rs_seq); server-context.cpp builds an MTP context from the target's own params with the draft
cache types (f16 by default) and n_rs_seq 0, whose memory (llama_model::create_memory, mtp_on_hybrid_qwen35) is a plain
KV cache over the layers il >= n_layer, the MTP layer alone. Figures by hand from the config.json geometry."""
import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20
# Qwen3.8-27B: 48 gated-DeltaNet layers, each a conv state of (2 x 16 x 128 + 48 x 128) channels x (4 - 1) and an ssm
# state of 48 value heads x 128 x 128, float32; the MTP layer is one full-attention layer of 4 KV heads x 256
STATE_27B = 48 * ((2 * 16 * 128 + 48 * 128) * 3 + 48 * 128 * 128) * 4     # 149.625 MiB
MTP_KV_PER_CELL = 1 * 4 * (256 + 256) * 2                                 # one layer, K and V, f16


def _rx(**kw):
    # victoralcazardev/rx7900xtx-local-llm docs/measurements/memory.md, variant V1: IQ3_S, -c 262144, one slot, q8_0 K /
    # q5_1 V, draft-mtp n 2 on a 24,560 MiB RX 7900 XTX: 'RS 449', 'MTP KV 1,024' MiB, the main KV 7,424 MiB
    args = dict(ctx=262144, kv_dtype="q8_0", kv_dtype_v="q5_1", weights_dtype="IQ3_S", flash_attn="on",
                runtime_version="b11160", vram=23.98 * GiB)
    args.update(kw)
    return llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "llama.cpp", **args)


def test_draft_kv_is_one_f16_layer_of_every_cell():
    # 262,144 cells x 4,096 bytes = 1,024.00 MiB, as printed; the main cache's q8_0 (544 MiB) or all 16 attention
    # layers (16 GiB) fail
    r = _rx(mtp_tokens=2)
    assert r["overhead"]["mtp_draft_kv"] == 262144 * MTP_KV_PER_CELL == 1024 * MiB
    assert r["kv_total"] - r["kv_detail"]["recurrent_state"] == 7424 * MiB   # the main cache unchanged: 'KV 7,424'


def test_state_is_kept_one_plus_n_times():
    # the RS buffer with n_rs_seq 2: 3 x 149.625 = 448.875 MiB ('RS 449'); the plan's KV line keeps the one state
    # it always had, the overhead line the n more
    r = _rx(mtp_tokens=2)
    assert STATE_27B == 149.625 * MiB
    assert r["kv_detail"]["recurrent_state"] == STATE_27B
    assert r["overhead"]["mtp_state_snapshots"] == 2 * STATE_27B
    assert r["kv_detail"]["recurrent_state"] + r["overhead"]["mtp_state_snapshots"] == 448.875 * MiB
    r3 = _rx(mtp_tokens=3)
    assert r3["overhead"]["mtp_state_snapshots"] == 3 * STATE_27B


def test_total_grows_by_those_two_terms_alone():
    # the MTP context lives on the target model: no second copy of the weights; its compute buffer is not counted
    off, on = _rx(), _rx(mtp_tokens=2)
    assert on["weights"] == off["weights"]
    assert on["total"] - off["total"] == 2 * STATE_27B + 262144 * MTP_KV_PER_CELL
    assert any("compute buffer" in n and "not counted" in n for n in on["notes"])


def test_draft_kv_follows_the_context():
    # Qwen3.5-9B (one MTP layer, 4 KV heads x 256): -c 32768 -> 32,768 x 4,096 bytes = 128 MiB; its state 24 layers x
    # ((2 x 16 x 128 + 32 x 128) x 3 + 32 x 128 x 128) x 4 bytes = 50.25 MiB, two more with n 2
    r = llm.plan(llm.describe(model="Qwen/Qwen3.5-9B"), "llama.cpp", ctx=32768, kv_dtype="q8_0", weights_dtype="Q6_K",
                 flash_attn="on", mtp_tokens=2)
    assert r["overhead"]["mtp_draft_kv"] == 32768 * MTP_KV_PER_CELL == 128 * MiB
    assert r["overhead"]["mtp_state_snapshots"] == 2 * 24 * ((2 * 16 * 128 + 32 * 128) * 3 + 32 * 128 * 128) * 4


def test_fit_search_leaves_room_for_the_draft():
    # a card where 262,144 cells fit without the draft and not with it: the largest context found is smaller
    # (the two terms are 1.29 GiB; 20.29 GiB without them)
    off, on = _rx(vram=21.0 * GiB), _rx(vram=21.0 * GiB, mtp_tokens=2)
    assert off["fits_as_requested"] is True and on["fits_as_requested"] is False
    assert off["max_ctx_by_kv_dtype"]["q8_0"] == 262144 > on["max_ctx_by_kv_dtype"]["q8_0"]
    assert "--spec-type draft-mtp --spec-draft-n-max 2" in on["command"]


def test_command_carries_llamacpp_flags():
    r = _rx(mtp_tokens=2)
    assert "--spec-type draft-mtp --spec-draft-n-max 2" in r["command"]
    assert "speculative-config" not in r["command"]


@pytest.mark.parametrize("n", [0, -1, 65, True, "2", 2.0])
def test_bad_draft_length_is_a_clear_error(n):
    with pytest.raises(llm.UserError, match="spec-draft-n-max"):
        _rx(mtp_tokens=n)


def test_models_without_a_qwen35_mtp_layer_are_refused():
    with pytest.raises(llm.UserError, match="draft-mtp"):
        llm.plan(llm.describe(model="meta-llama/Llama-3.1-8B-Instruct"), "llama.cpp", ctx=8192, mtp_tokens=2)
    with pytest.raises(llm.UserError, match="several GPUs"):
        _rx(mtp_tokens=2, num_gpus=2)
    with pytest.raises(llm.UserError, match="ik_llama"):
        _rx(mtp_tokens=2, runtime_version="ik_llama.cpp")


def test_cli_flag_reaches_llamacpp(capsys):
    rc = cli.main(["kv", "--model", "Qwen/Qwen3.8-27B", "--runtime", "llama.cpp", "--ctx", "262144", "--kv-dtype", "q8_0",
                   "--weights-dtype", "IQ3_S", "--mtp-tokens", "2"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "mtp draft kv" in out and "1.00 GiB" in out.split("mtp draft kv")[1].splitlines()[0]


# gpt-oss GGUFs keep the routed experts in MXFP4 at any file type (weights.MXFP4_EXPERT_ARCHS): gpt-oss-20b's experts
# are 24 layers x 32 experts x 3 x 2880 x 2880 = 19,110,297,600 values at 4.25 bits; its embedding and output
# 201,088 x 2,880 each; the other block values 20,908,050,240 - 2 x 579,133,440 - 19,110,297,600 = 639,485,760
GPTOSS_EXPERTS, GPTOSS_EMB, GPTOSS_REST = 24 * 32 * 3 * 2880 * 2880, 201088 * 2880, 639_485_760
# Q8_0's block rate from the whole-file table (Llama-3-8B: 8,030,261,248 values at 8.51 bits, of them 2 x 525,336,576
# embedding/output values at 8.5)
Q8_BLOCK_BITS = (8_030_261_248 * 8.51 - 2 * 525_336_576 * 8.5) / (8_030_261_248 - 2 * 525_336_576)


def test_gptoss_q8_0_gguf_keeps_mxfp4_experts():
    r = llm.weights_by_role(llm.describe(model="openai/gpt-oss-20b"), "Q8_0")
    assert GPTOSS_EXPERTS + 2 * GPTOSS_EMB + GPTOSS_REST == 20_908_050_240
    want = (2 * GPTOSS_EMB * 8.5 + GPTOSS_EXPERTS * 4.25 + GPTOSS_REST * Q8_BLOCK_BITS) / 8
    assert r["total"] == pytest.approx(want, abs=2)   # 12.06 GB (ggml-org's MXFP4 MoE file: 12.1 GB)
    assert "MXFP4" in r["how"]


def test_unsloth_gptoss_q4_k_m_is_the_printed_mapping():
    # rabbit-holes unsloth/gpt-oss-20b-GGUF, llama-server b8198 on an M5: MTL0_Mapped model buffer 11073.83 MiB for the
    # whole Q4_K_M file (10.81 GiB); Q4_K_M experts (with the K-quant fallback of 2880-value rows) made it 14,957 MiB,
    # Q4_K experts without the fallback (4.5 bits) would still add 570 MiB
    r = llm.weights_by_role(llm.describe(model="openai/gpt-oss-20b"), "Q4_K_M")
    assert r["total"] / MiB == pytest.approx(11073.83, rel=0.01)


def test_a_bf16_checkpoint_keeps_its_expert_type():
    # only the MXFP4 checkpoint's GGUFs keep MXFP4 experts: Qwen3-30B-A3B (bf16) at Q8_0 has no MXFP4 in its sum
    r = llm.weights_by_role(llm.describe(model="Qwen/Qwen3-30B-A3B"), "Q8_0")
    assert "MXFP4" not in r["how"]


def test_llamacpp_mxfp4_name_is_the_mxfp4_moe_file():
    # rabbit-holes ggml-org/gpt-oss-20b-GGUF (gpt-oss-20b-mxfp4.gguf) on an M5, llama-cli b8185: MTL0 model buffer
    # 11536 MiB. GGUF file type 38 (MXFP4) is llama.cpp's MXFP4 MoE: experts MXFP4 (4.25 bits), every other tensor Q8_0
    # (8.5 bits): 19,110,297,600 x 4.25 / 8 + 1,797,752,640 x 8.5 / 8 = 12,062,457,780 bytes (11,503.7 MiB); read as
    # the checkpoint's own format (the rest in 16 bits) it was 13,111 MiB
    r = llm.plan(llm.describe(model="openai/gpt-oss-20b"), "llama.cpp", ctx=131072, weights_dtype="MXFP4")
    assert 20_908_050_240 - GPTOSS_EXPERTS == 1_797_752_640
    assert r["weights"] == pytest.approx((GPTOSS_EXPERTS * 4.25 + 1_797_752_640 * 8.5) / 8, abs=2)
    assert r["weights"] / MiB == pytest.approx(11536, rel=0.005)


def test_draft_cache_type_flag():
    # -ctkd q8_0 -ctvd q8_0: q8_0 stores 32 values in 34 bytes, so the MTP layer's 262,144 cells take
    # 262,144 x 4 x 512 x 34 / 32 = 544 MiB (f16: 1,024)
    r = _rx(mtp_tokens=2, draft_kv_dtype="q8_0")
    assert r["overhead"]["mtp_draft_kv"] == 262144 * 4 * 512 * 34 // 32 == 544 * MiB
    assert "-ctkd q8_0 -ctvd q8_0" in r["command"]
    assert "-ctkd" not in _rx(mtp_tokens=2)["command"]
    with pytest.raises(llm.UserError, match="draft-kv-dtype"):
        _rx(draft_kv_dtype="q8_0")
    with pytest.raises(llm.UserError, match="draft-kv-dtype"):
        llm.plan(llm.describe(model="Qwen/Qwen3.8-27B"), "vllm", ctx=8192, mtp_tokens=2, draft_kv_dtype="fp8")
    with pytest.raises(llm.UserError, match="KV cache type"):
        _rx(mtp_tokens=2, draft_kv_dtype="q3_k")


def test_cli_draft_cache_type(capsys):
    rc = cli.main(["kv", "--model", "Qwen/Qwen3.8-27B", "--runtime", "llama.cpp", "--ctx", "262144", "--kv-dtype", "q8_0",
                   "--weights-dtype", "IQ3_S", "--mtp-tokens", "2", "--draft-kv-dtype", "q8_0"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "544.00 MiB" in out.split("mtp draft kv")[1].splitlines()[0]
