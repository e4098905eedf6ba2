"""Tracer on small real modules whose peak is worked out by hand; allocator model rules; CLI errors."""
import resource
import subprocess
import sys
import time
from pathlib import Path

import pytest

from support.regex_time import cpu_limit

from gpu_garden.memory.trace import allocator as ta
from gpu_garden.memory.cli import main

REPO = Path(__file__).resolve().parents[2]


def _torch():
    return pytest.importorskip("torch")


def _meta(*shape, dtype=None):
    torch = _torch()
    return torch.empty(*shape, device="meta", dtype=dtype or torch.float32)


# -- the tracer ------------------------------------------------------------------------------------

def _conv_stack(inplace):
    torch = _torch()
    with torch.device("meta"):
        return torch.nn.Sequential(torch.nn.Conv2d(4, 8, 3, padding=1), torch.nn.SiLU(inplace=inplace),
                                   torch.nn.Conv2d(8, 4, 3, padding=1))


def test_conv_stack_peak_by_hand():
    from gpu_garden.memory.trace.tracer import trace
    r = trace(_conv_stack(False), _meta(1, 4, 64, 64))
    weights = (8 * 4 * 9 + 8 + 4 * 8 * 9 + 4) * 4            # 2352
    x = 4 * 64 * 64 * 4                                      # 65536
    h = 8 * 64 * 64 * 4                                      # 131072
    # Sequential keeps conv1's output until SiLU's output exists: both live at SiLU
    assert r["weights"] == weights and r["inputs"] == x
    assert r["peak"] == weights + x + 2 * h
    assert r["activations_peak"] == x + 2 * h
    assert r["at"] == {"op": "aten.silu", "module": "1"}
    assert r["live_at_peak"] == {"weight": weights, "input": x, "activation": 2 * h}
    assert [t["shape"] for t in r["top"][:2]] == [[1, 8, 64, 64], [1, 8, 64, 64]]
    assert r["output_live"] == weights + x + x                # only the result survives
    assert r["attention"]["calls"] == 0


def test_inplace_activation_allocates_nothing():
    from gpu_garden.memory.trace.tracer import trace
    r = trace(_conv_stack(True), _meta(1, 4, 64, 64))
    weights, x, h = 2352, 65536, 131072
    assert r["peak"] == weights + x + h + x                   # conv1 out (reused by silu_) + conv2 out
    assert r["at"]["op"] == "aten.convolution" and r["at"]["module"] == "2"


def test_views_share_storage_and_copies_allocate():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace

    class Views(torch.nn.Module):
        def forward(self, x):
            v = x.view(64, 64).t()[::2]            # views: nothing new
            y = v.contiguous()                     # a real copy: 32x64 floats
            x.add_(1)                              # in place: nothing new
            z = y * 2                              # new
            del v, y
            return z

    r = trace(Views(), _meta(4096))
    x, half = 4096 * 4, 32 * 64 * 4
    assert r["peak"] == x + 2 * half
    assert r["at"]["op"] == "aten.mul"
    assert r["output_live"] == x + half


def test_frees_happen_when_the_last_view_dies():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace

    class Keep(torch.nn.Module):
        def forward(self, x):
            a = x * 2                              # 4 KiB
            b = a[:10]                             # keeps a's storage alive
            del a
            c = x * 3                              # a still live through b
            del b
            d = x * 4                              # a freed now
            return c + d

    r = trace(Keep(), _meta(1024))
    n = 4096
    assert r["peak"] == n + 3 * n                  # x, a (via b), c, then d after a is gone, then c+d
    assert r["output_live"] == 2 * n


def test_out_variant_growing_a_buffer_reallocates():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace

    class Out(torch.nn.Module):
        def forward(self, a):
            buf = torch.empty(16, device=a.device)           # 64 B
            buf.resize_(2048)                                 # 8 KiB: a new block, then the old one freed
            return torch.cat([a, a], out=buf)

    r = trace(Out(), _meta(1024))
    assert r["peak"] == 4096 + 64 + 8192
    assert r["output_live"] == 4096 + 8192


def test_tensors_from_before_the_trace_count_once_as_external():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace
    table = _meta(1000)                                       # e.g. a schedule held outside the traced module

    class UsesTable(torch.nn.Module):
        def forward(self, x):
            return x * table[:10].sum()                      # a view of it is not a new allocation

    r = trace(UsesTable(), _meta(1024))
    assert r["live_at_peak"] == {"input": 4096, "external": 4000, "activation": 4 + 4096}
    assert r["peak"] == 4096 + 4000 + 4 + 4096


