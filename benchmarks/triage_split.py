"""Split-half studies, generated: a rule change designed on the even batches of the unseen corpus and checked on the odd
ones. For each study in STUDIES (the commit before the change, the commit that made it, and a kept-apart variant on top
of it), every case of the corpus as of the study's "after" commit (the batches its tree holds; a batch added later is
left out) is scored with the package as committed at each commit (triage_rounds.scored: triage_calibration's `git
archive` per commit and its cache, so uncommitted edits never count), split by batch number parity. Printed and written
to benchmarks/results/triage_split.json, which docs/triage-accuracy.md's task write-ups read their figures from: per
commit and half, the cases, the right causes and the cases with no answer at all (no failure found), by label; per pair of commits and half, the cases fixed (wrong -> right), broken
(right -> wrong), moved between two wrong causes, and moved in their top two causes' confidences only, with the cases; for
a study that names a "prefix" (a runtime's case-file names), per commit and half the cases of that runtime, the right ones and
the wrong ones by label and answer; for one that names a "label", the same over the cases of that label; (dev66) for one that
sets "extract", per commit and half the cases whose device kind, numbers and runtime are right (and per pair, the cases that
went wrong -> right and right -> wrong in each). Nothing is tuned here.

    python benchmarks/triage_split.py [--no-cache] [--only NAME]

--only NAME scores that one study and replaces only its entry in the results file; every other study's entry is kept as
it is there, not scored again (task tri73: scoring every study takes most of an hour with an empty cache).
"""
import json
import argparse
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from results import save  # noqa: E402
from triage_rounds import L, ok, scored  # noqa: E402  (L: triage_ledger, with the corpus harness L.U)

