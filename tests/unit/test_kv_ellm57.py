"""kv-accuracy round 79 (task ellm57, batch 83 after first sight): Qwen3.5-122B-A10B Q4_K_M on llama.cpp b8829/b8893
over 4x Tesla P100 16 GB, the routed experts of chosen blocks kept on the CPU by -ot (miminashi/llm-server-ops
startup logs): llama.cpp's -ot as its loader reads it, the regex searched in each tensor's name."""
import pytest

from gpu_garden.memory.errors import UserError
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.llm.weights import expert_layer_bytes

MiB = 1 << 20
MODEL = "Qwen/Qwen3.5-122B-A10B"
CARD = int(15.89 * 1024 * MiB)  # 'VRAM: 16269 MiB' per card
OT36 = r"blk\.([0-9]|1[0-3]|2[0-4]|3[1-9]|4[0-7])\.ffn_.*_exps\.weight=CPU"  # start_phaseSevalcross.sh
GPU_BLOCKS_36 = set(range(14, 20)) | set(range(25, 31))  # the twelve blocks whose experts stay on the GPUs
KW = dict(runtime_version="b8829", flash_attn="on", ngl=999, num_gpus=4, kv_unified=False)


def _plan(ctx=32768, ubatch=1586, **kw):
    knobs = dict(KW, ubatch=ubatch)
    knobs.update(kw)
    return llm.plan(llm.describe(model=MODEL), "llama.cpp", ctx=ctx, parallel=1, kv_dtype="f16",
                    weights_dtype="Q4_K_M", vram=CARD, **knobs)


# the pattern's blocks, not the first 36: blocks 0-13, 20-24 and 31-47 keep their experts in host memory, 14-19 and
# 25-30 on the GPUs, which the default split (13 / 12 / 12 / 11 + output) puts on CUDA1 and CUDA2 six each, as the
# printed model buffers say (CUDA0 1301.21, CUDA1 9550.77, CUDA2 9550.77, CUDA3 1693.13 MiB)
def test_ot_keeps_the_experts_of_the_blocks_its_pattern_names():
    r = _plan(override_tensor=[OT36])
    assert set(r["cpu_moe_layers"]) == set(range(48)) - GPU_BLOCKS_36 and r["n_cpu_moe"] == 36
    per = expert_layer_bytes(llm.describe(model=MODEL), "Q4_K_M")
    assert r["host_experts_full"] == sum(b for il, b in enumerate(per) if il not in GPU_BLOCKS_36)
    devs = r["devices"]
    assert [d["layers"] for d in devs] == [13, 12, 12, 11]
    whole = _plan()["devices"]
    moved = [sum(per[a:b]) - sum(per[i] for i in GPU_BLOCKS_36 if a <= i < b) for a, b in ((0, 13), (13, 25), (25, 37), (37, 48))]
    assert [w["weights"] - d["weights"] for w, d in zip(whole, devs)] == moved
    assert min(devs[1]["weights"], devs[2]["weights"]) > 7 * max(devs[0]["weights"], devs[3]["weights"])


# the 32k flash-attention run started ('successfully fit', every card under 10.3 GB used): with the pattern's blocks
# kv says it fits; read as --n-cpu-moe 36 (the first 36 blocks) the twelve GPU expert blocks sat on CUDA3 and kv
# refused it
def test_the_32k_run_fits_with_its_pattern_and_not_as_the_first_36():
    assert _plan(override_tensor=[OT36])["fits_as_requested"]
    assert not _plan(n_cpu_moe=36)["fits_as_requested"]


# several PATTERN=BUFT pairs in one value, split at ',' as common/arg.cpp splits -ot's value
def test_ot_value_with_two_overrides_is_split_at_the_comma():
    one = _plan(override_tensor=[r"blk\.(1[4-9])\.ffn_.*_exps=CPU,blk\.(2[5-9]|30)\.ffn_.*_exps=CPU"])
    assert one["cpu_moe_layers"] == sorted(GPU_BLOCKS_36)


# what kv does not model is refused, not half-placed: a device buffer type, a pattern reaching other tensors (the
# shared experts, attention), a layer's experts matched in part, and -ot beside --n-cpu-moe
@pytest.mark.parametrize("ot", [r"blk\.1\.ffn_.*_exps=CUDA1", r"blk\.1\.ffn_.*=CPU", r"blk\.1\.attn=CPU",
                                r"blk\.1\.ffn_down_exps=CPU", "no-equals-sign"])
def test_ot_not_modelled_is_refused(ot):
    with pytest.raises(UserError):
        _plan(override_tensor=[ot])


def test_ot_beside_n_cpu_moe_is_refused():
    with pytest.raises(UserError):
        _plan(override_tensor=[OT36], n_cpu_moe=36)


def test_ot_is_read_by_llama_cpp_only():
    with pytest.raises(UserError):
        llm.plan(llm.describe(model=MODEL), "vllm", ctx=4096, override_tensor=[OT36])


# the CLI's --override-tensor (llama.cpp's -ot spelled as kv's option): the report names the blocks and the command
# carries the pattern back
def test_cli_override_tensor_names_the_blocks(capsys):
    from gpu_garden.memory import cli
    cli.main(["kv", "--model", MODEL, "--runtime", "llama.cpp", "--weights-dtype", "Q4_K_M", "--ctx", "32768",
              "--ngl", "999", "--num-gpus", "4", "--vram", "15.89", "--runtime-version", "b8829",
              "--override-tensor", OT36])
    out = capsys.readouterr().out
    assert "-ot: the routed experts (ffn_gate/up/down_exps) of 36 layers, 0, 1," in out
    assert "-ot 'blk" in out


# the experts' biases (a GGUF's tensor table: gpt-oss's ffn_*_exps.bias) move only where the pattern names them:
# '\.weight' at the end keeps them on the GPU, as llama.cpp's regex_search over 'blk.N.ffn_up_exps.bias' finds nothing
def test_ot_moves_the_biases_only_where_its_pattern_names_them():
    from dataclasses import replace
    s = llm.describe(model=MODEL)
    s = replace(s, weights_bytes=s.weights_bytes or 70 << 30, expert_file_bytes=tuple((1000 * MiB, MiB) for _ in range(48)))
    kw = dict(runtime_version="b8829", ngl=999)

    def host(ot):
        return llm.plan(s, "llama.cpp", ctx=4096, kv_dtype="f16", override_tensor=[ot], **kw)["host_experts_full"]
    assert host(r"blk\.(1[4-9])\.ffn_.*_exps\.weight=CPU") == 6 * 1000 * MiB
    assert host(r"blk\.(1[4-9])\.ffn_.*_exps=CPU") == 6 * 1001 * MiB
