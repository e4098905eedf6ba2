"""Task dsv4: DeepSeek-V4 (deepseek_v4) as vLLM allocates its cache groups (memory/llm/deepseek_v4.py).

The figures are worked by hand from the built-in configs (DeepSeek-V4-Flash: 43 layers, compress_ratios [0, 0] + [4, 128]
x 20 + [4], head_dim 512, index_head_dim 128, sliding_window 128; DeepSeek-V4-Pro: 61 layers, [128, 128] + [4, 128] x 29
+ [4]) and vLLM's source as the module's docstring cites it; each test names the deliberate error that breaks it (each
checked by reverting it).
"""
import json
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import deepseek_v4 as D
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

FLASH = "deepseek-ai/DeepSeek-V4-Flash"
PRO = "deepseek-ai/DeepSeek-V4-Pro"


def _flash():
    return llm.describe(model=FLASH)


# One layer's pages (bytes), each padded up to a multiple of 576:
#   sliding latent 64 x 584 = 37,376 -> 65 x 576 = 37,440; c 4 latent 256 / 4 = 64 x 584 -> 37,440;
#   c 128 latent 2 x 584 = 1,168 -> 3 x 576 = 1,728; indexer key 64 x (128 + 4) = 8,448 -> 15 x 576 = 8,640;
#   c 4 latent state 4 x (2 x 2 x 512) x 4 = 32,768 -> 57 x 576 = 32,832 (window 2 x 4 = 8);
#   c 4 indexer state 4 x (2 x 2 x 128) x 4 = 8,192 -> 8,640; c 128 state 8 x (2 x 1 x 512) x 4 = 32,768 -> 32,832
#   (window 128). Breaks with SLOT = 576 (the V3.2 latent's 656-byte record's NoPE + RoPE alone) or ALIGN = 512.
def test_pages_of_each_layer_kind():
    assert D.layer_caches(1, 512, 128, 128) == [((64, 128), 37440, 64, 128)]
    assert D.layer_caches(4, 512, 128, 128) == [((64, 128), 37440, 64, 128), ("mla", 37440, 256, None),
                                                ((4, 8), 32832, 4, 8), ("mla", 8640, 256, None),
                                                ((4, 8), 8640, 4, 8)]
    assert D.layer_caches(128, 512, 128, 128) == [((64, 128), 37440, 64, 128), ("mla", 1728, 256, None),
                                                  ((8, 128), 32832, 8, 128)]


# Flash's groups: the full-MLA group holds 21 c 4 latents (37,440), 21 indexer keys (8,640), 20 c 128 latents (1,728):
# 21 tuples; the sliding latents 43 (every layer), the c 4 states 21 of each page, the c 128 states 20. _approximate_gcd
# of [21, 43, 21, 20] from 21: d = 21 pads 0 + 20 + 0 + 1 = 21, d = 22 pads 1 + 1 + 1 + 2 = 5, d = 23 pads 2 + 3 + 2 + 3
# = 10, larger d pad more: 22. The sliding latents split in cdiv(43, 22) = 2 groups (22 and 21), the states stay one
# group each (their 32,832 pages padded to 37,440). Tuple bytes 37,440 + 8,640 + 1,728 = 47,808; the longest bucket 22
# (the first sliding group): 47,808 x 22 = 1,051,776 bytes a block. Breaks if approximate_gcd returns the lower bound
# (21: three sliding groups, 1,003,968 bytes a block) or the padding goes to the page below.
def test_flash_groups_and_block_bytes():
    lay = D.layout(_flash())
    assert D.approximate_gcd([21, 43, 21, 20], 21) == 22
    assert lay["tuples"] == 22 and lay["tuple_bytes"] == 47808 and lay["block_bytes"] == 1051776
    assert [(g["block"], g["window"], g["pages"]) for g in lay["groups"]] == [
        (256, None, {37440: 21, 8640: 21, 1728: 20}), (64, 128, {37440: 22}), (64, 128, {37440: 21}),
        (4, 8, {37440: 21, 8640: 21}), (8, 128, {37440: 20})]