# study -> its commits in order; "corpus" names the commit whose tree gives the batches, "pairs" what is compared,
# "confusion" the two causes whose mix-up is counted each way (label read as the other) per commit and half
STUDIES = {
    "tw49": {"commits": {"before": "a031b928c79af92c7189bd3d27f1e17832c08479",    # main before the change
                         "after": "f4dbaf24de9534a868a3b2e4c495b45926b5f9b2"},    # predicates.slack_freed (reverted)
             "corpus": "after", "pairs": [("before", "after")],
             "confusion": ("weights-exceed-vram", "activations")},
    "op53": {"commits": {"before": "dbc822daa0d4a6606f5cb5080d8678ee228c24a7",    # main before the change
                         "after": "a16eaf835142162f731b10fc94a0221cd68e07e7"},    # predicates.listed_several_cut (kept)
             "corpus": "after", "pairs": [("before", "after")],
             "confusion": ("other-process", "activations")},
    # llama.cpp's logs (case files named llamacpp*) read on the even half; no rule held, so no change and no pair
    "llc54": {"commits": {"main": "ed2aa15339c889f07633f38f8126b788ac8f8d0c"},    # main when the study began (no change)
              "corpus": "main", "pairs": [], "confusion": ("other", "activations"), "prefix": "llamacpp"},
    "tri56": {"commits": {"before": "0a885b0f4c83feb90262a40a36786fd6510ce5fe",    # main before the change
                          "after": "95047f05652029c4cd7064260fd3aeb1f6a7f64e"},    # predicates.slack_one_request (reverted)
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("fragmentation", "activations")},
    "tri60": {"commits": {"before": "4aa1fbd6069b0b7b2920952121cd6b8d4792914f",    # main before the change
                          "after": "61b12fefc27b28d19eb111d9f4249cd26cd7a907"},    # predicates.mps_other_held (reverted)
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("activations", "other-process")},
    # host-ram named on logs labelled otherwise ("answer": the wrong answers of that cause, counted per commit and half)
    "tri66": {"commits": {"before": "d58e560e8a59d5f8c527e78e6e10f20f38ddd144",    # main before the change
                          "after": "b9d99302c936c926978437a7931ec23332cd7692"},    # predicates.aimdo_file_read (kept)
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("other", "host-ram"), "answer": "host-ram"},
    # the kv-cache class (issue 14): every case labelled kv-cache counted by answer ("label"), and its largest confusion
    "tri64": {"commits": {"before": "d58e560e8a59d5f8c527e78e6e10f20f38ddd144",    # main before the change
                          "after": "73bebeef7a60b2fd2f700e99159e27613a5eae3d"},    # predicates.kv_sized widened (kept)
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("kv-cache", "weights-exceed-vram"), "label": "kv-cache"},
    # the leak class: its logs (label "leak") counted by answer per commit and half ("label": every runtime's)
    "tri65": {"commits": {"before": "d58e560e8a59d5f8c527e78e6e10f20f38ddd144",    # main before the change
                          "after": "804d2ce6e800879ce6067df9c7b2f8a35bc0e04d"},    # predicates.step_mem_grew (kept)
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("leak", "activations"), "label": "leak"},
    # logs with no answer at all (found=False), read on the even half; two runtimes' own OOM lines recognised (kept)
    "tri63": {"commits": {"before": "d58e560e8a59d5f8c527e78e6e10f20f38ddd144",    # main before the change
                          "after": "cee6c57d5cc945d3da0cf0a294ec2a420f1a6afd"},    # VTK's GL_OUT_OF_MEMORY, faceswap's training OOM: generic.oom (kept)
              "corpus": "after", "pairs": [("before", "after")]},
    # four single readings left open by tri63, tri64 and the census, one commit and one pair each (item 3, vLLM's start-up
    # check and club-3090's preflight line, was read and changed nothing: no commit)
    "tri69": {"commits": {"before": "ff32c3e87c8394d523bd79823f3b609552be3b86",    # main before the changes
                          "pinned": "7d0e39e27d1936cbde61c71f572bf5f4e7d8a0a9",    # ggml-vulkan's pinned warning quoting ggml's own size check: no failure (kept)
                          "code2": "9f826a19c1927ff48dcfad4deee0c232233bc3b7",   # a CUDA program's bare "CUDA error: 2" read (kept)
                          "grain": "a597e3e1afef9f2b04a3d81a6faa5a0619f2a7fe"},    # kv_sized's q8_0 / q4_0 grain (kept)
              "corpus": "grain", "pairs": [("before", "pinned"), ("pinned", "code2"), ("code2", "grain")],
              "confusion": ("kv-cache", "weights-exceed-vram")},
    # logs labelled other read as a memory cause (issue 14): every case labelled other counted by answer ("label"), and
    # its largest confusion; MLX's per-buffer refusal near its cap read by R5 (kept)
    "tri67": {"commits": {"before": "ff32c3e87c8394d523bd79823f3b609552be3b86",    # main before the change
                          "after": "1fd9c29575ade0358f5f1b119b9b38ef0c6545ff"},    # rules_other.mlx_cap_within_memory (kept)
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("other", "activations"), "label": "other"},
    # "other" and other-process answered where the label is another cause (issue 14): both answers' wrong ones counted by
    # label ("answers"), and the two causes' confusion each way; Kaldi's allocator report read (kept)
    "tri68": {"commits": {"before": "ff32c3e87c8394d523bd79823f3b609552be3b86",    # main before the change
                          "after": "04b24c9629c5feaa316bb2dee30d09eb0112e086"},    # predicates.kaldi_held_outside (kept)
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("other-process", "other"), "answers": ("other", "other-process")},
    # single readings left by tri67-tri69 (issue 14), each its own candidate, then the largest even-half confusion no study had
    # read (vae-decode read as activations), counted with its label's class ("label"); no change for it
    "tri70": {"commits": {"before": "63b2c411f32126291b53ed300a62698647a1dab9",    # main before the changes
                          "hip": "de67b77de8680031439d0711372ae39536e922f4",    # a HIP program's bare "HIP error: 2" read (kept)
                          "gate": "83f2c44e93e52b8eff9f88274c74dc486f7f6cfd"},    # club-3090's launcher gate read as vLLM's start-up check (kept)
              "corpus": "gate", "pairs": [("before", "hip"), ("hip", "gate")],
              "confusion": ("vae-decode", "activations"), "label": "vae-decode"},
    # PyTorch's "allocated in private pools" (issue 14): idle graph pools of at least the request read as graph capture (kept),
    # counted with the graph-capture class ("label"); the club-3090 report line was read and changed nothing (no commit)
    "tri71": {"commits": {"before": "5dcb95bd7f30ba4010d7990f6167a9c13bbfef80",    # main before the change
                          "after": "15b949ff2505ee9f5dd987f4be7e429994a166b1"},    # rules_capture.graph_pools_held (kept)
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("graph-capture", "weights-exceed-vram"), "label": "graph-capture"},
    # the largest confusion again (issue 14), weights-exceed-vram <-> activations: the even half's 76 misses read by the phase
    # their logs show; vLLM V1's worker failure over its RPC queue read as after the load (kept)
    "tri72": {"commits": {"before": "0cddb8bfae454096dede7be3b67249ba2b1cf7ec",    # main before the change
                          "after": "9fcfa166219e2a5409f24623eaa9d4d6678a2615"},    # facts vllm_worker_rpc, vllm_loading(_cut) skip it (kept)
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("weights-exceed-vram", "activations")},
    # the tiny-card weights row (issue 14): tri72's untried second candidate, the row skipped where PyTorch's free figure is
    # past a parameter's share of the card and the request passes it (kept or reverted by the odd half)
    "tri73": {"commits": {"before": "1e58865214ea2231514174ec0cc565db18ea6d2a",    # main before the change
                          "after": "0540e6d7976825331ab8371a874507bb7e2b4ec1"},    # card_room.room_left, the tiny row skipped
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("activations", "weights-exceed-vram")},
    # (review rev64 #5) tri73's room-left reading refined: it also needs PyTorch to hold under half the card, since a load
    # refused on its next weight leaves free memory short of one tensor, and on a tiny card one tensor can pass 5 % of it
    "tri74": {"commits": {"before": "428b97011831a6323eb958c684728600f3a370e4",    # main before the change
                          "after": "1c12fff92a10adf45a6b95c0db58ccd9b112e224"},    # card_room.HELD_SHARE
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("activations", "weights-exceed-vram")},
    # logs with no answer (issue 14): a Jupyter kernel that died while a cell ran (nbclient's DeadKernelError, the Notebook's
    # dialog) read as host RAM; the host-ram class counted by answer ("label"), and other read as host-ram
    "tri75": {"commits": {"before": "575c3aea1c47cfddf2132359860dc2d6c7fe20c5",    # main before the change
                          "after": "74a69c2377cb2c1cdff7685d530028eee630f01b"},    # host_readers.KERNEL_DIED, jupyter.kernel_died
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("other", "host-ram"), "label": "host-ram"},
    # logs with no answer (issue 14): data-loading workers found dead with no worker exception printed (batchgenerators'
    # "One or more background workers are no longer alive", nnU-Net's "Some ...") read as host RAM
    "tri76": {"commits": {"before": "c29bb1c2e56a8eaf7a168eeed5410e95928108ef",    # main before the change
                          "after": "0abb969c24844e24487864605fc457a616538bd6"},    # host_readers.WORKERS_DEAD, batchgen.workers_dead
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("other", "host-ram"), "label": "host-ram"},
    # the even half's largest pair besides weights/activations (issue 14), other <-> activations: tiny-cuda-nn's memory arena
    # that could not grow (cuMemCreate, cuMemMap, cuMemSetAccess in its gpu_memory source) read as the run's working memory
    "tri77": {"commits": {"before": "c29bb1c2e56a8eaf7a168eeed5410e95928108ef",    # main before the change
                          "after": "9650f2a88815013857a719be874d3bf0e5666511"},    # arena_readers.tcnn_arena, rules_libs' arena row
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("activations", "other"), "label": "activations"},
    # a card's total printed by nvidia-smi's GPU table (as deviceQuery's), and a failure with no figure of its own on a card
    # of at most 2 GiB read as weights-exceed-vram (issue 14; the even half's "other" answered for a weights log)
    "tri78": {"commits": {"before": "b1a2027d1f6096d7d6bd3fe9c9ee8523da23909a",    # main before the change
                          "after": "e35966afc6fb813f18f61cb9e4c3862b0ba60da3"},    # printed_card.tiny_printed, rules_weights' figureless tiny-card row
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("weights-exceed-vram", "other"), "label": "weights-exceed-vram"},
    # a ComfyUI loader that failed in the next prompt after a finished one (outside ComfyUI's own loader) read as leak
    # (issue 14; the even half's leak logs, read as weights-exceed-vram)
    "tri80": {"commits": {"before": "1cec2d36779e5d44dd3f46843887b434692abb7f",    # main before the change
                          "after": "e7f0dcd2319511ecf6eb5baefb026f33a30b576f"},    # reload_leak.reloaded_after_run, its leak row
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("leak", "weights-exceed-vram"), "label": "leak"},
    # the LLM runtimes' misses (issue 14; focus kv-cache and the runtimes, no kv-cache reading left untried): a free figure
    # worked out from the reserved one (IPEX's XPU message states none) stands as room for the "refused with plenty free"
    # reading only while PyTorch reserved under half the card; activations answered "other" for ipex-llm's vLLM
    "tri81": {"commits": {"before": "1cec2d36779e5d44dd3f46843887b434692abb7f",    # main before the change
                          "after": "7b11586cb982135a55fb01a25d00f932944b6589"},    # case.derived_free_counts
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("activations", "other"), "label": "activations"},
    # nvidia-smi's process table beside a CUDA failure: its graphics ("G") processes on the failing card past a desktop's share
    # read as other-process (issue 14; the even half's other-process logs answered as activations)
    "tri79": {"commits": {"before": "1cec2d36779e5d44dd3f46843887b434692abb7f",    # main before the change
                          "after": "a9d7efe72303ff5ee8586ecaa72fb87f3e5c5c6b"},    # smi_procs.graphics_hold, rules_process' graphics row
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("other-process", "activations"), "label": "other-process"},
    # a ComfyUI server that died of a native abort ("Fatal Python error: Aborted"), alone or after comfy-aimdo's failed device
    # copy, read as other (issue 14; the even half's other logs: no answer, and pinned host RAM)
    "tri82": {"commits": {"before": "09dbe5bc9a5fb5196f214ca35c97fa167cdc515e",    # main before the change
                          "after": "fd41d640c97c5d154caf0e058a2019178cf9df87"},    # native_abort.py: python.native_abort, two other rows
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("other", "host-ram"), "label": "other"},
    # the host-ram label's boundary (issue 14): Ray's memory monitor killing a task or actor for the node's system RAM
    # (ray.exceptions.OutOfMemoryError, "killed due to the node running low on memory") read as host RAM, as the OOM killer
    "tri84": {"commits": {"before": "ca9f1c5686b82882ab53a6ef59a5b1a56dc168b6",    # main before the change
                          "after": "14286b4f4cbacce64a0cbe0f925171dde98661e9"},    # ray_oom.py: os.oom_killer, form ray_monitor
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("host-ram", "other"), "label": "host-ram", "answer": "host-ram"},
    # a runtime's own memory pool (MLX, XLA, CuPy, ...) that refused a buffer of 1 MiB or less read as what the pool held,
    # weights-exceed-vram (issue 14; the weights/activations boundary, the even half's weights logs read as activations)
    "tri83": {"commits": {"before": "ca9f1c5686b82882ab53a6ef59a5b1a56dc168b6",    # main before the change
                          "after": "ecc534036aff2a6163e8ddc43aa10ab28c741f76"},    # pool_small_request.py, its weights row
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("weights-exceed-vram", "activations"), "label": "weights-exceed-vram"},
    # recognition (issue 14; the logs with no answer): PyTorch's out-of-memory words alone on a line ("CUDA out of memory",
    # nothing around them, as job wrappers relay them) read as the same words after "RuntimeError:" (generic.oom)
    "tri85": {"commits": {"before": "db25306d04cf7962ed4dd2964e22e2c080377727",    # main before the change
                          "after": "95145071100422b659c8cea38c685089e81e55d7"},    # bare_words.py: generic.oom for the bare words
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("weights-exceed-vram", "other"), "label": "other", "answer": "other"},
    # the other-process label (issue 14; its even logs read as weights-exceed-vram): a card of at most 2 GiB that PyTorch's
    # own figures by process show shared (other processes holding as much as this one, and the shortfall) read as
    # other-process; the tiny-card weights row stands aside there
    "tri86": {"commits": {"before": "83b9a63d9a2c7185283dbcfc1c509b8acfe87f27",    # main before the change
                          "after": "ec824311750256a4a2254b630021d01619f6bb8d"},    # tiny_shared.py: others_fill_tiny, its other-process row
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("other-process", "weights-exceed-vram"), "label": "other-process"},
    # the numbers and device kind each log is read with (issue 14): figures a quote or a tool kept (PyTorch's type then its
    # sentences, a cut bracket, vLLM's cut length check, nvidia-smi's used column, TF 1.x's device line), counted with the
    # headline event's device kind, numbers and runtime ("extract"); the device kind read no differently
    "dev66": {"commits": {"before": "83b9a63d9a2c7185283dbcfc1c509b8acfe87f27",    # main before the change
                          "after": "112224f793552a785308d5e1be0f8af35731a4fb"},    # torch_sentences' type head, facts smi_used / tf_device_mem1, ...
              "corpus": "after", "pairs": [("before", "after")], "extract": True},
    # the runtime each log is read as (issue 14, deliver 4): a program's own line around PyTorch's failure names the run;
    # ComfyUI's start-up line cut after its VRAM figure read as ComfyUI's ("extract": runtime, device, numbers counted too)
    "rt66": {"commits": {"before": "83b9a63d9a2c7185283dbcfc1c509b8acfe87f27",    # main before the change
                         "after": "be5791e0765df33d5e1fbdb4535285ca695abf4e"},    # runtime_around.py, its one row
             "corpus": "after", "pairs": [("before", "after")], "extract": True},
    # the weights/activations focus found no reading on the even half; the other label instead: TensorFlow's (XLA's) BFC
    # allocator backing off from a refused region (each try 0.9 of the last) with no failure after it read as other, not as
    # another program that took the card
    "tri87": {"commits": {"before": "a7961647dc61c769af9f984831c9876013dd79e4",    # main before the change
                          "after": "0fa58cb31558f32aba272b5263dcb425ec5b3744"},    # bfc_backpedal.py, its other row
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("other", "other-process"), "label": "other"},
    # the other-process focus (issue 14): where PyTorch's message shows this process holding at least as much outside
    # PyTorch's cache (its NVML figure less PyTorch's reserved memory, less a CUDA context) as other processes hold, the
    # rows reading the others' share as the memory the run lacked stand aside
    "tri88": {"commits": {"before": "7336368bacdf7e73df3a01e2e8c88c096e82a55b",    # main before the change
                          "after": "05f61ab1c45268ba11f136d31e273eea68f3b478"},    # own_outside.py: others_outweigh_own
              "corpus": "after", "pairs": [("before", "after")],
              "confusion": ("activations", "other-process"), "label": "other-process", "answer": "other-process"},
}
HALVES = ("even", "odd", "all")
MOVES = ("fixed", "broken", "wrong_to_wrong", "top2_only")
UNSEEN = "tests/unit/corpus/unseen"


