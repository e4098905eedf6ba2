"""Task review23: mends to session 22's later changes, each test failing before its fix."""
from gpu_garden.memory.llm import kv as llm
from gpu_garden.memory.units import GiB


# 1. kv --n-cpu-moe on a --fit build: llama.cpp's fit (common/fit.cpp) lowers -c, then stops before placing layers when
# the user set a tensor override, which --n-cpu-moe is ("model_params::tensor_buft_overrides already set by user,
# abort"; the load then runs unfitted). The "or let the runtime fit itself: --fit on" alternative printed under a
# command carrying --n-cpu-moe must say to drop it; without --n-cpu-moe the alternative stays as it was.
def test_fit_alternative_beside_n_cpu_moe_says_to_drop_it():
    s = llm.describe(model="openai/gpt-oss-20b")
    kw = dict(ctx=32768, parallel=1, weights_dtype="MXFP4", vram=8 * GiB, runtime_version="b8193")
    moved = llm.plan(s, "llama.cpp", n_cpu_moe=12, **kw)
    assert "--n-cpu-moe 12" in moved["command"]
    (fit,) = moved["autofit"]
    assert "without --n-cpu-moe" in fit["flag"] and "tensor_buft_overrides already set by user" in fit["reason"]
    (plain,) = llm.plan(s, "llama.cpp", **kw)["autofit"]
    assert plain["flag"] == "--fit on" and "n-cpu-moe" not in plain["reason"]


# 2. The amrex-gpu-call guide serves both AMReX forms, but its fixes (the job's modules, one rank per GPU) are for a
# failure in the device setup (AMReX_GpuDevice.cpp, before any arena exists). A call elsewhere (form amrex_call) runs
# after amrex::Initialize has given The_Arena 3/4 of the device memory (AMReX's GPU.rst, RuntimeParameters.rst
# amrex.the_arena_init_size), so a library's own allocation there has the last quarter: the guide says so and names the
# parameter. Line made up in AMReX_GpuError.H's form; the file is not AMReX_GpuDevice.cpp.
def test_amrex_call_outside_device_setup_gets_the_arena_advice():
    from support.triage_event import top
    line = ("amrex::Abort::0::CUDA error 2 in file /home/sim/warpx/Source/FieldSolver/SpectralSolver/AnyFFT.cpp "
            "line 120: out of memory !!!\nSIGABRT\n")
    _, _, ev = top(line)
    assert (ev["runtime"], ev["form"]) == ("amrex", "amrex_call"), ev
    assert ev["guide"]["id"] == "amrex-gpu-call"
    assert "amrex.the_arena_init_size" in ev["guide"]["markdown"]


