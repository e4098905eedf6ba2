"""The Footprint Estimate node's per-card-tier line (the figures `gpu-garden estimate --workflow --write` puts into
extra.gpu_garden.memory) after a run, and its "Estimate the open graph" button, which posts the graph before it runs
to POST /gpu_garden/estimate/workflow and shows the answer, an incomplete graph, or the route's error as text."""
import json

from support.comfy_host import CHECKPOINT
from support.upscale_models import rrdb_old, write as write_upscale_model
from support.web import show_node
from web.conftest import open_comfy
from web.test_estimate_node import NODE, estimate_only, face_fits, fmt_gib, run_and_wait, workflow

ROOT = "window.app.graph.getNodeById(id).__ggEstimate"
TIERS = [8, 12, 16, 24, 32, 48, 80]  # memory/estimate/spec.CARD_TIERS_GB, as the route test pins them


def face(page, node_id, testid):
    return page.evaluate(f"""([id, t]) => {{ const e = {ROOT}.querySelector(`[data-testid=${{t}}]`);
        return e ? e.textContent : null; }}""", [node_id, testid])


def chips(page, node_id, testid):
    return page.evaluate(f"""([id, t]) => [...{ROOT}.querySelectorAll(`[data-testid=${{t}}] [data-gb]`)]
        .map(e => [Number(e.dataset.gb), e.dataset.outcome, e.textContent])""", [node_id, testid])


def gib(n):
    return f"{n / 2 ** 30:.1f} GiB"


def test_tiers_on_the_face_after_a_run(comfy_page, comfy_host, output_dir):
    """SD1.5 fp16 at 512² fits every tier from 8 GB up: each tier says so ("12 GB: fits", not a bare size); the host RAM the offload
    verdicts assume is the estimate's own."""
    page, console = comfy_page
    node_id = run_and_wait(page, estimate_only(512, 512, vram_gb=8.0, mode="formula"))
    est = page.evaluate("() => window.__gpuGarden.lastEstimate")
    assert [t["gb"] for t in est["tiers"]] == TIERS
    line = face(page, node_id, "gg-estimate-tiers")
    ram = est["host_ram_assumed"]["available"]
    assert ram == est["host_ram"]["available"] and est["host_ram_assumed"]["source"], est["host_ram_assumed"]
    assert line == f"per card tier, host RAM {gib(ram)}: " + " · ".join(f"{gb} GB: fits" for gb in TIERS), line
    assert [c[:2] for c in chips(page, node_id, "gg-estimate-tiers")] == [[gb, "fits"] for gb in TIERS]
    comfy_host.wait_idle()
    show_node(page, node_id)
    fit = face_fits(page, node_id)
    assert fit["scroll"] <= fit["client"] + 1 and fit["lastBottom"] <= fit["bottom"] + 1, fit
    page.screenshot(path=str(output_dir / "estimate_node_tiers.png"))
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


