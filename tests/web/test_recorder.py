"""The flight recorder in real Chromium against the real --cpu ComfyUI: after a queued SD1.5 run each node
carries a badge with its peak and time; the GPU memory sidebar tab's "Runs" section draws the timeline (a
span per executed node), "Compare with the previous run" names the latent change and the slower VAE
Decode, and "Copy memory report" copies a redacted markdown report. Run once per frontend: the bundled
one and COMFYUI_FRONTEND_ROOT=<1.58.1 static root> (see tests/support/comfy_host.py)."""
import pytest

from support.comfy_host import sd15_prompt
from web.conftest import open_comfy

SIDEBAR = "gpu-garden-memory"


def load_api(page, prompt):
    """Load an API-format prompt laid out left to right, then load that as a workflow (the Nodes 2.0 layout
    is set when a graph loads), and frame it."""
    page.evaluate("""async (wf) => { await app.loadApiJson(wf, 'recorder.json');
      let x = 40;
      for (const id of Object.keys(wf)) { const n = (app.rootGraph ?? app.graph).getNodeById(id);
        n.pos = [x, 120 + (id % 2) * 60]; x += n.size[0] + 60; }
      await app.loadGraphData((app.rootGraph ?? app.graph).serialize(), false, false, 'recorder');
      app.canvas.ds.scale = 0.75; app.canvas.ds.offset[0] = 90; app.canvas.ds.offset[1] = 0;
      app.canvas.setDirty(true, true); }""", prompt)
    page.wait_for_timeout(300)


# A watchdog event as nodes/recorder_watchdog.py sends it (shape checked by tests/host/test_recorder.py).
WATCHDOG = {"prompt_id": "p-synthetic", "node": {"id": "8", "type": "VAEDecode", "display_id": "8"}, "reason": "stalled",
            "elapsed_s": 312.0, "expected_s": 4.2, "since_progress_s": 300.0,
            "message": "VAEDecode #8 has run 312 s (it took 4.2 s before) with no progress for 300 s: it may be hung.",
            "free": 201326592, "total": 12884901888,
            "snapshot": {"devices": [{"device": "cuda:0", "backend": "cuda", "free": 201326592, "total": 12884901888}]},
            "guide": {"id": "hang-dynamic-vram", "title": "A node that hangs with no error (Dynamic VRAM, memory at the limit)",
                      "markdown": "**Fix 2 - turn Dynamic VRAM off** <img src=x onerror=window.__pwned=1>\n\n```bash\npython main.py --disable-dynamic-vram\n```"},
            "sampled_at": 1796030000.0}


def queue_and_wait(page, known: int) -> str:
    page.evaluate("() => app.queuePrompt(0, 1)")
    page.wait_for_function("(n) => (window.__gpuGarden?.recorder?.runs || []).filter(r => r.status).length > n"
                           " && window.__gpuGarden.recorder.runs[0].status === 'success'", arg=known, timeout=180000)
    return page.evaluate("() => window.__gpuGarden.recorder.runs[0].prompt_id")


def runs_seen(page) -> int:
    return page.evaluate("() => (window.__gpuGarden?.recorder?.runs || []).length")


@pytest.fixture
def page(browser, comfy_host):
    comfy_host.wait_idle()
    pg, console = open_comfy(browser, comfy_host, vue_nodes=False)
    yield pg
    pg.context.close()
    assert console.from_pack() == [], console.from_pack()