# Pro: 30 c 4 and 31 c 128 layers (layers 0, 1 compress 128x), none sliding only. Counts [31, 61, 30, 31] from 31:
# d = 31 pads 0 + 1 + 1 + 0 = 2, d = 32 pads 1 + 3 + 2 + 1 = 7: 31; the 61 sliding latents in 2 groups (31, 30);
# 47,808 x 31 = 1,482,048 bytes a block. Breaks with compress_ratios read one entry off (layer i taking entry i + 1)
# or the built-in's list altered.
def test_pro_groups():
    lay = D.layout(llm.describe(model=PRO))
    assert lay["tuples"] == 31 and lay["block_bytes"] == 1482048
    # packed (0.26): the largest group, the full-MLA one: 30 x 37,440 + 30 x 8,640 + 31 x 1,728 = 1,435,968 (the c 4
    # states 30 x (37,440 + 8,640) = 1,382,400); breaks if the packed block takes the smallest group or the tuples'
    assert D.layout(llm.describe(model=PRO), kind="dsv4-packed")["block_bytes"] == 1435968
    # in the layers' order, as vLLM's dict keeps it: layer 0 (128x) brings its sliding latent, then its state
    assert [g["pages"] for g in lay["groups"]] == [{37440: 30, 8640: 30, 1728: 31}, {37440: 31}, {37440: 30},
                                                   {37440: 31}, {37440: 30, 8640: 30}]


# vllm-project/vllm#44376 (a comment's LLM() run, 2 GH200, max_model_len 30000, fp8): "6.66 GiB KV cache is needed ...
# the estimated maximum model length is 13528", with 5.44 GiB available. LLM() on a card of >= 70 GiB schedules 16384
# tokens a step: a request's pages = cdiv(30000, 256) = 118 (full MLA) + 2 x (cdiv(min(127 + 16384, 30000), 64) + 1 =
# 259) (the two sliding groups) + cdiv(7 + 16384, 4) + 1 = 4099 (c 4 states) + cdiv(16511, 8) + 1 = 2065 (c 128
# states) = 6800; x 1,051,776 = 7,152,076,800 bytes = 6.661 GiB. At 13528 tokens: cdiv(13528, 256) = 53 + 2 x
# (cdiv(13528, 64) + 1 = 213) + (13528 / 4 + 1 = 3383) + (13528 / 8 + 1 = 1692) = 5554 pages, 5,841,563,904 bytes
# (5.4404 GiB, printed 5.44); 13529 takes a 3384th c 4 state page. So 5554 pages' bytes give 13528, one byte less
# 13524 (5553 pages: 3382 + 1692 + 2 x 213 + 53). Breaks with the sliding slack left out (window - 1 alone) or the
# tuples' 22 replaced by 21.
def test_refusal_row_44376():
    spec = _flash()
    assert D.request_bytes(spec, 30000, 16384) == 6800 * 1051776
    assert round(6800 * 1051776 / GiB, 2) == 6.66
    assert D.estimated_max_len(spec, 5554 * 1051776, 30000, 16384) == 13528
    assert D.estimated_max_len(spec, 5554 * 1051776 - 1, 30000, 16384) == 13524


# (mend56) The row's input carries the LLM() entry point its note quotes, so kv schedules LLM()'s chunk (vLLM
# engine/arg_utils.py, UsageContext.LLM_CLASS: 8192 tokens on a card under 70 GiB, 16384 from 70 GiB) where `vllm serve`'s
# 2048 was taken. The row gives no card, so it is 8192, not the 16384 that gives the printed 13528 above. Breaks on the
# row without "vllm_entrypoint".
def test_row_44376_carries_the_llm_entry_point():
    from gpu_garden.memory.llm.runtimes import vllm as V
    rows = json.loads((Path(__file__).resolve().parents[2] / "benchmarks" / "data" / "llm_measured.json").read_text())
    row = next(r for r in rows["rows"] if r["id"] == "vllm-44376-deepseek-v4-flash-tp2-ep-2xgh200-30k-fp8-refused")
    assert row["notes"][0].startswith("LLM(model='DeepSeek-V4-Flash'") and row["input"]["vllm_entrypoint"] == "llm"
    assert row["vram_gib"] is None
    assert V.settings(None, None, row["input"]["ctx"], row["input"])["max_batched"] == 8192
    assert V.settings(None, None, row["input"]["ctx"], dict(row["input"], vllm_entrypoint="serve"))["max_batched"] == 2048