def test_tier_line_labels_offload_and_reads_the_tiers_own_host_ram(comfy_page):
    """The compact form of the issue: "8 GB: runs with at least 5.2 GiB offloaded · 12 GB: fits · 16 GB"; a tier's own host_ram (with its
    source) wins over the estimate's; an incomplete graph is not judged per tier; data is text, never markup."""
    page, _ = comfy_page
    out = page.evaluate("""async () => {
        const m = await import('/extensions/comfyui-gpu-garden/lib/estimate_tiers.js');
        const G = 2 ** 30, tiers = [{gb: 8, outcome: 'runs with offload', offloaded: 5.2 * G},
                                    {gb: 12, outcome: 'fits'}, {gb: 16, outcome: 'fits'}, {gb: 24, outcome: '<b>x</b>'}];
        const a = m.tiersLine({tiers, host_ram: {available: 30 * G}});
        const b = m.tiersLine({tiers: tiers.map(t => ({...t, host_ram: {available: 64 * G, source: '--ram 64'}})),
                               host_ram: {available: 30 * G}});
        const c = m.tiersLine({tiers}, {incomplete: true});
        const d = m.tiersLine({tiers, host_ram_assumed: {available: 16 * G, source: '--ram 16'}, host_ram: {available: 30 * G}});
        const e = m.tiersLine({tiers, host_ram_assumed: {available: null, source: 'none: RAM not judged'}});
        const f = m.tiersLine({tiers: [{gb: 8, outcome: 'does not fit', vram_outcome: 'runs with offload', vram_offloaded: 3 * G,
                                        ram_needed: 40 * G}]});
        // cliZ G: the server's label (memory/estimate/verdict.label, the CLI's words) is what a chip shows
        const g = m.tiersLine({tiers: [{gb: 8, outcome: 'runs with offload', offloaded: 5.2 * G, label: 'server words',
                                        vram_outcome: 'fits', vram_label: 'vram words'}]});
        const extra = [d.textContent, d.firstChild.title, e.textContent, f.querySelector('[data-gb]').title,
                       g.textContent, g.querySelector('[data-gb]').title];
        return [a.textContent, b.textContent, b.firstChild.title, c.textContent, a.innerHTML.includes('<b>'),
                m.tiersLine({tiers: []}), m.tiersLine({}), ...extra];
    }""")
    assert out[0] == "per card tier, host RAM 30.0 GiB: 8 GB: runs with at least 5.2 GiB offloaded · 12 GB: fits · 16 GB: fits · 24 GB: <b>x</b>"  # every tier its verdict (web50 item 4)
    assert out[1].startswith("per card tier, host RAM 64.0 GiB: 8 GB: runs with at least 5.2 GiB offloaded") and out[2].endswith("(--ram 64)")
    assert out[3] == "per card tier: not judged (the estimate is incomplete)"
    assert out[4] is False and out[5] is None and out[6] is None
    # the answer's host_ram_assumed (gpu-garden estimate --workflow's metadata) wins, with its source
    assert out[7].startswith("per card tier, host RAM 16.0 GiB: 8 GB: runs with") and out[8].endswith("(--ram 16)")
    assert out[9].startswith("per card tier, host RAM not judged: 8 GB: runs with")
    assert out[10] == "8 GB card: does not fit; on VRAM alone: runs with at least 3.0 GiB offloaded; keeps 40.0 GiB in host RAM", out[10]
    assert out[11] == "per card tier: 8 GB: server words" and out[12] == "8 GB card: server words; on VRAM alone: vram words"


def test_an_answer_without_a_card_or_with_a_missing_file(comfy_page):
    """vram_gb 0: no card judged, the tiers still shown; files not found are named as text and the tiers not judged;
    each missing file says the route's why (a broken link is not "not found")."""
    page, _ = comfy_page
    out = page.evaluate("""async () => {
        const m = await import('/extensions/comfyui-gpu-garden/lib/estimate_graph.js');
        const G = 2 ** 30, base = {family: 'sd1', width: 512, height: 512, frames: 1, batch: 1, peak: 2.5 * G,
            peak_phase: 'sample', files: ['a.safetensors'], tiers: [{gb: 8, outcome: 'fits'}, {gb: 12, outcome: 'fits'}]};
        const box = document.createElement('div'), texts = [];
        m.renderGraph(box, {...base, budget: null, verdict: 'no budget', outcome: {status: 'no budget'}, missing: []});
        texts.push(box.innerText);
        m.renderGraph(box, {...base, budget: 8 * G, verdict: 'fits', outcome: {status: 'incomplete', reason: '1 model file not found'},
                            missing: ['<i>lora</i>.safetensors']});
        texts.push(box.innerText, box.innerHTML.includes('<i>'));
        m.renderGraph(box, {pending: true});
        texts.push(box.innerText);
        // mend61: each file with the route's why (missing_where[].why): a dangling symlink is not "not found"
        const gone = {name: 'sd/gone.safetensors', loader: 'VAELoader.vae_name', folders: ['vae'],
                      why: 'a broken link (points to <b>vae</b>.safetensors, which does not exist)'};
        const line = () => box.querySelector('[data-testid=gg-estimate-graph-missing]');
        m.renderGraph(box, {...base, budget: 8 * G, verdict: 'fits', outcome: {status: 'incomplete'},
                            missing: ['sd/gone.safetensors'], missing_where: [gone]});
        texts.push(line().textContent, line().innerHTML.includes('<b>'));
        m.renderGraph(box, {...base, budget: 8 * G, verdict: 'fits', outcome: {status: 'incomplete'},
                            missing: ['a.safetensors', 'sd/gone.safetensors', 't5.gguf'],
                            missing_where: [{name: 'a.safetensors', why: 'not found'}, gone, {name: 't5.gguf', why: 'not found'}]});
        texts.push(line().textContent, box.querySelector('[data-testid=gg-estimate-graph-verdict]').textContent);
        return texts;
    }""")
    assert out[0].startswith("NO BUDGET") and "sd1 · 512×512 · batch 1 · no card set (the node's vram_gb is 0)" in out[0], out[0]
    assert "8 GB: fits · 12 GB: fits" in out[0]
    assert out[1].startswith("INCOMPLETE") and "incomplete: <i>lora</i>.safetensors not found" in out[1], out[1]
    assert "per card tier: not judged (the estimate is incomplete)" in out[1] and "8 GB" not in out[1]
    assert out[2] is False and out[3] == "estimating the open graph…"
    assert out[4] == "incomplete: sd/gone.safetensors: a broken link (points to <b>vae</b>.safetensors, which does not exist)", out[4]
    assert out[5] is False
    assert out[6] == ("incomplete: a.safetensors, t5.gguf not found; "
                      "sd/gone.safetensors: a broken link (points to <b>vae</b>.safetensors, which does not exist)"), out[6]
    assert out[7] == "INCOMPLETE"


