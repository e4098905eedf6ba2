"""ui48's walk: the OOM panel listed "Fix 2 - ..." and "Fix 4 - ..." with no Fix 1 or 3, because only fixes with a
command reached it (the others sat in the fold-out). The rendered guide now lists every numbered fix
(memory/triage/guides.py fixes) and the panel shows each in the guide's order (web/lib/oom_parts.js fixRows, in node)."""
from gpu_garden.memory.triage import guides
from support import node_js

ACTIVATIONS = guides.render(guides.load_all()["comfyui-activations"], {"reserve_vram_gb": "1.8"})


def test_the_rendered_guide_names_every_numbered_fix():
    assert [f["label"] for f in ACTIVATIONS["fixes"]] == [
        "Fix 1 - make the step smaller", "Fix 2 - leave ComfyUI more room for activations",
        "Fix 3 - smaller weights leave more room", "Fix 4 - text encoders on the CPU"]


def test_the_panel_shows_every_fix_in_order_commands_under_theirs():
    rows = node_js.call("lib/oom_parts.js", "fixRows", ACTIVATIONS)
    assert rows == [
        {"label": "Fix 1 - make the step smaller", "text": None},
        {"label": "Fix 2 - leave ComfyUI more room for activations", "text": "python main.py --reserve-vram 1.8"},
        {"label": "Fix 3 - smaller weights leave more room", "text": None},
        {"label": "Fix 4 - text encoders on the CPU", "text": "python main.py --lowvram"}]


def test_commands_outside_a_fix_keep_their_place_and_an_old_report_its_commands():
    guide = {"commands": [{"label": "Check", "text": "nvidia-smi"}, {"label": "Fix 2 - b", "text": "b"},
                          {"label": "Fix 2 - b", "text": "b2"}, {"label": "From this log's numbers", "text": "x"}],
             "fixes": [{"label": "Fix 1 - a"}, {"label": "Fix 2 - b"}, {"label": "Fix 3 - c"}]}
    assert [(r["label"], r["text"]) for r in node_js.call("lib/oom_parts.js", "fixRows", guide)] == [
        ("Check", "nvidia-smi"), ("Fix 1 - a", None), ("Fix 2 - b", "b"), ("Fix 2 - b", "b2"),
        ("From this log's numbers", "x"), ("Fix 3 - c", None)]
    old = {"commands": [{"label": "Fix 2 - b", "text": "b"}]}     # stored before `fixes`
    assert node_js.call("lib/oom_parts.js", "fixRows", old) == [{"label": "Fix 2 - b", "text": "b"}]