# 3. --n-cpu-moe N and --cpu-moe are one setting (README: "[--n-cpu-moe N | --cpu-moe]"): given both, argparse kept the
# last silently; now a usage error naming both (exit 2).
def test_n_cpu_moe_and_cpu_moe_together_are_a_usage_error(capsys):
    import pytest
    from gpu_garden.memory import cli
    base = ["kv", "--model", "openai/gpt-oss-20b", "--runtime", "llama.cpp", "--vram", "16"]
    with pytest.raises(SystemExit) as e:
        cli.main(base + ["--n-cpu-moe", "4", "--cpu-moe"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "--cpu-moe" in err and "--n-cpu-moe" in err and "not allowed with" in err


# 4. Non-gated routed experts: Nemotron-H's MoE layers (relu2) have ffn_up_exps and ffn_down_exps only, so a layer's
# expert parameters are two matmuls, not three. NVIDIA-Nemotron-3-Nano-30B-A3B: 128 experts of 2688 x 1856 (neither a
# multiple of 256, so in Q4_K_M ffn_up_exps is Q4_K's fallback Q5_0, 5.5 bits, and ffn_down_exps Q5_0, or Q6_K's
# fallback Q8_0, 8.5 bits, on use_more_bits' layers). Split in thirds as gated experts, layer 1 (a more-bits layer: below
# 52 // 8) read 128 x 2688 x 1856 x 2 values at (5.5 + 5.5 + 8.5) / 3 bits, 7 % under the file's.
def test_non_gated_experts_weigh_their_down_projection_as_half():
    from gpu_garden.memory.llm import weights as W
    s = llm.describe(model="nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B")
    b = W.expert_layer_bytes(s, "Q4_K_M")
    per = 128 * 2688 * 1856  # values of one of the two matmuls, all 128 experts
    assert b[1] == int(per * (5.5 + 8.5) / 8)   # layer 1: MoE, use_more_bits
    assert b[0] == 0                              # a Mamba-2 layer: no experts
    # gated experts keep their thirds (Qwen3-30B-A3B, as test_kv_ncmoe22 test 5)
    q = W.expert_layer_bytes(llm.describe(model="Qwen/Qwen3-30B-A3B"), "Q4_K_M")
    assert q[6] == 128 * 2048 * 768 * (4.5 + 4.5 + 4.5) / 8


# 5. Ollama's phi3 library has two sizes: mini (3.8b, also tagged 'instruct') and medium (14b). Its table row names one
# built-in (Phi-3-mini-4k) with no {size}, so 'phi3:medium', 'phi3:14b' and 'phi3:medium-128k' were sized as the 3.8B
# mini (32 layers, hidden 3072) without a word. kv has no Phi-3-medium: those tags are refused, naming the sizes read;
# the mini's tags still resolve.
def test_phi3_medium_tags_are_not_read_as_the_mini():
    import pytest
    from gpu_garden.memory.errors import UserError
    for tag in ("phi3:medium", "phi3:14b", "phi3:medium-128k", "phi3:14b-medium-4k-instruct-q4_0"):
        with pytest.raises(UserError, match="sizes read are"):
            llm.describe(model=tag)
    for tag in ("phi3", "phi3:mini", "phi3:3.8b", "phi3:instruct", "phi3:mini-128k", "phi3:3.8b-mini-128k-instruct-q4_0"):
        assert llm.describe(model=tag).n_layers == 32, tag


# 6. A split GGUF (llama.cpp's gguf-split / the gguf package: <name>-0000k-of-0000n.gguf, split.count in each file), as
# the large MoE files --n-cpu-moe is for come: kv read only the named file's tensor table, so the first of three shards
# printed a third of the weights as "exact, GGUF tensor table" and its experts likewise. The shards' tables now add up to
# the one-file table; a later shard, or a missing one, is a clear error. Files written here with the gguf package.
def _moe_gguf(path, split_max_tensors=0):
    import gguf
    import numpy as np
    w = gguf.GGUFWriter(str(path), "qwen3moe", split_max_tensors=split_max_tensors)
    for add, v in ((w.add_block_count, 4), (w.add_context_length, 32768), (w.add_embedding_length, 256),
                   (w.add_feed_forward_length, 512), (w.add_head_count, 4), (w.add_head_count_kv, 2),
                   (w.add_key_length, 64), (w.add_value_length, 64), (w.add_expert_count, 8),
                   (w.add_expert_used_count, 2), (w.add_expert_feed_forward_length, 128), (w.add_vocab_size, 1000),
                   (w.add_file_type, 1)):
        add(v)
    w.add_tensor("token_embd.weight", np.zeros((1000, 256), dtype=np.float16))
    w.add_tensor("output.weight", np.zeros((1000, 256), dtype=np.float16))
    for i in range(4):
        for p in ("q", "k", "v", "output"):
            w.add_tensor(f"blk.{i}.attn_{p}.weight", np.zeros((256, 256), dtype=np.float16))
        for p in ("gate", "up"):
            w.add_tensor(f"blk.{i}.ffn_{p}_exps.weight", np.zeros((8, 128, 256), dtype=np.float16))
        w.add_tensor(f"blk.{i}.ffn_down_exps.weight", np.zeros((8, 256, 128), dtype=np.float16))
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()


def test_a_split_gguf_is_read_whole(tmp_path):
    import pytest
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.llm import spec as llm_spec
    _moe_gguf(tmp_path / "one.gguf")
    _moe_gguf(tmp_path / "m.gguf", split_max_tensors=12)
    shards = sorted(p.name for p in tmp_path.glob("m-*.gguf"))
    assert shards == ["m-00001-of-00003.gguf", "m-00002-of-00003.gguf", "m-00003-of-00003.gguf"]
    one = llm_spec.load_gguf(str(tmp_path / "one.gguf"))
    split = llm_spec.load_gguf(str(tmp_path / shards[0]))
    # 2 x 1000 x 256 f16 tables + 4 layers x (4 x 256 x 256 + 3 x 8 x 128 x 256) f16 values
    whole = 2 * (2 * 1000 * 256 + 4 * (4 * 256 * 256 + 3 * 8 * 128 * 256))
    assert one.weights_bytes == whole
    assert split.weights_bytes == whole
    assert split.expert_file_bytes == one.expert_file_bytes == ((3 * 8 * 128 * 256 * 2, 0),) * 4
    with pytest.raises(UserError, match="first"):
        llm_spec.load_gguf(str(tmp_path / shards[1]))
    (tmp_path / shards[2]).unlink()
    with pytest.raises(UserError, match="m-00003-of-00003.gguf"):
        llm_spec.load_gguf(str(tmp_path / shards[0]))
