"""The flight recorder's host-free core: record model, bounded atomic store, compare, redacted report,
measured-peak matching (and `gpu-garden estimate --measured`), versions read from files, watchdog rules."""
import json
import os

import pytest

from gpu_garden.memory import cli
from gpu_garden.memory.recorder import compare, measured, measured_peak, record, report, store, versions, watchdog

GiB = 1024 ** 3
SD15 = "gg_sd15.safetensors"


def prompt(text="a garden", width=64, height=64, ckpt=SD15):
    return {
        "4": {"class_type": "CheckpointLoaderSimple", "inputs": {"ckpt_name": ckpt}},
        "5": {"class_type": "EmptyLatentImage", "inputs": {"width": width, "height": height, "batch_size": 1}},
        "6": {"class_type": "CLIPTextEncode", "inputs": {"text": text, "clip": ["4", 1]}},
        "10": {"class_type": "LoadImage", "inputs": {"image": "holiday_photo.png"}},
        "3": {"class_type": "KSampler", "inputs": {"model": ["4", 0], "latent_image": ["5", 0], "seed": 1}},
        "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}},
    }


def run(pid="p1", started=1000.0, nodes=(("3", "KSampler", 2.0, 3 * GiB), ("8", "VAEDecode", 0.5, 1 * GiB)),
        status="success", models=(("SD15 (BaseModel)", "float16"),), **kw):
    r = record.new_run(pid, prompt(**kw), started)
    t = 0.0
    for nid, typ, dur, peak in nodes:
        r["nodes"].append(record.node_record(nid, typ, t0_s=t, duration_s=dur, peak={"cuda:0": peak, "cpu": 2 * GiB},
                                             free_before={"cuda:0": 8 * GiB}, free_after={"cuda:0": 7 * GiB}))
        t += dur
    r["models"] = [{"name": n, "dtype": d, "bytes": GiB} for n, d in models]
    r["versions"] = {"comfyui": "0.8.0", "torch": "2.9.0", "custom_nodes": {"packA": "1.0"}}
    r["args"] = ["--listen", "--base-directory", "/home/alice/comfy"]
    r["devices"] = [{"device": "cuda:0", "name": "NVIDIA GeForce RTX 3060", "total": 12 * GiB}]
    return record.finish_run(r, started + 10, status, None)


# -- record ---------------------------------------------------------------------------------------
def test_record_keeps_model_files_and_latent_never_prompt_text_or_other_files():
    r = run()
    assert r["model_files"] == [SD15]
    assert r["latent"] == {"width": 64, "height": 64, "frames": 1, "batch": 1}
    line = store.dumps(r)
    assert "a garden" not in line and "holiday_photo" not in line
    assert r["graph"]["10"] == "LoadImage" and r["duration_s"] == 10


def test_status_and_cached_from_comfyui_messages():
    msgs = [("execution_start", {"prompt_id": "p"}), ("execution_cached", {"nodes": ["4", "5"]}),
            ("execution_error", {"node_id": "8", "node_type": "VAEDecode", "exception_type": "torch.OutOfMemoryError"})]
    assert record.status_from_messages("error", msgs) == ("error", {"node_id": "8", "type": "VAEDecode",
                                                                    "exception_type": "torch.OutOfMemoryError"})
    assert record.cached_nodes(msgs) == ["4", "5"]
    assert record.status_from_messages("success", [])[0] == "success"
    assert record.status_from_messages("error", [("execution_interrupted", {"node_id": "3"})])[0] == "interrupted"


def test_latent_of_video_and_first_by_id():
    p = {"12": {"class_type": "EmptyHunyuanLatentVideo", "inputs": {"width": 848, "height": 480, "length": 73, "batch_size": 1}},
         "2": {"class_type": "EmptySD3LatentImage", "inputs": {"width": 1024, "height": 1024, "batch_size": 2}},
         "3": {"class_type": "ImageScale", "inputs": {"width": 5, "height": 5}}}
    assert record.latent_size(p) == {"width": 1024, "height": 1024, "frames": 1, "batch": 2}
    del p["2"]
    assert record.latent_size(p) == {"width": 848, "height": 480, "frames": 73, "batch": 1}


# -- store ----------------------------------------------------------------------------------------
def test_store_keeps_the_last_200_newest_first(tmp_path):
    s = store.RunStore(tmp_path / "runs.jsonl")
    for i in range(205):
        s.add(run(f"p{i}", started=i))
    got = s.read()
    assert len(got) == 200 and got[0]["prompt_id"] == "p204" and got[-1]["prompt_id"] == "p5"
    assert [r["prompt_id"] for r in s.read(3)] == ["p204", "p203", "p202"]
    assert len((tmp_path / "runs.jsonl").read_text().splitlines()) == 200
    assert s.get("p100")["prompt_id"] == "p100" and s.get("p0") is None


