"""kv-accuracy round 80 (task ellm58): batch 82's Gemma-4-E2B vLLM rows on a T4 (xbill9/gemma4-dev) after round 78.
Three readings, each from a source or a printed line; the figures are worked by hand in the comments.

- Gemma-4-E2B's towers, as its config.json gives them (models/Gemma-4-E2B.json): vision_config 16 x 768 (12 heads x 64,
  intermediate 3072, patch 16, pooling 3, position table 10240), audio_config 12 conformer layers x 1024 (8 heads,
  subsampling channels [128, 32], kernel 5, output_proj_dims 1536). vLLM's gemma4_mm.py builds both with the weights
  (AutoModel.from_config) and the checkpoint keeps them in 16 bits.
- Not a multimodal prefix-LM: E2B's text_config has no use_bidirectional_attention "vision" (26B-A4B and 31B do), so
  vLLM 0.30.0 keeps its 2048-token batch with both towers loaded ('compile_ranges_endpoints': [2048]).
- From vLLM 0.26.0 a sliding-window group keeps a request's pages for every batch in flight
  (VllmConfig.max_in_flight_tokens = 2 x max_num_batched_tokens under async scheduling): (511 + 4096) / 32 + 1 = 145
  blocks in each E2B sliding layer, which the T4 (0.29.0) and L4 (0.30.0) pools print; gpt-oss-20b's 0.30.0 pinned
  6 GiB pool prints 246,214 tokens, (127 + 4096) / 16 + 1 = 265 blocks a sliding layer.
"""
from gpu_garden.memory.llm import gemma4_ple as G4
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.runtimes import ollama as OL
from gpu_garden.memory.units import GiB

E2B = "google/gemma-4-E2B-it"
MiB = 1 << 20
T4 = dict(vram=14.75 * GiB, gpu_name="Tesla T4", gpu_memory_utilization=0.9, max_num_seqs=8)


def _t4(weights_dtype, version="0.29.0", **kw):
    return llm.plan(llm.describe(model=E2B), "vllm", ctx=16384, weights_dtype=weights_dtype, runtime_version=version,
                    **dict(T4, **kw))


# vision: 16 x (4 x 768 x 768 + 3 x 768 x 3072 + 4 x 768) = 151,044,096, patch 3 x 16 x 16 x 768 = 589,824, positions
# 2 x 10240 x 768 = 15,728,640, projection 768 x 1536 = 1,179,648: 168,542,208 values, 337,084,416 bytes in 16 bits
def test_the_vision_tower_is_e2b_own():
    s = llm.describe(model=E2B)
    assert (s.vision["hidden_size"], s.vision["num_hidden_layers"], s.vision["intermediate_size"]) == (768, 16, 3072)
    assert OL.projector(s)["params"] == 168_542_208 and OL.projector(s)["weights"] == 337_084_416


# audio: a conformer block is two feed-forwards 2 x (8 d^2 + 2 d), attention 5 d^2 + 2 d + 128 (per_dim_scale), the
# light conv 3 d^2 + 2 d + 5 d, and a norm d: 24 d^2 + 14 d + 128 = 25,180,288 at d = 1024, x 12 = 302,163,456;
# subsampling 9 x 128 + 128 + 9 x 128 x 32 + 32 + 32 x 32 x 1024 = 1,086,752 (128 mel bins -> 64 -> 32); output_proj
# 1024 x 1536 + 1536 = 1,574,400; embed_audio 1536 x 1536 = 2,359,296: 307,183,904 values
def test_the_audio_tower_as_the_conformer_builds_it():
    s = llm.describe(model=E2B)
    assert s.audio["model_type"] == "gemma4_audio"
    assert G4.audio_tower_params(s.audio, s.hidden) == 307_183_904


# the fp16 row: 'Model loading took 9.8 GiB' (REPORT.md); kv 9.76 GiB with both towers (8.88 before, -9.4 %)
def test_vllm_loads_both_towers_with_the_weights():
    r = _t4("fp16")
    assert r["weights"] - _t4("fp16", language_model_only=True)["weights"] == 337_084_416 + 2 * 307_183_904
    assert abs(r["weights"] / GiB - 9.8) < 0.05
    assert any("audio tower counted" in n for n in r["notes"])
    lm = _t4("fp16", language_model_only=True)
    assert any("no vision or audio tower" in n for n in lm["notes"])