# The pool of the offload1g row's printed 49.66 GiB (53,322,023,075 bytes) at max_model_len 131072, 8192 tokens a
# step, two in flight (vLLM 0.26's async scheduling), packed (0.26): a block is the largest group's pages, the full-MLA
# group's 21 x 37,440 + 21 x 8,640 + 20 x 1,728 = 1,002,240 (the others: 823,680, 786,240, 967,680, 748,800), so
# 53,202 blocks; a request 512 + 2 x 259 + 4099 + 2065 = 7194 pages; 53,202 / 7194 = 7.3954x, x 131072 = 969,320
# tokens (the run printed 969,193 and 7.39x). Breaks if the in-flight slack counts one batch (8192: 3866 pages), if
# the packed block is the tuples' 1,051,776 (50,697 blocks, 923,680 tokens) or the groups' bytes summed (4,328,640).
def test_pool_tokens_at_49_66_gib():
    got = D.pool(_flash(), int(49.66 * GiB), 131072, 16384, kind="dsv4-packed")
    assert got["blocks"] == 53202
    assert got["tokens"] == 969320
    assert got["concurrency"] == pytest.approx(53202 / 7194)
    assert got["request_bytes"] == 7194 * 1002240


# Before the packed pool (vLLM 0.20.2 kv_cache_utils.py:872-890, the 99sono row's 0.21.1: 18.65 GiB printed,
# max_model_len 200000, 8192 batched tokens, one batch in flight, the MTP layer a sliding-only layer: 44 sliding
# latents, still two groups of 22): blocks of 1,051,776: 20,025,285,017 // 1,051,776 = 19,039. "Maximum concurrency"
# counts cdiv(sum of pages x the group's bytes, the full-MLA group's 1,002,240): pages 782 (cdiv(200000, 256)), 131
# (cdiv(127 + 8192, 64) + 1) twice, 2051 (cdiv(7 + 8192, 4) + 1), 1041 (cdiv(127 + 8192, 8) + 1); 782 x 1,002,240 +
# 2 x 131 x 823,680 + 2051 x 967,680 + 1041 x 748,800 = 3,763,768,320 bytes = 3755.4 -> 3756 blocks (the start check's
# 782 + 262 + 2051 + 1041 = 4136 pages). 19,039 / 3756 x 200000 = 1,013,791 tokens (printed 1,001,650, the least over
# the two nodes' pools). Breaks if the 0.20.2 pool counts the summed pages (4136: 920,647 tokens).
def test_pool_before_packed_counts_bytes_over_the_full_mla_group():
    got = D.pool(_flash(), int(18.65 * GiB), 200000, 8192, draft_layers=1)
    assert got["blocks"] == 19039
    assert got["concurrency"] == pytest.approx(19039 / 3756)
    assert got["tokens"] == 1013791
    assert got["request_bytes"] == 4136 * 1051776


# The pool's form by version: packed from 0.26 (0.26.0, 0.26.1's pre-release; 0.26.0's own pre-releases sort before
# 0.26.0), 0.20.2's before it and for the V0 engine, packed for no version (the newest: task dsv4d);
# runtimes/vllm_mla.mla_layout hands it on and cache.vllm_pool passes it to deepseek_v4.pool (the offload1g figures above
# through the dispatch). Breaks with PACKED_FROM = (0, 25), no version read as 0.20.2, or the dispatch dropping kind
# (the 0.20.2 pool: 50,697 blocks, 1,033,604 tokens).
def test_pool_form_by_version_through_the_dispatch():
    from gpu_garden.memory.llm.cache import vllm_pool
    from gpu_garden.memory.llm.runtimes import parse_version
    from gpu_garden.memory.llm.runtimes.vllm_mla import mla_layout
    rows = {"0.26.1rc0+infernal.invocation.r2.vllm344438d": "dsv4-packed", "0.26.0": "dsv4-packed",
            "0.26.0rc1": "dsv4-tuples", "0.25.1": "dsv4-tuples", "0.21.1rc1.dev339+g1967a5627bc3": "dsv4-tuples"}
    assert {v: D.layout_kind(parse_version(v)) for v in rows} == rows
    assert D.layout_kind(None) == "dsv4-packed" and D.layout_kind((0, 26, 1), v1=False) == "dsv4-tuples"
    spec = _flash()
    kind = mla_layout(spec, {"version": (0, 26, 1), "v1": True})
    assert kind == "dsv4-packed"
    got = vllm_pool(spec, int(49.66 * GiB), "fp8", 131072, mla_cache=kind, max_batched=16384)
    assert (got["blocks"], got["tokens"]) == (53202, 969320)


