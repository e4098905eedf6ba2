"""vLLM's prefix caching on a hybrid model (task kvhyb): which state pages a request holds and, for a Mamba-2 hybrid,
how the attention block is sized. Expected values are worked by hand below from vLLM's source as read in the PyPI
wheels (0.11.0, 0.14.1, 0.15.0, 0.19.1, 0.20.0) and 1CatAI/1Cat-vLLM at ae13773a0; each test fails with the change
reverted (runtimes/vllm_hybrid.py, cache.vllm_layout's "all" block, cache.vllm_request_blocks' page per block)."""
import json
from dataclasses import replace
from pathlib import Path

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import cache, vllm_max_len
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.spec import from_config

GiB = 1 << 30
NANO = Path(__file__).resolve().parents[2] / "memory" / "llm" / "models" / "NVIDIA-Nemotron-3-Nano-30B-A3B.json"


def _nano(chunk=128):
    # Nemotron-3-Nano-30B-A3B: 6 attention layers (2 KV heads x 128), 23 Mamba-2 layers (64 heads x 64, 8 groups,
    # d_state 128, conv kernel 4, mamba_ssm_cache_dtype float32); chunk_size is the test's input (kv's copy of the
    # config carries 128; chunk=None drops it)
    cfg = json.loads(NANO.read_text())
    cfg.pop("chunk_size", None)
    if chunk:
        cfg["chunk_size"] = chunk
    return from_config(cfg)


def test_the_cache_mode_follows_the_release():
    # MambaModelConfig.verify_and_update_config (vllm/model_executor/models/config.py):
    #   0.11.0 line 297 "Hybrid or mamba-based model detected: disabling prefix caching" -> "none" for every hybrid;
    #   0.14.1 lines 333-347: a SupportsMambaPrefixCaching class (NemotronHForCausalLM) keeps it, any other hybrid
    #     (Qwen3-Next / Qwen 3.5+ gated DeltaNet) has it disabled -> "all" / "none";
    #   0.15.0 lines 333-353: "all" if supports_mamba_prefix_caching else "align";
    #   0.19.1: still "all" with speculative decoding; 0.20.0 lines 352-360 (vllm#40454): "align" when
    #     speculative_config is not None.
    from gpu_garden.memory.llm.runtimes.vllm_hybrid import mamba_cache_mode
    nano, qwen = _nano(), llm.describe(model="Qwen/Qwen3.6-27B")
    on = dict(prefix_caching=True)
    assert mamba_cache_mode(nano, dict(on, version=(0, 11, 0))) == "none"
    assert mamba_cache_mode(nano, dict(on, version=(0, 14, 1))) == "all"
    assert mamba_cache_mode(qwen, dict(on, version=(0, 14, 1))) == "none"
    assert mamba_cache_mode(qwen, dict(on, version=(0, 15, 0))) == "align"
    assert mamba_cache_mode(nano, dict(on, version=(0, 15, 0))) == "all"
    assert mamba_cache_mode(nano, dict(on, version=(0, 19, 1), spec_tokens=3)) == "all"
    assert mamba_cache_mode(nano, dict(on, version=(0, 20, 0), spec_tokens=3)) == "align"
    assert mamba_cache_mode(nano, dict(version=(0, 20, 0))) == "none"


