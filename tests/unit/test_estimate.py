"""The estimate: exact weights on all 14 bundled layouts written out as sparse files, per-phase figures that
behave, the verdict, the smallest card, knobs, and the CLI."""
import json

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.estimate import formula as E
from gpu_garden.memory.estimate import headers
from gpu_garden.memory.estimate import layouts
from gpu_garden.memory.errors import UserError
from gpu_garden.memory.units import GiB


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("layouts")
    return {n: layouts.write_sparse(n, d / f"{n}.safetensors") for n in layouts.names()}


@pytest.mark.parametrize("name", layouts.names())
def test_weights_exact_on_every_layout(files, name):
    lay = layouts.load(name)
    comps = E.from_files([files[name]])
    assert sum(c["bytes"] for c in comps) == lay["total_bytes"]
    if all(c["role"] == "other" for c in comps):  # LTX-2's latent upscaler alone (ltx64): listed, estimated in a graph
        with pytest.raises(UserError, match="none of these files is a diffusion model"):
            E.estimate(comps, 1024, 1024)
        return
    est = E.estimate(comps, 1024, 1024)
    assert est["weights"]["total"] == lay["total_bytes"]
    assert sum(c["bytes"] for c in est["components"]) == lay["total_bytes"]
    if "family" in lay:
        assert est["family"] == lay["family"]
    for k in ("family", "components", "phases", "peak", "assumptions", "verdict", "min_vram_gb", "knobs"):
        assert k in est