# vLLM 0.30.0 on an L4 with both towers: 'compile_ranges_endpoints': [2048] and no 'Raising max_num_batched_tokens'
# line, so the per_layer_embeddings buffer is 2048 x 35 x 256 x 2 bytes = 35 MiB; the 26B-A4B (use_bidirectional_
# attention "vision") still takes the 2496-token video item from 0.25.1
def test_e2b_is_no_prefix_lm_the_26b_is():
    assert not llm.describe(model=E2B).mm_prefix_lm and llm.describe(model="google/gemma-4-26B-A4B-it").mm_prefix_lm
    r = _t4("w4a16", version="0.30.0")
    assert any("max_num_batched_tokens 2048 x 35 layers x 256 (35.00 MiB)" in n for n in r["notes"])
    big = llm.plan(llm.describe(model="google/gemma-4-26B-A4B-it"), "vllm", ctx=8192, runtime_version="0.25.1",
                   vram=121.63 * GiB, gpu_name="NVIDIA GB10", gpu_memory_utilization=0.85)
    assert big["kv_request_bytes"] > llm.plan(llm.describe(model="google/gemma-4-26B-A4B-it"), "vllm", ctx=8192,
                                              runtime_version="0.25.1", vram=121.63 * GiB, gpu_name="NVIDIA GB10",
                                              gpu_memory_utilization=0.85, max_num_batched_tokens=2048)["kv_request_bytes"]


# a request's pages: 3 full layers x 1024 blocks of 16 and 12 sliding layers x ((511 + slack) / 32 + 1), 32 KiB each;
# the T4 log's 4.66 GiB over 31.72x is 157.75 MB a request = 145 sliding blocks (slack 2 x 2048), not 81 (one batch)
def test_sliding_layers_keep_every_batch_in_flight_from_0_26():
    assert _t4("w4a16")["kv_request_bytes"] == (3 * 1024 + 12 * 145) * 32768
    assert _t4("w4a16", version="0.25.1")["kv_request_bytes"] == (3 * 1024 + 12 * 81) * 32768
    assert _t4("w4a16", version=None)["kv_request_bytes"] == (3 * 1024 + 12 * 145) * 32768  # none named: the newest (dsv4d)
    printed = 4.66 * GiB / (519_681 / 16384)
    assert abs(_t4("w4a16")["kv_request_bytes"] - printed) < 0.002 * printed


# the T4 QAT row's printed pool, 4.66 GiB: kv's tokens from it are 519,905 against the printed 519,681 (one block's
# rounding of the printed GiB), 618,641 with one batch
def test_tokens_from_the_printed_pool():
    from gpu_garden.memory.llm.cache import vllm_pool
    r = _t4("w4a16")
    args = dict(r["kv_detail"]["pool_args"])
    got = vllm_pool(llm.describe(model=E2B), 4.66 * GiB, "f16", 16384, **args)["tokens"]
    assert abs(got - 519_681) < 0.001 * 519_681


# gpt-oss-20b, vLLM 0.30.0, --kv-cache-memory-bytes 6 GiB, batch 2048 (alpharomercoma REPORT: 246,214 tokens): 12 full
# layers x 4096 blocks of 16 and 12 sliding (128) layers x ((127 + 4096) / 16 + 1 = 265); 253,659 with one batch
def test_gpt_oss_pinned_pool_at_0_30():
    def tokens(v):
        return llm.plan(llm.describe(model="openai/gpt-oss-20b"), "vllm", ctx=65536, runtime_version=v,
                        kv_cache_memory=6442450944, max_num_seqs=16, max_num_batched_tokens=2048,
                        vram=23.55 * GiB, gpu_name="NVIDIA GeForce RTX 4090")["kv_capacity_tokens"]
    assert tokens("0.30.0") == 246_214
    assert tokens("0.25.1") == 253_659
