"""The whole-workflow estimate (`gpu-garden estimate --workflow`) on the real templates ComfyUI ships: the package
comfyui-workflow-templates (0.7.67 with ComfyUI 0.8.0) and its media_* parts, found through importlib. The api_*
templates and the rest of the media-api bundle call paid APIs and run no local model: left out (counted).

For every other template: the model files it names (its nodes' properties.models: name and directory, subgraphs
included, and the file names its loader widgets hold) are written as sparse safetensors (layouts.write_sparse, the
tests' writer) into a fresh models folder, each from the bundled layout of the same file where one exists, else from
its family's layout (layouts.FAMILY_FILES), else not written (a file with no layout: a LoRA, a ControlNet, a model
patch, Qwen2.5-VL); the output says which. A CLIP vision file (clip_vision/) with no layout is built from ComfyUI's own
config of that encoder (COMFYUI_DIR/comfy/clip_vision_config_h.json, ..._g, clip_vision_siglip_384.json, by the name;
image_encoder.clip_vision, the tower comfy/clip_model.py builds, fp16), and an audio encoder (audio_encoders/) from
ComfyUI's own class on the meta device (wav2vec2 large with comfy/audio_encoders/audio_encoders.py's config, Whisper
large v3), in a child process of this interpreter: marked "built", not a real file's header. Then workflow.estimate_workflow reads the template from that folder, as `gpu-garden estimate
--workflow T.json --models-dir DIR` does (no host RAM judged, the size the graph sets).

Writes benchmarks/results/workflow_templates.json: per template whether it was read (or the error), the files named,
found and missing, the phases estimated, the latent size and length read (and whether through links), the peak, the
assumption lines; and a summary (templates read, estimated, failed, by reason), which it also prints.

    COMFYUI_DIR=... COMFYUI_PYTHON benchmarks/workflow_templates.py [--only ID ...] [--out FILE]

(the interpreter that has the templates package: ComfyUI's; without the package it says so and writes nothing)
"""
import argparse
import importlib.util
import json
import os
import sys
import tempfile
import traceback
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
OUT = REPO / "benchmarks" / "results" / "workflow_templates.json"
PACKAGE = "comfyui_workflow_templates"
API_BUNDLE = "media-api"

# a file name's family (layouts.FAMILY_FILES entry), by what its name holds; the first row that matches
FAMILY_WORDS = (("hunyuan3d-2.1", ("hunyuan_3d_v2.1", "hunyuan3d-v2.1", "hunyuan3d-dit-v2-1")),
                ("hunyuan3d", ("hunyuan3d-dit-v2", "hunyuan3d-v2", "hunyuan_3d_v2")), ("ltx-2", ("ltx-2", "ltx2", "ltxav")), ("ltxv", ("ltxv", "ltx-video", "ltx_video")),
                ("hunyuan-video-1.5", ("hunyuanvideo1.5", "hunyuan_video_1.5", "hunyuanvideo15", "hunyuan_video15")),
                ("hunyuan-video", ("hunyuan_video",)), ("wan22", ("wan2.2", "wan2_2", "wan22")),
                ("wan21", ("wan2.1", "wan2_1", "wan21", "wan_2.1")), ("qwen-image", ("qwen_image", "qwen-image")),
                ("z-image", ("z_image", "z-image")), ("flux2", ("flux2", "flux-2", "flux.2")),
                ("flux1", ("flux1", "flux_1", "flux-1", "flux.1", "flux_dev", "flux_schnell")), ("chroma", ("chroma",)),
                ("hidream", ("hidream",)), ("sd3", ("sd3",)), ("sdxl", ("sdxl", "sd_xl")), ("sd1", ("v1-5", "sd15", "sd1.5")))
# a text encoder's layout, by what its name holds (no family rule: one encoder serves several families)
TE_WORDS = (("umt5", "te_umt5_xxl_fp16"), ("t5xxl", "te_t5xxl_fp16"), ("clip_l", "te_clip_l"), ("clip_g", "te_clip_g"),
            ("gemma_3_12b", "te_gemma_3_12b_it"))
MODEL_DIRS = ("diffusion_models", "unet", "checkpoints")
# a CLIP vision file's ComfyUI config (COMFYUI_DIR/comfy/...), by what its name holds: the benchmark builds its tensors
CLIP_VISION_CONFIGS = (("clip_vision_h", "clip_vision_config_h.json"), ("clip_vision_g", "clip_vision_config_g.json"),
                       ("sigclip_vision_patch14_384", "clip_vision_siglip_384.json"))
FULL_CHECKPOINTS = ("sd15_v1-5-pruned-emaonly-fp16", "sdxl_sd_xl_base_1.0")  # layouts that hold the VAE and text encoders