def half(batch: str) -> str:
    """batch-NN's half by its number: even or odd."""
    return "odd" if L.U.batch_number(batch) % 2 else "even"


def split(rows: list) -> dict:
    """{"even": rows, "odd": rows, "all": rows}, each row in the half of its "batch"."""
    out = {h: [] for h in HALVES}
    for r in rows:
        out[half(r["batch"])].append(r)
        out["all"].append(r)
    return out


def move(b: dict, a: dict):
    """How one case moved from run `b` to run `a` (the same case): one of MOVES, or None when nothing the panel
    shows moved."""
    if not b["cause_ok"] and a["cause_ok"]:
        return "fixed"
    if b["cause_ok"] and not a["cause_ok"]:
        return "broken"
    if b.get("got") != a.get("got"):
        return "wrong_to_wrong"
    if (b.get("top2") or []) != (a.get("top2") or []):
        return "top2_only"
    return None


def compare(before: list, after: list) -> dict:
    """Per move, the cases (batch/case, expected, before, after) that moved so between two runs of the same cases."""
    out = {m: [] for m in MOVES}
    for b, a in zip(before, after, strict=True):
        if (b["batch"], b["case"]) != (a["batch"], a["case"]):
            raise ValueError(f"runs out of step: {b['batch']}/{b['case']} against {a['batch']}/{a['case']}")
        m = move(b, a)
        if m:
            out[m].append({"case": f"{b['batch']}/{b['case']}", "expect": b["expect"], "before": b.get("got"),
                           "after": a.get("got")})
    return out