def test_store_skips_torn_lines_and_replaces_a_rerecorded_run(tmp_path):
    path = tmp_path / "runs.jsonl"
    path.write_text(store.dumps(run("a")) + "\n{\"prompt_id\": \"torn\n" + "not json\n" + "[1,2]\n")
    s = store.RunStore(path)
    assert [r["prompt_id"] for r in s.read()] == ["a"]
    s.add(run("b"))
    s.add(run("a", started=5000))
    assert [r["prompt_id"] for r in s.read()] == ["a", "b"] and s.get("a")["started"] == 5000


def test_store_write_is_atomic(tmp_path, monkeypatch):
    path = tmp_path / "runs.jsonl"
    s = store.RunStore(path)
    s.add(run("kept"))
    before = path.read_bytes()

    def boom(src, dst):
        raise OSError("disk full")
    monkeypatch.setattr(store.os, "replace", boom)
    with pytest.raises(OSError):
        s.add(run("lost"))
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.jsonl", "runs.jsonl.lock"]  # no temp file left behind


def test_store_fsyncs_before_replacing(tmp_path, monkeypatch):
    calls = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(store.os, "fsync", lambda fd: (calls.append("fsync"), real_fsync(fd))[1])
    monkeypatch.setattr(store.os, "replace", lambda a, b: (calls.append("replace"), real_replace(a, b))[1])
    store.RunStore(tmp_path / "r.jsonl").add(run())
    assert calls == ["fsync", "replace"]


def test_writer_runs_jobs_in_order_and_drops_when_full():
    w = store.Writer(maxsize=4)
    seen = []
    for i in range(3):
        assert w.submit(seen.append, i)
    assert w.flush(5) and seen == [0, 1, 2]
    import threading
    gate = threading.Event()
    w.submit(gate.wait)
    accepted = sum(w.submit(seen.append, i) for i in range(10))
    assert accepted < 10 and w.dropped == 10 - accepted
    gate.set()
    assert w.flush(5)


# -- compare --------------------------------------------------------------------------------------
def test_compare_names_nodes_past_ten_percent_only():
    a = run("a", nodes=(("3", "KSampler", 2.0, 4 * GiB), ("8", "VAEDecode", 1.0, 2 * GiB), ("9", "SaveImage", 0.01, 0)))
    b = run("b", started=2000, nodes=(("3", "KSampler", 2.19, int(4.8 * GiB)), ("8", "VAEDecode", 1.12, int(2.1 * GiB)),
                                      ("9", "SaveImage", 0.02, 0)))
    c = compare.compare(a, b)
    got = {(n["id"], n["what"], n["device"]) for n in c["nodes"]}
    # KSampler: +9.5 % time (no), +20 % peak (yes); VAE Decode: +12 % time (yes), +5 % peak (no); SaveImage: 2x of 10 ms (noise)
    assert got == {("3", "peak", "cuda:0"), ("8", "time", None)}
    peak = next(n for n in c["nodes"] if n["what"] == "peak")
    assert peak["before"] == 4 * GiB and peak["change"] == pytest.approx(0.2, abs=1e-3)
    assert "KSampler #3" in c["summary"] and "VAEDecode #8" in c["summary"]


def test_compare_says_what_changed_in_between():
    a = run("a", models=(("SD15 (BaseModel)", "float16"),))
    b = run("b", started=2000, width=512, height=768, ckpt="other.safetensors", models=(("SD15 (BaseModel)", "float32"),))
    b["versions"] = {"comfyui": "0.8.1", "torch": "2.9.0", "custom_nodes": {"packA": "1.1", "packB": "git abc"}}
    b["args"] = a["args"] + ["--lowvram"]
    b["dynamic_vram"] = True
    ch = compare.compare(a, b)["changed"]
    assert {"key": "comfyui", "before": "0.8.0", "after": "0.8.1"} in ch["versions"]
    assert {"key": "custom_nodes/packA", "before": "1.0", "after": "1.1"} in ch["versions"]
    assert {"key": "custom_nodes/packB", "before": None, "after": "git abc"} in ch["versions"]
    assert ch["args"] == {"added": ["--lowvram"], "removed": []}
    assert ch["models"] == {"added": ["SD15 (BaseModel) [float32]"], "removed": ["SD15 (BaseModel) [float16]"]}
    assert ch["model_files"] == {"added": ["other.safetensors"], "removed": [SD15]}
    assert ch["latent"]["after"] == {"width": 512, "height": 768, "frames": 1, "batch": 1}
    assert ch["dynamic_vram"] == {"before": None, "after": True}
    assert compare.nothing_changed(compare.what_changed(a, run("c")))