def load(page, wf):
    page.evaluate("async (wf) => { await window.app.loadApiJson(wf, 'estimate.json'); }", wf)
    return page.evaluate(f"() => window.app.graph.nodes.find(n => n.type === {json.dumps(NODE)}).id")


def click_estimate(page, node_id, testid):
    """Click the node's button as a user would and wait for `testid` in the open graph's section."""
    show_node(page, node_id)
    page.locator("[data-testid='gg-estimate-graph-button']").first.click()
    page.wait_for_function(f"([id, t]) => {ROOT}.querySelector(`[data-testid=gg-estimate-graph] [data-testid=${{t}}]`)",
                           arg=[node_id, testid], timeout=60000)


def test_the_button_estimates_the_open_graph_before_it_runs(comfy_page, comfy_host, output_dir):
    """Nothing queued: the answer is the route's for the graph as it is open (the node's vram_gb sent as the card),
    with the tiers; a LoRA ComfyUI's folders do not hold makes it INCOMPLETE and names the file."""
    page, console = comfy_page
    node_id = load(page, estimate_only(512, 768, vram_gb=8.0, mode="formula"))
    click_estimate(page, node_id, "gg-estimate-graph-verdict")
    ans = page.evaluate("() => window.__gpuGarden.lastGraphEstimate")
    direct = comfy_host.post("/gpu_garden/estimate/workflow",
                             {"workflow": page.evaluate("() => window.app.graph.serialize()"), "vram_gb": 8})
    assert (ans["width"], ans["height"], ans["files"], ans["peak"]) == (512, 768, [CHECKPOINT], direct["peak"]), ans
    assert ans["budget"] == 8 * 2 ** 30 and face(page, node_id, "gg-estimate-graph-verdict") == "FITS"
    assert [c[:2] for c in chips(page, node_id, "gg-estimate-graph-tiers")] == [[gb, "fits"] for gb in TIERS]
    text = page.evaluate(f"(id) => {ROOT}.querySelector('[data-testid=gg-estimate-graph]').innerText", node_id)
    assert "Stable Diffusion 1.x (sd1) · 512×768 · batch 1" in text and f"peak {ans['peak'] / 2 ** 30:.2f} GiB" in text, text
    assert f"per card tier, host RAM {gib(ans['host_ram_assumed']['available'])}: 8 GB: fits · 12 GB: fits" in text, text
    assumed = page.evaluate(f"(id) => [...{ROOT}.querySelectorAll('[data-testid=gg-estimate-graph-assumptions] div')]"
                            ".map(e => e.textContent)", node_id)
    assert assumed == ["· " + a for a in ans["assumptions"]] and assumed, assumed
    assert face(page, node_id, "gg-estimate-verdict") is None  # the node has not run: its own figures are not there
    assert page.evaluate("() => window.__gpuGarden?.lastEstimate ?? null") is None
    fit = face_fits(page, node_id)
    assert fit["scroll"] <= fit["client"] + 1 and fit["lastBottom"] <= fit["bottom"] + 1, fit
    page.screenshot(path=str(output_dir / "estimate_node_open_graph.png"))

    wf = estimate_only(512, 768, vram_gb=8.0, mode="formula")
    # a counted file the folders do not hold (a LoRA, never counted, is only a note: cliZ H); the VAE the node is given,
    # so it runs (an unconnected loader never runs and is not read: rev62 F5)
    wf["10"] = {"class_type": "VAELoader", "inputs": {"vae_name": "gg_absent_vae.safetensors"}}
    wf["20"]["inputs"]["vae"] = ["10", 0]
    node_id = load(page, wf)
    click_estimate(page, node_id, "gg-estimate-graph-missing")
    assert face(page, node_id, "gg-estimate-graph-verdict") == "INCOMPLETE"
    assert face(page, node_id, "gg-estimate-graph-missing") == "incomplete: gg_absent_vae.safetensors not found"
    assert face(page, node_id, "gg-estimate-graph-tiers") == "per card tier: not judged (the estimate is incomplete)"
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


