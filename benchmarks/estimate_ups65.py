"""The figures of docs/estimate.md's two-stage paragraph and docs/estimate-accuracy.md's Task ups65 (issue 15): LTX-2's
latent upscale step without a workflow (`gpu-garden estimate ... --upscale FILE|auto`), against the --workflow path on the
same files and size, and the step's per-voxel figure at a header's config.

  cli_auto     `estimate ltx-2 --width 768 --height 512 --frames 97 --upscale auto --vram 80 --ram 64 --json` (bundled layouts)
  cli_file     the same on sparse files written from the bundled layouts (diffusion model, upscaler), --upscale FILE
  workflow     --workflow on those files: UNETLoader, EmptyLTXVLatentVideo 768x512x97, LatentUpscaleModelLoader and
               LTXVLatentUpsampler; same_phases says whether its phases and breakdown equal cli_file's
  one_stage    the CLI without --upscale, for the peak the second stage adds
  per_voxel    values per input-latent voxel at the rebuilt config and at a 3-D plain x2 config of 512 wide

    python benchmarks/estimate_ups65.py
"""
import contextlib
import io
import json
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))
sys.path.insert(0, str(REPO / "benchmarks"))
from support.pack import load_pack  # noqa: E402

load_pack()

from gpu_garden.memory import cli  # noqa: E402
from gpu_garden.memory.estimate import latent_upscale, layouts  # noqa: E402
from results import save  # noqa: E402

SIZE = ["--width", "768", "--height", "512", "--frames", "97"]
JUDGE = ["--vram", "80", "--ram", "64", "--json"]
UPSCALER = "ltx-2-spatial-upscaler-x2-1.0.safetensors"


def run(*argv) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        try:
            cli.main(["estimate", *argv])
        except SystemExit:
            pass
    return json.loads(out.getvalue())


def figures(est: dict) -> dict:
    up = est["breakdown"].get("latent_upscale") or {}
    return {"width": est["width"], "height": est["height"], "latent": est["latent"]["shape"], "peak": est["peak"],
            "peak_phase": est["peak_phase"], "sample": est["phases"]["sample"],
            "upscale_phase": est["phases"].get("latent_upscale"), "upscale_weights": up.get("weights"),
            "upscale_activations": up.get("activations"), "comfyui_request": up.get("comfyui_request")}


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp) / "models"
        dm = layouts.write_sparse("ltx-2_ltx-2-19b_bf16", d / "diffusion_models" / "ltx2.safetensors")
        up = layouts.write_sparse(latent_upscale.LAYOUT, d / "latent_upscale_models" / UPSCALER)
        wf = Path(tmp) / "wf.json"
        wf.write_text(json.dumps({"nodes": [
            {"id": 1, "type": "UNETLoader", "widgets_values": ["ltx2.safetensors", "default"]},
            {"id": 2, "type": "EmptyLTXVLatentVideo", "widgets_values": [768, 512, 97, 1]},
            {"id": 3, "type": "LatentUpscaleModelLoader", "widgets_values": [UPSCALER]},
            {"id": 4, "type": "LTXVLatentUpsampler", "widgets_values": []}], "links": []}))
        file_est = run(str(dm), *SIZE, "--upscale", str(up), *JUDGE)
        wf_est = run("--workflow", str(wf), "--models-dir", str(d), *JUDGE)
        one = run(str(dm), *SIZE, *JUDGE)
    auto = run("ltx-2", *SIZE, "--upscale", "auto", *JUDGE)
    cfg512 = dict(latent_upscale.rebuilt_config(), mid_channels=512, rational_resampler=False)
    data = {"cli_auto": figures(auto), "cli_file": figures(file_est), "workflow": figures(wf_est), "one_stage": figures(one),
            "same_phases": file_est["phases"] == wf_est["phases"] and file_est["breakdown"] == wf_est["breakdown"],
            "per_voxel": {"rebuilt": latent_upscale.per_voxel(latent_upscale.rebuilt_config()),
                          "plain_512": latent_upscale.per_voxel(cfg512)}}
    path = save("estimate_ups65", "python benchmarks/estimate_ups65.py", data)
    print(json.dumps(data, indent=1))
    print(f"wrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