def test_badges_timeline_compare_and_report(page, comfy_host, output_dir):
    tag = comfy_host.frontend.replace(".", "_")
    page.wait_for_function("() => window.__gpuGarden?.recorder", timeout=20000)
    load_api(page, sd15_prompt("a recorder test " + tag, width=64, height=64, seed=21))
    first = queue_and_wait(page, runs_seen(page))

    # badges: one per executed node, with its peak and time
    badges = page.evaluate("""() => Object.fromEntries((app.rootGraph ?? app.graph).nodes.map(n =>
        [String(n.id), (n.badges || []).map(b => (typeof b === 'function' ? b() : b).text).filter(t => t && t.includes('peak'))]))""")
    run = page.evaluate("() => window.__gpuGarden.recorder.runs[0]")
    executed = {n["id"] for n in run["nodes"]}
    assert executed and executed <= set(badges)
    for nid in executed:
        (text,) = badges[nid]
        assert text.startswith("process RAM peak ") and ("GiB" in text or "MiB" in text) and (" s" in text or " ms" in text), text
    for nid in set(badges) - executed:
        assert badges[nid] == []  # cached nodes get no badge
    page.wait_for_timeout(300)
    page.screenshot(path=str(output_dir / f"recorder_badges_{tag}.png"), clip={"x": 0, "y": 40, "width": 1400, "height": 420})

    # a second run at 4x the pixels, then the sidebar
    page.evaluate("""() => { const n = (app.rootGraph ?? app.graph).getNodeById(5);
        for (const w of n.widgets) if (w.name === 'width' || w.name === 'height') w.value = 256; }""")
    second = queue_and_wait(page, runs_seen(page))
    assert second != first
    page.evaluate(f"() => app.extensionManager.command.execute('Workspace.ToggleSidebarTab.{SIDEBAR}')")
    page.wait_for_selector("[data-testid=gpu-garden-timeline] svg rect", state="visible", timeout=20000)
    n_rects = page.locator("[data-testid=gpu-garden-timeline] svg[data-device=cpu] rect").count()
    run2 = page.evaluate("() => window.__gpuGarden.recorder.runs[0]")
    assert run2["prompt_id"] == second and n_rects == len(run2["nodes"])
    heads = page.evaluate("() => [...document.querySelectorAll('[data-testid=gpu-garden-timeline] .gg-rec-dev')].map(e => e.textContent)")
    assert heads and heads[-1].startswith("host RAM (process RSS) — highest "), heads  # named once (was "host RAM (process) · host RAM (process RSS)")
    ids = page.evaluate("() => [...document.querySelectorAll('[data-testid=gpu-garden-timeline] svg[data-device=cpu] rect')].map(r => r.dataset.ggNode)")
    assert sorted(ids) == sorted(n["id"] for n in run2["nodes"])
    # the memory axis (lib/timeline_axis.js, its floors checked by hand in tests/unit/test_web_timeline_axis.py): from
    # zero, or from a round figure below the lowest peak when every peak sits near the top (a CPU run's RSS drew one
    # solid block: ui49), said under the chart with a dashed base line; each bar is its peak's share above the floor
    svg = "[data-testid=gpu-garden-timeline] svg[data-device=cpu]"
    floor = float(page.get_attribute(svg, "data-floor"))
    bars = page.evaluate(f"""() => [...document.querySelectorAll('{svg} rect')]
        .map(r => [r.dataset.ggNode, parseFloat(r.getAttribute('height'))])""")
    peaks = {n["id"]: n["peak"]["cpu"] for n in run2["nodes"]}
    # the used-memory line (total - free at each node's start and end) is drawn on the same axis, which spans it (rev24 D3)
    total = next((d.get("total") for d in run2.get("devices") or [] if d["device"] == "cpu"), None)
    used = [total - n[k]["cpu"] for n in run2["nodes"] for k in ("free_before", "free_after")
            if total and isinstance((n.get(k) or {}).get("cpu"), (int, float))]
    highest, lowest = max([*peaks.values(), *used]), min([*peaks.values(), *used])
    assert floor == 0 or (highest / 2 < floor <= 0.75 * highest * (1 + 1e-6) and floor < lowest), (floor, peaks, used)
    if lowest > 0.7 * highest and highest - lowest > 0.005 * highest:  # every value near the top, and they differ
        assert floor > 0, (peaks, used)
    for nid, h in bars:
        assert h == pytest.approx(max(2.0, 70 * (peaks[nid] - floor) / (highest - floor)), abs=0.05), (nid, h, peaks)
    if len(used) > 1:  # no point of the line below the base line: each at its own height above the floor
        ys = page.evaluate(f"() => (document.querySelector('{svg} polyline')?.getAttribute('points') || '')"
                           ".split(' ').filter(Boolean).map(p => parseFloat(p.split(',')[1]))")
        assert sorted(ys) == pytest.approx(sorted(70 - 70 * (u - floor) / (highest - floor) for u in used), abs=0.06), (ys, used)
    axis = page.text_content(f"{svg} text")
    # both ends in the top's unit (rev24 D4: "716.8 MiB -> 1.0 GiB" was printed)
    start = "0" if floor == 0 else f"{floor / 2 ** 30:.1f} GiB" if highest >= 2 ** 30 else f"{floor / 2 ** 20:.1f} MiB"
    assert axis.startswith("time 0 → ") and f" · memory {start} → " in axis, axis
    assert axis.endswith("(not from 0)") == (floor > 0) == (page.locator(f"{svg} line").count() == 1), (axis, floor)

    page.click("[data-testid=gpu-garden-compare-button]")
    cmp = page.locator("[data-testid=gpu-garden-compare]")
    cmp.wait_for(state="visible", timeout=20000)
    text = cmp.text_content()
    assert "latent: 64x64 → 256x256" in text and "{" not in text and "VAEDecode #8: time" in text, text
    # the models in words, no empty side as a dash nor a missing dtype as [None] (fixW2 walk: "models: +— / −SD1ClipModel [None]")
    assert ("no model change" in text or "this run" in text) and "—" not in text and "[None]" not in text, text
    page.wait_for_timeout(300)
    page.screenshot(path=str(output_dir / f"recorder_sidebar_{tag}.png"), clip={"x": 0, "y": 0, "width": 760, "height": 900})

    page.click("[data-testid=gpu-garden-copy-report]")
    page.wait_for_function("() => window.__gpuGarden.recorder.copied", timeout=20000)
    report = page.evaluate("() => window.__gpuGarden.recorder.copied.text")
    assert report.startswith(f"### GPU Garden memory report — run `{second}`")
    assert str(comfy_host.base) not in report and "a recorder test" not in report
    assert "| 8 | VAEDecode |" in report and f"Compared with the previous run** `{first}`" in report
    clip = page.evaluate("() => navigator.clipboard.readText()")
    assert clip == report

    # the watchdog: a warning toast with the snapshot, and the guide in the Runs section (as text)
    page.evaluate("(ev) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.recorder.watchdog', ev)", WATCHDOG)
    page.get_by_text("GPU Garden: a node may be hung").first.wait_for(state="visible", timeout=10000)
    assert page.get_by_text("cuda:0: 192.0 MiB free of 12.0 GiB", exact=False).count() >= 1
    warn = page.locator("[data-testid=gpu-garden-watchdog]")
    warn.wait_for(state="visible", timeout=10000)
    assert "it may be hung" in warn.text_content() and "--disable-dynamic-vram" in warn.text_content()
    assert page.evaluate("() => window.__pwned") is None and warn.locator("img").count() == 0
    page.wait_for_timeout(300)
    page.screenshot(path=str(output_dir / f"recorder_watchdog_{tag}.png"))


