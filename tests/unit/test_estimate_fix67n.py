"""fix67n: review rev67k's findings on the Dynamic VRAM / latent-walk mends (fix67j, fix67l)."""
import pytest

from support.cli_run import estimate, flat, run


def _judge(names, gb, **pol):
    from gpu_garden.memory.estimate import families, formula as E, layouts, spec
    comps = [c for n in names for c in families.split_components(layouts.table(n), n)]
    policy = dict({"dynamic_vram": "on", "host_ram": 64 << 30}, **pol)
    return E.judge(E.estimate(comps, 1024, 1024, cfg=False, policy=policy), spec.card_bytes(gb) if gb else None)


FLUX = ("flux_flux1-dev", "te_t5xxl_fp16", "te_clip_l", "vae_flux_ae")


# R1. A GGUF text encoder beside a safetensors diffusion model: the text encode loads partially, but the sampler still
# streams (JSON streamed_per_step 19.38 GiB) and the Dynamic VRAM line and the outcome named only the partial load;
# the note read "the GGUF text encoders loads" (rev67k R1_gguf_te_sampler_stream_silent.txt).
def test_gguf_text_encoder_keeps_the_sampler_streaming_figure(capsys, tmp_path):
    pytest.importorskip("gguf")
    from support.gguf_files import sparse_gguf_from_layout
    te, _ = sparse_gguf_from_layout(tmp_path / "t5-v1_1-xxl-encoder-Q8_0.gguf", "te_t5xxl_fp16")
    argv = ["flux_flux1-dev", str(te), "te_clip_l", "vae_flux_ae", "--vram", "4", "--ram", "64", "--dynamic-vram", "on"]
    est = run(["estimate", *argv, "--json"], capsys)[1]
    d = est["dynamic_vram"]
    s = d["streamed_per_step"]
    assert s > 8 << 30 and d["streamed_by_phase"]["sample"] == s
    from gpu_garden.memory.units import fmt_bytes
    words = f"streaming {fmt_bytes(s)} of the diffusion model's weights per step, slower by about " \
            f"{d['added_seconds_per_step']} s per step"
    assert d["verdict"].startswith("loads partially: the GGUF text encoders") and words in d["verdict"]
    assert est["outcome"]["status"] == "runs with offload" and words in est["outcome"]["reason"]
    rc, out, err = estimate(capsys, *argv)
    text = flat(out)
    assert "Dynamic VRAM: the GGUF text encoders load through ComfyUI-GGUF's GGUFModelPatcher" in text
    assert "text encoders loads" not in text


# R2. --models resident: the sample row's weights hold the text encoders and the VAE beside the diffusion model
# (20.34 GiB), and the per-step figure read 13.68 GiB where the (fp8) diffusion model is 11.09 GiB
# (rev67k R2_resident_sampler_stream_over_dm.txt). The sampler runs the diffusion model alone: Dynamic VRAM evicts what
# is kept beside it, so what streams per step is at most the diffusion model, less the room the phase leaves.
@pytest.mark.parametrize("pol", [{"models": "resident"}, {"offload": "none"}])
def test_sampler_streams_only_the_diffusion_model(pol):
    est = _judge(FLUX, 8, **pol)
    dm = next(c["resident"] for c in est["components"] if c["role"] == "diffusion_model")
    b = est["breakdown"]["sample"]
    assert b["weights"] > dm + (8 << 30)  # the row counts the text encoders beside it
    room = est["budget"] - sum(est["fixed"].values()) - b["activations"] - b["allocator_margin"]
    d = est["dynamic_vram"]
    assert d["streamed_per_step"] == d["streamed_by_phase"]["sample"] == dm - room < dm
