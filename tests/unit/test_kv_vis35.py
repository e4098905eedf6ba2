"""Task vis35: the vision tower vLLM loads with Qwen3.5-4B (Qwen3_5ForConditionalGeneration builds self.visual =
Qwen3_VisionTransformer from the config's vision_config unless --language-model-only, vLLM 0.20.2 qwen3_5.py and
interfaces.py _mark_tower_model), counted from the built-in config's vision_config, each figure by hand."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import ollama as OL

# Qwen3.5-4B's tower (depth 24, hidden 1024, intermediate 4096, 16 heads, patch 16, temporal 2, merge 2, out 2560,
# 2304 positions, no deepstack mergers), vLLM 0.20.2 qwen3_vl.py's modules:
#   a block: qkv 1024 x 3072 + 3072, proj 1024 x 1024 + 1024 (4 x 1024^2 + 4 x 1024 = 4,198,400), linear_fc1
#     1024 x 4096 + 4096, linear_fc2 4096 x 1024 + 1024 (8,393,728), norm1 and norm2 2 x 2 x 1024 = 4096: 12,596,224;
#     24 blocks 302,309,376
#   patch_embed Conv3d 3 x 2 x 16 x 16 x 1024 = 1,572,864 + bias 1024; pos_embed 2304 x 1024 = 2,359,296
#   merger: LayerNorm(1024) 2048, linear_fc1 4096 x 4096 + 4096 = 16,781,312, linear_fc2 4096 x 2560 + 2560 =
#     10,488,320
#   302,309,376 + 1,573,888 + 2,359,296 + 2048 + 16,781,312 + 10,488,320 = 333,514,240 values, 667,028,480 B in bf16
TOWER = 333_514_240
# Deliberate errors that break it: depth 27 (or hidden_size 1152) in Qwen3.5-4B.json's vision_config; out_hidden_size
# 2048; a deepstack_visual_indexes entry (one more merger); the vision_config taken out (no tower at all).


def test_qwen35_4b_tower_params_by_hand():
    s = llm.describe(model="Qwen/Qwen3.5-4B")
    assert OL.projector(s)["params"] == 24 * 12_596_224 + 1_573_888 + 2_359_296 + 2048 + 16_781_312 + 10_488_320 \
        == TOWER


# vLLM's weights: the decoder's 4,205,751,296 values (test_llm_arch25) and this tower in bf16, plus the rotary cos/sin
# table. Since task kv66/kv67 that is MRotaryEmbedding's (Qwen 3.5's rope has an mrope_section): 4 x 262,144 positions
# x 64 rotary values (256 x partial_rotary_factor 0.25) x 2 B = 134,217,728 B (128 MiB; 32 MiB before):
# 8,411,502,592 + 667,028,480 + 134,217,728 = 9,212,748,800 B = 8.580 GiB (8.486 before), against the 8.61 GiB vLLM
# 0.29.0 printed (waired-agent 0300-mtp @222514f6, llm_measured.json row 1374). With --language-model-only the tower
# goes (vLLM builds it under _mark_tower_model, replaced by StageMissingLayer when every modality's limit is 0).
# Breaking it: plan_weights.towers_and_shards' vLLM branch not adding the tower (the first), or _drop_tower_or_state
# keeping spec.vision under --language-model-only (the second).
def test_vllm_loads_the_tower_unless_language_model_only():
    s = llm.describe(model="Qwen/Qwen3.5-4B")
    kw = dict(ctx=262144, weights_dtype="bf16", kv_dtype="fp8", runtime_version="0.29.0")
    r = llm.plan(s, "vllm", **kw)
    assert r["weights"] == 4_205_751_296 * 2 + 2 * TOWER + 262_144 * 4 * 64 * 2 == 9_212_748_800
    lmo = llm.plan(s, "vllm", language_model_only=True, **kw)
    assert r["weights"] - lmo["weights"] == 2 * TOWER == 667_028_480


# The output names the tower and the flag that skips it (vLLM only: SGLang's flags were not read). Breaking it: the
# "of vision tower" part of the weights line, or the note's "--language-model-only skips it", taken out.
def test_the_output_names_the_tower_and_its_skip_flag():
    s = llm.describe(model="Qwen/Qwen3.5-4B")
    r = llm.plan(s, "vllm", ctx=8192, weights_dtype="bf16")
    assert "+ 636.13 MiB of vision tower" in r["weights_how"]
    note = next(n for n in r["notes"] if n.startswith("vision tower counted with the weights"))
    assert "(636.13 MiB in 16 bits)" in note and "--language-model-only skips it" in note  # 667,028,480 / 2^20
    sg = llm.plan(s, "sglang", ctx=8192, weights_dtype="bf16")
    sg_note = next(n for n in sg["notes"] if n.startswith("vision tower counted with the weights"))
    assert "SGLang loads it" in sg_note and "--language-model-only" not in sg_note


# Review rev55: the tower's provenance (a fine-tune's transcribed config, not Qwen's file) was in the JSON's _source and
# docs/kv-accuracy.md only; kv's notes now say it where a user reads the figure. Breaking it: the _notes entry of
# Qwen3.5-4B.json taken out (checked: this test fails on the vis35 merge).
def test_the_towers_borrowed_config_is_said_in_the_notes():
    notes = llm.plan(llm.describe(model="Qwen/Qwen3.5-4B"), "vllm", ctx=8192, weights_dtype="bf16")["notes"]
    assert any("fine-tune's config.json" in n and "not Qwen's own file" in n for n in notes)