def _templates_package():
    """The installed templates package, or None and why not."""
    if importlib.util.find_spec(PACKAGE) is None:
        return None, f"{PACKAGE} is not installed in this interpreter ({sys.executable}): run this with ComfyUI's"
    import comfyui_workflow_templates as pkg
    if not hasattr(pkg, "iter_templates") or not hasattr(pkg, "get_asset_path"):
        return None, f"{PACKAGE} {getattr(pkg, '__file__', '')} has no iter_templates/get_asset_path (a version before 0.7)"
    return pkg, None


def _version(name):
    from importlib import metadata
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def _norm(s):
    return str(s).lower().replace("-", "_")


def layout_for(name, directory, names, family_files):
    """(layout, how) for a model file: the bundled layout of the same file (the layout's name ends with the file's
    stem), else its family's (the diffusion model, VAE or text encoder of FAMILY_FILES), else (None, why)."""
    stem = _norm(Path(name).name)
    for ext in (".safetensors", ".sft"):
        stem = stem.removesuffix(ext)
    same = [lay for lay in names if _norm(lay) == stem or _norm(lay).endswith("_" + stem)]
    if len(same) == 1:
        return same[0], "same file"
    low = _norm(name)
    if directory in ("text_encoders", "clip"):
        lay = next((lay for word, lay in TE_WORDS if word in low), None)
        return (lay, "a text encoder of the same kind") if lay else (None, "no bundled layout of this text encoder")
    fam = next((f for f, words in FAMILY_WORDS if any(_norm(w) in low for w in words)), None)
    if directory in MODEL_DIRS or directory == "vae":
        if fam is None:
            return None, "no family recognised in the name"
        if fam == "wan22" and "14b" in low and directory in MODEL_DIRS:  # Wan 2.2 A14B: Wan 2.1 14B's architecture
            return family_files["wan21"]["model"], "Wan 2.1's (Wan 2.2 14B is Wan 2.1 14B's architecture; 1.3B's layout)"
        return family_files[fam]["model" if directory in MODEL_DIRS else "vae"], f"the family's ({fam})"
    return None, f"no bundled layout for {directory}/"


# an audio encoder file's ComfyUI class, by what its name holds (ComfyUI 0.8.0 comfy/audio_encoders/audio_encoders.py:47-80)
AUDIO_ENCODERS = (("wav2vec2_large", "wav2vec2 large"), ("whisper_large_v3", "whisper large v3"))
_AUDIO_CODE = r"""
import json, sys
sys.path.insert(0, sys.argv[1])
import torch
import comfy.cli_args
comfy.cli_args.args.cpu = True  # no GPU needed to build on the meta device
import comfy.ops
kw = dict(dtype=torch.float16, device="meta", operations=comfy.ops.manual_cast)
with torch.device("meta"):
    if sys.argv[2] == "wav2vec2 large":  # audio_encoders.py:50-60, embed_dim 1024
        from comfy.audio_encoders.wav2vec2 import Wav2Vec2Model
        m = Wav2Vec2Model(embed_dim=1024, num_heads=16, num_layers=24, conv_norm=True, conv_bias=True, do_normalize=True,
                          do_stable_layer_norm=True, **kw)
    else:  # whisper.py imports torchaudio (its mel front end): not built where ComfyUI's interpreter lacks it
        from comfy.audio_encoders.whisper import WhisperLargeV3
        m = WhisperLargeV3(**kw)
print(json.dumps({k: list(v.shape) for k, v in m.state_dict().items()}))
"""


def built_audio_encoder(name):
    """(tensors, how) of an audio encoder built from ComfyUI's own class (COMFYUI_DIR), or (None, why)."""
    import subprocess
    kind = next((k for word, k in AUDIO_ENCODERS if word in _norm(name)), None)
    comfy = os.environ.get("COMFYUI_DIR")
    if kind is None or not comfy or not (Path(comfy) / "comfy" / "audio_encoders").is_dir():
        return None, "no ComfyUI class known for this audio encoder" if kind is None else "set COMFYUI_DIR to build it"
    p = subprocess.run([sys.executable, "-c", _AUDIO_CODE, comfy, kind], capture_output=True, text=True, timeout=300)
    if p.returncode:
        return None, f"not built ({p.stderr.strip().splitlines()[-1:]})"
    shapes = json.loads(p.stdout.strip().splitlines()[-1])
    return ({k: {"dtype": "F16", "shape": v} for k, v in shapes.items()},
            f"built from ComfyUI's {kind} class (comfy/audio_encoders, fp16), not a real file")


