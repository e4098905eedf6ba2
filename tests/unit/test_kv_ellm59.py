"""kv-accuracy round 81 (task ellm59, batch 83 after round 79): Qwen3.5-122B-A10B Q4_K_M (unsloth's GGUF) on
llama.cpp b8829/b8893 over 4x Tesla P100 16 GB with -ot (miminashi/llm-server-ops startup logs). The file's tensor
types as llama.cpp's loader prints them ('llama_model_loader: - type q8_0:  373 tensors'), taken as an input
(--gguf-types): unsloth keeps every matmul but the routed experts in Q8_0, where kv's Q4_K_M recipe gave them the
file type's mix (GPU weights -13.3 % on the ot36 rows, two OOM runs read as fitting)."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.gguf_types import parse

MiB, GiB = 1 << 20, 1 << 30
MODEL = "Qwen/Qwen3.5-122B-A10B"
CARD = int(15.89 * 1024 * MiB)  # 'VRAM: 16269 MiB' per card
# all twelve logs print the same five lines (the same unsloth snapshot 51eab4d5)
TYPES = {"f32": 361, "q8_0": 373, "q4_K": 96, "q5_K": 48, "q6_K": 1}
OT36 = r"blk\.([0-9]|1[0-3]|2[0-4]|3[1-9]|4[0-7])\.ffn_.*_exps\.weight=CPU"  # start_phaseSevalcross.sh
OT14 = r"blk\.([2-3]|2[0-3]|3[1-8])\.ffn_.*_exps\.weight=CPU"  # phase U5's B14b
KW = dict(runtime_version="b8829", ngl=999, num_gpus=4, kv_unified=False)


def _plan(ctx=32768, ubatch=1586, kv="f16", flash="on", **kw):
    knobs = dict(KW, ubatch=ubatch, flash_attn=flash)
    knobs.update(kw)
    return llm.plan(llm.describe(model=MODEL), "llama.cpp", ctx=ctx, parallel=1, kv_dtype=kv,
                    weights_dtype="Q4_K_M", vram=CARD, **knobs)


# By hand: a MoE layer's experts are 256 x 3 x 3072 x 1024 = 2,415,919,104 values, gate + up in q4_K (4.5 bits) and
# down in q5_K (5.5): 1,459,617,792 bytes = 1392.0 MiB a layer (the GPU expert blocks' share of CUDA1's 9550.77);
# token table 248320 x 3072 in q8_0 (8.5 bits), output in q6_K (6.5625 bits: 625.8 MB); the 48 routers 3072 x 256 in
# F32; the blocks' other 4.58 B values in q8_0: 76.52 GB = 71.26 GiB against the printed 'file size = 71.27 GiB'
def test_printed_types_give_the_file_size():
    r = _plan(override_tensor=[OT36], gguf_types=TYPES)
    assert abs(r["weights"] / GiB - 71.27) < 0.02
    assert abs(_plan(override_tensor=[OT36])["weights"] / GiB - 71.27) > 2  # the Q4_K_M recipe: 68.55 GiB


# the printed model buffers (MiB): CUDA0 13 blocks without experts, CUDA1 / CUDA2 twelve blocks with six expert
# blocks each, CUDA3 eleven blocks without experts + the output head
@pytest.mark.parametrize("ot, split, printed", [
    (OT36, None, (1301.21, 9550.77, 9550.77, 1693.13)),
    (OT14, [11, 14, 14, 11], (13634.49, 15313.49, 9755.64, 14016.26)),
    (OT14, [11, 12, 13, 14], (13634.49, 13726.77, 11035.06, 14323.56)),
])
def test_per_card_model_buffers_from_the_printed_types(ot, split, printed):
    kw = dict(tensor_split=split) if split else {}
    r = _plan(override_tensor=[ot], gguf_types=TYPES, **kw)
    got = [d["weights"] / MiB for d in r["devices"]]
    assert all(abs(g - p) < 5 for g, p in zip(got, printed)), got


# the two runs kv read as fitting: CUDA1 could not take its compute buffer ('allocating 6752.93 MiB on device 1' at
# 32k -ub 1586 without flash attention; 'allocating 121.27 MiB on device 1' with -ts 11,14,14,11); their started
# siblings still fit
def test_the_two_cuda1_ooms_do_not_fit_and_their_siblings_do():
    assert not _plan(flash="off", override_tensor=[OT36], gguf_types=TYPES)["fits_as_requested"]
    assert _plan(override_tensor=[OT36], gguf_types=TYPES)["fits_as_requested"]
    u5 = dict(ctx=131072, ubatch=256, kv="q8_0", override_tensor=[OT14], gguf_types=TYPES, runtime_version="b8893")
    assert not _plan(tensor_split=[11, 14, 14, 11], **u5)["fits_as_requested"]
    assert _plan(tensor_split=[11, 12, 13, 14], **u5)["fits_as_requested"]


def test_the_loader_lines_parse_as_type_counts():
    assert parse("f32=361, q8_0=373,q4_K:96,q5_K=48,q6_K=1") == {"F32": 361, "Q8_0": 373, "Q4_K": 96, "Q5_K": 48,
                                                                 "Q6_K": 1}
    with pytest.raises(UserError):
        parse("q8_0 373")
    with pytest.raises(UserError):
        parse("q9_9=3")


# counts that do not place every tensor are refused, not guessed: no expert pair of 2 x / 1 x the MoE layers, two
# types for the rest, a 16-bit type (the routers' type open), beside --weights-gib, for another runtime
@pytest.mark.parametrize("types", [
    {"f32": 361, "q8_0": 373, "q4_K": 144, "q6_K": 1},
    {"f32": 361, "q8_0": 300, "q6_K": 73, "q4_K": 96, "q5_K": 48},
    {"f32": 300, "f16": 61, "q8_0": 373, "q4_K": 96, "q5_K": 48, "q6_K": 1},
])
def test_counts_of_another_shape_are_refused(types):
    with pytest.raises(UserError):
        _plan(gguf_types=types)


def test_gguf_types_beside_weights_gib_or_for_vllm_is_refused():
    with pytest.raises(UserError):
        _plan(gguf_types=TYPES, weights_bytes=71 * GiB)
    with pytest.raises(UserError):
        llm.plan(llm.describe(model=MODEL), "vllm", ctx=4096, gguf_types=TYPES)


def test_cli_gguf_types(capsys):
    from gpu_garden.memory import cli
    cli.main(["kv", "--model", MODEL, "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--ctx", "32768",
              "--ngl", "999", "--num-gpus", "4", "--vram", "15.89", "--runtime-version", "b8829",
              "--override-tensor", OT36, "--gguf-types", "f32=361,q8_0=373,q4_K=96,q5_K=48,q6_K=1"])
    out = capsys.readouterr().out
    assert "71.26 GiB" in out and "--gguf-types" in out
