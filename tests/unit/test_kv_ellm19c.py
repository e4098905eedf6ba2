"""The context each runtime picks when --ctx is not given, by version and card (plan.DEFAULT_CTX), from the sources:
ollama/ollama envconfig/config.go (2048 -> 4096 in 0.6.7, 44b466eeb), server/routes.go Serve (the VRAM tiers of
0334ffa62, first tagged v0.15.5) and scheduleRunner (gpt-oss 8192 from 0.11.1, kept under 20 GiB from 0.11.4 f2e9c9aff;
qwen3vl from 0.12.7); llama.cpp common.h n_ctx (0 at b3579, ggml-org/llama.cpp#9016; 4096 from #10136; 0 with
fit_params_min_ctx 4096 in --fit builds, Ollama's vendored ec98e2002)."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB

Q7 = "Qwen/Qwen2.5-7B-Instruct"  # config.json: max_position_embeddings 32768
L8 = "meta-llama/Llama-3.1-8B-Instruct"  # 131072


def _ctx(model, runtime, **kw):
    return llm.plan(llm.describe(model=model), runtime=runtime, **kw)["ctx"]


def test_ollama_default_by_version():
    assert _ctx(Q7, "ollama", runtime_version="0.6.6") == 2048
    assert _ctx(Q7, "ollama", runtime_version="0.6.7") == 4096
    assert _ctx(Q7, "ollama", runtime_version="0.15.4", vram=80 * GiB) == 4096  # before the tiers: no VRAM rule


def test_ollama_vram_tiers_from_0155():
    # thresholds 47 / 23 GiB of the total (server/routes.go), capped at the model's trained context
    assert _ctx(L8, "ollama", runtime_version="0.15.5", vram=22.9 * GiB) == 4096
    assert _ctx(L8, "ollama", runtime_version="0.15.5", vram=23 * GiB) == 32768
    assert _ctx(L8, "ollama", runtime_version="0.15.5", vram=46.9 * GiB) == 32768
    assert _ctx(Q7, "ollama", vram=80 * GiB) == 32768   # 262144 capped at Qwen2.5-7B's 32768
    assert _ctx(L8, "ollama", vram=80 * GiB) == 131072  # and at Llama 3.1's 131072
    # the total is over every GPU: two 24 GB cards read as 47.1 GiB
    assert _ctx(L8, "ollama", gpu_name="RTX 3090", num_gpus=2, vram=20 * GiB) == 131072
    # the card's total, not --vram's free figure, when the card is named
    r = llm.plan(llm.describe(model=L8), runtime="ollama", gpu_name="RTX 3090", vram=20 * GiB)
    assert r["ctx"] == 32768
    assert any("VRAM-based default" in n for n in r["notes"])
    # no card, no --vram: 4096 with a note
    r = llm.plan(llm.describe(model=L8), runtime="ollama")
    assert r["ctx"] == 4096 and any("total memory" in n for n in r["notes"])


def test_ollama_gptoss_floor_before_the_tiers():
    g = "openai/gpt-oss-20b"
    assert _ctx(g, "ollama", runtime_version="0.11.0", vram=24 * GiB) == 4096
    assert _ctx(g, "ollama", runtime_version="0.11.2", vram=16 * GiB) == 8192   # before the low-VRAM rule
    assert _ctx(g, "ollama", runtime_version="0.12.0", vram=16 * GiB) == 4096   # under 20 GiB from 0.11.4
    assert _ctx(g, "ollama", runtime_version="0.12.0", vram=24 * GiB) == 8192
    assert _ctx(Q7, "ollama", runtime_version="0.12.0", vram=24 * GiB) == 4096  # not its family


def test_llamacpp_default_by_build():
    assert _ctx(Q7, "llama.cpp", runtime_version="b3579") == 32768  # n_ctx 0: n_ctx_train
    assert _ctx(Q7, "llama.cpp", runtime_version="b4020") == 4096
    assert _ctx(Q7, "llama.cpp", runtime_version="b7399") == 4096
    assert _ctx(Q7, "llama.cpp", runtime_version="b7400") == 32768  # --fit: n_ctx 0 again
    assert _ctx(L8, "llama.cpp") == 131072                           # newest, no --vram: the whole context
    # ik_llama.cpp (no upstream build number, no --fit): its default is not read, 4096 with a note
    r = llm.plan(llm.describe(model=L8), runtime="llama.cpp", runtime_version="ik_llama.cpp (October 2025)")
    assert r["ctx"] == 4096 and any("ik_llama.cpp's own default" in n for n in r["notes"])


def test_llamacpp_fit_lowers_the_unset_context_not_below_4096():
    r = llm.plan(llm.describe(model=L8), runtime="llama.cpp", weights_dtype="Q4_K_M", vram=12 * GiB)
    assert 4096 < r["ctx"] < 131072 and r["fits"]
    assert any("lowers it to fit" in n for n in r["notes"])
    # the lowered context is the largest with every layer at f16: one block of 256 more does not fit
    assert r["max_ctx_by_kv_dtype"]["f16"] == r["ctx"]
    # a card that holds no context with every layer: 4096, the floor
    assert llm.plan(llm.describe(model=L8), runtime="llama.cpp", weights_dtype="Q4_K_M", vram=5 * GiB)["ctx"] == 4096
    # a build before --fit keeps its 4096 whatever the card
    assert _ctx(L8, "llama.cpp", weights_dtype="Q4_K_M", vram=12 * GiB, runtime_version="b7000") == 4096
    # an explicit --ctx is never lowered
    assert _ctx(L8, "llama.cpp", weights_dtype="Q4_K_M", vram=12 * GiB, ctx=131072) == 131072


def test_vllm_and_sglang_unchanged():
    assert _ctx(Q7, "vllm") == 32768
    assert _ctx(Q7, "sglang") == 32768


# --- Ollama >= 0.30's automatic num_batch (-b/-ub of its llama-server): server/sched.go automaticGenerationBatch ---
from gpu_garden.memory.llm.runtimes import ollama as OL  # noqa: E402
from gpu_garden.memory.units import MiB  # noqa: E402


def test_ollama_generation_batch_tiers_from_sched_go():
    big = 90 * GiB
    assert OL.generation_batch(4096, 10 * GiB, big) == 512
    assert OL.generation_batch(4097, 10 * GiB, big) == 1024
    assert OL.generation_batch(32768, 10 * GiB, big) == 1024
    assert OL.generation_batch(32769, 10 * GiB, big) == 2048
    # 2048 needs the predicted VRAM within 60 % of the available, 1024 within 75 %, each its surcharge under 80 %
    assert OL.generation_batch(65536, 54 * GiB, big) == 2048
    assert OL.generation_batch(65536, 55 * GiB, big) == 1024
    assert OL.generation_batch(65536, 68 * GiB, big) == 512
    assert OL.generation_batch(8192, 71 * GiB, 100 * GiB) == 1024
    assert OL.generation_batch(8192, 76 * GiB, 100 * GiB) == 512  # over 75 %
    assert OL.generation_batch(8192, 7.4 * GiB, 10 * GiB) == 512  # within 75 %, but 768 MiB does not fit under 8 GiB
    assert OL.generation_batch(8192, 7.2 * GiB, 10 * GiB) == 1024
    # flash attention off on CUDA: 512, 256 above 4096 tokens on a card of 8 GiB or less
    assert OL.generation_batch(8192, 1 * GiB, 8 * GiB, flash_off=True, card=8 * GiB) == 256
    assert OL.generation_batch(8192, 1 * GiB, 24 * GiB, flash_off=True, card=24 * GiB) == 512


def test_ollama_llama_server_swa_cells_follow_the_batch():
    # batch 48's kg-benchmark row (Ollama 0.30.7, gpt-oss:120b at num_ctx 16384 on a 94 GiB H100 NVL profile):
    # '-b 1024 -ub 1024', KV 576.00 MiB (16384 cells) + SWA 45.00 MiB (1280 cells = pad(128 + 1024, 256)) = 621 MiB
    r = llm.plan(llm.describe(model="gpt-oss:120b"), runtime="ollama", ctx=16384, runtime_version="0.30.7",
                 vram=90.38 * GiB)
    assert round(r["kv_total"] / MiB, 2) == 621.0
    # at 4096 the batch stays 512: 768 SWA cells, 27 MiB
    r = llm.plan(llm.describe(model="gpt-oss:120b"), runtime="ollama", ctx=4096, runtime_version="0.30.7",
                 vram=90.38 * GiB)
    assert round(r["kv_total"] / MiB, 2) == 144.0 + 27.0
    # an asked num_batch (the row's printed -ub) is the batch: 2048 -> pad(128 + 2048, 256) = 2304 SWA cells, 81 MiB
    r = llm.plan(llm.describe(model="gpt-oss:120b"), runtime="ollama", ctx=16384, runtime_version="0.30.7",
                 vram=90.38 * GiB, ubatch=2048)
    assert round(r["kv_total"] / MiB, 2) == 576.0 + 81.0
