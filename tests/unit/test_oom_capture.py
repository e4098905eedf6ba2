"""OOM capture without a host: the report's plain-data pieces, the wrappers installed once, removed
cleanly, re-installed when something removes them and robust to foreign wrappers, on stand-ins for
ComfyUI's execution and model_management modules; bounded reports and the crash-safe store."""
import asyncio
import json
import os
import sys
import threading
import types
from enum import Enum

import pytest

from gpu_garden.nodes import health, oom_build, oom_capture, oom_report, oom_store


# -- plain data -----------------------------------------------------------------------------------
def test_node_info_resolves_subgraph_titles():
    wf = {"nodes": [{"id": 12, "type": "sg-1", "title": "Hi-res pass"}],
          "definitions": {"subgraphs": [{"id": "sg-1", "nodes": [{"id": 5, "type": "VAEDecode", "title": "Decode big"}]}]}}
    info = oom_report.node_info("12:5", "VAEDecode", {"workflow": wf})
    assert info["title"] == "Decode big" and [p["title"] for p in info["path"]] == ["Hi-res pass", "Decode big"]
    assert oom_report.node_info("8", "VAEDecode", None, "VAE Decode")["title"] == "VAE Decode"
    assert oom_report.node_info("8", "VAEDecode", {"workflow": "not a dict"})["title"] == "VAEDecode"


def test_latent_sizes():
    lat = oom_report.latent_from_samples([2, 4, 128, 96])
    assert (lat["width"], lat["height"], lat["batch"], lat["frames"]) == (768, 1024, 2, 1)
    assert oom_report.latent_from_samples([1, 16, 21, 60, 104])["frames"] == 21
    assert oom_report.latent_from_samples([1, 48, 31, 44, 80])["width"] == 1280  # Wan 2.2 VAE: 16x
    assert oom_report.latent_from_samples([3, 4]) is None
    prompt = {"5": {"class_type": "EmptyHunyuanLatentVideo", "inputs": {"width": 832, "height": 480, "length": 81, "batch_size": 1}},
              "3": {"class_type": "KSampler", "inputs": {"latent_image": ["5", 0], "seed": 1}},
              "8": {"class_type": "VAEDecode", "inputs": {"samples": ["3", 0], "vae": ["4", 2]}}}
    lat = oom_report.latent_from_prompt(prompt, "8")
    assert (lat["width"], lat["height"], lat["frames"], lat["video_frames"]) == (832, 480, 21, 81)  # frames: latent
    assert lat["source"].endswith("#5")


def test_bar_numbers_never_mix_a_cuda_message_with_host_ram():
    cpu = {"backend": "cpu", "total": 32 << 30, "free": 20 << 30}
    n = oom_report.bar_numbers({"requested": 1 << 30}, cpu, "cuda")
    assert n["requested"] == 1 << 30 and n["total"] is None and n["free"] is None
    gpu = {"backend": "cuda", "total": 8 << 30, "free": 1 << 29, "reserved_unallocated": 1 << 28}
    n = oom_report.bar_numbers({"requested": 1 << 30, "free": 1 << 20}, gpu, "cuda")
    assert n["free"] == 1 << 20 and n["source"]["free"] == "log"
    assert n["total"] == 8 << 30 and n["source"]["total"] == "probe"


def test_matching_device_by_kind_and_index():
    snap = {"devices": [{"backend": "cuda", "index": 0}, {"backend": "cuda", "index": 1}, {"backend": "cpu", "index": 0}]}
    assert oom_report.matching_device(snap, "cuda", 1)["index"] == 1
    assert oom_report.matching_device(snap, "cuda", None)["index"] == 0
    assert oom_report.matching_device(snap, "mps", 0) is None
    assert oom_report.matching_device(None, "cuda", 0) is None


