"""The open graph's answer for a model file of no known family (ux58: a .safetensors with random tensor names,
picked in the loader, answered "FITS · unknown model (unknown)" with generic figures, where the node's own face and
the CLI flag them: "unknown model family: generic figures", "[UNKNOWN family: generic figures]")."""


def test_an_unknown_family_is_flagged_in_the_open_graphs_answer(comfy_page):
    page, _ = comfy_page
    out = page.evaluate("""async () => {
        const m = await import('/extensions/comfyui-gpu-garden/lib/estimate_graph.js');
        const G = 2 ** 30, base = {width: 256, height: 256, frames: 1, batch: 1, peak: 0.17 * G, peak_phase: 'vae_decode',
            budget: null, verdict: 'fits', outcome: {status: 'fits', reason: 'CPU run'}, missing: [], device: 'cpu',
            files: ['bad_unknown_arch.safetensors'], tiers: [{gb: 8, outcome: 'fits'}]};
        const box = document.createElement('div'), texts = [];
        m.renderGraph(box, {...base, family: 'unknown', family_name: 'unknown model', unknown: true});
        texts.push(box.querySelector('[data-testid=gg-estimate-graph-unknown]')?.textContent ?? null);
        m.renderGraph(box, {...base, family: 'sd1', family_name: 'Stable Diffusion 1.x', unknown: false});
        texts.push(box.querySelector('[data-testid=gg-estimate-graph-unknown]')?.textContent ?? null, box.innerText);
        return texts;
    }""")
    assert out[0] == "unknown model family: generic figures", out
    assert out[1] is None and "generic" not in out[2], out