def test_previous_run_is_the_same_workflow():
    cur = run("cur", started=3000)
    other = run("other", started=2500)
    other["graph"] = {"1": "Something"}
    same = run("same", started=2000)
    later = run("later", started=4000)
    assert compare.pick_previous([later, cur, other, same], cur)["prompt_id"] == "same"
    assert compare.pick_previous([later, cur, other], cur)["prompt_id"] == "other"  # shares executed nodes
    assert compare.compare(None, cur)["previous"] is None


# -- report ---------------------------------------------------------------------------------------
def test_redaction_removes_paths_and_user_names_keeps_model_names_and_urls():
    text = ("--base-directory /home/alice/comfy --extra /tmp/pytest-of-alice/x ckpt ~/models/sd_xl.safetensors "
            r"C:\Users\alice\ComfyUI\models\flux1-dev.safetensors see https://github.com/comfyanonymous/ComfyUI/issues/1 "
            "by alice; 1.2 GiB/s, ~5 GB, cuda:0, expandable_segments:True")
    out = report.redact_text(text, {"alice"})
    assert "alice" not in out and "/home" not in out and "/tmp" not in out and "Users" not in out
    assert "<path>/sd_xl.safetensors" in out and "<path>/flux1-dev.safetensors" in out
    assert "https://github.com/comfyanonymous/ComfyUI/issues/1" in out
    assert "1.2 GiB/s, ~5 GB, cuda:0, expandable_segments:True" in out and "by <user>" in out


def test_report_redacted_by_default_full_on_request(monkeypatch):
    monkeypatch.setattr(report, "_user_names", lambda: {"alice"})
    prev = run("a", nodes=(("3", "KSampler", 1.0, 2 * GiB),))
    cur = run("b", started=2000, nodes=(("3", "KSampler", 1.0, 3 * GiB),))
    cur["model_files"] = ["sdxl/juggernaut.safetensors"]
    oom = {"id": "r1", "node": {"id": "3", "type": "KSampler"}, "exception_type": "torch.OutOfMemoryError",
           "message": "CUDA out of memory in /home/alice/comfy/comfy/ops.py", "cause": "activations"}
    rep = report.build(cur, compare.compare(prev, cur), oom)
    blob = json.dumps(rep)
    assert "/home/alice" not in blob and "alice" not in blob
    assert rep["model_files"] == ["juggernaut.safetensors"] and rep["oom"]["cause"] == "activations"
    md = report.markdown(rep)
    assert "/home" not in md and "| 3 | KSampler | 1.000 | cuda:0 3.00 GiB, cpu 2.00 GiB |" in md
    assert "comfyui: 0.8.0" in md and "NVIDIA GeForce RTX 3060" in md and "peak on cuda:0 2.00 GiB → 3.00 GiB" in md
    assert "CUDA out of memory in <path>" in md
    full = report.build(cur, None, oom, redact=False)
    assert "/home/alice/comfy" in full["args"] and full["model_files"] == ["sdxl/juggernaut.safetensors"]
    assert "Full report" in report.markdown(full)


def test_markdown_with_no_earlier_run_names_no_run():
    """The first run of a workflow: the report says no earlier run is recorded, and prints no run id for it (it
    printed `None`, Python's, found walking the first hour in ComfyUI, ux20)."""
    cur = run("b", started=2000)
    md = report.markdown(report.build(cur, compare.compare(None, cur)))
    line = next(x for x in md.splitlines() if x.startswith("**Compared with the previous run**"))
    assert line == "**Compared with the previous run**: no earlier run of this workflow is recorded", line
    prev = run("a")
    assert "**Compared with the previous run** `a`: " in report.markdown(report.build(cur, compare.compare(prev, cur)))


def test_markdown_table_cells_cannot_break_the_table():
    r = run("a", nodes=(("3", "Weird|Type\nNode", 1.0, GiB),))
    md = report.markdown(report.build(r))
    row = next(line for line in md.splitlines() if line.startswith("| 3 "))
    assert "Weird\\|Type Node" in row and row.count(" | ") == 5


def test_markdown_says_dynamic_vram_peaks_leave_out_the_weights():
    """With Dynamic VRAM the weights live in comfy-aimdo's pages, outside PyTorch's allocator: a node's GPU peak in
    the report is then activations, and the report says so above the table (only then)."""
    r = run("a", nodes=(("3", "KSampler", 1.0, GiB),))
    assert "do not include the weights" not in report.markdown(report.build(r))
    r["dynamic_vram"] = True
    md = report.markdown(report.build(r))
    assert md.index("do not include the weights") < md.index("| node | type |")