def confused(rows: list, causes: tuple) -> dict:
    """{"A_as_B": cases labelled A whose answer was B, and "B_as_A"} for `causes` (A, B); {} when none are given."""
    pairs = [(causes[0], causes[1]), (causes[1], causes[0])] if causes else []
    return {f"{x}_as_{y}": sum(r["expect"] == x and r.get("got") == y for r in rows) for x, y in pairs}


def no_answer(rows: list) -> dict:
    """{"no_answer": the cases the engine found no failure in (no answer at all), "no_answer_by_label": {label: n}} (tri63)."""
    by = {}
    for r in rows:
        if r.get("got") is None:
            by[r["expect"]] = by.get(r["expect"], 0) + 1
    return {"no_answer": sum(by.values()), "no_answer_by_label": dict(sorted(by.items(), key=lambda kv: (-kv[1], kv[0])))}


def wrong_as(rows: list, answer: str) -> dict:
    """{"cases": the wrong answers that are `answer`, "labels": {label: n}} (tri66: host-ram named where it is not the cause)."""
    labels = {}
    for r in rows:
        if not r["cause_ok"] and r.get("got") == answer:
            labels[r["expect"]] = labels.get(r["expect"], 0) + 1
    return {"cases": sum(labels.values()), "labels": dict(sorted(labels.items(), key=lambda kv: (-kv[1], kv[0])))}