# The checkpoints' sizes, from their tensor tables: DeepSeek-V4-Flash (base: 43 layers + the MTP layer, compress_ratios
# [0, 0] + [4, 128] x 20 + [4, 0]) totals 159,609,485,896 bytes (a DSV4 inventory test's safetensors index,
# total_size; vLLM prints 'Checkpoint size: 148.66 GiB' for it, batch 90); the Pro report lists 805.32 GB (GiB) of
# tensors. Breaks with an MXFP4 scale a 16 weights, the compressor's ape in bf16, or the hash layers' tid2eid dropped.
def test_checkpoint_bytes_match_the_published_totals():
    flash = json.loads((Path(D.__file__).with_name("models") / "DeepSeek-V4-Flash.json").read_text())
    base = [0, 0] + [4, 128] * 20 + [4, 0]
    ratios = tuple(max(1, r) for r in base)
    assert D.checkpoint_bytes(flash, ratios, 43, 1)[0] == 159609485896
    pro = json.loads((Path(D.__file__).with_name("models") / "DeepSeek-V4-Pro.json").read_text())
    ratios = tuple(max(1, r) for r in pro["compress_ratios"])
    assert abs(D.checkpoint_bytes(pro, ratios, 61, 1)[0] / GiB - 805.32) < 0.005


# A deepseek_v4 config.json without a ratio for each layer is refused with what is missing, never read as a generic
# decoder (the test_llm_batch30 config of another model_type). Breaks if read_ratios' length check is dropped.
def test_config_without_ratios_is_refused():
    cfg = json.loads((Path(D.__file__).with_name("models") / "DeepSeek-V4-Flash.json").read_text())
    cfg["compress_ratios"] = cfg["compress_ratios"][:40]
    with pytest.raises(UserError, match="compress_ratios, one entry for each of its 43 layers"):
        llm_spec_from_config(cfg)


def llm_spec_from_config(cfg):
    from gpu_garden.memory.llm.spec import from_config
    return from_config(cfg, "config.json")


def test_kv_types_and_runtimes():
    spec = _flash()
    # not given: fp8 (fp8_ds_mla); bf16 refused with the assert's reason. Breaks if check_kv is not called by norm_kv
    assert llm.norm_kv(None, "vllm", spec) == "fp8"
    with pytest.raises(UserError, match="asserts an fp8 cache"):
        llm.plan(spec, "vllm", ctx=8192, kv_dtype="bf16")
    for rt in ("llama.cpp", "sglang", "ollama"):  # breaks without plan_checks' refuse_runtime call
        with pytest.raises(UserError, match="modelled for vLLM only"):
            llm.plan(spec, rt, ctx=8192)


# One GPU of TP 4: the decoder's 156,015,698,140 bytes (159,609,485,896 less the MTP layer's 3,593,787,756), the split
# part / 4 and the replicated part whole. Replicated, a layer: fused_wqa_wkv fp8 4,194,304 + 256 scales + 2,097,152 +
# 128 = 6,291,840; sinks 4 x 64 = 256; q / kv / attn / ffn norms 2 x (1024 + 512 + 2 x 4096) = 19,456; the mixers
# 2 x 4 x (24 x 16384 + 24 + 3) = 3,145,944; the router 256 x 4096 x 2 = 2,097,152 + its bias 1,024: 11,555,672,
# x 43 = 496,893,896, + 3 hash layers' tid2eid 129280 x 6 x 8 less the bias (6,204,416 each) = 515,507,144. A c 4
# layer: compressor 2 x 1024 x 4096 x 2 + 4 x 1024 x 4 + 1024 = 16,794,624, indexer 8,388,608 + 512 + 524,288 +
# 4,194,304 + 4,096 + 256 = 13,112,064: 29,906,688 x 21 = 628,040,448. A c 128 layer 8,388,608 + 262,144 + 1,024 =
# 8,651,776 x 20 = 173,035,520. The final norm and the head mixer 8,192 + 262,144 + 16 + 4 = 270,356. Replicated
# 1,316,853,468; one GPU 156,015,698,140 // 4 + 1,316,853,468 x 3 // 4 = 39,003,924,535 + 987,640,101 =
# 39,991,564,636, + the buffers vLLM builds with the model at 8192 batched tokens (test_load_buffers_flash:
# 822,083,584) = 40,813,648,220 (the run printed 38.1 GiB = 40.9e9: kv 0.23 % under). Breaks if the MTP layer is counted
# with the decoder, --weights-dtype fp8 re-sizes the weights at a byte a parameter (plan._given_weights' own_format
# call), plan_weights' replicated share is left out, or its load_buffers dispatch line is dropped.
def test_plan_weights_tp4():
    spec = _flash()
    assert spec.dsv4["replicated"] == 1316853468
    out = llm.plan(spec, "vllm", ctx=131072, kv_dtype="fp8", weights_dtype="fp8", tensor_parallel_size=4,
                   vram=94.97 * GiB, gpu_memory_utilization=0.95, runtime_version="0.26.1",
                   max_num_batched_tokens=8192)
    assert out["weights"] == 39991564636 + 822083584 == 40813648220