def built_clip_vision(name, directory):
    """(tensors, how) of a CLIP vision file built from ComfyUI's own config of that encoder, or (None, why)."""
    if directory != "clip_vision":
        return None, None
    cfg = next((c for word, c in CLIP_VISION_CONFIGS if word in _norm(name)), None)
    if cfg is None:
        return None, "no ComfyUI config known for this CLIP vision file"
    path = Path(os.environ.get("COMFYUI_DIR") or "/nonexistent") / "comfy" / cfg
    if not path.is_file():
        return None, f"no COMFYUI_DIR/comfy/{cfg} to build it from (set COMFYUI_DIR)"
    from gpu_garden.memory.estimate import image_encoder
    t = image_encoder.clip_vision(json.loads(path.read_text(encoding="utf-8")), "F16")
    return ({k: {"dtype": d, "shape": list(sh)} for k, (d, sh) in t.items()},
            f"built from ComfyUI's comfy/{cfg} (fp16), not a real file")


def named_files(wf, workflow, model_files):
    """[(name, directory, source)] the template names: properties.models of every node (subgraphs included), then the
    loader widgets' file names not already listed (under the loader's first folder)."""
    out, nodes = {}, []
    if isinstance(wf.get("nodes"), list):
        nodes += [n for n in wf["nodes"] if isinstance(n, dict)]
    for sg in ((wf.get("definitions") or {}).get("subgraphs") or []) if isinstance(wf.get("definitions"), dict) else []:
        if isinstance(sg, dict) and isinstance(sg.get("nodes"), list):
            nodes += [n for n in sg["nodes"] if isinstance(n, dict)]
    for n in nodes:
        props = n.get("properties") if isinstance(n.get("properties"), dict) else {}
        for m in props.get("models") or []:
            if isinstance(m, dict) and isinstance(m.get("name"), str) and isinstance(m.get("directory"), str):
                out.setdefault(m["name"], (m["directory"], "properties.models"))
    try:
        read = workflow.nodes(wf)
    except Exception:  # noqa: BLE001 - the estimate itself reports it
        read = []
    for t, w in read:
        for name, folders in (model_files.LOADERS.get(t) or model_files.CHECKED.get(t) or ()):
            if folders and isinstance(w.get(name), str) and w[name] and w[name] not in out:
                out[w[name]] = (folders[0], f"{t}.{name}")
    return [(k, d, s) for k, (d, s) in out.items()]


def loaders_not_followed(wf, model_files):
    """The node types named like a loader (…Loader…) that the estimate does not read, subgraphs included."""
    nodes = list(wf.get("nodes") or []) if isinstance(wf.get("nodes"), list) else []
    for sg in ((wf.get("definitions") or {}).get("subgraphs") or []) if isinstance(wf.get("definitions"), dict) else []:
        nodes += sg.get("nodes") or [] if isinstance(sg, dict) else []
    ts = {n.get("type") for n in nodes if isinstance(n, dict) and isinstance(n.get("type"), str) and n.get("mode") not in (2, 4)}
    return sorted(t for t in ts if "Loader" in t and t not in model_files.LOADERS and t not in model_files.CHECKED)


def reason(err, row):
    """A failed template's reason, for the summary."""
    if err.startswith("crash"):
        return err.split(":", 2)[0] + ":" + err.split(":", 2)[1]
    if "no latent size" in err:
        return "no latent size"
    if "none of the workflow's model files was found" in err:
        if "no loader nodes" in err:
            return "only loaders the estimate does not follow" if row.get("loaders_not_followed") else "no loader nodes"
        if not any(f["layout"] for f in row.get("files_named", [])):
            return "no bundled layout for any file it names (benchmark)"
        return "no model file found"
    if "VAE cannot decode" in err:
        if any(f["directory"] == "checkpoints" and f["how"].startswith("the family's") and f["layout"] not in FULL_CHECKPOINTS
               for f in row.get("files_named", [])):  # the real checkpoint holds its VAE; the stand-in layout does not
            return "a checkpoint's stand-in layout holds no VAE; another pipeline's VAE is the only one (benchmark)"
        return "two pipelines: a VAE of another family checked against the model"
    return err[:80]


def local(wf, workflow, model_files):
    """Whether a template runs a local model: it names a model file or has a node named like a loader."""
    return isinstance(wf, dict) and (bool(named_files(wf, workflow, model_files)) or bool(loaders_not_followed(wf, model_files)))