def test_all_mode_aligns_the_block_to_the_chunk_and_pages_the_state_per_block():
    # Page of one Mamba-2 layer (mamba2_state_shape): conv 3 x (64 x 64 + 2 x 8 x 128) = 18,432 bf16 values = 36,864
    # bytes, temporal state 64 x 64 x 128 = 524,288 float32 = 2,097,152 bytes: 2,134,016. Attention: 2 x 128 x 2 x 2 =
    # 1024 bytes a token.
    # "none" (0.20.0 platforms/interface.py line 597): 16 x cdiv(2,134,016, 16 x 1024) = 16 x 131 = 2096 tokens.
    # "all" (lines 585-595): cdiv(2,134,016, 1024) = 2084 tokens a state; chunk lcm(128, 16) = 128; 128 x cdiv(2084,
    # 128) = 128 x 17 = 2176 tokens, a page of 2176 x 1024 = 2,228,224 bytes.
    # Groups: 6 attention and 23 Mamba layers, groups of 6 (23 >= 1.25 x 6): 1 + 4 groups, 6 tensors.
    # 10 GiB: 10,737,418,240 // (6 x 2,228,224) = 803 blocks. A request of 32,768 tokens (MambaSpec.
    # max_memory_usage_bytes in "all": cdiv(max_model_len, block_size) pages, 0.15.0 kv_cache_interface.py line 296):
    # cdiv(32768, 2176) = 16 attention pages + 4 x 16 state pages = 80; 803 / 80 = 10.0375x.
    # Printed tokens: before vllm#41069 803 // 5 x 2176 = 348,160; after it int(10.0375 x 32768) = 328,908.
    # Without "all": 10 GiB // (6 x 2096 x 1024) = 833 blocks, 16 + 4 = 20 a request, 41.65x.
    nano = _nano()
    assert 2176 * 1024 == 2228224 and 10 * GiB // (6 * 2228224) == 803 and int(803 / 80 * 32768) == 328908
    lay = cache.vllm_layout(replace(nano, mamba_cache_all=True), "f16")
    assert (lay["block"], lay["page"], lay["groups"], lay["size"]) == ({"full": 2176, "mamba": 2176}, 2228224,
                                                                      {"full": 1, "mamba": 4}, 6)
    old = cache.vllm_pool(replace(nano, mamba_cache_all=True), 10 * GiB, "f16", 32768)
    new = cache.vllm_pool(replace(nano, mamba_cache_all=True), 10 * GiB, "f16", 32768, tokens_from_concurrency=True)
    assert (old["blocks"], old["tokens"], old["concurrency"]) == (803, 348160, 803 / 80)
    assert new["tokens"] == 328908
    plain = cache.vllm_pool(nano, 10 * GiB, "f16", 32768)
    assert (plain["blocks"], plain["concurrency"]) == (833, 833 / 20)


def test_all_mode_estimate_counts_a_state_page_per_block():
    # estimate_max_model_len over every layer's own spec: 2 GiB // 2,228,224 = 963 pages for 29 layers, each needing
    # cdiv(len, 2176) of them in "all" mode: 963 // 29 = 33 pages, 33 x 2176 = 71,808 tokens. Without "all": 6 x
    # cdiv(len, 2096) + 23 <= 2 GiB // 2,146,304 = 1000 -> cdiv <= 162, all of 262,144 (162 x 2096 = 339,552) fits.
    nano = _nano()
    assert (2 * GiB) // 2228224 == 963 and 963 // 29 * 2176 == 71808
    assert vllm_max_len.vllm_estimated_max_len(replace(nano, mamba_cache_all=True), 2 * GiB, "f16", 262144) == 71808
    assert vllm_max_len.vllm_estimated_max_len(nano, 2 * GiB, "f16", 262144) == 262144


def test_the_plan_applies_the_mode():
    # A gated-DeltaNet model with --enable-prefix-caching: prefix caching off before 0.15.0 (one state page a
    # request), "align" from it (two). A Mamba-2 hybrid asking for it from 0.11.1 is refused when the config kv read
    # gives no chunk size, the block's unit in "all" mode (rev11 S2: a Nemotron-H or Granite 4.0-H config takes its
    # config class's default, so the refusal is shown on Jamba's, whose JambaConfig has no chunk size, rev12 S2); without
    # the flag it is planned as before.
    def plan(model, v, **kw):
        return llm.plan(llm.describe(model=model), "vllm", ctx=32768, vram=79.2 * GiB, gpu_name="NVIDIA H100 80GB HBM3",
                        runtime_version=v, **kw)
    assert plan("Qwen/Qwen3.6-27B", "0.14.1", prefix_caching=True)["kv_detail"]["pool_args"]["state_blocks"] == 1
    assert plan("Qwen/Qwen3.6-27B", "0.15.0", prefix_caching=True)["kv_detail"]["pool_args"]["state_blocks"] == 2
    with pytest.raises(UserError, match="mamba_cache_mode 'all'"):
        llm.plan(replace(_nano(), arch="jamba", mamba_chunk=0), "vllm", ctx=32768, vram=79.2 * GiB,
                 gpu_name="NVIDIA H100 80GB HBM3", runtime_version="0.15.0", prefix_caching=True)  # no chunk size
    # Nemotron-3-Nano's built-in config carries chunk_size 128 (its source fixture lists it): planned in "all" mode.
    assert plan("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B", "0.15.0", prefix_caching=True)["kv_detail"]["mamba_cache_all"]
    assert plan("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B", "0.15.0")["kv_detail"]["pool_args"]["state_blocks"] == 1