# Task dsv4c: the buffers vLLM 0.20.2's DeepSeek-V4 allocates on each GPU while it builds the model (inside "Model
# loading took"; deepseek_v4.load_buffers cites the lines). Flash at 8192 batched tokens: rotary tables for rope_theta
# (the two c 1 layers) and compress_rope_theta (the 41 compressed ones), each 65536 x 16 = 1,048,576 rows x 64 x 4
# bytes (fp32) = 268,435,456: 536,870,912; _mtp_hidden_buffer 8192 x 4 x 4096 x 2 = 268,435,456; topk_indices_buffer
# 8192 x 512 x 4 = 16,777,216; 822,083,584 in all. With the MTP drafter loaded its predictor's own top-k buffer
# (16,777,216) and no third table (its layer's ratio 0: rope_theta): 838,860,800. Breaks with the table in bf16, one
# table whatever the theta, the hidden buffer at hidden alone (no hc_mult), or the drafter's buffer left out.
def test_load_buffers_flash():
    spec = _flash()
    got = D.load_buffers(spec, 8192)
    assert (got["rope_tables"], got["rope"], got["mtp_hidden"], got["topk"]) == (2, 536870912, 268435456, 16777216)
    assert got["total"] == 822083584
    assert D.load_buffers(spec, 8192, drafter=True)["total"] == 838860800
    assert D.load_buffers(spec, 2048)["total"] == 536870912 + 67108864 + 4194304


# One theta for every layer (compress_rope_theta = rope_theta) keeps one table: 268,435,456 + 268,435,456 + 16,777,216 =
# 553,648,128; no YaRN scaling (a config's rope not read): no table, 285,212,672. Breaks if the table count ignores the
# theta (2 tables) or a config without rope_scaling raises / is counted.
def test_load_buffers_tables_by_theta():
    cfg = json.loads((Path(D.__file__).parent / "models" / "DeepSeek-V4-Flash.json").read_text())
    cfg = dict(cfg.get("config", cfg))
    same = D.from_config(dict(cfg, compress_rope_theta=cfg["rope_theta"]), "same")
    assert D.load_buffers(same, 8192)["total"] == 553648128
    plain = D.from_config({k: v for k, v in cfg.items() if k != "rope_scaling"}, "plain")
    assert D.load_buffers(plain, 8192)["total"] == 285212672


# The 99sono row's settings (TP 2, MTP 2, 8192 batched tokens): 156,015,698,140 // 2 + 1,316,853,468 // 2 =
# 78,007,849,070 + 658,426,734 = 78,666,275,804, the MTP layer 3,593,787,756 // 2 = 1,796,893,878, the buffers with the
# drafter 838,860,800: 81,302,030,482 (printed 75.86 GiB = 81,454,054,769: kv 0.19 % under). Breaks if the dispatch line
# passes no drafter (822,083,584: 16,777,216 less).
def test_plan_weights_tp2_mtp():
    out = llm.plan(_flash(), "vllm", ctx=200000, kv_dtype="fp8", weights_dtype="fp8", tensor_parallel_size=2,
                   vram=121.63 * GiB, gpu_memory_utilization=0.8, runtime_version="0.21.1", mtp_tokens=2,
                   max_num_batched_tokens=8192)
    assert out["weights"] == 78666275804 + 1796893878 + 838860800 == 81302030482
