"""Task ellm24 (kv-accuracy round 49): batch 56 read after its first sight (vLLM speculative-decoding drafters). Each
test fails when its rule is broken on purpose (the commit says how). Expected values are worked here from the model's
geometry and the runs' printed figures, not taken from kv."""
import math

from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB


def _qwen36_27b_mtp3(version):
    # club-3090#91: Qwen3.6-27B int4 AutoRound, TP 2 on 3090s, fp8_e5m2 cache, MTP with 3 speculative tokens
    return llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=262144, parallel=1, weights_dtype="auto_round",
                    tensor_parallel_size=2, gpu_memory_utilization=0.9, kv_dtype="fp8", max_num_seqs=2,
                    max_num_batched_tokens=8192, mtp_tokens=3, runtime_version=version, vram=23.56 * GiB)


# 1. vLLM 0.20.1 (the release) prints "GPU KV cache size" as concurrency x max_model_len: club-3090#91's
# 'Initializing a V1 LLM engine (v0.20.1)' run prints 619,479 tokens and 2.36x at 262,144 (619,479 / 262,144 = 2.363),
# no whole number of its 1600-token blocks (Qwen3.6-27B at TP 2, fp8, MTP 3: 16 x ceil(state page / (16 x 1024)) =
# 1600). kv took the change as 0.22 and printed blocks // groups x 1600 there (155,200: -75 %). The nightly
# 0.20.1rc1.dev16 that came before it still prints whole blocks (483,200 = 302 x 1600 next to 6.77x, club-3090 e3f8f020).
# Breaking it: runtimes/vllm.py TOKENS_FROM_CONCURRENCY back to (0, 22).
def test_vllm_0_20_1_prints_tokens_as_concurrency_times_the_length():
    r = _qwen36_27b_mtp3("0.20.1")
    assert r["kv_detail"]["pool_args"]["tokens_from_concurrency"] is True
    assert r["kv_capacity_tokens"] == int(r["concurrency"] * 262144)
    assert r["kv_capacity_tokens"] % 1600 != 0
    old = _qwen36_27b_mtp3("0.20.1rc1.dev16+g7a1eb8ac2")
    assert old["kv_detail"]["pool_args"]["tokens_from_concurrency"] is False
    assert old["kv_capacity_tokens"] % 1600 == 0
    # the printed pair is of that kind: tokens / length is the printed concurrency, and no whole number of blocks
    assert round(619479 / 262144, 2) == 2.36 and 619479 % 1600 != 0
    assert math.isclose(483200 / 1600, 302)


# --- a separate drafter (DFlash) in vLLM's pool: runtimes/vllm_drafter.py, cache.vllm_layout's DRAFT kind ---------------
import json  # noqa: E402

import pytest  # noqa: E402

from gpu_garden.memory.errors import UserError  # noqa: E402
from gpu_garden.memory.llm import cache  # noqa: E402


def _pool(model, tp, gib, kv, ctx, drafter, spec_tokens, max_batched, from_concurrency=True):
    spec = llm.vllm_per_rank(llm.describe(model=model), tp)
    # state_blocks 2: these runs pass --enable-prefix-caching (the jethac logs' args, club-3090's composes), whose
    # "align" mode keeps a state page more a request; the printed pairs below are whole blocks only with it
    return cache.vllm_pool(spec, gib * GiB, kv, ctx, max_batched=max_batched, spec_tokens=spec_tokens,
                           tokens_from_concurrency=from_concurrency, drafter=drafter, state_blocks=2)


