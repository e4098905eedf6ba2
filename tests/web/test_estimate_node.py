"""The Footprint Estimate node shows the verdict, the per-phase bars and ComfyUI's own figure on its face in
real Chromium (classic canvas and Nodes 2.0); its display widget never serializes."""
import json
import uuid

from support.comfy_host import sd15_prompt
from web.conftest import open_comfy
from support.web import show_node

NODE = "GPUGardenFootprintEstimate"


def workflow(vram_gb=8.0, mode="formula") -> dict:
    p = sd15_prompt("a garden " + uuid.uuid4().hex[:8], seed=31)
    p["20"] = {"class_type": NODE, "inputs": {"model": ["4", 0], "latent": ["5", 0], "clip": ["4", 1], "vae": ["4", 2],
                                              "width": 1024, "height": 1024, "frames": 1, "batch": 1, "cfg": "auto",
                                              "vram_gb": vram_gb, "when_it_does_not_fit": "warn", "mode": mode}}
    p["3"]["inputs"]["latent_image"] = ["20", 0]
    return p


def run_and_wait(page, wf):
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'estimate.json'); }", wf)
    page.evaluate("async () => { await window.app.queuePrompt(0, 1); }")
    page.wait_for_function(
        f"""() => {{
            const n = window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)});
            const el = n && n.__ggEstimate;
            return el && el.querySelector('[data-testid=gg-estimate-verdict]') && el.isConnected;
        }}""", timeout=240000)
    return page.evaluate(f"() => window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)}).id")




def fmt_gib(n) -> str:
    """bytes as the face writes them beside a row (format.js fmtBytes(n, 2)) for GiB-sized figures."""
    return f"{n / 2 ** 30:.2f} GiB" if n >= 2 ** 30 else f"{n / 2 ** 20:.2f} MiB"


def saved_values(page, node_id):
    """The node's widgets_values in the saved workflow, and how many widgets it has (the face among them):
    node ids are numbers on frontend 1.35 and strings on 1.58, the saved workflow keeps numbers."""
    return page.evaluate("""(id) => [window.app.graph.serialize().nodes.find(n => String(n.id) === String(id)).widgets_values,
        window.app.graph.getNodeById(id).widgets.length]""", node_id)


def test_verdict_on_node_face(comfy_page, comfy_host, output_dir):
    page, console = comfy_page
    node_id = run_and_wait(page, workflow(8.0))
    root = "window.app.graph.getNodeById(id).__ggEstimate"
    verdict = page.evaluate(f"(id) => {root}.querySelector('[data-testid=gg-estimate-verdict]').textContent", node_id)
    text = page.evaluate(f"(id) => {root}.innerText", node_id)
    assert verdict in ("FITS", "TIGHT")
    assert "Stable Diffusion 1.x (sd1)" in text and "ComfyUI's memory estimate (memory_required)" in text
    # the decode rows say which is which (web50 item 7): the plain decode untiled, the other VAE Decode (Tiled)
    assert "VAE untiled" in text and "tiled decode" in text, text
    phases = page.evaluate(f"(id) => [...{root}.querySelectorAll('[data-phase]')].map(e => e.dataset.phase)", node_id)
    assert phases == ["text_encode", "sample", "sample_naive_attention", "vae_decode", "vae_decode_tiled"]

    # display only: not in the saved workflow's widget values nor in the prompt
    saved, n_widgets = saved_values(page, node_id)
    assert saved[:8] == [1024, 1024, 1, 1, "auto", 8, "warn", "formula"] and len(saved) == n_widgets - 1, (saved, n_widgets)
    prompt = page.evaluate("async () => (await window.app.graphToPrompt()).output")
    ours = next(v for v in prompt.values() if v["class_type"] == NODE)
    assert "gg_estimate" not in ours["inputs"]

    comfy_host.wait_idle()
    show_node(page, node_id)
    fit = face_fits(page, node_id)
    assert fit["scroll"] <= fit["client"] + 1 and fit["lastBottom"] <= fit["bottom"] + 1, fit
    page.screenshot(path=str(output_dir / "estimate_node.png"))
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


