"""Review rev58 (ltx58, kv59, rev57): each test fails on the code before its fix; each names the deliberate error that
breaks it (checked by reverting). Figures by hand from ComfyUI 0.8.0's source."""
import json

from support.cli_run import estimate


def ltx2(capsys) -> dict:
    rc, out, _ = estimate(capsys, "ltx-2", "--json")
    assert rc == 0
    return json.loads(out)


# LTX-2's text encoder as ComfyUI keeps it (issue 15). LTXAVTextEncoderLoader hands the Gemma file and the LTX-2
# checkpoint to load_clip, whose one ModelPatcher holds LTXAVTEModel (comfy/text_encoders/lt.py:60-87): Gemma3_12B
# (12,187,325,040 parameters with its SigLIP tower and projector, te_gemma_3_12b_it) and, built at fixed sizes whatever
# the file says, text_embedding_projection Linear(3840 x 49, 3840), no bias: 722,534,400; and two
# Embeddings1DConnector (embeddings_connector.py, lt.py's defaults: 30 heads x 128 = 3840 wide, 2 blocks, 128
# registers): per block attn1 4 x (3840^2 + 3840) + q_norm, k_norm 2 x 3840 = 59,005,440 and ff 3840 -> 15360 -> 3840
# with biases 117,984,000, so 176,989,440; two blocks 353,978,880 + registers 128 x 3840 = 491,520: 354,470,400 each.
# All BF16 (ltxav_te: dtype = dtype_llama): (12,187,325,040 + 722,534,400 + 2 x 354,470,400) x 2 = 27,237,600,480 B.
# Breaks if the projection and connectors are left out (the old code: 24,374,650,080, Gemma alone).
def test_ltx2_text_encoder_counts_what_comfyui_keeps(capsys):
    j = ltx2(capsys)
    assert 722_534_400 + 2 * 354_470_400 == 1_431_475_200
    assert j["weights"]["text_encoders"] == (12_187_325_040 + 1_431_475_200) * 2 == 27_237_600_480
    assert j["breakdown"]["text_encode"]["weights"] == 27_237_600_480


# The text encode's activations: LTXAVTEModel.encode_token_weights runs text_embedding_projection (a Linear,
# lt.py:70, 3840 x 188160) on Gemma's hidden states as float32 (sd1_clip.py:273 .float(), lt.py:100-104) under
# manual_cast (sd1_clip.py:117): its BF16 weight is cast to a float32 copy, 722,534,400 x 4 = 2,890,137,600 B, while
# it runs. phases.te_dims took the projection for an embedding table ("embed" in its name) and counted Gemma's largest
# Linear (15360 x 3840) instead: 252,523,315 B in all. The token terms beside the copy are a few MB (128 tokens).
# Breaks if the projection is skipped again (the old te_dims: 252,523,315).
def test_ltx2_text_encode_holds_the_projections_fp32_copy(capsys):
    act = ltx2(capsys)["breakdown"]["text_encode"]["activations"]
    assert 2_890_137_600 <= act < 2_890_137_600 + 16 * 2**20, act


# The text quotes ComfyUI's memory_usage_factor: LTX-2's is 0.055 (supported_models.py:848); two decimals printed it
# as 0.06, a factor ComfyUI does not have. Breaks with the old ".2f" (factor 0.06).
def test_comfyui_factor_printed_as_comfyui_has_it(capsys):
    from support.cli_run import flat
    rc, out, _ = estimate(capsys, "ltx-2")
    assert rc == 0 and "ComfyUI's own memory_required (factor 0.055):" in flat(out)


# kv59's item count: vLLM's _get_max_items (encoder_budget.py, 0.20.2) floors the items a prompt may hold at one,
# max_items_per_prompt = max(1, min(mm_limit, max_model_len // T)), before it multiplies by max_num_seqs. With an
# item longer than max_model_len (T 4096, max_model_len 2048) a prompt still holds 1, so the decoder's cap is 256 x 1
# and the encoder budget's 16384 // 4096 = 4 items decide: N = 4. test_kv_kv59 left this floor unguarded (each of
# its five tests passed with it removed). Breaks if the per-prompt count is not floored (0 x 256 = 0 -> N = 1).
def test_profile_items_per_prompt_floor():
    from gpu_garden.memory.llm.runtimes import vllm_activation as VA
    assert VA.profile_items(4096, 16384, 256, 2048) == 4
    assert VA.profile_items(4096, 16384, 2, 2048) == 2  # the decoder's cap, 2 sequences x 1 item