# 2. A DFlash drafter's layers are a KV kind of their own in vLLM's layer groups. jethac/dgx-spark-hijinks
# results/jethac_qwen36_dflash_cleanfa2_sm121a_nothink_*_server.log (Qwen3.6-35B-A3B NVFP4 + its z-lab DFlash drafter,
# 15 speculative tokens, bf16 cache, 262,144, --max-num-batched-tokens 65536, one GPU) prints "Setting attention block
# size to 1168 tokens", "Add 6 padding layers" (10 full-attention layers padded to 16) and "Add 2 padding layers" (30
# DeltaNet layers to 32): groups of 8, the drafter's 8 layers. 62.74 GiB make 1,241,920 tokens, 4.74x: by hand, 8
# tensors of 1168 x 2048-byte pages give 3520 blocks; a request needs 2 full groups x 225 + 4 state groups x (2 + 15) +
# the drafter's group x 225 = 743; 3520 / 743 x 262,144 = 1,241,920. The drafter's layers take the target's 2048 bytes a
# token (4 KV heads x 128; the log does not print its config, but no other width gives these whole numbers).
# The aeon run of the same log set (0.20.1.dev0, the old figure): 62.31 GiB -> 3496 blocks // 7 groups x 1168 = 582,832,
# 3496 / 743 = 4.71x. Breaking it: the drafter's layers counted into the target's FULL kind (one spec) in vllm_layout.
D35 = {"layers": 8, "kv_heads": 4, "head_dim": 128, "window": None}