def show_whole_node(page, node_id):
    """The node from its title to its bottom edge in the viewport (a tall face: scale down to fit)."""
    page.evaluate("""(id) => {
        const c = window.app.canvas, n = window.app.graph.getNodeById(id);
        const title = LiteGraph.NODE_TITLE_HEIGHT || 30;
        const scale = Math.min(1.1, (window.innerHeight - 140) / (n.size[1] + title));
        c.ds.scale = scale;
        c.ds.offset[0] = -n.pos[0] + 420 / scale; c.ds.offset[1] = -n.pos[1] + (60 + title * scale) / scale;
        c.setDirty(true, true);
    }""", node_id)
    page.wait_for_timeout(600)


def face_fits(page, node_id) -> dict:
    """The face's content against the room the node gives it: nothing cut off at the bottom."""
    return page.evaluate("""(id) => {
        const n = window.app.graph.getNodeById(id), root = n.__ggEstimate;
        const r = root.getBoundingClientRect(), last = root.lastElementChild.getBoundingClientRect();
        return {scroll: root.scrollHeight, client: root.clientHeight, bottom: r.bottom, lastBottom: last.bottom};
    }""", node_id)


def estimate_only(width, height, vram_gb=8.0, mode="exact") -> dict:
    """Checkpoint -> empty latent -> Footprint Estimate: the node is an output node, nothing is sampled."""
    p = workflow(vram_gb, mode)
    p["5"]["inputs"].update(width=width, height=height)
    return {k: p[k] for k in ("4", "5", "20")}


def test_a_face_that_ran_off_screen_fits_once_panned_into_view(comfy_page):
    """fixW2's walk on 1.58.1: a Footprint Estimate that was off-screen when its run ended kept its idle height (the
    face was measured while the frontend hid it: 0 px), so panned into view it showed three lines and a scroll bar."""
    page, console = comfy_page
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'estimate.json'); }", estimate_only(512, 512, mode="formula"))
    node_id = page.evaluate(f"() => window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)}).id")
    page.evaluate("() => { const ds = window.app.canvas.ds; ds.offset[0] = -50000; ds.offset[1] = -50000; window.app.canvas.setDirty(true, true); }")
    page.wait_for_timeout(500)
    page.evaluate("async () => { await window.app.queuePrompt(0, 1); }")
    page.wait_for_function("(id) => window.app.graph.getNodeById(id).__ggEstimate.querySelector('[data-testid=gg-estimate-verdict]')",
                           arg=node_id, timeout=240000)
    page.wait_for_timeout(1000)
    show_whole_node(page, node_id)
    page.wait_for_timeout(1000)
    fit = face_fits(page, node_id)
    assert fit["scroll"] <= fit["client"] + 1 and fit["lastBottom"] <= fit["bottom"] + 1, fit
    assert console.from_pack() == [], console.from_pack()


def test_exact_mode_shows_the_traced_peak(comfy_page, comfy_host, output_dir):
    page, console = comfy_page
    node_id = run_and_wait(page, estimate_only(512, 512))
    root = "window.app.graph.getNodeById(id).__ggEstimate"
    page.wait_for_function(f"(id) => {root}.querySelector('[data-testid=gg-estimate-exact]')", arg=node_id, timeout=30000)
    exact = page.evaluate(f"(id) => {root}.querySelector('[data-testid=gg-estimate-exact]').innerText", node_id)
    assert "exact: loaded model traced on meta tensors in" in exact
    assert "= weights" in exact and "activations" in exact and " in " in exact
    peak = page.evaluate(f"(id) => {root}.querySelector('[data-testid=gg-estimate-exact-peak]').textContent", node_id)
    assert peak.endswith("GiB") or peak.endswith("MiB")
    attention = page.evaluate(f"(id) => {root}.querySelector('[data-testid=gg-estimate-exact-attention]').textContent",
                              node_id)
    assert attention.startswith("attention: attention_") and "traced" in attention
    est = page.evaluate("() => window.__gpuGarden.lastEstimate")
    assert est["exact"]["ok"] and est["exact"]["peak"] > est["exact"]["weights"]
    # the verdict and peak rest on the traced step (web50 item 8: FITS from the formula beside a traced peak 38 % higher):
    # the sample phase holds the traced activations, and the face says so
    assert est["exact"]["verdict_from_trace"] is True
    assert est["breakdown"]["sample"]["activations"] == est["exact"]["activations_peak"], (est["breakdown"], est["exact"])
    basis = page.evaluate(f"(id) => {root}.querySelector('[data-testid=gg-estimate-exact-basis]').textContent", node_id)
    assert basis.endswith("the sample row, peak and verdict above use these traced activations with the formula's fixed costs")
    # the peak phase's ◂ says what it marks
    mark = page.evaluate(f"""(id) => {{ const m = {root}.querySelector('[data-testid=gg-estimate-peak-phase]');
                                           return [m.textContent, m.title, m.parentElement.dataset.phase]; }}""", node_id)
    assert mark[0].endswith(" ◂") and mark[2] == est["peak_phase"], mark
    assert mark[1] == "◂ the phase with the highest peak: the peak and the verdict at the top are this phase's", mark
    # the formula is still there, labelled, and the face is never a serialized value
    assert page.evaluate(f"(id) => {root}.querySelectorAll('[data-phase]').length", node_id) == 5
    saved, n_widgets = saved_values(page, node_id)
    assert saved[:8] == [1024, 1024, 1, 1, "auto", 8, "warn", "exact"] and len(saved) == n_widgets - 1, (saved, n_widgets)

    comfy_host.wait_idle()
    show_whole_node(page, node_id)
    fit = face_fits(page, node_id)
    assert fit["scroll"] <= fit["client"] + 1 and fit["lastBottom"] <= fit["bottom"] + 1, fit
    assert fit["bottom"] < page.viewport_size["height"] - 60, fit       # the whole face is on screen
    page.screenshot(path=str(output_dir / "estimate_node_exact.png"))
    # opening the assumptions adds lines: the node grows with them
    page.evaluate(f"(id) => {{ {root}.querySelector('details').open = true; }}", node_id)
    page.wait_for_timeout(400)
    fit = face_fits(page, node_id)
    assert fit["scroll"] <= fit["client"] + 1 and fit["lastBottom"] <= fit["bottom"] + 1, fit
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


