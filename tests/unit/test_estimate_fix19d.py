"""fix19d item 7: --device cpu must not turn a graph not seen whole (a model file missing) into a verdict:
cpu_run judged host RAM and overwrote the incomplete outcome ("verdict: FITS in host RAM", exit 0)."""
import json

from support.cli_run import unwrap
from test_estimate_ux import comfy, est, flux  # noqa: F401  (the fixture and the workflow)


def test_device_cpu_keeps_an_incomplete_graph_incomplete(comfy, tmp_path, capsys):  # noqa: F811
    wf, models = flux(unet="flux1-dev-fp8.safetensors"), str(comfy / "models")
    rc, out, _ = est(tmp_path, capsys, wf, "--models-dir", models, "--device", "cpu")
    v = next(x for x in unwrap(out).splitlines() if x.startswith("verdict:"))
    assert rc == 1 and v.startswith("verdict: INCOMPLETE") and "FITS" not in v
    rc, out, _ = est(tmp_path, capsys, wf, "--models-dir", models, "--device", "cpu", "--json")
    j = json.loads(out)
    assert rc == 1 and j["verdict"] == j["outcome"]["status"] == "incomplete" and j["headroom"] is None
    # the whole graph on a CPU still gets its host-RAM verdict
    rc, out, _ = est(tmp_path, capsys, flux(), "--models-dir", models, "--device", "cpu", "--json")
    assert json.loads(out)["outcome"]["status"] in ("fits", "tight", "does not fit")


# item 9: only diffusers PatchEmbed's pos_embed is a buffer (register_buffer beside its Conv2d proj, 4-D); AuraFlow's
# pos_embed.pos_embed (auraflow_transformer_2d.py: nn.Parameter, proj an nn.Linear) and Wan / SkyReels-V2 /
# ChronoEdit's image_embedder.pos_embed (nn.Parameter) stream with the other parameters. Shapes from those classes.
def test_only_patch_embeds_pos_embed_is_a_resident_buffer():
    from gpu_garden.memory.estimate import layouts
    from gpu_garden.memory.estimate.weights import sequential_buffers
    sd35 = layouts.table("sd3_sd3.5_medium")
    assert sequential_buffers(sd35) == {"model.diffusion_model.pos_embed"}  # SAI naming, beside x_embedder.proj
    diffusers_sd3 = {"pos_embed.pos_embed": ("F16", (1, 147456, 1536)), "pos_embed.proj.weight": ("F16", (1536, 16, 2, 2)),
                     "pos_embed.proj.bias": ("F16", (1536,))}
    auraflow = {"pos_embed.pos_embed": ("BF16", (1, 4096, 3072)), "pos_embed.proj.weight": ("BF16", (3072, 16)),
                "pos_embed.proj.bias": ("BF16", (3072,))}
    wan_flf = {"condition_embedder.image_embedder.pos_embed": ("BF16", (1, 514, 1280)),
               "condition_embedder.image_embedder.ff.net.0.proj.weight": ("BF16", (1280, 1280))}
    assert sequential_buffers(diffusers_sd3) == {"pos_embed.pos_embed"}
    assert sequential_buffers(auraflow) == set() and sequential_buffers(wan_flf) == set()