UPSCALER = "gg_4x_ups64.safetensors"


def hires_fix(upscaler=UPSCALER) -> dict:
    """The node's SD1.5 graph at 512 x 512 (the node in the latent path, as it passes the latent through), then the hires
    fix with an upscale model: VAE Decode -> Upscale Image (using Model) -> Upscale Image By 0.5 -> VAE Encode ->
    KSampler at denoise 0.5 -> VAE Decode -> Save Image."""
    p = workflow(8.0, "formula")
    p["5"]["inputs"].update(width=512, height=512)
    second = dict(p["3"]["inputs"], latent_image=["33", 0], denoise=0.5)
    p.update({"30": {"class_type": "UpscaleModelLoader", "inputs": {"model_name": upscaler}},
              "31": {"class_type": "ImageUpscaleWithModel", "inputs": {"upscale_model": ["30", 0], "image": ["8", 0]}},
              "32": {"class_type": "ImageScaleBy", "inputs": {"image": ["31", 0], "upscale_method": "lanczos", "scale_by": 0.5}},
              "33": {"class_type": "VAEEncode", "inputs": {"pixels": ["32", 0], "vae": ["4", 2]}},
              "34": {"class_type": "KSampler", "inputs": second},
              "35": {"class_type": "VAEDecode", "inputs": {"samples": ["34", 0], "vae": ["4", 2]}},
              "36": {"class_type": "SaveImage", "inputs": {"filename_prefix": "gg", "images": ["35", 0]}}})
    return p