def face_text(page, node_id, testid):
    return page.evaluate("""([id, t]) => { const e = window.app.graph.getNodeById(id).__ggEstimate
        .querySelector(`[data-testid=${t}]`); return e ? e.textContent : null; }""", [node_id, testid])


def test_badge_reads_the_outcome_and_knobs_hide_when_it_fits(comfy_page, comfy_host, output_dir):
    """SD1.5 at 1024² on 2.5 GiB: the peak is over the budget (verdict does not fit) but ComfyUI loads the UNet
    partially, so the summary said RUNS WITH OFFLOAD while the badge said DOES NOT FIT. On 6 GiB it fits: no knobs."""
    page, console = comfy_page
    node_id = run_and_wait(page, estimate_only(1024, 1024, vram_gb=2.5, mode="formula"))
    est = page.evaluate("() => window.__gpuGarden.lastEstimate")
    assert est["verdict"] == "does not fit" and est["outcome"]["status"] == "runs with offload", est["outcome"]
    assert face_text(page, node_id, "gg-estimate-verdict") == "RUNS WITH OFFLOAD"
    assert est["summary"].startswith("RUNS WITH OFFLOAD")  # the node's own summary says the same
    reason = face_text(page, node_id, "gg-estimate-outcome")
    assert reason == est["outcome"]["reason"] and "of weights stay in RAM" in reason
    assert face_text(page, node_id, "gg-estimate-knobs") == "to run without offload:"
    text = page.evaluate("(id) => window.app.graph.getNodeById(id).__ggEstimate.innerText", node_id)
    assert "partial offload of" not in text  # what ComfyUI does already is the outcome, not a knob
    comfy_host.wait_idle()
    show_whole_node(page, node_id)
    page.screenshot(path=str(output_dir / "estimate_node_offload.png"))

    wf = estimate_only(1024, 1024, vram_gb=6.0, mode="formula")
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'estimate.json'); }", wf)
    page.evaluate("async () => { await window.app.queuePrompt(0, 1); }")
    page.wait_for_function("() => window.__gpuGarden.lastEstimate && window.__gpuGarden.lastEstimate.budget > 6 * 2 ** 30 * 0.99",
                           timeout=120000)
    node_id = page.evaluate(f"() => window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)}).id")
    est = page.evaluate("() => window.__gpuGarden.lastEstimate")
    assert est["outcome"]["status"] == "fits" and est["knobs"], est["outcome"]  # knobs there, not shown
    page.wait_for_function("(id) => window.app.graph.getNodeById(id).__ggEstimate?.querySelector('[data-testid=gg-estimate-verdict]')",
                           arg=node_id, timeout=30000)
    assert face_text(page, node_id, "gg-estimate-verdict") == "FITS"
    assert face_text(page, node_id, "gg-estimate-knobs") is None and face_text(page, node_id, "gg-estimate-outcome") is None
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