def one(tid, bundle, path, mods):
    workflow, layouts, model_files, formula, UserError = mods
    row = {"id": tid, "bundle": bundle}
    try:
        wf = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        return dict(row, read="error", error=f"not read: {exc}", reason="not JSON")
    if not local(wf, workflow, model_files):
        return None
    names, fams = layouts.names(), layouts.FAMILY_FILES
    files, differs = [], []
    row["loaders_not_followed"] = loaders_not_followed(wf, model_files)
    with tempfile.TemporaryDirectory(prefix="gg-templates-") as d:
        for name, directory, source in named_files(wf, workflow, model_files):
            lay, how = layout_for(name, directory, names, fams)
            rel = os.path.relpath(os.path.join("/", name), "/")
            if lay:  # in the file's size class and dtype, or said to differ (template_standins.py, fix68g)
                t, how, why = standin(name, directory, lay, how, layouts, MODEL_DIRS)
                layouts.write_sparse(t, Path(d) / directory / rel)
                differs += [f"{name}: {why}"] if why else []
            elif directory in ("clip_vision", "audio_encoders"):
                built, why = built_clip_vision(name, directory) if directory == "clip_vision" else built_audio_encoder(name)
                how = why
                if built:
                    lay = f"built: {why.split(' (')[0].removeprefix('built from ComfyUI' + chr(39) + 's ')}"
                    layouts.write_sparse({"tensors": built}, Path(d) / directory / rel)
            files.append({"name": name, "directory": directory, "source": source, "layout": lay, "how": how})
        row["files_named"] = files
        try:
            est = workflow.estimate_workflow(wf, d)
        except UserError as exc:
            return dict(row, read="error", error=str(exc).replace(d, "MODELS"), reason=reason(str(exc), row))
        except Exception as exc:  # noqa: BLE001 - a crash on a real template is the finding
            tb = traceback.extract_tb(exc.__traceback__)[-1]
            err = f"crash: {type(exc).__name__}: {exc} ({Path(tb.filename).name}:{tb.lineno})"
            return dict(row, read="error", error=err, reason=reason(err, row))
    w = est["workflow"]
    notes = [str(a).replace(d, "MODELS") for a in est.get("assumptions", [])]
    out = dict(row, read="ok", files_found=w["files"], missing=w["missing"], missing_not_counted=w["missing_not_counted"],
                phases=sorted(k for k, v in est["phases"].items() if v), family=est.get("family"),
                diffusion_model=any(c.get("role") == "diffusion_model" for c in est.get("components", [])),
                size={"width": est["width"], "height": est["height"], "frames": est["frames"], "batch": est["batch"]},
                size_source=("graph" if w["size_from_graph"] else "native size (assumed)"
                             if any("the native size of" in n for n in notes) else "the image it encodes"),
                size_from_graph=w["size_from_graph"], size_from_input=w["size_from_input"], size_assumed=w["size_assumed"],
                size_through_links=any("read through its links" in n for n in notes),
                links_not_followed=[n for n in notes if "which the estimate does not follow" in n],
                peak=est["peak"], peak_gib=round(est["peak"] / 2**30, 2), peak_phase=est["peak_phase"],
                phases_gib={k: round(v / 2**30, 2) for k, v in est["phases"].items() if v},
                side_models=[dict(m, weights_gib=round(m["weights"] / 2**30, 2)) for m in w.get("side_models", [])],
                outcome=est.get("outcome", {}).get("status"), notes=notes)
    return dict(out, peak=None, peak_gib=None, stand_in_differs=differs) if differs else out


KINDS = ("loaders_not_followed", "benchmark", "no_latent_size", "two_pipelines", "crash", "other")


def _kind(why):
    """A failure reason's short name (the docs' figures)."""
    return ("benchmark" if "(benchmark)" in why else "loaders_not_followed" if why.startswith("only loaders")
            else "no_latent_size" if why == "no latent size" else "two_pipelines" if why.startswith("two pipelines")
            else "crash" if why.startswith("crash") else "other")


def summary(rows, skipped):
    ok = [r for r in rows if r["read"] == "ok"]
    failed = [r for r in rows if r["read"] != "ok"]
    return {"templates_local": len(rows), "templates_api_left_out": skipped, "estimated": len(ok), "failed": len(failed),
            "estimated_with_diffusion_model": sum(1 for r in ok if r["diffusion_model"]),
            "failed_by_reason": dict(Counter(r["reason"] for r in failed).most_common()),
            "failed_by_kind": {k: sum(1 for r in failed if _kind(r["reason"]) == k) for k in KINDS},
            "estimated_size_from_graph": sum(1 for r in ok if r["size_from_graph"]),
            "estimated_size_from_encoded_image": sum(1 for r in ok if r["size_source"] == "the image it encodes"),
            "estimated_size_native_assumed": sum(1 for r in ok if r["size_source"] == "native size (assumed)"),
            "estimated_size_through_links": sum(1 for r in ok if r["size_through_links"]),
            "estimated_all_files_found": sum(1 for r in ok if not r["missing"]),
            "estimated_links_not_followed": sum(1 for r in ok if r["links_not_followed"]),
            "estimated_with_loaders_not_sized": sum(1 for r in ok if any(n.startswith("not counted, loaded beside")
                                                                         for n in r["notes"])),
            "estimated_with_side_models_sized": sum(1 for r in ok if r.get("side_models")),
            "estimated_stand_in_differs": sum(1 for r in ok if r.get("stand_in_differs")),  # peak null (fix68g)
            "side_model_files_built": sum(1 for r in rows for f in r.get("files_named", [])
                                          if str(f.get("layout") or "").startswith("built"))}