def test_swap_actions_only_for_the_failing_type():
    guide = {"actions": [{"kind": "swap_node", "from": "VAEDecode", "to": "VAEDecodeTiled", "widgets": {"tile_size": 512}}]}
    (a,) = oom_report.swap_actions({"id": "8", "type": "VAEDecode"}, "activations", guide)
    assert a["node_id"] == "8" and a["to"] == "VAEDecodeTiled" and a["widgets"] == {"tile_size": 512}
    assert oom_report.swap_actions({"id": "3", "type": "KSampler"}, "vae-decode", guide) == []
    (b,) = oom_report.swap_actions({"id": "8", "type": "VAEDecode"}, "vae-decode", None)
    assert b["widgets"]["overlap"] == 64
    assert oom_report.swap_actions({"id": "8", "type": "VAEDecode"}, "fragmentation", None) == []


def test_fallback_recognises_oom_by_type_or_message(monkeypatch):
    monkeypatch.setattr(oom_build, "triage_core", lambda: None)
    OOM = type("OutOfMemoryError", (RuntimeError,), {"__module__": "torch"})
    assert oom_capture.is_oom(OOM("x"))
    assert oom_capture.is_oom(RuntimeError("MPS backend out of memory (MPS allocated: 1 GB)"))
    assert oom_capture.is_oom(RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 4 bytes"))
    assert not oom_capture.is_oom(RuntimeError("mat1 and mat2 shapes cannot be multiplied"))


# -- the wrappers on stand-in modules ----------------------------------------------------------------
class Result(Enum):
    SUCCESS = 0
    FAILURE = 1


@pytest.fixture
def fake_host(monkeypatch, tmp_path):
    calls = {"unloaded": 0, "sent": [], "errors": 0}
    mm = types.ModuleType("comfy.model_management")
    mm.current_loaded_models = []

    def unload_all_models():
        calls["unloaded"] += 1
    mm.unload_all_models = unload_all_models
    comfy = types.ModuleType("comfy")
    comfy.model_management = mm

    execution = types.ModuleType("execution")

    async def execute(server, dynprompt, caches, current_item, extra_data, executed, prompt_id, execution_list=None):
        try:
            raise dynprompt.exc
        except Exception as ex:
            if type(ex).__name__ == "OutOfMemoryError":
                mm.unload_all_models()  # as execution.py does, inside its except block
            return (Result.FAILURE, {"node_id": current_item}, ex)

    class PromptExecutor:
        def __init__(self, server):
            self.server = server

        def handle_execution_error(self, prompt_id, prompt, current_outputs, executed, error, ex):
            calls["errors"] += 1
            self.server.send_sync("execution_error", {"prompt_id": prompt_id}, self.server.client_id)

    execution.execute, execution.PromptExecutor = execute, PromptExecutor
    folder_paths = types.ModuleType("folder_paths")
    folder_paths.get_user_directory = lambda: str(tmp_path)
    for name, mod in (("comfy", comfy), ("comfy.model_management", mm), ("execution", execution),
                      ("folder_paths", folder_paths)):
        monkeypatch.setitem(sys.modules, name, mod)
    monkeypatch.setattr(oom_capture, "_store_path", None)
    yield types.SimpleNamespace(mm=mm, execution=execution, calls=calls, originals=(execute, unload_all_models,
                                                                                     PromptExecutor.handle_execution_error))
    oom_capture.uninstall()


class Server:
    def __init__(self, calls, client_id):
        self.calls, self.client_id = calls, client_id

    def send_sync(self, event, data, sid):
        self.calls["sent"].append((event, data, sid))


def run_coroutine(coro):
    """asyncio.run on a thread of its own: another test in the session (Playwright) may own this thread's loop."""
    out = {}
    t = threading.Thread(target=lambda: out.update(result=asyncio.run(coro)))
    t.start()
    t.join()
    return out["result"]


def run_node(host, exc, client_id="browser-1"):
    server = Server(host.calls, client_id)
    prompt = {"10": {"class_type": "GGTestRaiseOOM", "inputs": {}}}
    dyn = types.SimpleNamespace(exc=exc, original_prompt=prompt, get_node=lambda nid: prompt[nid])
    result = run_coroutine(host.execution.execute(server, dyn, None, "10", {"client_id": client_id}, set(), "p-1"))
    host.execution.PromptExecutor(server).handle_execution_error("p-1", prompt, [], set(), result[1], result[2])
    return result


def test_installs_once_and_uninstalls_cleanly(fake_host):
    oom_capture.install()
    oom_capture.install()
    assert fake_host.execution.execute.__wrapped__ is fake_host.originals[0]
    assert fake_host.mm.unload_all_models.__wrapped__ is fake_host.originals[1]
    oom_capture.uninstall()
    assert fake_host.execution.execute is fake_host.originals[0]
    assert fake_host.mm.unload_all_models is fake_host.originals[1]
    assert fake_host.execution.PromptExecutor.handle_execution_error is fake_host.originals[2]


def test_oom_is_captured_before_unload_and_sent_after_execution_error(fake_host):
    oom_capture.install()
    OOM = type("OutOfMemoryError", (RuntimeError,), {"__module__": "torch"})
    status, _, _ = run_node(fake_host, OOM("CUDA out of memory. Tried to allocate 1.50 GiB."))
    assert status is Result.FAILURE and fake_host.calls["unloaded"] == 1  # ComfyUI's cleanup still ran
    events = [e for e, _, _ in fake_host.calls["sent"]]
    assert events == ["execution_error", "gpu_garden.oom"]
    _, report, sid = fake_host.calls["sent"][1]
    assert sid == "browser-1" and report["captured"] == "before ComfyUI unloaded models"
    assert report["node"]["id"] == "10" and report["exception_type"] == "torch.OutOfMemoryError"
    assert (oom_capture.flush() and oom_capture.store().read())[0]["id"] == report["id"]


def test_no_client_means_no_event_but_a_stored_report(fake_host):
    oom_capture.install()
    run_node(fake_host, RuntimeError("DefaultCPUAllocator: can't allocate memory: you tried to allocate 8 bytes"), None)
    assert [e for e, _, _ in fake_host.calls["sent"]] == ["execution_error"]
    assert (oom_capture.flush() and oom_capture.store().read())[0]["captured"] == "at failure"


def test_non_oom_error_is_left_alone(fake_host):
    oom_capture.install()
    run_node(fake_host, ValueError("mat1 and mat2 shapes cannot be multiplied"))
    assert [e for e, _, _ in fake_host.calls["sent"]] == ["execution_error"] and fake_host.calls["errors"] == 1
    assert (oom_capture.flush() and oom_capture.store().read()) == []


def test_triage_core_is_not_imported_until_a_failure():
    from support.pack import run_python

    out = run_python("import sys, types\n"
                     "sys.modules['comfy'] = types.ModuleType('comfy')\n"
                     "import gpu_garden.nodes.oom_capture\n"
                     "print('gpu_garden.memory.triage.engine' in sys.modules)")
    assert out.stdout.strip() == "False", out.stderr


# -- robustness: foreign wrappers, removed hooks, missing ids, huge messages ------------------------
OOM_TEXT = "CUDA out of memory. Tried to allocate 1.50 GiB."


def torch_oom(text=OOM_TEXT):
    return type("OutOfMemoryError", (RuntimeError,), {"__module__": "torch"})(text)


def test_a_plain_args_kwargs_wrapper_installed_first_does_not_lose_the_report(fake_host):
    inner = fake_host.execution.execute

    async def foreign(*args, **kwargs):  # another pack's wrapper: no functools.wraps, no names
        return await inner(*args, **kwargs)

    fake_host.execution.execute = foreign
    oom_capture.install()
    run_node(fake_host, torch_oom())
    sent = [(e, d) for e, d, _ in fake_host.calls["sent"]]
    assert [e for e, _ in sent] == ["execution_error", "gpu_garden.oom"]
    report = sent[1][1]
    assert report["node"]["id"] == "10" and report["prompt_id"] == "p-1" and report["node"]["type"] == "GGTestRaiseOOM"
    assert (oom_capture.flush() and oom_capture.store().read())[0]["id"] == report["id"]


def test_binding_prefers_the_unwrapped_signature_then_comfyuis_order():
    async def real(server, dynprompt, caches, current_item, extra_data, executed, prompt_id):
        pass

    async def plain(*a, **k):
        pass

    plain.__wrapped__ = real
    assert oom_capture.execute_param_names(plain)[:4] == ("server", "dynprompt", "caches", "current_item")

    async def opaque(*a, **k):
        pass

    assert oom_capture.execute_param_names(opaque) == oom_capture.EXECUTE_PARAMS
    dyn = types.SimpleNamespace(get_node=lambda n: {})
    ctx = oom_capture.bind_execute(oom_capture.EXECUTE_PARAMS, ("srv", dyn, "c", "7", {}), {"prompt_id": "p"})
    assert (ctx["node_id"], ctx["prompt_id"], ctx["server"]) == ("7", "p", "srv")


def test_ownership_is_an_identity_registry_not_copied_attributes(fake_host):
    import functools

    oom_capture.install()
    ours = fake_host.execution.execute

    @functools.wraps(ours)  # copies __dict__ (and sets __wrapped__ = ours)
    async def foreign(*args, **kwargs):
        return await ours(*args, **kwargs)

    fake_host.execution.execute = foreign
    assert oom_capture.ensure_installed() == []  # ours is in the chain: not wrapped twice
    oom_capture.uninstall()
    assert fake_host.execution.execute is foreign  # not ours to remove
    assert fake_host.mm.unload_all_models is fake_host.originals[1]
    run_node(fake_host, torch_oom())  # ours stays in foreign's chain, inert
    assert [e for e, _, _ in fake_host.calls["sent"]] == ["execution_error"]


def test_a_removed_hook_is_reported_and_reinstalled_before_the_next_prompt(fake_host):
    oom_capture.install()
    assert health.report()["features"]["oom_capture.execute"]["installed"] is True
    fake_host.execution.execute = fake_host.originals[0]  # what ComfyUI's hook breaker does to functions it lists
    entry = health.report()["features"]["oom_capture.execute"]
    assert entry["installed"] is False and "re-installed before the next prompt" in entry["last_error"]
    assert oom_capture._on_prompt({"prompt": {}}) == {"prompt": {}}  # the prompt-server handler re-installs
    assert fake_host.execution.execute is not fake_host.originals[0]
    entry = health.report()["features"]["oom_capture.execute"]
    assert entry["installed"] is True and "re-installed" in entry["last_error"]
    run_node(fake_host, torch_oom())
    assert [e for e, _, _ in fake_host.calls["sent"]] == ["execution_error", "gpu_garden.oom"]


def test_a_hook_breaker_that_lists_execute_is_named(fake_host, monkeypatch):
    hb = types.ModuleType("hook_breaker_ac10a0")
    hb.HOOK_BREAK = [(fake_host.mm, "cast_to")]
    hb.SAVED_FUNCTIONS = [(fake_host.execution, "execute", fake_host.originals[0])]
    monkeypatch.setitem(sys.modules, "hook_breaker_ac10a0", hb)
    oom_capture.install()
    assert oom_capture.hook_breaker_listed() == ["execution.execute"]


def test_reports_are_published_without_a_prompt_id(fake_host):
    oom_capture.install()
    server = Server(fake_host.calls, "browser-2")
    prompt = {"10": {"class_type": "GGTestRaiseOOM", "inputs": {}}}
    dyn = types.SimpleNamespace(exc=torch_oom(), original_prompt=prompt, get_node=lambda nid: prompt[nid])
    run_coroutine(fake_host.execution.execute(server, dyn, None, "10", {}, set(), None))
    (event, report, sid), = fake_host.calls["sent"]
    assert event == "gpu_garden.oom" and sid == "browser-2" and report["prompt_id"] is None


def test_a_report_left_pending_is_published_when_the_prompt_ends(fake_host):
    oom_capture.install()
    server = Server(fake_host.calls, "browser-3")
    prompt = {"10": {"class_type": "GGTestRaiseOOM", "inputs": {}}}
    dyn = types.SimpleNamespace(exc=torch_oom(), original_prompt=prompt, get_node=lambda nid: prompt[nid])
    run_coroutine(fake_host.execution.execute(server, dyn, None, "10", {}, set(), "p-9"))
    assert fake_host.calls["sent"] == []  # waiting for handle_execution_error, which never comes
    oom_capture.flush_pending()  # what the execute_async wrapper does after every prompt
    assert [e for e, _, _ in fake_host.calls["sent"]] == ["gpu_garden.oom"]


@pytest.mark.parametrize("size", [300_000, 1_000_000])
def test_a_huge_whitespace_heavy_message_ends_like_any_failure(fake_host, size):
    """Blank lines around the anchor words the recognisers look for ("llocation", "emory"), as in the
    report of a node that stalled ComfyUI's queue; the real triage core reads it."""
    oom_capture.install()
    pad = " \n\t" * (size // 6)
    text = "CUDA out of memory." + pad + "Allocation on device" + pad + "emory 1.50 GiB" + pad + "llocation"
    run_node(fake_host, torch_oom(text))
    _, report, _ = fake_host.calls["sent"][1]
    assert len(report["message"]) <= oom_store.MAX_MESSAGE_CHARS + 100 and "characters cut by GPU Garden" in report["message"]
    assert report["message"].startswith("CUDA out of memory.") and report["message"].endswith("llocation")
    assert len(json.dumps(report)) <= oom_store.MAX_REPORT_BYTES
    assert any("head and tail kept" in n for n in report["notes"])


# -- bounded, crash-safe storage --------------------------------------------------------------------
def test_bounded_text_keeps_head_and_tail():
    text = "A" * 10_000 + "B" * 10_000
    cut = oom_store.bounded_text(text, 1000)
    assert cut.startswith("A" * 500) and cut.endswith("B" * 500) and "[... 19000 characters cut" in cut
    assert oom_store.bounded_text("short", 1000) == "short"


def test_a_report_is_at_most_64_kb_and_says_what_was_cut():
    big = {"id": "x", "node": {"id": "3", "type": "KSampler"}, "message": "m" * 200_000,
           "guide": {"id": "activations", "title": "t", "markdown": "g" * 100_000, "commands": ["c"], "faqs": ["f"] * 500},
           "loaded_models": [{"name": "n" * 300}] * 400, "session_history": [{"numbers": {"a": 1}}] * 500,
           "snapshot": {"devices": [{"models": [{"name": "s" * 500}] * 300}]}, "notes": []}
    out = oom_store.bound_report(big)
    assert len(json.dumps(out).encode()) <= oom_store.MAX_REPORT_BYTES
    assert out["id"] == "x" and out["truncated"] and out["guide"]["id"] == "activations"
    small = {"id": "y", "message": "m"}
    assert oom_store.bound_report(small) is small


def test_store_writes_atomically_and_leaves_no_temporary_files(tmp_path):
    store = oom_store.ReportStore(str(tmp_path / "g" / "oom_reports.jsonl"), limit=5)
    for i in range(8):
        store.add({"id": str(i), "message": "x" * 200_000})
    got = store.read()
    assert [r["id"] for r in got] == ["7", "6", "5", "4", "3"]
    assert all(len(r["message"]) < 20_000 for r in got)
    assert sorted(p.name for p in (tmp_path / "g").iterdir()) == ["oom_reports.jsonl", "oom_reports.jsonl.lock"]


def _add_many(path, tag, n):
    store = oom_store.ReportStore(path, limit=1000)
    for i in range(n):
        store.add({"id": f"{tag}-{i}"})


def test_two_processes_sharing_a_user_dir_lose_nothing(tmp_path):
    import multiprocessing

    if "fork" not in multiprocessing.get_all_start_methods():
        pytest.skip("needs fork")
    ctx = multiprocessing.get_context("fork")
    path = str(tmp_path / "shared" / "oom_reports.jsonl")
    os.makedirs(os.path.dirname(path))
    procs = [ctx.Process(target=_add_many, args=(path, tag, 40)) for tag in ("a", "b")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0]
    ids = {r["id"] for r in oom_store.ReportStore(path, limit=1000).read()}
    assert ids == {f"{t}-{i}" for t in "ab" for i in range(40)}


def test_recognition_and_triage_read_only_a_bounded_head_and_tail(fake_host, monkeypatch):
    seen = {}
    core = types.SimpleNamespace(
        is_oom_error=lambda name, text: seen.setdefault("recognise", len(text)) > 0,
        triage_text=lambda text, ctx: seen.setdefault("triage", len(text)) and {"found": True, "events": []})
    monkeypatch.setattr(oom_build, "triage_core", lambda: core)
    oom_capture.install()
    run_node(fake_host, torch_oom("out of memory " + "\n " * 500_000))
    limit = oom_build.RECOGNITION_CHARS + 100  # the cut marker line
    assert 0 < seen["recognise"] <= limit and 0 < seen["triage"] <= 2 * limit + 200  # the log form has it twice
    assert [e for e, _, _ in fake_host.calls["sent"]] == ["execution_error", "gpu_garden.oom"]


def test_a_locked_store_never_holds_up_the_worker(fake_host, monkeypatch):
    """Another process holds the store's lock (or the user folder is on a slow disk): the failing node still
    ends and the page still gets its report; the write lands when the lock is free."""
    import threading

    oom_capture.install()
    held = threading.Event()
    real_add = type(oom_capture.store()).add

    def slow_add(self, report):
        held.wait(10)
        return real_add(self, report)

    monkeypatch.setattr(type(oom_capture.store()), "add", slow_add)
    OOM = type("OutOfMemoryError", (RuntimeError,), {"__module__": "torch"})
    status, _, _ = run_node(fake_host, OOM("CUDA out of memory. Tried to allocate 1.50 GiB."))
    assert status is Result.FAILURE
    assert [e for e, _, _ in fake_host.calls["sent"]] == ["execution_error", "gpu_garden.oom"]
    assert oom_capture.flush(0.05) is False  # still waiting for the lock
    held.set()
    assert oom_capture.flush() and oom_capture.store().read()[0]["id"] == fake_host.calls["sent"][1][1]["id"]


@pytest.mark.parametrize("message", [
    # PyTorch's caching allocator, a card nearly all held and a small request: weights and activations close (a pair)
    "CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total capacity of 7.79 GiB of which 6.00 MiB is free. "
    "Of the allocated memory 7.02 GiB is allocated by PyTorch, and 115.18 MiB is reserved by PyTorch but unallocated.",
    # ComfyUI's terse cudaMallocAsync line: one weak sign alone (uncertain, no second cause: never a pair)
    "Allocation on device ",
])
def test_the_report_carries_triages_own_pair(fake_host, message):
    """The panel labels an uncertain answer "two causes fit about equally" from the report's `pair`, the value triage's
    rank.pair gave (web/lib/oom_parts.js isPair), not from a ratio of its own."""
    from gpu_garden.memory.triage import engine
    oom_capture.install()
    OOM = type("OutOfMemoryError", (RuntimeError,), {"__module__": "torch"})
    run_node(fake_host, OOM(message))
    _, report, _ = fake_host.calls["sent"][1]
    event = engine.triage_text(f"torch.OutOfMemoryError: {message}\n", {"node_type": "GGTestRaiseOOM"})["events"][-1]
    assert report["uncertain"] and report["pair"] is event["pair"], (report["pair"], report["alternatives"])
    assert report["pair"] is (len(report["alternatives"]) == 2 and report["alternatives"][1]["confidence"]
                              >= 0.5 * report["alternatives"][0]["confidence"])