def half_counts(runs: dict, pairs: list, causes: tuple = (), answer: str = None, answers: tuple = ()) -> dict:
    """{"score": {commit: {half: {cases, right, confused, no_answer, no_answer_by_label[, wrong_as][, wrong_as_each]}}}, "pairs": {"x_y": {half: {move: n, ..., net, cases:
    {move: [...]}}}}} from `runs` (label -> rows in one order); `causes`: the two causes whose confusion is counted;
    `answer`: a cause whose wrong answers are counted by label (wrong_as); `answers`: several such causes, each counted
    the same way (wrong_as_each: {cause: wrong_as}, tri68)."""
    halves = {k: split(v) for k, v in runs.items()}
    score = {k: {h: {"cases": len(rs), "right": sum(bool(r["cause_ok"]) for r in rs), "confused": confused(rs, causes),
                     **no_answer(rs), **({"wrong_as": wrong_as(rs, answer)} if answer else {}),
                     **({"wrong_as_each": {c: wrong_as(rs, c) for c in answers}} if answers else {})}
                 for h, rs in hs.items()} for k, hs in halves.items()}
    out = {}
    for x, y in pairs:
        out[f"{x}_{y}"] = {}
        for h in HALVES:
            moved = compare(halves[x][h], halves[y][h])
            out[f"{x}_{y}"][h] = {**{m: len(v) for m, v in moved.items()},
                                  "net": score[y][h]["right"] - score[x][h]["right"], "cases": moved}
    return {"score": score, "pairs": out}


