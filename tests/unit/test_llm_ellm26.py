"""Task ellm26: llama.cpp's compute buffer as the graph reserve sizes it (ggml-backend.cpp, ggml-alloc.c), each term
checked by hand from a config.json and the source's formula."""
from gpu_garden.memory.llm import kv as llm

GiB, MiB = 1 << 30, 1 << 20


# ---------------------------------------------------------------- op offload of a host-side output matrix
def _qwen06(ngl, ubatch=None, gpu=None):
    knobs = {"ubatch": ubatch} if ubatch else {}
    if gpu:
        knobs["gpu_name"] = gpu
    return llm.plan(llm.describe(model="Qwen/Qwen3-0.6B"), "llama.cpp", ctx=4096, weights_dtype="Q4_K_M", ngl=ngl,
                    runtime_version="b5489", vram=22 * GiB, **knobs)["overhead"]


def test_ngl0_gpu_still_runs_the_output_matmul():
    # ggml_backend_sched_backend_id_from_cur: the output matmul's weight is in a host (CPU) buffer, CUDA's offload_op
    # takes it at a batch of 512 >= 32, and the matrix is copied into CUDA0's compute buffer. Qwen3-0.6B config.json:
    # hidden 1024, vocab 151936, tied, 16 heads. The tied token table is quantized as the output, Q6_K at Q4_K_M:
    # 151936 x 1024 x 210 / 256 = 127,626,240 B. Logits and activation 4 x (512 x 1024 + 512 x 151936) = 313,262,080.
    # Sum 440,888,320 B = 420.46 MiB (the Orin log: CUDA0 compute buffer 422.92 MiB at -ngl 0). Scores without flash
    # (b5489): 4 x 512 x (1 + 4 x 1024 + 4096 x 17) = 150,996,992, the smaller
    assert _qwen06(0)["compute_buffer"] == 440_888_320
    # before b7400 -ngl 28 puts the 28 repeating layers on the GPU and leaves the output on the CPU: the same copy
    assert _qwen06(28)["compute_buffer"] == 440_888_320
    # -ngl 29: the output on the GPU, nothing is copied: 313,262,080
    assert _qwen06(29)["compute_buffer"] == 313_262_080


def test_no_offload_below_the_min_batch_or_on_metal():
    # -ub 16: the output matmul's ne[1] = 16 < GGML_OP_OFFLOAD_MIN_BATCH (32): it stays on the CPU, nothing on the GPU
    assert _qwen06(0, ubatch=16)["compute_buffer"] == 0
    # ggml_backend_metal_device_offload_op returns false
    assert _qwen06(0, gpu="Apple M4 Pro")["compute_buffer"] == 0


def test_fitparams_ngl48_copies_the_f16_output():
    # the fit-params README's Qwen3-30B-A3B F16 run at b6895, -ngl 48 of 48 repeating layers (before #18148 the output
    # stays on the CPU). config.json: hidden 2048, vocab 151936, untied: output 151936 x 2048 x 2 = 622,329,856 B;
    # logits 4 x 512 x (2048 + 151936) = 315,359,232; sum 937,689,088 B = 894.25 MiB (printed compute 898 MiB).
    # Flash attention (auto from b6400): the feed-forward's 4 x 512 x (4 x 2048 + 8 x 768) = 29,360,128 is smaller
    o = llm.plan(llm.describe(model="Qwen/Qwen3-30B-A3B"), "llama.cpp", ctx=4096, weights_dtype="F16", ngl=48,
                 runtime_version="b6895", vram=24077 * MiB)["overhead"]
    assert o["compute_buffer"] == 937_689_088
    # the same at Q4_K_M: the output matrix is Q6_K (llama-quant), not the Q4_K token table: 151936 x 2048 x 210 / 256
    # = 255,252,480 B, + 315,359,232 = 570,611,712 (the token table's 175,030,272 would give 490,389,504)
    o = llm.plan(llm.describe(model="Qwen/Qwen3-30B-A3B"), "llama.cpp", ctx=4096, weights_dtype="Q4_K_M", ngl=48,
                 runtime_version="b6895", vram=24077 * MiB)["overhead"]
    assert o["compute_buffer"] == 570_611_712


# ---------------------------------------------------------------- the attention mask under flash attention
def _qwen14(parallel, unified):
    return llm.plan(llm.describe(model="Qwen/Qwen3-14B"), "llama.cpp", ctx=40960, parallel=parallel, kv_unified=unified,
                    weights_dtype="Q8_0", flash_attn=True, ngl=99, runtime_version="b10450", vram=48 * GiB)["overhead"]


def test_flash_reserve_holds_the_mask_copy_and_its_f16_cast():
    # llama-graph.cpp build_attn_inp_kv: an f32 mask n_kv x n_tokens (an input, so on the CPU backend), cast to f16
    # on the GPU: the GPU buffer holds the f32 copy and the cast, 6 bytes an element. Qwen3-14B config.json: hidden 5120,
    # intermediate 17408, vocab 151936; b10450 with one slot reserves 1 row of logits (#23861). -c 40960 unified,
    # -ub 512: the f32 copy and the f16 cast, 40960 x 512 x 6 = 125,829,120 B; the logits' 4 x (512 x 5120 + 151936)
    # = 11,093,248. Since round 59 the feed-forward's live set (gate, up and their SwiGLU product beside the residual,
    # 4 x 512 x (3 x 17408 + 5120) = 117,440,512) is counted with the f16 cast that lives through it,
    # 2 x 40960 x 512 = 41,943,040: 159,383,552, the larger here
    assert _qwen14(1, True)["compute_buffer"] == 159_383_552
    # -np 4 without -kvu: 4 streams of 10240 cells, a mask of 10240 x 128 x 4 elements: its f16 cast 10,485,760 B
    # beside the feed-forward's 117,440,512 = 127,926,272 (the two copies alone, 31,457,280, are smaller)
    assert _qwen14(4, False)["compute_buffer"] == 127_926_272
    # where the cells outnumber the feed-forward's values a token the mask's two copies are the larger: Qwen3-0.6B
    # (config.json: hidden 1024, intermediate 3072, vocab 151936) at -c 40960 -ub 512: 40960 x 512 x 6 = 125,829,120,
    # above 4 x 512 x (3 x 3072 + 1024) + 2 x 40960 x 512 = 20,971,520 + 41,943,040 = 62,914,560
    o = llm.plan(llm.describe(model="Qwen/Qwen3-0.6B"), "llama.cpp", ctx=40960, parallel=1, kv_unified=True,
                 weights_dtype="Q8_0", flash_attn=True, ngl=99, runtime_version="b10450", vram=48 * GiB)["overhead"]
    assert o["compute_buffer"] == 125_829_120
