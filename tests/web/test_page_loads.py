def test_page_loads_with_extension(comfy_page, output_dir):
    page, console = comfy_page
    names = page.evaluate("() => window.app.extensions.map(e => e.name)")
    assert "GPUGarden.Core" in names
    assert page.evaluate("() => !!(window.__gpuGarden && window.__gpuGarden.loaded)")
    page.screenshot(path=str(output_dir / "page_loads.png"))
    assert console.from_pack() == [], console.from_pack()
    assert console.unexpected() == [], console.unexpected()