def subset_counts(runs: dict, prefix: str) -> dict:
    """{commit: {half: {"cases", "right", "misses": {"A_as_B": n}}}} over the cases whose file name starts with `prefix`:
    "A_as_B" counts the wrong ones labelled A and answered B ("none" where no failure was found)."""
    return _counts(runs, lambda r: r["case"].startswith(prefix))


def label_counts(runs: dict, label: str) -> dict:
    """(task tri64) The same counts over the cases labelled `label` (one cause's class, every runtime)."""
    return _counts(runs, lambda r: r["expect"] == label)


def _counts(runs: dict, keep) -> dict:
    out = {}
    for k, rows in runs.items():
        out[k] = {}
        for h, rs in split([r for r in rows if keep(r)]).items():
            misses = {}
            for r in rs:
                if not r["cause_ok"]:
                    key = f"{r['expect']}_as_{r.get('got') or 'none'}"
                    misses[key] = misses.get(key, 0) + 1
            out[k][h] = {"cases": len(rs), "right": sum(bool(r["cause_ok"]) for r in rs),
                         "misses": dict(sorted(misses.items(), key=lambda kv: (-kv[1], kv[0])))}
    return out


EXTRACT = {"device_right": "device", "numbers_exact": "numbers", "runtime_right": "runtime"}


