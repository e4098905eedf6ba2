"""Task dfl49: a published DFlash drafter named by its Hub repo id (vLLM's --speculative-config as club-3090's composes
pass it) is read from kv's table (runtimes/vllm_drafter.PUBLISHED), its weights and KV layers counted; another repo id
is refused naming the file to fetch. Expected values are worked here by hand from the drafter's geometry (5 layers,
hidden 5120, 32 heads, 8 KV heads x 128, MLP 17408, an fc over 5 taps) and the runs' printed figures, not taken from
kv. Each test fails on the code before it (the repo id was refused: "kv describes no drafter by name")."""
import math

import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import cache
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm_drafter
from gpu_garden.memory.units import GiB

REPO = "z-lab/Qwen3.6-27B-DFlash"
SPEC5 = {"method": "dflash", "model": REPO, "num_speculative_tokens": 5}
V020 = (0, 20, 2)  # the club-3090 runs' vLLM: before 0.24 its 4 sliding + 1 full layers are sized all full (rev25 B1)


def _club3090_76(**knobs):
    # club-3090#76: Qwen3.6-27B int4 AutoRound at TP 2 on 3090s, 200,000 tokens, 16-bit cache, the dual-dflash-noviz
    # compose (0.95, one sequence, 8192 batched tokens, --language-model-only, prefix caching), nightly 0.20.2rc1
    return llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), "vllm", ctx=200000, weights_dtype="auto_round",
                    tensor_parallel_size=2, gpu_memory_utilization=0.95, max_num_seqs=1, max_num_batched_tokens=8192,
                    language_model_only=True, gpu_name="NVIDIA GeForce RTX 3090", prefix_caching=True,
                    runtime_version="0.20.2rc1.dev9+g01d4d1ad3", vram=23.56 * GiB, **knobs)


# 1. Weights on each GPU at TP 2, bf16: a layer's q 5120 x 4096 + k, v 2 x 5120 x 1024 + o 4096 x 5120 + gate, up, down
# 3 x 5120 x 17408 = 20,971,520 + 10,485,760 + 20,971,520 + 267,386,880 = 319,815,680 values; 5 layers x 2 bytes / 2
# GPUs = 1,599,078,400; the fc (5 taps x 5120 -> 5120) whole on each GPU: 25,600 x 5120 x 2 = 262,144,000; together
# 1,861,222,400 B (the checkpoint's 3.46 GB in bf16 is the 3,198,156,800 of its layers + the fc + norms). Breaking it:
# the table's num_hidden_layers 4, intermediate_size or target_layer_ids changed, or the table left out (refused).
def test_the_27b_drafter_is_read_by_its_repo_id():
    g = vllm_drafter.read_drafter("dflash", REPO, V020)
    assert (g["layers"], g["kv_heads_total"], g["head_dim"], g["window"]) == (5, 8, 128, None)
    assert g["fc_in"] == 5 * 5120 and REPO in g["path"]
    per_layer = 5120 * 4096 + 2 * 5120 * 1024 + 4096 * 5120 + 3 * 5120 * 17408
    assert per_layer == 319815680
    assert vllm_drafter.weight_bytes(g, 2) == 5 * per_layer * 2 // 2 + 25600 * 5120 * 2 == 1861222400
    assert vllm_drafter.drafter_for_rank(g, 2) == {"layers": 5, "kv_heads": 4, "head_dim": 128, "window": None}


# 2. The pool of club-3090#76 with the drafter: its 5 full layers of 4 KV heads x 128 a GPU (2 x 4 x 128 x 2 = 2048 B a
# token, the target's full layer: 2 x 2 x 256 x 2) are a group kind of their own: groups of 5 (16 full -> 4, 48
# DeltaNet -> 10, the drafter 1), the block 816 tokens as in club-3090#46 (same model, TP and 5 speculative tokens),
# a block 5 x 816 x 2048 = 8,355,840 B of pool. The printed 10.36 GiB hold 1331 blocks; a request needs 4 x
# ceil(200000 / 816) + 10 x (2 + 5) + ceil(200000 / 816) = 984 + 70 + 246 = 1300; 0.20.2rc1 prints concurrency x
# length: 1331 / 1300 x 200,000 = 204,769 (printed: 204,615 = 1330 / 1300, 1.02x; 10.36 is rounded). kv without the
# drafter printed 419,847 at its own 13.16 GiB (+105 %). Breaking it: separate_drafter's s.update(drafter=...) left
# out, or the table's num_key_value_heads 4.
def test_the_27b_drafter_pool_of_club3090_76_by_hand():
    d = vllm_drafter.drafter_for_rank(vllm_drafter.read_drafter("dflash", REPO, V020), 2)
    spec = llm.vllm_per_rank(llm.describe(model="Qwen/Qwen3.6-27B"), 2)
    r = cache.vllm_pool(spec, 10.36 * GiB, "bf16", 200000, max_batched=8192, spec_tokens=5,
                        tokens_from_concurrency=True, drafter=d, state_blocks=2)
    assert int(10.36 * GiB // (5 * 816 * 2048)) == 1331 == r["blocks"]
    need = 4 * math.ceil(200000 / 816) + 10 * (2 + 5) + math.ceil(200000 / 816)
    assert need == 1300 and r["tokens"] == int(1331 / 1300 * 200000) == 204769
    assert int(1330 / 1300 * 200000) == 204615 and round(1330 / 1300, 2) == 1.02   # the printed pair
    # the whole plan with the repo id: the drafter's weights added (test 1) and its layers in the pool
    base, with_d = _club3090_76(), _club3090_76(speculative_config=SPEC5)
    assert with_d["weights"] - base["weights"] == 1861222400
    assert with_d["kv_detail"]["pool_args"]["drafter"] == d
    assert any("z-lab/Qwen3.6-27B-DFlash, kv's table" in n for n in with_d["notes"])


# 3. A repo id outside the table is refused, naming the drafters kv knows and the file to fetch; a local folder of that
# name still wins over the table (its own config.json is read). Breaking it: _drafter_config returning the table's
# entry before looking for a local path, or NOT_LOCAL without the known names.
def test_an_unknown_repo_id_is_refused_and_a_local_folder_is_read_first(tmp_path, monkeypatch):
    with pytest.raises(UserError) as e:
        vllm_drafter.read_drafter("dflash", "z-lab/Qwen3-8B-DFlash-b16")
    assert "z-lab/Qwen3.6-27B-DFlash" in str(e.value) and "download its config.json" in str(e.value)
    local = tmp_path / "z-lab" / "Qwen3.6-27B-DFlash"
    local.mkdir(parents=True)
    (local / "config.json").write_text('{"architectures": ["DFlashDraftModel"], "hidden_size": 5120, '
                                       '"num_hidden_layers": 2, "num_attention_heads": 32, "num_key_value_heads": 8, '
                                       '"head_dim": 128, "intermediate_size": 17408, '
                                       '"dflash_config": {"target_layer_ids": [1, 61]}}')
    monkeypatch.chdir(tmp_path)
    assert vllm_drafter.read_drafter("dflash", REPO)["layers"] == 2