def test_dflash_drafter_layers_are_a_group_kind_of_their_own():
    page = 1168 * 2048
    assert int(62.74 * GiB // (8 * page)) == 3520
    r = _pool("Qwen/Qwen3.6-35B-A3B", 1, 62.74, "bf16", 262144, D35, 15, 65536)
    assert r["blocks"] == 3520 and r["tokens"] == 1241920 and round(r["concurrency"], 2) == 4.74
    assert r["tokens"] == int(3520 / (2 * 225 + 4 * 17 + 225) * 262144)
    old = _pool("Qwen/Qwen3.6-35B-A3B", 1, 62.31, "bf16", 262144, D35, 15, 65536, from_concurrency=False)
    assert old["tokens"] == 3496 // 7 * 1168 == 582832 and round(old["concurrency"], 2) == 4.71


# 3. club-3090#46 (batch 56; nightly 0.20.1rc1.dev16, the old figure): Qwen3.6-27B int4 at TP 2 on 4090s with the z-lab
# DFlash drafter (5 speculative tokens, the compose at b859630), 180,000 tokens, bf16 cache. The printed 9.74 GiB give
# 'GPU KV cache size: 67,728 tokens' and 1.06x: 5 full-attention drafter layers make groups of 5 (16 full -> 4 groups, 48
# DeltaNet -> 10, the drafter 1), the block 816 (16 x ceil(state page with 3 + 5 conv rows / (16 x 2048))), 1251 blocks;
# 1251 // 15 x 816 = 67,728 and 1251 / (4 x 221 + 10 x 7 + 221) = 1.065. kv without the drafter: 79,184 tokens.
def test_dflash_drafter_pool_of_club3090_46():
    d = {"layers": 5, "kv_heads": 4, "head_dim": 128, "window": None}  # 2048 bytes a token a GPU, the target's
    r = _pool("Qwen/Qwen3.6-27B", 2, 9.74, "bf16", 180000, d, 5, 8192, from_concurrency=False)
    assert r["blocks"] == 1251 and r["tokens"] == 1251 // 15 * 816 == 67728
    assert round(r["concurrency"], 2) == 1.06 and r["concurrency"] == 1251 / (4 * 221 + 10 * 7 + 221)


# 4. A sliding drafter layer holds its window, not the whole length: DFlash2 (incoai/Qwen3.8-27B-DFlash2: 5 sliding
# layers, 2048-token window, 8 KV heads x 128; syv-ai/qwen38-27b-rtx3090 drafter/README.md, single-user/README.md, and
# patches/hybrid-sw-block-promote.patch: 'cdiv(2047 + 4096, 16) + 1 = 385 blocks'). club-3090#1085 (Qwen3.8-27B fp8 at TP
# 2, fp8 cache, 147,456 tokens, 7 speculative tokens) prints 11.15 GiB -> 451,603 tokens, 3.06x. By hand at the row's
# --max-num-batched-tokens 8192: block 1648, 1418 blocks, a request 4 x 90 + 10 x (2 + 7) + (ceil(10239 / 1648) + 1) =
# 458 blocks: 3.096x, 456,534 tokens (+1.1 %); the printed pair is 1418 / 463 exactly, a drafter group of 13 blocks,
# which is the window with 16,384 batched tokens (the compose's default is 8192: not modelled, round 49). Breaking it:
# the DRAFT kind sized as a full layer in vllm_request_blocks.
D38 = {"layers": 5, "kv_heads": 4, "head_dim": 128, "window": 2048}


def test_dflash2_sliding_drafter_layers_hold_their_window():
    r = _pool("Qwen/Qwen3.8-27B", 2, 11.15, "fp8", 147456, D38, 7, 8192)
    assert r["blocks"] == 1418
    need = 4 * math.ceil(147456 / 1648) + 10 * (2 + 7) + math.ceil((2048 - 1 + 8192) / 1648) + 1
    assert need == 458 and r["concurrency"] == 1418 / need and r["tokens"] == int(1418 / 458 * 147456)
    assert abs(r["tokens"] / 451603 - 1) < 0.015
    assert 1418 * 147456 // 463 == 451603  # the printed figure: 5 blocks more a request
    # club-3090#1086 (bf16 cache, 65,536 tokens): block 832, 1405 blocks, 4 x 79 + 10 x 9 + (ceil(10239 / 832) + 1) =
    # 420 a request at 8192; the printed 214,135 tokens, 3.27x are 1405 / 430: 10 blocks more, the window with 16,384
    r = _pool("Qwen/Qwen3.8-27B", 2, 11.15, "bf16", 65536, D38, 7, 8192)
    assert r["blocks"] == 1405 and r["concurrency"] == 1405 / (4 * 79 + 10 * 9 + math.ceil(10239 / 832) + 1) == 1405 / 420
    assert int(1405 / 430 * 65536) == 214135 and math.ceil((2047 + 16384) / 832) + 1 == 14 + 10
    assert math.ceil((2047 + 16384) / 1648) + 1 == 8 + 5


from support.dflash_drafter import plan_1085 as _plan_1085, write_drafter as _write  # noqa: E402


# 5. --speculative-config with a DFlash drafter's config.json: its weights on each GPU (the layers' projections split over
# the GPUs, the fc of 5 taps x 5120 -> 5120 whole on each: ReplicatedLinear) and its layers in the pool. By hand for the
# 16-bit DFlash2 at TP 2: (5 x (5120 x 4096 x 2 + 5120 x 1024 x 2 + 3 x 5120 x 17408) / 2 + 25600 x 5120) x 2 bytes.
# Breaking it: plan_weights not calling vllm_drafter.separate_drafter.
def test_speculative_config_counts_the_drafters_weights_and_layers(tmp_path):
    model = _write(tmp_path)
    base = _plan_1085()
    r = _plan_1085(speculative_config=json.dumps({"method": "dflash", "model": model, "num_speculative_tokens": 7}))
    by_hand = (5 * (5120 * 4096 * 2 + 5120 * 1024 * 2 + 3 * 5120 * 17408) // 2 + 25600 * 5120) * 2
    assert r["weights"] - base["weights"] == by_hand
    assert r["kv_detail"]["pool_args"]["drafter"] == D38
    assert r["kv_detail"]["pool_args"]["spec_tokens"] == 7
    assert r["kv_capacity_tokens"] < base["kv_capacity_tokens"]
    assert f'--speculative-config \'{{"method":"dflash","model":"{model}","num_speculative_tokens":7}}\'' in r["command"]


# 6. What is not read is refused with the reason: a method without a row, no "model", a model path that is no
# config.json, a drafter quantized in a format kv does not read for it (bitsandbytes), an architecture the method does not read, another runtime; method mtp is --mtp-tokens.
def test_speculative_config_refusals_and_mtp(tmp_path):
    for bad, says in (({"method": "draft_model", "model": "x", "num_speculative_tokens": 3}, "not modelled"),
                      ({"method": "dflash", "num_speculative_tokens": 3}, "config.json"),
                      ({"method": "dflash", "model": str(tmp_path / "nope"), "num_speculative_tokens": 3}, "not read"),
                      ({"method": "dflash", "model": _write(tmp_path), "num_speculative_tokens": 0}, "1-16"),
                      ("not json", "JSON object")):
        with pytest.raises(UserError, match=says):
            _plan_1085(speculative_config=bad if isinstance(bad, str) else json.dumps(bad))
    q = tmp_path / "q"
    q.mkdir()
    with pytest.raises(UserError, match="quantization_config"):
        _plan_1085(speculative_config={"method": "dflash", "num_speculative_tokens": 7,
                                       "model": _write(q, quantization_config={"quant_method": "bitsandbytes",
                                                                              "load_in_4bit": True})})
    e = tmp_path / "e"
    e.mkdir()
    with pytest.raises(UserError, match="DFlashDraftModel"):
        _plan_1085(speculative_config={"method": "dflash", "num_speculative_tokens": 7,
                                       "model": _write(e, architectures=["LlamaForCausalLMEagle3"])})
    with pytest.raises(UserError, match="another model"):  # a 5120-wide head for Qwen3-8B (4096)
        llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "vllm", ctx=8192,
                 speculative_config={"method": "dflash", "model": _write(tmp_path), "num_speculative_tokens": 3})
    with pytest.raises(UserError, match="vLLM's"):
        llm.plan(llm.describe(model="Qwen/Qwen3-8B"), "llama.cpp", ctx=4096,
                 speculative_config={"method": "dflash", "model": _write(tmp_path), "num_speculative_tokens": 7})
    mtp = llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=65536, tensor_parallel_size=2,
                   speculative_config={"method": "mtp", "num_speculative_tokens": 3}, vram=23.56 * GiB)
    ref = llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=65536, tensor_parallel_size=2, mtp_tokens=3,
                   vram=23.56 * GiB)
    assert mtp["kv_capacity_tokens"] == ref["kv_capacity_tokens"] and mtp["weights"] == ref["weights"]


