"""Task ellm78 (kv-accuracy round 100, batch 104 after its first sight): the author's Qwen3.6-27B W8A8
SmoothQuant+GPTQ checkpoint (hotschmoe/b70_ai_things 2f56a7cf, 27b_w8a8_research.md section 2, 'W8A8 quant is
selective (ignore-list ["lm_head","re:.*linear_attn.*","re:.*visual.*","re:.*mtp.*"])': int8 for the 64 MLPs and the
16 full-attention q/k/v/o, BF16 for every Gated-DeltaNet projection, lm_head and the MTP head). Its rows now carry
that ignore list as quant_skip (input), as the W4A16 / W4A8 rows from the same repository already do. Expected values
by hand below from Qwen3.6-27B's config.json fields."""
from dataclasses import replace

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB
from test_kv_ellm61 import _row

W8A8 = ("vllm-b70things-qwen36-27b-w8a8-sqgptq-mtp3-tp2-b70-64k-u09-seqs1-graph",
        "vllm-b70things-qwen36-27b-w8a8-sqgptq-mtp3-tp2-b70-64k-u09-seqs1-eager",
        "vllm-b70things-qwen36-27b-w8a8-sqgptq-mtp3-tp2-b70-16k-u09-eager",
        "vllm-b70things-qwen36-27b-w8a8-sqgptq-mtp3-tp2-b70-248k-u09-prefix",
        "vllm-b70things-qwen36-27b-w8a8-sqgptq-tp2-b70-262k-u095-eager-nomtp",
        "vllm-b70things-qwen36-27b-w8a8-sqgptq-mtp5-tp2-b70-262k-u095-piecewise")


def test_ignore_list_keeps_every_deltanet_projection_in_bf16():
    # Qwen3.6-27B: hidden 5120, 48 gated-DeltaNet layers of 16 key heads x 128 and 48 value heads x 128. A layer's
    # linear_attn matmuls: in_proj_qkv 5120 x (2 x 2048 + 6144) = 52,428,800; in_proj_z 5120 x 6144 = 31,457,280;
    # in_proj_b and in_proj_a 5120 x 48 = 245,760 each; out_proj 6144 x 5120 = 31,457,280: 115,834,880 (conv1d's
    # 40,960 is no matmul but matches the regex too: 115,875,840); x 48 = 5,562,040,320 values kept in 16 bits
    from gpu_garden.memory.llm.linear_quant import skipped_linear_params
    s = replace(llm.describe(model="Qwen/Qwen3.6-27B"), quant_skip=("lm_head", "re:.*linear_attn.*"))
    assert skipped_linear_params(s) == 5_562_040_320


def test_w8a8_rows_carry_the_checkpoint_ignore_list():
    import json
    from pathlib import Path
    rows = json.loads((Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "llm_measured.json").read_text())["rows"]
    got = {r["id"]: r["input"].get("quant_skip") for r in rows if r["id"] in W8A8}
    assert got == {rid: ["lm_head", "re:.*linear_attn.*"] for rid in W8A8}


def test_w8a8_weights_per_rank_at_tp2():
    # at TP 2 a rank holds 5,562,040,320 / 2 = 2,781,020,160 of those values at 2 bytes instead of int8's 1: 2,781,020,160
    # B = 2.590 GiB more a rank: 14.136 GiB (every linear int8, before) + 2.590 = 16.726 GiB against the printed 16.92
    # ('Model loading took 16.92 GiB memory'); before: -16.5 %. Since task kv66/kv67 vLLM's MRotaryEmbedding cos/sin table
    # (Qwen 3.6's rope has an mrope_section) is whole on each rank at 262,144 x 4 positions x 64 rotary values x 2 B =
    # 134,217,728 B instead of 33,554,432: 100,663,296 B = 0.094 GiB more, 16.726 + 0.094 = 16.820 GiB (-0.6 %)
    s = _row("vllm-b70things-qwen36-27b-w8a8-sqgptq-mtp3-tp2-b70-64k-u09-seqs1-graph")
    ours, printed = s["weights_gib"]
    assert printed == 16.92
    assert abs(ours - (14.136 + 2_781_020_160 / GiB + 100_663_296 / GiB)) < 0.002
    assert abs(ours - printed) / printed < 0.02


# ---------------------------------------------------------------- Red Hat's Qwen3.6-35B-A3B NVFP4 (checkpoints.py)
RH = "RedHatAI/Qwen3.6-35B-A3B-NVFP4"


def test_redhat_build_keeps_every_deltanet_matmul_in_bf16():
    # llm-compressor's Qwen3.6-35B-A3B NVFP4 recipe ignores re:.*linear_attn.*. Qwen3.6-35B-A3B: hidden 2048, 30
    # gated-DeltaNet layers (of 40) of 16 key heads x 128 and 32 value heads x 128, conv kernel 4. A layer:
    # in_proj_qkv 2048 x (2 x 2048 + 4096) = 16,777,216; in_proj_z 2048 x 4096 = 8,388,608; in_proj_a and in_proj_b
    # 2048 x 32 = 65,536 each; conv1d 8192 x 4 = 32,768; out_proj 4096 x 2048 = 8,388,608: 33,718,272; x 30 =
    # 1,011,548,160 values in 16 bits. nvidia's ModelOpt build keeps none of them (no entry: 0)
    from gpu_garden.memory.llm.linear_quant import skipped_linear_params
    s = llm.describe(model=RH)
    assert (s.name, s.quant) == ("Qwen3.6-35B-A3B", "nvfp4")
    assert skipped_linear_params(s) == 1_011_548_160
    assert skipped_linear_params(llm.describe(model="nvidia/Qwen3.6-35B-A3B-NVFP4")) == 0


def test_redhat_weights_on_one_gpu():
    # 1,011,548,160 values at 2 bytes (2,023,096,320 B) instead of NVFP4's 4.5 bits (568,995,840 B): 1,454,100,480 B
    # = 1.354 GiB more than the base model sized as nvfp4. The 5090 row: 20.411 -> 21.765 GiB against the printed
    # 21.86 (-6.6 % -> -0.4 %)
    kw = dict(ctx=65536, kv_dtype="fp8", gpu_memory_utilization=0.9, max_num_seqs=1, max_num_batched_tokens=4096,
              vram=int(31.36 * GiB), runtime_version="0.20.1")
    rh = llm.plan(llm.describe(model=RH), "vllm", **kw)["weights"]
    base = llm.plan(llm.describe(model="Qwen/Qwen3.6-35B-A3B"), "vllm", weights_dtype="nvfp4", **kw)["weights"]
    assert rh - base == 1_454_100_480
    s = _row("vllm-99sono-qwen36-35b-a3b-redhatnvfp4-5090-64k-u090-fp8kv-mns1-mbt4096")
    ours, printed = s["weights_gib"]
    assert printed == 21.86 and abs(ours - printed) / printed < 0.01


def test_redhat_refusal_now_reads_does_not_fit():
    # the 96k start at the default utilisation and 256 seqs was refused; with 1.354 GiB more weights kv's fit verdict
    # agrees (True before)
    s = _row("vllm-99sono-qwen36-35b-a3b-redhatnvfp4-5090-96k-u090default-fp8kv-mns256-refused")
    assert s["fits"] == (False, False)
