"""GLM-4.7-Flash on Ollama's own engine (glm4moelite): from 0.15.0 it caches the MLA latent, keys of rope 64 + latent 512
values and the latent again as values, one head (model/models/glm4moelite nn.AttentionWithVMLA; kvcache/causal.go
Zeros(kHeadDim, numKVHeads, cells)); 0.14.3 cached 20 heads of K 192 + 64 and V 256. Figures by hand on the config:
47 layers, kv_lora_rank 512, qk_rope 64, qk_nope 192, v_head 256, 20 heads."""
from gpu_garden.memory.llm import kv as llm

GiB = 1024 ** 3


def _plan(ctx, version, vram=None):
    spec = llm.describe(model="glm-4.7-flash:latest")
    return llm.plan(spec, runtime="ollama", ctx=ctx, runtime_version=version, vram=vram)


def test_latent_cache_from_015():
    assert _plan(32768, "0.17.0")["kv_total"] == 47 * (576 + 512) * 2 * 32768 == 3_351_248_896


def test_per_head_cache_before_015():
    assert _plan(32768, "0.14.3")["kv_total"] == 47 * 20 * (192 + 64 + 256) * 2 * 32768


def test_no_version_is_the_newest_engine():
    assert _plan(32768, None)["kv_total"] == 47 * 1088 * 2 * 32768


def test_csatarij_ps_sizes_differ_by_the_latent_cache():
    # csatarij.github.io _topics/ollama_at_home.md (RTX 3090, the same weights): ollama ps SIZE 22 GB at num_ctx 32768,
    # 29 GB at 96000 (decimal GB, rounded: a difference of 6 to 8 GB). The latent + values cache gives 6.5 GB for the
    # 63,232 more tokens; the latent alone would give 3.4 GB, the per-head cache 60 GB
    grow = _plan(96000, None)["kv_total"] - _plan(32768, None)["kv_total"]
    assert grow == 47 * 1088 * 2 * (96000 - 32768)
    assert 6e9 <= grow <= 8e9


def test_fits_a_3090_at_32k_with_the_latent_cache():
    # the same page: 100 % GPU at 32768 on a 24 GB card (23.6 GiB as Ollama sees it)
    assert _plan(32768, None, 23.6 * GiB)["fits"] is True