def flux_files(files):
    return [files[n] for n in ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")]


def test_flux_workflow_phases(files):
    est = E.estimate(E.from_files(flux_files(files)), 1024, 1024, cfg=None)
    ph, bd = est["phases"], est["breakdown"]
    assert set(ph) == {"text_encode", "sample", "sample_naive_attention", "vae_decode", "vae_decode_tiled"}
    assert est["peak_phase"] == "sample" and est["peak"] == ph["sample"]
    assert bd["sample"]["weights"] == layouts.load("flux_flux1-dev")["total_bytes"]
    # text encode holds T5-XXL + CLIP-L as stored (16-bit), the VAE is cast from fp32 to 16-bit
    # (less T5's encoder.embed_tokens.weight, a copy of shared.weight ComfyUI's T5 class has no parameter for)
    assert bd["text_encode"]["weights"] == layouts.load("te_t5xxl_fp16")["total_bytes"] - 32128 * 4096 * 2 \
        + layouts.load("te_clip_l")["total_bytes"]
    assert bd["vae_decode"]["weights"] == layouts.load("vae_flux_ae")["total_bytes"] // 2
    assert ph["sample_naive_attention"] > ph["sample"] and ph["vae_decode_tiled"] < ph["vae_decode"]
    assert est["fixed"]["cuda_context"] > 0 and est["fixed"]["comfyui_reserve"] == 400 << 20
    assert est["latent"]["image_tokens"] == 4096 and est["latent"]["text_tokens"] == 256  # ComfyUI's T5 min_length
    assert not est["cfg"]
    # transformer + activations lands on diffusers' published FLUX.1-dev bf16 peak (22.64 GB) within 2 %, and
    # the activations part on its own (the published peak less the exact weights: 0.47 GiB) within 25 %: a
    # figure of weights alone, or activations doubled, fails
    transformer = bd["sample"]["weights"] + bd["sample"]["activations"]
    assert abs(transformer / (22.64 * GiB) - 1) < 0.02
    published_activations = 22.64 * GiB - bd["sample"]["weights"]
    assert abs(bd["sample"]["activations"] / published_activations - 1) < 0.25
    assert est["comfyui_memory_required"] == pytest.approx(1 * 128 * 128 * 2 * 0.01 * 3.1 * (1 << 20), rel=1e-6)
    assert any("CFG off" in a for a in est["assumptions"])


def test_activations_grow_with_size_batch_frames_and_cfg(files):
    comps = E.from_files([files["wan_wan2.1_t2v_1.3B_fp16"]])
    a = lambda **kw: E.estimate(comps, **({"width": 832, "height": 480, "frames": 33, "batch": 1} | kw))["breakdown"]["sample"]["activations"]  # noqa: E731
    base = a()
    assert a(width=1280, height=720) > base and a(frames=81) > base and a(batch=2) > base
    assert a(cfg=False) < base
    lat = E.estimate(comps, 832, 480, 81)["latent"]
    assert lat["shape"] == [1, 16, 21, 60, 104] and lat["image_tokens"] == 32760


def test_wan22_geometry(files):
    lat = E.estimate(E.from_files([files["wan_wan2.2_ti2v_5B_fp16"]]), 1280, 704, 121)["latent"]
    assert lat["shape"] == [1, 48, 31, 44, 80] and lat["image_tokens"] == 27280


def test_sd15_checkpoint(files):
    est = E.estimate(E.from_files([files["sd15_v1-5-pruned-emaonly-fp16"]]), 512, 512)
    assert est["family"] == "sd1" and est["latent"]["shape"] == [1, 4, 64, 64]
    assert est["latent"]["batch_in_model"] == 2
    roles = {c["role"] for c in est["components"]}
    assert roles == {"diffusion_model", "text_encoder", "vae", "other"}
    assert est["peak"] < 4 * GiB and est["min_vram_gb"] == 4  # a 4 GB card (GTX 1650), ux50 B3


def test_judge_thresholds(files):
    est = E.estimate(E.from_files([files["sd15_v1-5-pruned-emaonly-fp16"]]), 512, 512)
    p = est["peak"]
    assert E.judge(dict(est), p / 0.85)["verdict"] == "fits"
    assert E.judge(dict(est), p / 0.95)["verdict"] == "tight"
    assert E.judge(dict(est), p - 1)["verdict"] == "does not fit"
    assert E.judge(dict(est), None)["verdict"] == "no budget"


def test_min_vram_gb_steps():
    assert E.min_vram_gb(1) == 4
    assert E.min_vram_gb(int(7.8 * GiB)) == 8
    assert E.min_vram_gb(int(7.9 * GiB)) == 10  # an 8 GB card reports 8 x 0.98 = 7.84 GiB (spec.CARD_SHARE; 7.96 before ux50 B4)
    assert E.min_vram_gb(int(23.56 * GiB)) == 32  # a 24 GB card: the RTX 4090's 23.55 GiB (memory/llm/cards.py)
    assert E.min_vram_gb(int(23.5 * GiB)) == 24
    assert E.min_vram_gb(int(24.5 * GiB)) == 32
    assert E.min_vram_gb(200 * GiB) is None


def test_knobs_make_flux_fit_16gb(files):
    est = E.judge(E.estimate(E.from_files(flux_files(files)), 1024, 1024, cfg=None), 16 * GiB)
    assert est["verdict"] == "does not fit"
    ids = {k["id"]: k for k in est["knobs"]}
    assert {"fp8_weights", "gguf_q8_0", "gguf_q4_k", "partial_offload", "lower_resolution"} <= set(ids)
    assert ids["fp8_weights"]["fits"] and ids["fp8_weights"]["saving"] > 10 * GiB
    assert not ids["lower_resolution"]["fits"]
    assert all(k["saving"] > 0 and k["peak_after"] == est["peak"] - k["saving"] for k in est["knobs"])


def test_tiled_decode_knob_at_high_resolution(files):
    comps = E.from_files([files["sd15_v1-5-pruned-emaonly-fp16"]])
    # on a card where VAE Decode runs untiled (on the smallest card that fits, the decode with its CUDA
    # convolution workspace no longer fits and ComfyUI falls back to tiles: the peak is sampling there)
    est = E.estimate(comps, 2048, 2048, policy={"budget": 12 * GiB})
    assert est["peak_phase"] == "vae_decode"
    assert est["knobs"][0]["id"] in ("tiled_vae", "lower_resolution")
    assert "tiled_vae" in {k["id"] for k in est["knobs"]}


def test_text_encoder_knobs_when_encoding_is_the_peak(files):
    comps = E.from_files([files["wan_wan2.1_t2v_1.3B_fp16"], files["te_umt5_xxl_fp16"], files["vae_wan_2.1_vae"]])
    est = E.estimate(comps, 832, 480, 81)
    assert est["peak_phase"] == "text_encode"
    assert {"te_cpu", "te_fp8"} <= {k["id"] for k in est["knobs"]}


def test_resident_policy_counts_everything(files):
    comps = E.from_files(flux_files(files))
    swap = E.estimate(comps, 1024, 1024, cfg=False)
    keep = E.estimate(comps, 1024, 1024, cfg=False, policy={"models": "resident"})
    assert keep["peak"] > swap["peak"] + 9 * GiB
    assert "unload_te" in {k["id"] for k in keep["knobs"]}


def test_unknown_family_is_flagged():
    est = E.estimate([{"foo.weight": ("BF16", (1024, 1024))}], 512, 512)
    assert est["family"] == "unknown" and est["unknown"]
    assert any("not recognised" in a for a in est["assumptions"])


def test_node_style_components_with_roles():
    """The node passes loaded state dicts with roles and torch dtype names already translated."""
    table = layouts.table("wan_wan2.1_t2v_1.3B_fp16")
    est = E.estimate([{"table": table, "role": "diffusion_model", "source": "MODEL"}], 832, 480, 33)
    assert est["family"] == "wan21" and est["components"][0]["bytes"] == headers.table_bytes(table)
    assert headers.torch_dtype_name("torch.float8_e4m3fn") == "F8_E4M3"


@pytest.mark.parametrize("args", [dict(width=0, height=512), dict(width=512, height=512, frames=0), dict(width=512, height=512, batch=-1)])
def test_bad_sizes(args):
    with pytest.raises(UserError):
        E.estimate([{"foo.weight": ("BF16", (8, 8))}], **args)


@pytest.mark.parametrize("args", [dict(width=16392, height=512), dict(width=512, height=10**9), dict(width=512, height=512, frames=16385),
                                  dict(width=512, height=512, batch=4097)])
def test_sizes_beyond_comfyuis_nodes_are_refused(args):
    """ComfyUI's nodes stop at 16384 px a side or frames (nodes.MAX_RESOLUTION) and a batch of 4096 (EmptyLatentImage)."""
    with pytest.raises(UserError, match="beyond what ComfyUI's nodes accept"):
        E.estimate([{"foo.weight": ("BF16", (8, 8))}], **args)


def test_the_largest_sizes_comfyui_accepts_are_estimated():
    est = E.estimate([{"foo.weight": ("BF16", (8, 8))}], 16384, 64, 1, 4096)
    assert est["peak"] > 0


def test_cli_width_zero_says_positive_not_missing(files, capsys):
    rc = cli.main(["estimate", *map(str, flux_files(files)), "--width", "0", "--height", "512"])
    err = capsys.readouterr().err
    assert rc == 2 and "must be positive" in err and "are needed" not in err and "Traceback" not in err


def test_cli_json(files, capsys):
    rc = cli.main(["estimate", *map(str, flux_files(files)), "--width", "1024", "--height", "1024", "--vram", "16", "--ram", "64",
                   "--json"])
    out = json.loads(capsys.readouterr().out)
    # over 16 GiB, but ComfyUI loads the diffusion model partially (lowvram_model_memory): it runs, exit 0 (task ux-estimate);
    # --ram: what stays in RAM must fit there, so without it the outcome would follow this machine's free RAM
    assert rc == 0 and out["verdict"] == "does not fit" and out["family"] == "flux1"
    assert out["outcome"]["status"] == "runs with offload" and out["outcome"]["offloaded"] == out["peak"] - 16 * GiB
    for k in ("family", "components", "phases", "peak", "assumptions", "verdict", "min_vram_gb", "knobs"):
        assert k in out
    assert out["min_vram_gb"] == 24 and out["budget"] == 16 * GiB
    rc = cli.main(["estimate", *map(str, flux_files(files)), "--width", "1024", "--height", "1024", "--vram", "48"])
    text = capsys.readouterr().out
    assert rc == 0 and "FITS" in text and "peak" in text and "ComfyUI's own memory_required" in text


def test_cli_budget_from_probe(files, capsys, monkeypatch):
    from gpu_garden.memory.budget import probe
    snap = {"devices": [{"index": 0, "name": "Fake 12GB", "backend": "cuda", "total": 12 * GiB, "free": 11 * GiB,
                         "other_processes": 1 * GiB, "models": [], "notes": []}], "host_ram": {}, "sampled_at": 0}
    monkeypatch.setattr(probe, "snapshot", lambda *a, **k: snap)
    rc = cli.main(["estimate", str(files["sd15_v1-5-pruned-emaonly-fp16"]), "--width", "512", "--height", "512", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["budget"] == 11 * GiB and "Fake 12GB" in out["budget_source"]
    monkeypatch.setattr(probe, "snapshot", lambda *a, **k: {"devices": [{"backend": "cpu", "total": 64 * GiB}]})
    cli.main(["estimate", str(files["sd15_v1-5-pruned-emaonly-fp16"]), "--width", "512", "--height", "512"])
    assert "no budget" in capsys.readouterr().out


def test_cli_bad_file_exit_2(tmp_path, capsys):
    bad = tmp_path / "bad.safetensors"
    bad.write_bytes(b"\xff" * 16)
    assert cli.main(["estimate", str(bad), "--width", "512", "--height", "512", "--vram", "8"]) == 2
    err = capsys.readouterr().err
    assert "bad.safetensors" in err and err.count("\n") == 1
    assert cli.main(["estimate", str(tmp_path), "--width", "512", "--height", "512", "--vram", "8"]) == 2


def test_demo_section_is_text():
    text = E.demo_section()
    assert isinstance(text, str) and "FLUX.1" in text and "verdict" in text


def test_no_torch_import():
    from support.pack import run_python
    out = run_python("import sys; import gpu_garden.memory.estimate.formula, gpu_garden.memory.cli; print('torch' in sys.modules)")
    assert out.stdout.strip().endswith("False"), out.stderr


def test_text_encoder_alone(files):
    est = E.judge(E.estimate(E.from_files([files["te_t5xxl_fp16"]]), 1024, 1024), 8 * GiB)
    assert list(est["phases"]) == ["text_encode"] and not est["unknown"]
    assert est["verdict"] == "does not fit"
    assert {"te_cpu", "te_fp8", "partial_offload"} <= {k["id"] for k in est["knobs"]}


def test_vae_alone_takes_its_family(files):
    est = E.estimate(E.from_files([files["vae_wan_2.1_vae"]]), 832, 480, 81)
    assert est["family"] == "wan21" and est["peak_phase"] == "vae_decode" and "sample" not in est["phases"]


def test_nothing_usable():
    with pytest.raises(UserError):
        E.estimate([{"alphas_cumprod": ("F32", (1000,))}], 512, 512)


def test_gguf_flux_file_end_to_end(tmp_path):
    """A FLUX.1-dev Q8_0 GGUF (tensor infos as city96's files have them, data a sparse hole)."""
    pytest.importorskip("gguf")
    pytest.importorskip("numpy")
    from support.gguf_files import sparse_gguf_from_layout

    path, total = sparse_gguf_from_layout(tmp_path / "flux1-dev-Q8_0.gguf")
    est = E.estimate(E.from_files([path]), 1024, 1024, cfg=None)
    assert est["family"] == "flux1" and est["weights"]["total"] == total
    assert est["components"][0]["dtypes"]["Q8_0"] > 0.95 * total
    assert est["breakdown"]["sample"]["weights"] == total
    assert "fp8_weights" not in {k["id"] for k in est["knobs"]}


def test_cli_policy_flags(files, capsys):
    args = ["estimate", *map(str, flux_files(files)), "--width", "1024", "--height", "1024", "--vram", "80", "--json"]
    cli.main(args)
    swap = json.loads(capsys.readouterr().out)
    cli.main(args + ["--models", "resident"])
    keep = json.loads(capsys.readouterr().out)
    cli.main(args + ["--text-encoders", "cpu"])
    cpu = json.loads(capsys.readouterr().out)
    assert keep["peak"] > swap["peak"] + 9 * GiB                      # T5-XXL + CLIP-L + VAE stay loaded
    assert cpu["breakdown"]["text_encode"]["weights"] == 0             # the encoders run on the CPU
    assert swap["breakdown"]["text_encode"]["weights"] > 9 * GiB
    assert any("every model stays resident" in a for a in keep["assumptions"])


def test_budget_is_comfyuis_own_device_on_a_multi_gpu_host():
    snap = {"devices": [{"index": None, "backend": "cpu", "total": 64 * GiB},
                        {"index": 0, "backend": "cuda", "name": "RTX 3060", "total": 12 * GiB, "other_processes": 0},
                        {"index": 1, "backend": "cuda", "name": "RTX 4090", "total": 24 * GiB, "other_processes": 2 * GiB}]}
    assert E.budget_from_snapshot(snap, 1) == (22 * GiB, "device 1 RTX 4090 (less 2.00 GiB held by other processes)")
    assert E.budget_from_snapshot(snap)[0] == 12 * GiB  # unknown device: the first accelerator, as before
