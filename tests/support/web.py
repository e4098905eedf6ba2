"""Browser helpers shared by tests/web."""


def show_node(page, node_id, left=420, top=120, scale=1.1):
    """Zoom to `scale` and pan so the node's top-left sits `left`, `top` canvas pixels in: a stable view for screenshots."""
    page.evaluate("""([id, left, top, scale]) => {
        const c = window.app.canvas, n = window.app.graph.getNodeById(id);
        c.ds.scale = scale;
        c.ds.offset[0] = -n.pos[0] + left; c.ds.offset[1] = -n.pos[1] + top;
        c.setDirty(true, true);
    }""", [node_id, left, top, scale])
    page.wait_for_timeout(600)