def _attention_module():
    torch = _torch()

    class Attn(torch.nn.Module):
        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)
    return Attn()


def test_attention_flash_is_linear_and_math_holds_the_scores():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace
    B, H, L, D = 1, 2, 1024, 64
    qkv = [_meta(B, H, L, D, dtype=torch.float16) for _ in range(3)]
    base = 3 * B * H * L * D * 2
    out = B * H * L * D * 2
    lse = B * H * L * 4                                       # flash keeps a float32 logsumexp per row
    scores = B * H * L * L * 4                                # math upcasts half inputs to float32

    flash = trace(_attention_module(), *qkv)
    a = flash["attention"]
    assert a["calls"] == 1 and a["kernel"] == "flash" and a["kernels"] == {"flash": 1}
    assert base + out + lse <= flash["peak"] <= base + out + lse + 64      # + the philox rng state
    assert a["largest_scores"] == scores
    # the scores matrix and its softmax are both live in the math path
    assert base + 2 * scores <= a["peak"]["math"] <= base + 2 * scores + 8 * B * H * L * D * 4
    assert a["differs"] is True

    math = trace(_attention_module(), *qkv, attention="math")
    assert math["attention"]["kernel"] == "math"
    assert math["peak"] == a["peak"]["math"]                 # the alternative measured in one pass is exact
    assert math["attention"]["peak"]["flash"] == flash["peak"]
    assert math["output_live"] == flash["output_live"] == base + out


def test_attention_kernel_choice_follows_cuda_sdpa():
    torch = _torch()
    from gpu_garden.memory.trace.attention import fused_kernel
    h = _meta(1, 1, 16, 64, dtype=torch.float16)
    assert fused_kernel(h, h, h, None) == "flash"
    assert fused_kernel(h, h, h, _meta(16, 16)) == "efficient"             # flash takes no mask
    f = _meta(1, 1, 16, 64)
    assert fused_kernel(f, f, f, None) == "efficient"                      # flash needs fp16/bf16
    big = _meta(1, 1, 16, 512, dtype=torch.float16)
    assert fused_kernel(big, big, big, None) == "efficient"                # flash head dim <= 256 (VAE: 512)
    odd = _meta(1, 1, 16, 30, dtype=torch.float16)
    assert fused_kernel(odd, odd, odd, None) == "math"