def test_the_chunk_size_is_read_from_the_config():
    # vLLM ModelConfig.get_mamba_chunk_size: mamba_chunk_size (Bamba, Granite), else chunk_size (Mamba2, NemotronH)
    # (rev11 S2) none given: NemotronHConfig's chunk_size default, 128
    assert _nano(chunk=256).mamba_chunk == 256 and _nano(chunk=None).mamba_chunk == 128


def test_a_config_with_its_chunk_size_is_planned_in_all_mode(tmp_path):
    # The same model from a config.json carrying chunk_size 256 (rev11 D1: the built-in config carries 128 since
    # bf574e36, so 256 covers the lcm step), vLLM 0.15.0 with --enable-prefix-caching: the unit lcm(256, 16) = 256,
    # the block 256 x cdiv(2,134,016, 256 x 1,024) = 256 x 9 = 2304 tokens, pages 2304 x 1,024 = 2,359,296 B (6
    # tensors); a request of 32,768 tokens cdiv(32768, 2304) = 15 attention + 4 x 15 state pages = 75 blocks; kv_detail
    # says "all" for the bench's block arithmetic (llm_score).
    cfg = json.loads(NANO.read_text())
    cfg["chunk_size"] = 256
    path = tmp_path / "config.json"
    path.write_text(json.dumps(cfg))
    r = llm.plan(llm.describe(config=str(path)), "vllm", ctx=32768, vram=79.2 * GiB, gpu_name="NVIDIA H100 80GB HBM3",
                 runtime_version="0.15.0", prefix_caching=True)
    assert r["kv_detail"]["mamba_cache_all"] is True and r["kv_detail"]["pool_args"]["state_blocks"] == 1
    # (rev12 D3: worked here, not asserted) a page 2304 x 1,024 = 2,359,296 B; 32,768 tokens take 15 blocks of 2304
    # (14 x 2304 = 32,256 < 32,768 <= 34,560 = 15 x 2304), 75 over the 5 groups
    # blocks = the pool // (6 x 2,359,296); printed tokens (before vllm#41069) blocks // 5 groups x 2304; a request
    # 75 blocks of 6 pages: 1,061,683,200 bytes
    blocks = r["kv_capacity_bytes"] // (6 * 2359296)
    assert r["kv_capacity_tokens"] == blocks // 5 * 2304 and r["concurrency"] == blocks / 75
    assert r["kv_request_bytes"] == 75 * 6 * 2359296 == 1061683200


def test_align_with_speculative_decoding_does_not_start_on_0_15_and_0_16():
    # 0.15.0 / 0.16.0 config.py lines 357-360: `assert not vllm_config.speculative_config, "Mamba cache mode 'align' is
    # currently not compatible with speculative decoding."` under mamba_cache_mode "align"; 0.17.0 has no such assert.
    def plan(v, **kw):
        return llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=32768, vram=79.2 * GiB, mtp_tokens=3,
                        gpu_name="NVIDIA H100 80GB HBM3", runtime_version=v, **kw)
    for v in ("0.15.0", "0.16.0"):
        with pytest.raises(UserError, match="not compatible with speculative decoding"):
            plan(v, prefix_caching=True)
        assert plan(v)["kv_detail"]["pool_args"]["state_blocks"] == 1
    assert plan("0.17.0", prefix_caching=True)["kv_detail"]["pool_args"]["state_blocks"] == 2