# -- measured -------------------------------------------------------------------------------------
def test_measured_peak_matches_files_latent_and_dtypes():
    runs = [run("new", started=3000, nodes=(("3", "KSampler", 1, 3 * GiB),)),
            run("old", started=1000, nodes=(("3", "KSampler", 1, 5 * GiB), ("8", "VAEDecode", 1, 6 * GiB))),
            run("big", started=2000, width=1024, height=1024, nodes=(("3", "KSampler", 1, 9 * GiB),)),
            run("failed", started=2500, status="error", nodes=(("3", "KSampler", 1, 11 * GiB),))]
    m = measured_peak(runs, ["/models/checkpoints/" + SD15], {"width": 64, "height": 64}, ["torch.float16"])
    assert m["label"] == "measured here" and m["runs"] == 2 and m["prompt_id"] == "new"
    assert m["peak"]["cuda:0"] == 6 * GiB and m["by_type"]["KSampler"]["cuda:0"] == 5 * GiB
    assert measured_peak(runs, [SD15], [1, 4, 128, 128], None)["prompt_id"] == "big"  # a LATENT shape, x8
    assert measured_peak(runs, [SD15], {"width": 64, "height": 64}, ["float32"]) is None
    assert measured_peak(runs, ["other.safetensors"], {"width": 64, "height": 64}, None) is None
    assert measured_peak(runs, [SD15, "lora.safetensors"], {"width": 64, "height": 64}, None) is None
    assert measured_peak(runs, [], None, None) is None


@pytest.fixture
def sd15_file(tmp_path):
    from gpu_garden.memory.estimate import layouts

    return layouts.write_sparse("sd15_v1-5-pruned-emaonly-fp16", tmp_path / SD15)


def test_cli_estimate_measured_text_and_json(tmp_path, sd15_file, capsys):
    runs = tmp_path / "runs.jsonl"
    runs.write_text(store.dumps(run("match", width=512, height=512, nodes=(("3", "KSampler", 1, 3 * GiB),))) + "\n"
                    + store.dumps(run("other", width=768, height=768, nodes=(("3", "KSampler", 1, 7 * GiB),))) + "\n")
    base = ["estimate", str(sd15_file), "--width", "512", "--height", "512", "--vram", "24", "--measured", str(runs)]
    cli.main(base)
    out = capsys.readouterr().out
    assert "Measured here: peak cpu 2.00 GiB, cuda:0 3.00 GiB over 1 matching run(s) (newest match" in out
    cli.main(base + ["--json"])
    data = json.loads(capsys.readouterr().out)
    assert data["measured"]["peak"] == {"cuda:0": 3 * GiB, "cpu": 2 * GiB} and data["measured"]["prompt_id"] == "match"
    cli.main(base[:2] + ["--width", "640", "--height", "640", "--vram", "24", "--measured", str(runs)])
    assert "no successful recorded run" in capsys.readouterr().out


def test_cli_estimate_measured_missing_file_is_one_line_error(tmp_path, sd15_file, capsys):
    code = cli.main(["estimate", str(sd15_file), "--width", "512", "--height", "512", "--measured", str(tmp_path / "no.jsonl")])
    err = capsys.readouterr().err
    assert code == 2 and "no such file" in err and len(err.strip().splitlines()) == 1