def extract_counts(runs: dict, pairs: list) -> dict:
    """(task dev66) For a study that asks ("extract": True), what the headline event read besides its cause:
    {"score": {commit: {half: {"cases", "device_right", "numbers_exact", "runtime_right"}}}, "pairs": {"x_y": {half:
    {count: {"gained": n, "lost": n}}}}}, each case right or not as triage_rounds.ok reads unseen_corpus.score's row
    (device_ok, numbers_bad empty, runtime_ok); "gained"/"lost": the cases that went wrong -> right / right -> wrong."""
    halves = {k: split(v) for k, v in runs.items()}
    score = {k: {h: {"cases": len(rs), **{c: sum(ok(r, f) for r in rs) for c, f in EXTRACT.items()}} for h, rs in hs.items()}
             for k, hs in halves.items()}
    moved = {f"{x}_{y}": {h: {c: {"gained": sum(not ok(b, f) and ok(a, f) for b, a in zip(halves[x][h], halves[y][h], strict=True)),
                                  "lost": sum(ok(b, f) and not ok(a, f) for b, a in zip(halves[x][h], halves[y][h], strict=True))}
                              for c, f in EXTRACT.items()} for h in HALVES} for x, y in pairs}
    return {"score": score, "pairs": moved}


def git(*args) -> str:
    return subprocess.run(["git", *args], cwd=REPO, capture_output=True, text=True, check=True).stdout


def corpus_at(commit: str) -> list:
    """The batches `commit`'s tree holds, in number order; exits when the working tree's copy of one differs from it
    (the runs score the working tree's files)."""
    names = sorted((Path(p).name for p in git("ls-tree", "-d", "--name-only", commit, UNSEEN + "/").split()
                    if Path(p).name.startswith("batch-")), key=L.U.batch_number)
    present = L.U.batches()
    missing = [n for n in names if n not in present]
    changed = git("diff", "--name-only", commit, "--", *(f"{UNSEEN}/{n}" for n in names)).split()
    if missing or changed:
        sys.exit(f"the working tree's corpus is not {commit[:8]}'s: missing {missing}, changed {changed}")
    return names