def test_the_open_graph_with_an_upscale_model_shows_its_pixel_upscale_row(comfy_page, comfy_host):
    """ups64: an x4 RRDBNet header in the host's upscale_models/ (tests/support/upscale_models.py). The button's answer
    (the route, ComfyUI's folders) has the pixel_upscale phase and samples the second pass at 512 x 4 x 0.5 = 1024; the
    open graph's section says 1024×1024 and names the upscale among its assumptions; and the node's face, drawing that
    answer as it draws a run's (estimate.js render), shows the "pixel upscale" row with its figure. With the file gone the
    answer is INCOMPLETE and names it."""
    page, console = comfy_page
    write_upscale_model(rrdb_old(), comfy_host.base / "models" / "upscale_models" / UPSCALER)
    node_id = load(page, hires_fix())
    click_estimate(page, node_id, "gg-estimate-graph-verdict")
    ans = page.evaluate("() => window.__gpuGarden.lastGraphEstimate")
    direct = comfy_host.post("/gpu_garden/estimate/workflow",
                             {"workflow": page.evaluate("() => window.app.graph.serialize()"), "vram_gb": 8})
    assert (ans["width"], ans["height"]) == (1024, 1024) and ans["missing"] == [], ans
    assert ans["phases"]["pixel_upscale"] == direct["phases"]["pixel_upscale"] > 2 ** 31  # a 512 tile: 2.00 GiB
    text = page.evaluate(f"(id) => {ROOT}.querySelector('[data-testid=gg-estimate-graph]').innerText", node_id)
    assert "Stable Diffusion 1.x (sd1) · 1024×1024 · batch 1" in text, text
    assumed = page.evaluate(f"(id) => [...{ROOT}.querySelectorAll('[data-testid=gg-estimate-graph-assumptions] div')]"
                            ".map(e => e.textContent)", node_id)
    line = [a for a in assumed if a.startswith(f"· pixel upscale (ImageUpscaleWithModel): {UPSCALER} (ESRGAN x4")]
    assert line and "on a 512x512 image (the decode of the graph's latent) to 2048x2048" in line[0], assumed
    row = page.evaluate("""async (ans) => {
        const m = await import('/extensions/comfyui-gpu-garden/estimate.js');
        const root = document.createElement('div');
        m.render(root, ans);
        const rows = [...root.querySelectorAll('[data-phase]')].map(e => e.dataset.phase);
        const r = root.querySelector('[data-phase=pixel_upscale]');
        return [rows, r ? r.innerText : null];
    }""", ans)
    assert row[0][-1] == "pixel_upscale" and "vae_decode" in row[0], row  # after the decode, as the phases run
    assert row[1].startswith("pixel upscale") and row[1].rstrip().endswith(fmt_gib(ans["phases"]["pixel_upscale"])), row

    node_id = load(page, hires_fix("gg_4x_not_here.pth"))
    click_estimate(page, node_id, "gg-estimate-graph-missing")
    assert face(page, node_id, "gg-estimate-graph-verdict") == "INCOMPLETE"
    assert face(page, node_id, "gg-estimate-graph-missing") == "incomplete: gg_4x_not_here.pth not found"
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


def test_a_route_error_is_shown_as_text(comfy_page, comfy_host):
    """The route's 400 (the only checkpoint the graph names is not in ComfyUI's folders) as text, markup and all; and
    a request that fails in the browser says so instead of hanging."""
    page, console = comfy_page
    wf = estimate_only(512, 512, vram_gb=8.0, mode="formula")
    wf["4"]["inputs"]["ckpt_name"] = "<b>gone</b>.safetensors"
    node_id = load(page, wf)
    click_estimate(page, node_id, "gg-estimate-graph-error")
    err = face(page, node_id, "gg-estimate-graph-error")
    assert err == ("open graph: estimate failed: none of the workflow's model files was found under ComfyUI's model "
                   "folders: <b>gone</b>.safetensors (looked in checkpoints/)"), err
    html = page.evaluate(f"(id) => {ROOT}.querySelector('[data-testid=gg-estimate-graph-error]').innerHTML", node_id)
    assert "<b>" not in html
    assert page.locator("[data-testid='gg-estimate-graph-button']").first.is_enabled()  # ready for another try

    page.route("**/gpu_garden/estimate/workflow", lambda route: route.abort())
    page.evaluate("() => { window.__gpuGarden.lastGraphEstimate = null; }")
    page.locator("[data-testid='gg-estimate-graph-button']").first.click()
    page.wait_for_function("() => window.__gpuGarden.lastGraphEstimate", timeout=30000)
    err = face(page, node_id, "gg-estimate-graph-error")
    assert err.startswith("open graph: estimate failed: request failed: "), err
    assert console.from_pack() == [], console.from_pack()