# -- versions -------------------------------------------------------------------------------------
def test_versions_from_pyproject_and_git_files(tmp_path):
    a = tmp_path / "packA"
    (a / ".git" / "refs" / "heads").mkdir(parents=True)
    (a / "pyproject.toml").write_text('[build-system]\nversion = "9"\n[project]\nname = "a"\nversion = "1.2.3"\n[tool.x]\nversion="0"\n')
    (a / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (a / ".git" / "refs" / "heads" / "main").write_text("0123456789abcdef0123456789abcdef01234567\n")
    b = tmp_path / "packB"
    (b / ".git").mkdir(parents=True)
    (b / ".git" / "HEAD").write_text("ref: refs/heads/dev\n")
    (b / ".git" / "packed-refs").write_text("# pack-refs\nfedcba9876543210fedcba9876543210fedcba98 refs/heads/dev\n")
    c = tmp_path / "packC"
    c.mkdir()
    (tmp_path / "off.disabled").mkdir()
    (tmp_path / "__pycache__").mkdir()
    (tmp_path / "loose.py").write_text("")
    got = versions.custom_node_packs([tmp_path], skip={"packC"})
    assert got == {"packA": "1.2.3 (0123456789ab)", "packB": "git fedcba987654"}
    assert versions.pack_version(str(c)) == "unknown"
    assert versions.pyproject_version('[project]\nname="x"\n') is None


def test_versions_collect_has_python_os_and_this_pack(tmp_path):
    (tmp_path / "comfyui_version.py").write_text('__version__ = "0.8.0"\n')
    v = versions.collect(str(tmp_path), [], os.path.dirname(cli.__file__) + "/..")
    assert v["comfyui"] == "0.8.0" and v["python"] and v["os"] and v["gpu_garden"].startswith("0.1.0")
    got = versions.allocator({"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True", "HOME": "/x"})
    got.pop("backend", None)  # only where CUDA is up
    assert got == {"PYTORCH_CUDA_ALLOC_CONF": "expandable_segments:True"}


# -- watchdog -------------------------------------------------------------------------------------
CFG = dict(watchdog.DEFAULTS)


def test_watchdog_stalled_needs_both_overrun_and_silence():
    # recorded 10 s: warn past max(3 x 10, 10 + 60) = 70 s, and only after 30 s without progress
    assert watchdog.check(100.0 + 69, 100.0, 100.0, 10.0, None, CFG) is None
    w = watchdog.check(100.0 + 71, 100.0, 100.0, 10.0, None, CFG)
    assert w["reason"] == "stalled" and w["elapsed_s"] == 71 and w["expected_s"] == 10.0
    assert watchdog.check(100.0 + 71, 100.0, 100.0 + 50, 10.0, None, CFG) is None  # progress 21 s ago
    # recorded 100 s: 3x rules (300 s)
    assert watchdog.check(299, 0.0, 0.0, 100.0, None, CFG) is None and watchdog.check(301, 0.0, 0.0, 100.0, None, CFG)
    assert watchdog.check(10_000, 0.0, 0.0, None, None, CFG) is None  # no record: no overrun rule


def test_watchdog_pinned_memory():
    assert watchdog.is_pinned(1, 100, CFG) and not watchdog.is_pinned(3, 100, CFG) and not watchdog.is_pinned(None, 100, CFG)
    assert watchdog.check(100, 0, 0, None, 85, CFG) is None  # pinned 15 s < 20 s
    assert watchdog.check(100, 0, 0, None, 79, CFG)["reason"] == "pinned"


def test_watchdog_config_from_environment_and_expected_durations():
    cfg = watchdog.config({"GPU_GARDEN_WATCHDOG_FACTOR": "5", "GPU_GARDEN_WATCHDOG_STALL_S": "x"})
    assert cfg["factor"] == 5.0 and cfg["stall_s"] == CFG["stall_s"]
    runs = [run("a", nodes=(("8", "VAEDecode", 2.0, GiB),)), run("b", nodes=(("8", "VAEDecode", 3.0, GiB),)),
            run("c", status="error", nodes=(("8", "VAEDecode", 99.0, GiB),))]
    d = watchdog.expected_durations(runs)
    assert watchdog.expected_for(d, "8", "VAEDecode") == 3.0 and watchdog.expected_for(d, "77", "VAEDecode") == 3.0
    assert watchdog.expected_for(d, "8", "KSampler") is None
    g = watchdog.guide()
    assert g["id"] == "hang-dynamic-vram" and "--disable-dynamic-vram" in g["markdown"] and "---" not in g["markdown"][:5]


def test_watchdog_config_rejects_values_that_would_spin_or_overflow():
    from gpu_garden.memory.recorder import watchdog as W

    cfg = W.config({"GPU_GARDEN_WATCHDOG_INTERVAL_S": "0", "GPU_GARDEN_WATCHDOG_FACTOR": "inf"})
    assert cfg["interval_s"] == 0.5 and cfg["factor"] == W.DEFAULTS["factor"]


@pytest.mark.parametrize("text,root,shown", [
    (r"loading C:\Users\John Smith\ComfyUI\models\x.safetensors now", r"C:\Users\John Smith", "loading <path>/x.safetensors now"),
    ("/home/alice/My Models/f.safetensors, done", "/home/alice", "<path>/f.safetensors, done"),
    ("saved to /home/alice/out dir/img.png", "/home/alice", "saved to <path>"),
])
def test_redaction_cuts_paths_with_spaces_under_known_roots(text, root, shown):
    from gpu_garden.memory.recorder.report import redact_text

    out = redact_text(text, users={"John", "alice"}, roots=[root])
    assert out == shown and "Smith" not in out and "Models" not in out