def test_no_partial_offload_offer_on_a_tight_run(comfy_page, comfy_host):
    """rev68h #2: the CLI stopped offering partial offload on a run that fits (tight or tiled included, fix68m), while
    the node's face still listed it there. SD1.5 at 1024^2 on its own peak plus 3 %: TIGHT, partial offload among
    the JSON's knobs, none on the face."""
    page, console = comfy_page
    run_and_wait(page, estimate_only(1024, 1024, vram_gb=6.0, mode="formula"))
    peak, first_budget = page.evaluate("() => [window.__gpuGarden.lastEstimate.peak, window.__gpuGarden.lastEstimate.budget]")
    for _ in range(4):  # the peak moves with the budget (ComfyUI's decode batch and cond/uncond choice follow it)
        vram = round(peak / 2 ** 30 * 1.03, 2)  # over the peak, under spec.FITS_BELOW's margin: tight
        node_id = run_and_wait(page, estimate_only(1024, 1024, vram_gb=vram, mode="formula"))
        page.wait_for_function("(b) => window.__gpuGarden.lastEstimate.budget !== b", arg=first_budget, timeout=120000)
        page.wait_for_function("(id) => window.app.graph.getNodeById(id).__ggEstimate?.querySelector('[data-testid=gg-estimate-verdict]')",
                               arg=node_id, timeout=30000)
        est = page.evaluate("() => window.__gpuGarden.lastEstimate")
        if est["outcome"]["status"] == "tight":
            break
        peak, first_budget = est["peak"], est["budget"]
    assert est["outcome"]["status"] == "tight", (vram, peak, est["peak"], est["budget"], est["outcome"])
    assert any(k["id"] == "partial_offload" for k in est["knobs"]), est["knobs"]
    text = page.evaluate("(id) => window.app.graph.getNodeById(id).__ggEstimate.innerText", node_id)
    assert "partial offload" not in text, text
    assert console.from_pack() == [], console.from_pack()


def test_a_cpu_run_sizes_no_card(comfy_page, comfy_host):
    """The test host is ComfyUI --cpu: with vram_gb 0 the estimate is judged on host RAM and sizes no card. The face
    said "smallest common card: none up to 141 GB" there, beside its own tier line "8 GB: fits" (ux20's first-hour
    walk); a card asked for on the node (vram_gb 8) keeps the line."""
    page, console = comfy_page
    node_id = run_and_wait(page, estimate_only(64, 64, vram_gb=0.0, mode="formula"))
    text = page.evaluate("(id) => window.app.graph.getNodeById(id).__ggEstimate.innerText", node_id)
    assert "CPU run:" in text and "per card tier" in text, text
    # ComfyUI keeps no reserve on a CPU device (ui49): the peak is the running phase, with no reserve to explain
    # (ux21b's "the peak ... less ComfyUI's ... VRAM reserve"); the size used is the latent's, not the widgets' (ux21b)
    est = page.evaluate("() => window.__gpuGarden.lastEstimate")
    assert est["fixed"]["comfyui_reserve"] == 0 and est["host_ram"]["running"] == est["peak"], (est["fixed"], est["host_ram"])
    assert "VRAM reserve" not in text, text
    size = page.evaluate("(id) => window.app.graph.getNodeById(id).__ggEstimate.querySelector('[data-testid=gg-estimate-size]').textContent", node_id)
    # and the width/height widgets (1024 beside it) are said not to be used (web50 item 3)
    assert " · size from the connected latent: 64×64 (width/height widgets not used) · batch 1 · " in size, size
    assert "smallest common card" not in text, text
    # one plain sentence, not "budget: no budget: ComfyUI computes on the CPU" (ux20b)
    assert "\nComfyUI runs on the CPU here: no GPU budget (set vram_gb to plan for a card)\n" in text, text
    assert "budget: no budget" not in text and "budget: ComfyUI" not in text, text
    comfy_host.wait_idle()
    run_and_wait(page, estimate_only(64, 64, vram_gb=8.0, mode="formula"))
    page.wait_for_function("() => window.__gpuGarden.lastEstimate?.budget > 0", timeout=120000)
    node_id = page.evaluate(f"() => window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)}).id")
    page.wait_for_function("(id) => window.app.graph.getNodeById(id).__ggEstimate.innerText.includes('of 8.00 GiB')", arg=node_id,
                           timeout=60000)
    text = page.evaluate("(id) => window.app.graph.getNodeById(id).__ggEstimate.innerText", node_id)
    assert "smallest common card: " in text, text
    assert "\nbudget: 8 GiB (the node's vram_gb, read as GiB)\n" in text, text  # a real budget keeps its heading
    assert console.from_pack() == [], console.from_pack()