def test_the_button_in_nodes_2(browser, comfy_host, output_dir):
    page, console = open_comfy(browser, comfy_host, vue_nodes=True)
    try:
        node_id = load(page, estimate_only(512, 512, vram_gb=8.0, mode="formula"))
        button = page.locator("[data-testid='gg-estimate-graph-button']").first
        button.wait_for(state="visible", timeout=30000)
        button.click()
        page.wait_for_function("() => window.__gpuGarden?.lastGraphEstimate", timeout=60000)
        section = page.locator("[data-testid='gg-estimate-graph']").first
        assert section.locator("[data-testid='gg-estimate-graph-verdict']").inner_text() == "FITS"
        assert section.locator("[data-testid='gg-estimate-graph-tiers']").inner_text().endswith("· 48 GB: fits · 80 GB: fits")
        box = page.locator("[data-testid='gg-estimate']").first.bounding_box()
        page.screenshot(path=str(output_dir / "estimate_node_open_graph_vue.png"),
                        clip={"x": max(0, box["x"] - 60), "y": max(0, box["y"] - 200),
                              "width": box["width"] + 120, "height": box["height"] + 240})
        assert console.from_pack() == [], console.from_pack()
    finally:
        page.context.close()


def no_latent(width, height, batch, vram_gb=0.0) -> dict:
    """Checkpoint -> Footprint Estimate, no latent node: the node's own size widgets are the graph's only size."""
    wf = estimate_only(512, 512, vram_gb=vram_gb, mode="formula")
    del wf["5"]
    node = wf["20"]["inputs"]
    del node["latent"]
    node.update(width=width, height=height, batch=batch)
    return wf


def test_the_button_on_a_graph_without_a_latent_node(comfy_page, comfy_host, output_dir):
    """No latent node: the node's width/height/batch go with the graph and are estimated, on the device this ComfyUI
    computes on (--cpu: host RAM, as the node's own run); with no size at all (a widget that holds none) the route's
    error names what to do here, as text, not the CLI's --width/--height."""
    page, console = comfy_page
    node_id = load(page, no_latent(512, 768, 4))
    click_estimate(page, node_id, "gg-estimate-graph-verdict")
    ans = page.evaluate("() => window.__gpuGarden.lastGraphEstimate")
    assert (ans["width"], ans["height"], ans["batch"], ans["size_from"], ans["device"]) == (512, 768, 4, "body", "cpu"), ans
    direct = comfy_host.post("/gpu_garden/estimate/workflow", {"workflow": page.evaluate("() => window.app.graph.serialize()"),
                                                               "width": 512, "height": 768, "frames": 1, "batch": 4})
    assert ans["peak"] == direct["peak"] == 5_580_862_019 - 419_430_400, ans["peak"]  # the node's own --cpu figure (test_webfix17)
    size = face(page, node_id, "gg-estimate-graph-size")
    # named as the node's own run names it (ux21: the button's answer read a bare "sd1" under "Stable Diffusion 1.x (sd1)")
    assert size == ("Stable Diffusion 1.x (sd1) · 512×768 (the node's size: no latent node) · batch 4 · on the CPU "
                    "(ComfyUI --cpu): host RAM"), size
    assert face(page, node_id, "gg-estimate-graph-verdict") == "FITS"
    text = page.evaluate(f"(id) => {ROOT}.querySelector('[data-testid=gg-estimate-graph]').innerText", node_id)
    assert "CPU run: the running phase " in text, text
    fit = face_fits(page, node_id)
    assert fit["scroll"] <= fit["client"] + 1 and fit["lastBottom"] <= fit["bottom"] + 1, fit
    page.screenshot(path=str(output_dir / "estimate_node_open_graph_no_latent.png"))

    page.evaluate("(id) => { window.app.graph.getNodeById(id).widgets.find(w => w.name === 'width').value = undefined; }", node_id)
    click_estimate(page, node_id, "gg-estimate-graph-error")
    err = face(page, node_id, "gg-estimate-graph-error")
    assert err == ("open graph: estimate failed: the workflow has no latent size (EmptyLatentImage, ...): set width and "
                   "height on the Footprint Estimate node (its size when no latent is connected), or add an EmptyLatentImage "
                   "node"), err
    assert page.evaluate(f"(id) => {ROOT}.querySelector('[data-testid=gg-estimate-graph-error]').children.length", node_id) == 0
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()