def test_badges_in_nodes2_mode(browser, comfy_host, output_dir):
    comfy_host.wait_idle()
    page, console = open_comfy(browser, comfy_host, vue_nodes=True)
    try:
        tag = comfy_host.frontend.replace(".", "_")
        page.wait_for_function("() => window.__gpuGarden?.recorder", timeout=20000)
        load_api(page, sd15_prompt("a nodes2 recorder test " + tag, width=64, height=64, seed=23))
        queue_and_wait(page, runs_seen(page))
        run = page.evaluate("() => window.__gpuGarden.recorder.runs[0]")
        executed = sorted(n["id"] for n in run["nodes"])
        page.wait_for_function("""(ids) => ids.every(id => (document.querySelector(`.lg-node[data-node-id="${id}"] [data-testid=gpu-garden-badge]`)?.textContent || '').includes('peak'))""",
                               arg=executed, timeout=15000)
        texts = page.evaluate("() => [...document.querySelectorAll('[data-testid=gpu-garden-badge]')].map(b => b.textContent)")
        assert len(texts) == len(executed) and all(t.startswith("process RAM peak ") for t in texts), texts
        box = page.locator('.lg-node[data-node-id="3"] [data-testid=gpu-garden-badge]').bounding_box()
        node = page.locator('.lg-node[data-node-id="3"]').bounding_box()
        assert box["width"] > 40 and box["y"] + box["height"] <= node["y"] + 1, (box, node)  # visible, above the node
        # not in the frontend's own badge row too: Nodes 2.0 builds that row in a computed (1.58.1's
        # usePartitionedBadges) that reads node.badges but is not re-run when the array changes, and no public API, event
        # or reactive setter re-runs it (webZ's search of the bundle). When this fails, the frontend shows the badge
        # there itself now: drop the label (recorder.showDomBadges), or the node shows both.
        in_row = page.evaluate("""(ids) => ids.filter(id => { const e = document.querySelector(`.lg-node[data-node-id="${id}"]`)
            .cloneNode(true); e.querySelectorAll('[data-testid=gpu-garden-badge]').forEach(b => b.remove());
            return e.textContent.includes('peak'); })""", executed)
        assert in_row == [], f"the frontend's badge row shows the recorder's badge on nodes {in_row}: drop the label"
        page.wait_for_timeout(300)
        page.screenshot(path=str(output_dir / f"recorder_badges_nodes2_{tag}.png"), clip={"x": 0, "y": 40, "width": 1400, "height": 420})
    finally:
        page.context.close()
    assert console.from_pack() == [], console.from_pack()


