"""Task kv65: Qwen3-VL's deepstack in vLLM (the load buffer and the features the tower holds) and
--mm-encoder-tp-mode data, each figure by hand from the source (qwen3_vl.py at a65f93fb2, models/vision.py)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import vllm_activation as VA

GiB = 1024 ** 3
H100 = dict(vram=79.18 * GiB, gpu_name="NVIDIA H100 80GB HBM3")


def _plan(model, **kw):
    kw = {"runtime_version": "0.19.0", "weights_dtype": "bf16", **H100, **kw}
    return llm.plan(llm.describe(model=model), runtime="vllm", ctx=32768, **kw)


# deepstack_input_embeds: one torch.zeros(max_num_batched_tokens, text hidden) a level, bf16, built with the model.
# Qwen3-VL-8B: 3 levels x 4096: going from 8192 to 16384 batched tokens adds 3 x 8192 x 4096 x 2 = 201,326,592 B to the
# weights (nothing else in vLLM's load depends on it); Qwen3.6-27B (deepstack_visual_indexes []) adds nothing.
# Breaking it: the buffer left out, or sized by the tower's out_hidden_size, or by 4-byte values.
def test_deepstack_buffer_is_built_with_the_model():
    a = _plan("Qwen/Qwen3-VL-8B-Instruct", max_num_batched_tokens=8192)
    b = _plan("Qwen/Qwen3-VL-8B-Instruct", max_num_batched_tokens=16384)
    assert b["weights"] - a["weights"] == 3 * 8192 * 4096 * 2 == 201_326_592
    assert "+ 192.00 MiB of deepstack buffer" in a["weights_how"]  # 3 x 8192 x 4096 x 2 = 192 MiB
    c = _plan("Qwen/Qwen3.6-27B", max_num_batched_tokens=8192)
    d = _plan("Qwen/Qwen3.6-27B", max_num_batched_tokens=16384)
    assert d["weights"] == c["weights"] and "deepstack" not in c["weights_how"]


# at 0.11.0 the buffer is built only with the tower (self.visual is not None): text-only mode has neither
def test_no_deepstack_buffer_without_the_tower():
    r = _plan("Qwen/Qwen3-VL-8B-Instruct", max_num_batched_tokens=8192, language_model_only=True)
    assert "deepstack" not in r["weights_how"]
    r = _plan("Qwen/Qwen3-VL-8B-Instruct", max_num_batched_tokens=8192, limit_mm_per_prompt='{"image": 0, "video": 0}')
    assert "deepstack" not in r["weights_how"]


# the features the tower holds through its last blocks: levels x out_hidden_size / merge^2 values a patch.
# 8B: 3 x 4096 / 4 = 3,072; 30B-A3B and 2B: 3 x 2048 / 4 = 1,536; Qwen3.6-27B: none.
def test_deepstack_values_by_hand():
    v = lambda m: llm.describe(model=m).vision  # noqa: E731
    assert VA.deepstack_values(v("Qwen/Qwen3-VL-8B-Instruct")) == 3072
    assert VA.deepstack_values(v("Qwen/Qwen3-VL-30B-A3B-Instruct")) == 1536
    assert VA.deepstack_values(v("Qwen/Qwen3-VL-2B-Instruct")) == 1536
    assert VA.deepstack_values(v("Qwen/Qwen3.6-27B")) == 0


# the 32 B is a plain tower's at one GPU (ENCODER_TP: 1,536 pixels + 1152 + 72 + 11 x 1152 = 15,432 for the
# 1152-wide towers): the 8B at one GPU 18,504 / 15,432; the 30B-A3B at TP 2 (11,976 + 1,536) / 15,432; Qwen3.6 at one
# GPU exactly 1. Breaking it: the deepstack values left out, or put in the denominator too.
def test_encoder_share_counts_the_deepstack_features():
    v = lambda m: llm.describe(model=m).vision  # noqa: E731
    assert VA.encoder_tp_share(v("Qwen/Qwen3-VL-8B-Instruct"), 1) == 18504 / 15432
    assert VA.encoder_tp_share(v("Qwen/Qwen3-VL-30B-A3B-Instruct"), 2) == 13512 / 15432
    assert VA.encoder_tp_share(v("Qwen/Qwen3.6-27B"), 1) == 1.0


# --mm-encoder-tp-mode data at TP 2, Qwen3.6-27B at 65536 batched tokens: vLLM profiles 4 copies of 65,536 patches
# (65536 // 16384). Under weights each rank runs all 4 through its split tower: 4 x 65,536 x 1152 x 32 x 11,976 /
# 15,432; under data the first rank gets ceil(4 / 2) = 2 whole copies through the whole tower: 2 x 65,536 x 1152 x 32
# = 4,831,838,208 B. The tower's weights are whole on each rank: 460,730,096 values (27 blocks x 15,239,504, the patch
# embed 1,770,624, pos_embed 2,654,208, one merger 4608^2 + 4608 + 4608 x 5120 + 5120 = 44,836,352, LayerNorm 2304)
# = 460,730,096 x 2 B = 921,460,192, of which a weights-mode rank holds half.
def test_data_mode_splits_the_copies_not_the_tower():
    spec = llm.describe(model="Qwen/Qwen3.6-27B")
    kw = dict(max_model_len=262144, max_batched=65536, max_seqs=8, version=(0, 23, 1), tp=2)
    assert VA.encoder_peak(spec, **kw) == int(4 * 65536 * 1152 * 32 * 11976 / 15432)
    assert VA.encoder_peak(spec, **kw, tp_mode="data") == 2 * 65536 * 1152 * 32 == 4_831_838_208
    assert VA.encoder_peak(spec, **dict(kw, tp=1), tp_mode="data") == VA.encoder_peak(spec, **dict(kw, tp=1))
    w = _plan("Qwen/Qwen3.6-27B", tensor_parallel_size=2)
    d = _plan("Qwen/Qwen3.6-27B", tensor_parallel_size=2, mm_encoder_tp_mode="data")
    assert abs((d["weights"] - w["weights"]) - 921_460_192 // 2) <= 1  # the total's // 2 rounds
    assert d["command"].endswith("--mm-encoder-tp-mode data") and "--mm-encoder-tp-mode" not in w["command"]


# a tower whose data mode was not read keeps the weights-mode figures (and says so); a value vLLM does not take is
# refused; another runtime does not read the option
def test_data_mode_elsewhere_and_refusals():
    w = _plan("google/gemma-3-27b-it", tensor_parallel_size=2)
    d = _plan("google/gemma-3-27b-it", tensor_parallel_size=2, mm_encoder_tp_mode="data")
    assert (d["weights"], d["overhead"]) == (w["weights"], w["overhead"])
    assert any("sized as weights" in n for n in d["notes"])
    with pytest.raises(UserError, match="weights or data"):
        _plan("Qwen/Qwen3.6-27B", mm_encoder_tp_mode="dp")
    with pytest.raises(UserError):
        llm.plan(llm.describe(model="Qwen/Qwen3.6-27B"), runtime="llama.cpp", ctx=4096, mm_encoder_tp_mode="data")