# 7. A drafter quantized with compressed-tensors (syv-ai/Qwen3.8-27B-DFlash2-W4A16: int4, groups of 128, symmetric;
# drafter/quant_dflash2.py leaves the modules its ignore list names in bf16) sizes each projection at 4 + 16 / 128
# bits and an ignored fc at 16: by hand at TP 2, 5 x (2 x 5120 x 4096 + 2 x 5120 x 1024 + 3 x 5120 x 17408) x 4.125 / 8
# / 2 + 25600 x 5120 x 2 bytes. Breaking it: the quantization_config's bits or its ignore list not read.
def test_a_w4a16_drafters_projections_at_their_bits(tmp_path):
    qc = {"quant_method": "compressed-tensors", "ignore": ["model.fc"],
          "config_groups": {"group_0": {"targets": ["Linear"], "weights": {"num_bits": 4, "group_size": 128,
                                                                           "symmetric": True, "type": "int"}}}}
    base = _plan_1085()
    r = _plan_1085(speculative_config={"method": "dflash", "num_speculative_tokens": 7,
                                       "model": _write(tmp_path, quantization_config=qc)})
    layers = 5 * (2 * 5120 * 4096 + 2 * 5120 * 1024 + 3 * 5120 * 17408)
    assert r["weights"] - base["weights"] == int(layers * 4.125 / 8 / 2 + 25600 * 5120 * 2)


# review24: a malformed drafter config.json is a UserError naming the field, never a traceback. A dflash_config that is
# no object ('AttributeError: list has no get') and an ignore list given as one name or a number ("ignore": "model.fc"
# was read letter by letter, "ignore": 5 raised TypeError in skip_matcher). Breaking it: read_drafter's two checks out.
def test_malformed_drafter_config_fields_are_user_errors(tmp_path):
    cases = [("list", {"dflash_config": [1, 10, 19]}, "target_layer_ids"),
             ("int", {"quantization_config": {"quant_method": "fp8", "ignore": 5}}, "ignore list"),
             ("str", {"quantization_config": {"quant_method": "fp8", "ignore": "model.fc"}}, "ignore list")]
    for name, fields, says in cases:
        d = tmp_path / name
        d.mkdir()
        with pytest.raises(UserError, match=says):
            _plan_1085(speculative_config={"method": "dflash", "num_speculative_tokens": 7,
                                           "model": _write(d, **fields)})