# A finished run as nodes/recorder_state.py pushes it, from a workflow whose node 3 is not a KSampler (the page
# switched workflow while the run went on) and with a prompt id the run store does not hold.
OTHER_WORKFLOW_RUN = {"prompt_id": "p-other-workflow", "status": "success", "started": 1796030000.0, "duration_s": 2.0,
                      "devices": [{"device": "cpu", "name": "host RAM (process RSS)", "backend": "cpu"}],
                      "nodes": [{"id": "3", "display_id": "3", "type": "GGOtherSampler", "duration_s": 1.5, "t0_s": 0.0,
                                 "peak": {"cpu": 3 << 30}},
                                {"id": "8", "display_id": "8", "type": "VAEDecode", "duration_s": 0.5, "t0_s": 1.5,
                                 "peak": {"cpu": 1 << 30}}]}


def test_badges_only_on_nodes_of_the_run_s_type_and_a_failed_copy_is_not_a_report(page, comfy_host):
    """A badge went on whatever node had the run's node id, in whichever workflow the page showed; "Copy memory
    report" copied a 404's error text and said "Memory report copied"."""
    page.wait_for_function("() => window.__gpuGarden?.recorder", timeout=20000)
    load_api(page, sd15_prompt("a badge test", width=64, height=64, seed=25))
    page.evaluate("(run) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.recorder.run', run)", OTHER_WORKFLOW_RUN)
    badges = page.evaluate("""() => Object.fromEntries((app.rootGraph ?? app.graph).nodes.map(n =>
        [String(n.id), (n.badges || []).map(b => (typeof b === 'function' ? b() : b).text).filter(t => t && t.includes('peak'))]))""")
    assert badges["3"] == [] and len(badges["8"]) == 1, badges

    page.evaluate(f"() => app.extensionManager.command.execute('Workspace.ToggleSidebarTab.{SIDEBAR}')")
    page.wait_for_selector("[data-testid=gpu-garden-copy-report]", state="visible", timeout=20000)
    page.click("[data-testid=gpu-garden-copy-report]")
    page.get_by_text("Memory report not copied").first.wait_for(state="visible", timeout=10000)
    assert page.evaluate("() => window.__gpuGarden.recorder.copied") is None
    assert page.get_by_text("Memory report copied", exact=True).count() == 0


def test_a_hang_warning_of_a_run_that_then_succeeded_is_marked_resolved(page, comfy_host):
    """fixW2 walk: "KSampler #3 ... may be hung" with the whole hang guide stayed at the top of Runs after that
    slow CPU run succeeded, and after later runs too. Once the run's record says success, the warning is one
    resolved line with no guide; a warning of a run that did not finish keeps the guide."""
    page.wait_for_function("() => window.__gpuGarden?.recorder", timeout=20000)
    page.evaluate(f"() => app.extensionManager.command.execute('Workspace.ToggleSidebarTab.{SIDEBAR}')")
    page.evaluate("(ev) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.recorder.watchdog', ev)", WATCHDOG)
    warn = page.locator("[data-testid=gpu-garden-watchdog]")
    warn.wait_for(state="visible", timeout=20000)
    assert "it may be hung" in warn.text_content() and "--disable-dynamic-vram" in warn.text_content()
    done = dict(OTHER_WORKFLOW_RUN, prompt_id=WATCHDOG["prompt_id"], duration_s=161.0)
    page.evaluate("(run) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.recorder.run', run)", done)
    page.wait_for_function("() => document.querySelector('[data-testid=gpu-garden-watchdog]')?.dataset.resolved === 'true'",
                           timeout=20000)
    text = warn.text_content()
    assert text.startswith("Resolved: VAEDecode #8 looked hung after 312 s") and "success in 161 s" in text, text
    assert "--disable-dynamic-vram" not in text and warn.locator("h4").count() == 0, text
    other = dict(WATCHDOG, prompt_id="p-still-running", message="KSampler #3 has run 99 s: it may be hung.")
    page.evaluate("(ev) => window.comfyAPI.api.api.dispatchCustomEvent('gpu_garden.recorder.watchdog', ev)", other)
    page.wait_for_function("() => document.querySelector('[data-testid=gpu-garden-watchdog]')?.dataset.resolved === 'false'",
                           timeout=20000)
    assert "KSampler #3 has run 99 s" in warn.text_content() and "--disable-dynamic-vram" in warn.text_content()