def test_the_button_names_a_size_it_assumed(comfy_page):
    """No latent node and no size on the node, but the graph encodes a loaded image (LoadImage -> VAEEncode): the size
    is the family's native one (SD1.5: 512x512), and the face says it assumed it, not that the node's size was used."""
    page, console = comfy_page
    wf = no_latent(512, 768, 4)
    wf["6"] = {"class_type": "LoadImage", "inputs": {"image": "example.png"}}
    wf["7"] = {"class_type": "VAEEncode", "inputs": {"pixels": ["6", 0], "vae": ["4", 2]}}
    wf["20"]["inputs"]["latent"] = ["7", 0]  # the encoded latent goes somewhere (an unconnected node is not read: rev62 F5)
    node_id = load(page, wf)
    page.evaluate("(id) => { window.app.graph.getNodeById(id).widgets.find(w => w.name === 'width').value = undefined; }", node_id)
    click_estimate(page, node_id, "gg-estimate-graph-size")
    ans = page.evaluate("() => window.__gpuGarden.lastGraphEstimate")
    assert (ans["width"], ans["height"], ans["size_from"]) == (512, 512, "assumed"), ans
    size = face(page, node_id, "gg-estimate-graph-size")
    assert size.startswith("Stable Diffusion 1.x (sd1) · 512×512 (assumed: the native size of Stable Diffusion 1.x) · batch "), size
    assert console.from_pack() == [], console.from_pack()


# Each text's colour and the first opaque background behind it, as the page computes them (an rgb() or, for a
# color-mix(), a color(srgb ...) string).
TEXT_ON_BACKGROUND = """([id, sel]) => [...window.app.graph.getNodeById(id).__ggEstimate.querySelectorAll(sel)].map(e => {
    let b = e, bg = 'rgba(0, 0, 0, 0)';
    while (b && (bg = getComputedStyle(b).backgroundColor).match(/rgba\\(.*, 0\\)$|transparent/)) b = b.parentElement;
    return [e.textContent, getComputedStyle(e).color, bg];
})"""


def _rgb(css):
    """'rgb(201, 201, 201)' or 'color(srgb 0.11 0.39 0.21)' -> (r, g, b) in 0..1."""
    import re
    nums = [float(x) for x in re.findall(r"[\d.]+", css)]
    return tuple(nums[:3]) if css.startswith("color(") else tuple(x / 255 for x in nums[:3])


def contrast(fg, bg):
    """WCAG 2 contrast ratio of two CSS colours."""
    def lum(c):
        r, g, b = (x / 12.92 if x <= 0.04045 else ((x + 0.055) / 1.055) ** 2.4 for x in _rgb(c))
        return 0.2126 * r + 0.7152 * g + 0.0722 * b
    hi, lo = sorted((lum(fg), lum(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


def test_outcome_words_read_on_the_light_and_the_dark_palette(browser, comfy_host):
    """FITS and the tier chips are coloured text on the node face: on the light palette a bright green (#4ade80 on
    its #C9C9C9 face, contrast 1.1) was unreadable; each must reach 4:1 against the face on both core palettes."""
    for palette in ("light", "dark"):
        page, console = open_comfy(browser, comfy_host, settings={"Comfy.ColorPalette": palette})
        try:
            node_id = load(page, estimate_only(512, 768, vram_gb=8.0, mode="formula"))
            click_estimate(page, node_id, "gg-estimate-graph-verdict")
            texts = page.evaluate(TEXT_ON_BACKGROUND, [node_id, "[data-testid=gg-estimate-graph-verdict], "
                                                                "[data-testid=gg-estimate-graph-tiers] [data-gb]"])
            assert texts and texts[0][0] == "FITS" and len(texts) == 1 + len(TIERS), texts
            low = [(t, fg, bg, round(contrast(fg, bg), 2)) for t, fg, bg in texts if contrast(fg, bg) < 4]
            assert low == [], (palette, low)
            assert console.from_pack() == [], console.from_pack()
        finally:
            page.context.close()