def test_a_decode_retried_tiled_shows_the_peak_as_run(comfy_page, comfy_host, output_dir):
    """SD1.5 at 1536², cond and uncond in separate passes: the untiled decode row is above sampling. On a budget
    between the two, ComfyUI runs out of memory in the untiled decode and retries it tiled: the badge says RUNS TILED,
    the peak beside it is the one ComfyUI reaches (sampling), and a line names the retry with both figures
    (est-fixups3). The budget is taken from a first run's rows, as the host's device (CPU here: no CUDA context, fp32
    activations) sets them."""
    page, console = comfy_page

    def wf(gb):
        p = estimate_only(1536, 1536, vram_gb=gb, mode="formula")
        p["20"]["inputs"]["cfg"] = "off"
        return p

    run_and_wait(page, wf(48.0))
    ph = page.evaluate("() => window.__gpuGarden.lastEstimate.phases")
    top = max(v for k, v in ph.items() if k in ("text_encode", "sample"))
    assert ph["vae_decode"] > top, ph
    gb = round((ph["vae_decode"] + top) / 2 / 2 ** 30, 3)
    page.evaluate("() => { window.__gpuGarden.lastEstimate = null; }")
    node_id = run_and_wait(page, wf(gb))
    page.wait_for_function("() => window.__gpuGarden.lastEstimate", timeout=120000)
    est = page.evaluate("() => window.__gpuGarden.lastEstimate")
    t = est["tiled_retry"]["vae_decode"]
    assert est["outcome"]["status"] == "runs tiled" and est["peak"] == top < t["untiled"] == est["peak_untiled"], est["outcome"]
    assert face_text(page, node_id, "gg-estimate-verdict") == "RUNS TILED"
    line = face_text(page, node_id, "gg-estimate-retry")
    row = page.evaluate(f"(id) => window.app.graph.getNodeById(id).__ggEstimate.querySelector('[data-phase=vae_decode]').innerText", node_id)
    assert row.startswith("VAE tiled retry") and fmt_gib(t["tiled"]) in row, row  # the row holds the retry's figure (item 7)
    assert line.startswith("VAE decode runs tiled after ComfyUI's out-of-memory fallback: ") and "(untiled " in line, line
    assert est["summary"].startswith("RUNS TILED: peak ")
    assert console.from_pack() == [], console.from_pack()


def test_a_verdict_only_answer_still_shows_its_verdict(comfy_page):
    """An answer without `outcome` (a face kept from an older version): the badge falls back to the verdict."""
    page, console = comfy_page
    text = page.evaluate("""async () => {
        const m = await import('/extensions/comfyui-gpu-garden/estimate.js');
        const root = document.createElement('div');
        m.render(root, {verdict: 'tight', budget: 8 * 2 ** 30, peak: 7.5 * 2 ** 30, width: 512, height: 512, frames: 1,
                        batch: 1, cfg: true, family: 'sd1', family_name: 'Stable Diffusion 1.x', phases: {sample: 7.5 * 2 ** 30},
                        peak_phase: 'sample', min_vram_gb: 8, assumptions: [], knobs: [
                          {id: 'batch_1', label: '<b>x</b>', saving: 2 ** 30, fits: true}]});
        return [root.querySelector('[data-testid=gg-estimate-verdict]').textContent, root.innerText, root.innerHTML];
    }""")
    assert text[0] == "TIGHT"
    assert "<b>x</b>" in text[1] and "<b>" not in text[2]  # data is text, never markup


def test_does_not_fit_shows_knobs_vue_nodes(browser, comfy_host, output_dir):
    page, console = open_comfy(browser, comfy_host, vue_nodes=True)
    try:
        node_id = run_and_wait(page, workflow(0.5))
        face = page.locator("[data-testid='gg-estimate']").first
        face.wait_for(state="visible", timeout=30000)
        text = face.inner_text()
        assert "DOES NOT FIT" in text and "what would help" in text
        comfy_host.wait_idle()
        show_whole_node(page, node_id)
        fit = face_fits(page, node_id)
        assert fit["scroll"] <= fit["client"] + 1 and fit["lastBottom"] <= fit["bottom"] + 1, fit
        box = face.bounding_box()
        page.screenshot(path=str(output_dir / "estimate_node_vue.png"),
                        clip={"x": max(0, box["x"] - 60), "y": max(0, box["y"] - 200),
                              "width": box["width"] + 120, "height": box["height"] + 240})
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