def _first_sight(given, out):
    """The summary before any reader change: the given file's summary, or the first sight the results file holds."""
    try:
        if given:
            old = json.loads(Path(given).read_text(encoding="utf-8"))
            return dict(old["summary"], commit=old.get("commit", "ba7b5a2b"))
        return json.loads(out.read_text(encoding="utf-8")).get("first_sight") if out.is_file() else None
    except (OSError, ValueError, KeyError):
        return None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", nargs="*", help="these template ids only (nothing written)")
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--first-sight", metavar="FILE", help="a results file whose summary is the first sight (the commit before "
                    "any reader change: git show ba7b5a2b:benchmarks/results/workflow_templates.json); else the first "
                    "sight the results file already holds is kept")
    a = ap.parse_args(argv)
    pkg, why = _templates_package()
    if pkg is None:
        print(f"workflow_templates: {why}; nothing written")
        return 0
    sys.path.insert(0, str(REPO / "tests"))
    from support.pack import load_pack
    load_pack()
    from gpu_garden.memory.errors import UserError
    from gpu_garden.memory.estimate import formula, layouts, model_files, workflow
    mods = (workflow, layouts, model_files, formula, UserError)
    global standin
    from template_standins import standin
    rows, skipped, no_local = [], 0, []
    for e in sorted(pkg.iter_templates(), key=lambda e: e.template_id):
        if e.bundle == API_BUNDLE or e.template_id.startswith("api_"):
            skipped += 1
            continue
        js = [x.filename for x in e.assets if x.filename == f"{e.template_id}.json"]
        if not js or e.template_id.startswith("index"):  # the index files list the templates: none is a workflow
            continue
        if a.only and e.template_id not in a.only:
            continue
        r = one(e.template_id, e.bundle, pkg.get_asset_path(e.template_id, js[0]), mods)
        if r is None:
            no_local.append(e.template_id)
        else:
            rows.append(r)
    s = summary(rows, skipped)
    s["templates_no_local_model"] = len(no_local)
    print(f"{'template':<52} {'read':<5} {'peak GiB':>8}  size / reason")
    for r in rows:
        if r["read"] == "ok":
            sz = r["size"]
            print(f"{r['id']:<52} ok    {str(r['peak_gib']):>8}  {sz['width']}x{sz['height']}x{sz['frames']} "
                  f"({r['size_source']}{', links' if r['size_through_links'] else ''})"
                  + (f", missing {len(r['missing'])}" if r["missing"] else ""))
        else:
            print(f"{r['id']:<52} error {'':>8}  {r['reason']}")
    print(f"\n{s['templates_local']} local-model templates ({s['templates_api_left_out']} of the media-api bundle and "
          f"{len(no_local)} others with no local model left out): {s['estimated']} estimated "
          f"({s['estimated_with_diffusion_model']} with a diffusion model file, {s['estimated_size_from_graph']} at the "
          f"graph's size, {s['estimated_size_from_encoded_image']} at the size of the image it encodes, "
          f"{s['estimated_size_native_assumed']} at the family's native size), {s['failed']} failed")
    for k, n in s["failed_by_reason"].items():
        print(f"  {n:>3}  {k}")
    if a.only:
        return 0
    out = {"package": {p: _version(p) for p in ("comfyui-workflow-templates", "comfyui-workflow-templates-core",
                                                   "comfyui-workflow-templates-media-image",
                                                   "comfyui-workflow-templates-media-video",
                                                   "comfyui-workflow-templates-media-other")},
           "command": "COMFYUI_DIR=... COMFYUI_PYTHON benchmarks/workflow_templates.py", "summary": s,
           "first_sight": _first_sight(a.first_sight, Path(a.out)), "templates": rows,
           "no_local_model": no_local}
    Path(a.out).write_text(json.dumps(out, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"written {a.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
