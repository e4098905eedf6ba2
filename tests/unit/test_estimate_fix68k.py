"""fix68k: review rev68d's findings on fix68d (issue 15): the image-to-video nodes read in one pass, the VAE encode
sized by its pixel shape as ComfyUI's memory_used_encode sizes it, the text encoders and the audio encoder where
ComfyUI's text_encoder_device() puts them, and the phase rows' text."""
from gpu_garden.memory.estimate import i2v_nodes

MiB, GiB = 1024 ** 2, 1024 ** 3


class _CountingNodes(list):
    """A workflow's node list that counts the scans over it (a spy; no timing)."""
    scans = 0

    def __iter__(self):
        type(self).scans += 1
        return super().__iter__()


def test_i2v_nodes_read_in_one_scan_of_the_graph():
    """rev68d F3: largest() scanned every node once per image-to-video node (16,000 pairs: 32 s). It now builds one
    id -> node index per graph: the node list is walked once however many i2v nodes there are."""
    n = 200
    nodes = _CountingNodes({"id": i, "type": "Wan22ImageToVideoLatent", "inputs": [{"name": "start_image", "link": i}],
                            "widgets_values": [1280, 704, 1]} for i in range(1, n + 1))
    wf = {"nodes": nodes, "links": []}
    keyed = {(None, i): ("Wan22ImageToVideoLatent", {"width": 1280, "height": 704 if i != 7 else 720, "length": 1})
             for i in range(1, n + 1)}
    _CountingNodes.scans = 0
    assert i2v_nodes.largest(wf, keyed) == (1280, 720, 1)
    assert _CountingNodes.scans == 1