def test_exact_mode_fallback_reason_on_the_face(comfy_page, comfy_host, output_dir):
    page, console = comfy_page
    wf = estimate_only(64, 64)
    wf["5"] = {"class_type": "EmptySD3LatentImage", "inputs": {"width": 64, "height": 64, "batch_size": 1}}
    node_id = run_and_wait(page, wf)
    root = "window.app.graph.getNodeById(id).__ggEstimate"
    page.wait_for_function(f"(id) => {root}.querySelector('[data-testid=gg-estimate-exact-fallback]')", arg=node_id,
                           timeout=30000)
    why = page.evaluate(f"(id) => {root}.querySelector('[data-testid=gg-estimate-exact-fallback]').textContent", node_id)
    assert why.startswith("exact: unavailable, formula shown — trace failed on latent [1, 16, 8, 8]: RuntimeError")
    assert page.evaluate(f"(id) => {root}.querySelectorAll('[data-phase]').length", node_id) == 5
    comfy_host.wait_idle()
    show_whole_node(page, node_id)
    fit = face_fits(page, node_id)
    assert fit["scroll"] <= fit["client"] + 1 and fit["lastBottom"] <= fit["bottom"] + 1, fit
    page.screenshot(path=str(output_dir / "estimate_node_exact_fallback.png"))
    assert console.from_pack() == [], console.from_pack()


def recorded_run(comfy_host, width, timeout=60) -> dict:
    """The newest successful recorded run at this latent width (GET /gpu_garden/runs), once the writer stored it."""
    import time

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for run in comfy_host.get("/gpu_garden/runs?limit=20")["runs"]:
            if run["status"] == "success" and (run.get("latent") or {}).get("width") == width:
                return run
        time.sleep(0.2)
    raise AssertionError(f"no run at width {width} recorded")


def test_measured_here_beside_the_formula(comfy_page, comfy_host, output_dir):
    """A second run of the same checkpoint at the same size: the face shows the first run's sampler peak."""
    page, console = comfy_page
    wf = workflow(8.0)
    wf["5"]["inputs"].update(width=88, height=40)  # a size no other web test queues: one matching run
    run_and_wait(page, wf)
    comfy_host.wait_idle()
    first = recorded_run(comfy_host, 88)
    sampler_peak = next(n["peak"]["cpu"] for n in first["nodes"] if n["type"] == "KSampler")
    wf["6"]["inputs"]["text"] = "a garden " + uuid.uuid4().hex[:8]
    wf["20"]["inputs"]["vram_gb"] = 9.0  # the node's inputs changed: it runs again (ComfyUI would replay its cached face)
    node_id = run_and_wait(page, wf)
    root = "window.app.graph.getNodeById(id).__ggEstimate"
    page.wait_for_function(f"(id) => {root}.querySelector('[data-testid=gg-estimate-measured]')", arg=node_id, timeout=30000)
    line = page.evaluate(f"(id) => {root}.querySelector('[data-testid=gg-estimate-measured]').innerText", node_id)
    assert "sample, measured here" in line
    est = page.evaluate("() => window.__gpuGarden.lastEstimate")
    assert est["measured"]["peak"] == sampler_peak and est["measured"]["run"] == first["prompt_id"]
    text = page.evaluate(f"(id) => {root}.innerText", node_id)
    # a --cpu host's RSS is the whole process: said, and no percentage against the formula's sample phase (ui49)
    assert ("KSampler on cpu, process peak RSS: the whole ComfyUI process (Python, torch, every model in RAM), not one "
            "phase, so no % against the formula") in text and "measured vs formula" not in text, text
    comfy_host.wait_idle()
    show_whole_node(page, node_id)
    fit = face_fits(page, node_id)
    assert fit["scroll"] <= fit["client"] + 1 and fit["lastBottom"] <= fit["bottom"] + 1, fit
    page.screenshot(path=str(output_dir / "estimate_node_measured.png"))
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()
