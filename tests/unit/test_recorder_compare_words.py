"""Compare says in words what changed in the models between two runs (fixW3, from the fixW2 walk: the Runs
section printed "models: +— / −SD1ClipModel [None]", an empty side as a dash and a missing dtype as [None])."""
from gpu_garden.memory.recorder import compare, record, report

CLIP = {"name": "SD1ClipModel", "label": "text encoder (SD1 CLIP)", "dtype": None, "device": "cpu"}
SD15 = {"name": "SD15 (BaseModel)", "label": "SD15 (BaseModel)", "dtype": "float16", "device": "cpu"}


def run(pid, started, models, args=("--cpu",)):
    r = record.new_run(pid, {}, started)
    r["models"], r["args"] = [dict(m) for m in models], list(args)
    record.finish_run(r, started + 10, "success", None, [])
    return r


def test_a_text_encoder_gone_from_the_second_run_is_named_in_words():
    first, second = run("a", 1000, [SD15, CLIP]), run("b", 2000, [SD15])
    c = compare.compare(first, second)
    assert c["models_words"] == ["text encoder (SD1 CLIP), SD1ClipModel unloaded before this run "
                                 "(it was loaded in the previous one)"]
    md = report.markdown(report.build(second, c))
    assert "- text encoder (SD1 CLIP), SD1ClipModel unloaded before this run" in md, md
    section = md.split("**Compared with the previous run**")[1]
    assert "[None]" not in section and "—" not in section, section


def test_models_added_and_a_new_dtype_and_no_change():
    old = {"name": "SD15 (BaseModel)", "dtype": "float16"}  # a run recorded before models carried a label
    first, second = run("a", 1000, [old]), run("b", 2000, [dict(old, dtype="float32"), CLIP])
    assert compare.compare(first, second)["models_words"] == [
        "text encoder (SD1 CLIP), SD1ClipModel loaded in this run, not in the previous one",
        "SD15 (BaseModel) now in float32 (it was float16)"]
    assert compare.compare(first, run("c", 3000, [old]))["models_words"] == ["no model change"]


def test_a_set_names_only_its_non_empty_sides():
    assert compare.set_words("args", {"added": ["--lowvram"], "removed": []}) == "args: added --lowvram"
    assert compare.set_words("args", {"added": ["--a"], "removed": ["--b", "--c"]}) == "args: added --a; removed --b, --c"
    assert compare.set_words("args", {"added": [], "removed": []}) is None
    md = report.markdown(report.build(run("b", 2000, [SD15], args=("--cpu", "--lowvram")),
                                      compare.compare(run("a", 1000, [SD15]), run("b", 2000, [SD15], args=("--cpu", "--lowvram")))))
    assert "- args: added --lowvram\n" in md and "removed --" not in md, md


def test_the_report_and_the_sidebar_word_a_latent_change_alike():
    # (final read) the sidebar printed "latent: 64x64 → 256x256" from its own JS while the exported report printed the
    # raw dicts ("{'width': 64, ...}"): the words are now made once, in compare.change_words, for both
    first, second = run("a", 1000, [SD15]), run("b", 2000, [SD15])
    first["latent"] = {"width": 64, "height": 64, "frames": 1, "batch": 1}
    second["latent"] = {"width": 256, "height": 256, "frames": 9, "batch": 2}
    c = compare.compare(first, second)
    assert c["change_words"] == ["latent: 64x64 → 256x256, 9 frames, batch 2"]
    md = report.markdown(report.build(second, c))
    assert "- latent: 64x64 → 256x256, 9 frames, batch 2\n" in md and "{" not in md.split("**Compared with")[1], md


def test_version_and_allocator_changes_are_worded_once_for_both():
    # (fixU) web/recorder.js and report.py each formatted the version lines (the report printed a side not recorded as
    # "None", the sidebar as "—"), and only the report listed allocator changes: compare.change_words words them for both
    first, second = run("a", 1000, [SD15]), run("b", 2000, [SD15])
    first["versions"] = {"torch": "2.9.0", "custom_nodes": {"ComfyUI-GGUF": "1.2"}}
    second["versions"] = {"torch": "2.10.0", "comfyui": "0.8.0", "custom_nodes": {"ComfyUI-GGUF": "1.3"}}
    first["allocator"] = {"backend": "native", "expandable_segments": False}
    second["allocator"] = {"backend": "cudaMallocAsync"}
    c = compare.compare(first, second)
    assert c["change_words"] == ["version comfyui: — → 0.8.0", "version custom_nodes/ComfyUI-GGUF: 1.2 → 1.3",
                                 "version torch: 2.9.0 → 2.10.0", "allocator backend: native → cudaMallocAsync",
                                 "allocator expandable_segments: False → —"]
    md = report.markdown(report.build(second, c))
    section = md.split("**Compared with the previous run**")[1]
    for line in c["change_words"]:
        assert f"- {line}\n" in section, section
    assert "None" not in section, section
