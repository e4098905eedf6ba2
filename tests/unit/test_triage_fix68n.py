"""fix68n: mend review rev68f's findings on fix68f (issue 14). Logs under data/fix68f/ and data/fix68n/ (README: each
one's origin). Every test goes through the whole scan (engine.triage_text, the CLI's path)."""
from pathlib import Path

from gpu_garden.memory.triage import engine, render

DATA = Path(__file__).parent / "data"


def _answer(name):
    res = engine.triage_text((DATA / name).read_text())
    ev = res["events"][res["headline"]]
    return res, ev, " ".join(e for c in ev["causes"] for e in c["evidence"])


# 1. The side-by-side list's first guide is the guide the reading prints (picked after the list's: the Vulkan cap, the
# version-regression verdict, ZeRO-3's gathering), in the JSON and in the text.
def test_side_by_side_leads_with_the_printed_guide():
    for name in ("fix68f/lc_vulkan_ub8192_12817.log", "fix68f/vl_regression_7b_on_80g.log",
                 "fix68n/ds_zero3_init.log"):
        res, ev, _ = _answer(name)
        alts = ev["alternatives"]
        assert len(alts) >= 2, (name, alts)
        assert alts[0]["guide"] == {"id": ev["guide"]["id"], "title": ev["guide"]["title"]}, (name, alts[0]["guide"], ev["guide"]["id"])
        text = render.render_human(res)
        said = [ln.split("guide:", 1)[1].strip() for ln in text.splitlines() if "guide:" in ln]
        assert said and said[0] == ev["guide"]["title"], (name, said, ev["guide"]["title"])


# 2. ZeRO-3's gathering guide only for a gathering frame: zero.Init's wrapper / _post_init_method (model construction
# under from_pretrained, partition_parameters.py) is not one -> the weights guide; the Lightning log keeps ZeRO-3's.
def test_zero_init_construction_is_not_gathering():
    res, ev, said = _answer("fix68n/ds_zero3_init.log")
    assert "ZeRO-3 gathering" not in said, said
    assert ev["guide"]["id"] != "deepspeed-zero3", ev["guide"]["id"]
    assert ev["causes"][0]["id"] == "weights-exceed-vram" and ev["guide"]["id"] == "pytorch-weights", (ev["causes"][0]["id"], ev["guide"]["id"])
    res, ev, said = _answer("fix68f/pt_lightning_ds_zero3_gather.log")
    assert ev["guide"]["id"] == "deepspeed-zero3" and "ZeRO-3 gathering parameters" in said


# 3. A version that predates a variable, but whose `server config env="map[...]"` line lists it (0.0.0: a source build),
# reads it: the guide keeps it, empty value or not.
def test_env_map_listing_beats_the_version():
    res, ev, _ = _answer("fix68n/ol_p4_dev000_envmap.log")
    md = ev["guide"]["markdown"]
    assert "reads neither" not in md and "does not read" not in md, md[-600:]
    text = (DATA / "fix68n/ol_p4_dev000_envmap.log").read_text().replace("OLLAMA_KV_CACHE_TYPE: ", "")
    ev = engine.triage_text(text)
    ev = ev["events"][ev["headline"]]
    assert "does not read** `OLLAMA_KV_CACHE_TYPE`" in ev["guide"]["markdown"], ev["guide"]["markdown"][-600:]


# 4. memory.required.full is the whole model's, not each layer's (ollama/ollama#11819: 49 layers asked, 48 fit).
def test_forced_layers_says_all_layers_need():
    res, ev, said = _answer("fix68f/ol_11819_num_gpu_forced.log")
    assert "every layer needs" not in said, said
    assert "all 49 layers need " in said, said