def test_meta_trace_matches_the_same_forward_on_real_cpu_tensors():
    """Meta kernels allocate what the real kernels allocate: the same module traced on meta and run for real on
    the CPU (the tracer works on any device) gives the same peak and the same place."""
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace

    class Block(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.norm = torch.nn.GroupNorm(4, 32)
            self.conv = torch.nn.Conv2d(32, 32, 3, padding=1)
            self.qkv = torch.nn.Linear(32, 96)
            self.out = torch.nn.Linear(32, 32)

        def forward(self, x):
            h = self.conv(torch.nn.functional.silu(self.norm(x)))
            b, c, hh, ww = h.shape
            t = h.flatten(2).transpose(1, 2)
            q, k, v = self.qkv(t).view(b, -1, 3, 2, c // 2).permute(2, 0, 3, 1, 4)
            a = torch.nn.functional.scaled_dot_product_attention(q, k, v)
            t = self.out(a.transpose(1, 2).reshape(b, -1, c))
            h = h + t.transpose(1, 2).reshape(b, c, hh, ww)
            return torch.cat([x, torch.nn.functional.interpolate(h, scale_factor=2.0)[..., ::2, ::2]], 1)

    torch.manual_seed(0)
    m = Block()
    x = torch.randn(2, 32, 16, 16)
    real = trace(m, x, device="cpu", attention="math")
    with torch.device("meta"):
        mm = Block()
    fake = trace(mm, _meta(2, 32, 16, 16), attention="math")
    assert real["peak"] == fake["peak"] and real["at"] == fake["at"]
    assert real["output_live"] == fake["output_live"]
    assert real["allocations"] == fake["allocations"]


def test_memoised_meta_kernels_change_nothing(monkeypatch):
    torch = _torch()
    from gpu_garden.memory.trace import dispatch as trace_mode
    from gpu_garden.memory.trace.tracer import trace
    with torch.device("meta"):
        m = torch.nn.Sequential(*[torch.nn.Sequential(torch.nn.Conv2d(16, 16, 3, padding=1), torch.nn.GroupNorm(4, 16),
                                                      torch.nn.GELU()) for _ in range(4)])
    x = _meta(2, 16, 32, 32)
    fast = trace(m, x)
    monkeypatch.setattr(trace_mode.StorageTracer, "MEMO", False)
    slow = trace(m, x)
    for k in ("peak", "at", "live_at_peak", "top", "output_live", "allocations", "allocator", "ops"):
        assert fast[k] == slow[k], k


def test_rms_norm_is_cudas_fused_kernel():
    torch = _torch()
    if not hasattr(torch.nn.functional, "rms_norm"):
        pytest.skip("torch without F.rms_norm")
    from gpu_garden.memory.trace.tracer import trace

    class Norm(torch.nn.Module):
        def forward(self, x):
            return torch.nn.functional.rms_norm(x, (128,), eps=1e-6)

    r = trace(Norm(), _meta(4, 512, 128, dtype=torch.bfloat16))
    x = 4 * 512 * 128 * 2
    # CUDA runs _fused_rms_norm: the bf16 result and a float32 rstd per row, no float32 copies of x
    assert r["peak"] == x + x + 4 * 512 * 4
    assert r["at"]["op"] == "aten._fused_rms_norm"


def test_huge_linear_traces_without_memory():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace
    with torch.device("meta"):
        big = torch.nn.Linear(65536, 65536)                   # 16 GiB of float32 weights
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t = time.process_time()
    r = trace(big, _meta(8192, 65536))                        # a 2 GiB input, a 2 GiB output
    assert time.process_time() - t < cpu_limit(5)           # process time: torch's own threads do the work
    w = 65536 * 65536 * 4 + 65536 * 4
    io = 8192 * 65536 * 4
    assert r["weights"] == w and r["peak"] == w + 2 * io
    assert r["at"]["op"] == "aten.addmm"
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss < 200 * 1024   # KiB on Linux


def test_real_weights_are_swapped_for_meta_twins():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace
    m = torch.nn.Linear(16, 8)                                # real CPU weights: not read, not copied
    before = m.weight.data_ptr()
    r = trace(m, torch.zeros(4, 16))
    assert r["weights"] == (16 * 8 + 8) * 4
    assert r["peak"] == r["weights"] + 4 * 16 * 4 + 4 * 8 * 4
    assert m.weight.device.type == "cpu" and m.weight.data_ptr() == before


def test_lowvram_weights_are_transient():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace
    with torch.device("meta"):
        m = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.Linear(1024, 1024))
    x = _meta(8, 1024)
    layer = (1024 * 1024 + 1024) * 4
    act = 8 * 1024 * 4
    resident = trace(m, x)
    assert resident["peak"] == 2 * layer + 3 * act
    low = trace(m, x, offload="all")
    assert low["weights"] == 0
    assert low["peak"] == layer + 3 * act                     # one layer's copy while its matmul runs
    assert low["at"] == {"op": "aten.addmm", "module": "1"}   # its output lands while the copy is held


def test_partially_loaded_model_streams_its_cpu_weights():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace
    with torch.device("meta"):
        m = torch.nn.Sequential(torch.nn.Linear(1024, 1024), torch.nn.Linear(1024, 1024))
    m[1].to_empty(device="cpu")                               # layer 1 not loaded (a real 4 MiB on the CPU)
    layer, act = (1024 * 1024 + 1024) * 4, 8 * 1024 * 4
    r = trace(m, _meta(8, 1024), offload="cpu")
    assert r["weights"] == layer
    assert r["peak"] == 2 * layer + 3 * act                   # layer 0 resident + layer 1's copy during its op


def test_dtype_cast_of_weights_is_a_transient_weight_cast():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace

    class Manual(torch.nn.Module):                            # ComfyUI manual_cast: fp8 stored, bf16 compute
        def __init__(self):
            super().__init__()
            self.weight = torch.nn.Parameter(torch.empty(256, 256, dtype=torch.float8_e4m3fn, device="meta"),
                                             requires_grad=False)

        def forward(self, x):
            w = self.weight.to(x.dtype)
            return x @ w.t()

    r = trace(Manual(), _meta(4, 256, dtype=torch.bfloat16))
    assert r["weights"] == 256 * 256
    assert r["peak"] == 256 * 256 + 4 * 256 * 2 + 256 * 256 * 2 + 4 * 256 * 2
    assert any(t["kind"] == "weight cast" for t in r["top"])


def test_module_path_is_reported():
    torch = _torch()
    from gpu_garden.memory.trace.tracer import trace
    with torch.device("meta"):
        m = torch.nn.Sequential(torch.nn.Linear(8, 8), torch.nn.Sequential(torch.nn.Linear(8, 4096)))
    r = trace(m, _meta(2, 8))
    assert r["at"] == {"op": "aten.addmm", "module": "1.0"}


def test_allocator_figures_are_rounded_up():
    from gpu_garden.memory.trace.tracer import trace
    r = trace(_conv_stack(False), _meta(1, 4, 64, 64))
    al = r["allocator"]
    assert al["allocated_peak"] >= r["peak"]
    assert al["reserved_peak"] == 2 << 20                     # everything fits one small-pool segment


def test_importing_trace_does_not_import_torch():
    code = ("import sys; sys.path.insert(0, %r); import conftest; import gpu_garden.memory.trace.tracer, "
            "gpu_garden.memory.trace.comfy_checkout, gpu_garden.memory.trace.allocator; print('torch' in sys.modules, "
            "'comfy' in sys.modules)" % str(REPO / "tests"))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
    assert out.stdout.split() == ["False", "False"]


# -- allocator model (c10/cuda/CUDACachingAllocator.cpp rules) ----------------------------------------

def test_round_size_and_segment_size():
    assert ta.round_size(1) == 512 and ta.round_size(512) == 512 and ta.round_size(513) == 1024
    assert ta.segment_size(1 << 20) == 2 << 20                # small pool: 2 MiB segments
    assert ta.segment_size((1 << 20) + 512) == 20 << 20       # 1-10 MiB: a 20 MiB segment
    assert ta.segment_size(10 << 20) == 10 << 20              # >= 10 MiB: rounded to 2 MiB
    assert ta.segment_size((10 << 20) + 1) == 12 << 20


def test_small_pool_packs_into_one_segment():
    m = ta.CachingAllocatorModel()
    blocks = [m.malloc(1000) for _ in range(100)]
    assert m.reserved == 2 << 20 and m.segments == 1
    assert m.allocated == 100 * 1024
    for b in blocks:
        m.free(b)
    assert m.allocated == 0
    m.malloc(1 << 20)                                         # merged back into one free 2 MiB block
    assert m.segments == 1


def test_large_pool_split_rules():
    m = ta.CachingAllocatorModel()
    a = m.malloc(3 << 20)                                     # 20 MiB segment, split: 17 MiB > 1 MiB remains
    assert m.reserved == 20 << 20 and m.allocated == 3 << 20
    b = m.malloc(16 << 20)                                    # served by the 17 MiB remainder; 1 MiB left unsplit
    assert m.reserved == 20 << 20 and m.segments == 1
    assert m.allocated == (3 << 20) + (17 << 20)              # the unsplit remainder counts as allocated
    m.free(a)
    m.free(b)
    c = m.malloc(12 << 20)                                    # best fit in the merged 20 MiB block
    assert m.segments == 1 and m.allocated == 12 << 20 and c is not None


def test_best_fit_prefers_the_smallest_block():
    m = ta.CachingAllocatorModel()
    big = m.malloc(40 << 20)
    small = m.malloc(12 << 20)
    m.free(big)
    m.free(small)
    m.malloc(11 << 20)
    assert m.segments == 2 and m.reserved == (52 << 20)
    m.malloc(30 << 20)                                        # the 40 MiB block is still free
    assert m.segments == 2


def test_replay_counts_peaks():
    r = ta.replay([0, 1, ~0, 2, ~1, ~2], [100, 2 << 20, 5000])
    assert r["allocated_peak"] == (2 << 20) + 5120           # 100 B rounds to 512, 5000 B to 5120
    assert r["reserved_peak"] == (2 << 20) + (20 << 20)       # a small segment and a 20 MiB large one
    assert r["segments"] == 2


# -- command line ---------------------------------------------------------------------------------------

def test_cli_unknown_family_is_a_usage_error(capsys):
    assert main(["trace", "--comfyui", "/nonexistent", "--family", "nope", "--width", "64", "--height", "64"]) == 2
    assert "unknown family 'nope'" in capsys.readouterr().err


def test_cli_needs_a_comfyui_checkout(capsys, tmp_path):
    if "comfy.model_management" in sys.modules:
        pytest.skip("comfy already imported in this interpreter")
    assert main(["trace", "--comfyui", str(tmp_path), "--family", "sd1", "--width", "64", "--height", "64"]) == 2
    assert "is not a ComfyUI checkout" in capsys.readouterr().err


def test_cli_frames_are_for_video_families(capsys):
    assert main(["trace", "--comfyui", "/nonexistent", "--family", "sdxl", "--width", "64", "--height", "64",
                 "--frames", "9"]) == 2
    assert "--frames is for video families" in capsys.readouterr().err


# `trace --checkpoint NAME` (ux50 S9): a bare name is looked up in the checkout's models/ folders as ComfyUI's loaders
# do, and a file that is not there, or not a safetensors file, is refused before ComfyUI's import (seconds long).
# Breaking them: comfy_checkout.trace_family without its find_checkpoint call (the name reaches the import, then
# read_header as given).

def _tiny_safetensors(path):
    from gpu_garden.memory.estimate import layouts
    return layouts.write_sparse({"tensors": {"w": {"dtype": "F16", "shape": [2, 2]}}, "__metadata__": {}}, path)


def _no_import(monkeypatch):
    """comfy_checkout with its import and model building replaced by a recorder that stops the run."""
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.trace import comfy_checkout as cc
    seen = []

    def stop(*args, **kwargs):
        seen.append((args, kwargs))
        raise UserError("stopped at the import")
    monkeypatch.setattr(cc, "import_comfy", stop)
    monkeypatch.setattr(cc, "build_case", stop)
    return seen


@pytest.mark.parametrize("name,message", [
    ("flux1-dev-fp8.safetensors", "flux1-dev-fp8.safetensors: no such file here, nor in ComfyUI's folders for --phase sample"),
    ("folder", "folder: a folder, not a model file"),
    ("notes.txt", "notes.txt: only .safetensors headers can be traced"),
    ("broken.safetensors", "broken.safetensors: not a safetensors file"),
])
def test_cli_checkpoint_refused_before_comfyui_is_imported(monkeypatch, capsys, tmp_path, name, message):
    seen = _no_import(monkeypatch)
    (tmp_path / "folder").mkdir()
    (tmp_path / "notes.txt").write_text("not a model")
    (tmp_path / "broken.safetensors").write_bytes(b"\xff" * 64)
    monkeypatch.chdir(tmp_path)
    assert main(["trace", "--comfyui", str(tmp_path / "ComfyUI"), "--family", "flux1", "--width", "64",
                 "--height", "64", "--checkpoint", name]) == 2
    err = capsys.readouterr().err
    assert message in err and seen == []
    if name.startswith("flux1"):
        assert str(tmp_path / "ComfyUI" / "models" / "checkpoints") in err
        assert str(tmp_path / "ComfyUI" / "models" / "diffusion_models") in err


@pytest.mark.parametrize("phase,folder", [
    ("sample", "checkpoints"), ("sample", "unet"), ("sample", "diffusion_models"), ("decode", "vae"),
    ("encode", "checkpoints"), ("text", "clip"), ("text", "text_encoders"),
])
def test_cli_checkpoint_name_found_in_the_checkouts_models_folder(monkeypatch, capsys, tmp_path, phase, folder):
    seen = _no_import(monkeypatch)
    comfyui = tmp_path / "ComfyUI"
    ckpt = _tiny_safetensors(comfyui / "models" / folder / "sub" / "model.safetensors")
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")
    assert main(["trace", "--comfyui", str(comfyui), "--family", "sdxl", "--width", "64", "--height", "64",
                 "--phase", phase, "--checkpoint", "sub/model.safetensors"]) == 2
    assert "stopped at the import" in capsys.readouterr().err
    (args, _), = seen                      # build_case(comfyui_dir, family, w, h, frames, batch, phase, checkpoint, ...)
    assert args[6] == phase and args[7] == str(ckpt)


def test_cli_checkpoint_path_given_is_taken_before_a_models_folder(monkeypatch, capsys, tmp_path):
    seen = _no_import(monkeypatch)
    comfyui = tmp_path / "ComfyUI"
    _tiny_safetensors(comfyui / "models" / "checkpoints" / "model.safetensors")
    here = _tiny_safetensors(tmp_path / "model.safetensors")
    monkeypatch.chdir(tmp_path)
    assert main(["trace", "--comfyui", str(comfyui), "--family", "sdxl", "--width", "64", "--height", "64",
                 "--checkpoint", "model.safetensors"]) == 2
    (args, _), = seen
    assert Path(args[7]).resolve() == here.resolve()