def merged(previous: dict, new: dict) -> dict:
    """(task tri73) The results' studies with the entries of `new` in place of theirs and every other entry of `previous` as
    it was (--only)."""
    return {**previous, **new}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-cache", action="store_true")
    ap.add_argument("--only", choices=list(STUDIES), metavar="NAME",
                    help="score this study only and replace only its entry in the results file (the others kept as they are)")
    a = ap.parse_args(argv)
    out = {}
    for name, st in STUDIES.items():
        if a.only and name != a.only:
            continue
        commits = {k: git("rev-parse", c + "^{commit}").strip() for k, c in st["commits"].items()}
        names = corpus_at(commits[st["corpus"]])
        runs = {k: scored(c, names, not a.no_cache) for k, c in commits.items()}
        res = half_counts(runs, st["pairs"], st.get("confusion", ()), st.get("answer"), st.get("answers", ()))
        if st.get("prefix"):
            res["subset"] = {"prefix": st["prefix"], "score": subset_counts(runs, st["prefix"])}
        if st.get("label"):
            res["label"] = {"label": st["label"], "score": label_counts(runs, st["label"])}
        if st.get("extract"):
            res["extract"] = extract_counts(runs, st["pairs"])
        out[name] = {"commits": commits, "corpus_commit": commits[st["corpus"]], "batches": len(names), **res}
        print(f"study {name}: {len(names)} batches as of {st['corpus']} ({commits[st['corpus']][:8]})")
        print(f"  {'commit':10} {'':8} " + " ".join(f"{h:>12}" for h in HALVES))
        for k, c in commits.items():
            print(f"  {k:10} {c[:8]} " + " ".join(f"{s['right']:>5} of {s['cases']:<4}" for s in res["score"][k].values()))
        for k in commits:
            print(f"  {k:10} no answer: " + ", ".join(f"{h} {s['no_answer']}" for h, s in res["score"][k].items())
                  + " (" + ", ".join(f"{lb} {n}" for lb, n in res["score"][k]["all"]["no_answer_by_label"].items()) + ")")
            for x in res["score"][k]["all"]["confused"]:
                print(f"  {k:10} {x.replace('_', ' ')}: " + ", ".join(f"{h} {s['confused'][x]}" for h, s in res["score"][k].items()))
        for k in commits if st.get("answer") else ():
            for h, s in res["score"][k].items():
                w = s["wrong_as"]
                print(f"  {k:10} {h:5} {st['answer']} named wrongly: {w['cases']} ("
                      + ", ".join(f"{lab} {n}" for lab, n in w["labels"].items()) + ")")
        for k in commits:
            for c in st.get("answers", ()):
                for h, s in res["score"][k].items():
                    w = s["wrong_as_each"][c]
                    print(f"  {k:10} {h:5} {c} named wrongly: {w['cases']} ("
                          + ", ".join(f"{lab} {n}" for lab, n in w["labels"].items()) + ")")
        print(f"  {'pair':16} {'half':5} " + " ".join(f"{m:>14}" for m in MOVES) + f" {'net':>4}")
        for p, hs in res["pairs"].items():
            for h, c in hs.items():
                print(f"  {p:16} {h:5} " + " ".join(f"{c[m]:>14}" for m in MOVES) + f" {c['net']:>+4}")
        for k, hs in res.get("subset", {}).get("score", {}).items():
            for h, c in hs.items():
                print(f"  {st.get('prefix', '')}*{'/' + st['label'] if st.get('label') else ''} {k:10} {h:5} {c['right']:>4} of {c['cases']:<4} wrong: "
                      + ", ".join(f"{m.replace('_', ' ')} {n}" for m, n in c["misses"].items()))
        for k, hs in res.get("label", {}).get("score", {}).items():
            for h, c in hs.items():
                print(f"  label {st['label']} {k:10} {h:5} {c['right']:>4} of {c['cases']:<4} wrong: "
                      + ", ".join(f"{m.replace('_', ' ')} {n}" for m, n in c["misses"].items()))
        for k, hs in res.get("extract", {}).get("score", {}).items():
            print(f"  {k:10} " + "; ".join(f"{h} " + ", ".join(f"{c.replace('_', ' ')} {n}" for c, n in s.items() if c != "cases")
                                           for h, s in hs.items()))
        for p, hs in res.get("extract", {}).get("pairs", {}).items():
            print(f"  {p} " + "; ".join(f"{h} " + ", ".join(f"{c.replace('_', ' ')} +{m['gained']}/-{m['lost']}" for c, m in cs.items())
                                        for h, cs in hs.items()))
        for p, hs in res["pairs"].items():
            for m, cases in hs["all"]["cases"].items():
                for c in cases:
                    print(f"  {p} {m}: {c['case']} (label {c['expect']}) {c['before']} -> {c['after']}")
    if a.only:
        path = REPO / "benchmarks" / "results" / "triage_split.json"
        previous = json.loads(path.read_text())["studies"] if path.exists() else {}
        out = merged(previous, out)
    save("triage_split", "python benchmarks/triage_split.py", {"studies": out})
    return 0


if __name__ == "__main__":
    sys.exit(main())
