"""(task tri80) A loader that failed in a later prompt of the same ComfyUI session, outside ComfyUI's model management.

ComfyUI keeps each node's object from prompt to prompt: execution.py (0.8.0, lines 473-476) takes it from caches.objects,
a cache keyed by the node's id (CacheKeySetID), and builds a new one only for a node id it has not seen. A loader node that
keeps its model on itself (an attribute of the node) therefore still holds the previous prompt's copy on the card while it
builds the new one, unless it frees that copy first: ComfyUI-nunchaku's Flux DiT loader did not, until its PR #40 (the
current loader moves self.transformer to the CPU and calls comfy.model_management.free_memory before loading anew).
ComfyUI's own loader is different: load_models_gpu (comfy/model_management.py, lines 621-674) logs "Requested to load" and
unloads other models (free_memory) before it loads, so a log that shows it is not read here.

So where the log shows a prompt that finished ("Prompt executed in", counted by scan as a success) and the failure is the
next prompt's model load (case.log_phase "loading": a loader's own line such as "] Initializing <Model>", not a text
encoder's or a VAE's), what failed is a second copy placed beside the first one, memory of an earlier run not returned:
the leak row below reads it. The weights row for a load (rules_weights, 1.5) still gives the runner-up: two copies of
the weights on the card at once."""
from .predicates import fresh
from .rule_row import Rule


def reloaded_after_run(x) -> bool:
    """A ComfyUI model load outside its model management failed after a prompt of the same log finished."""
    return (fresh(x) and x.successes >= 1 and not x.prior_ooms and x.log_phase == "loading"
            and not x.f.get("ui_loader"))


RELOAD_LEAK = [
    Rule("leak", 2.5, reloaded_after_run,       # the weight of rules.py's ran-before row, its nearest reading
         "a prompt finished earlier in this ComfyUI session ({successes} run(s)) and the next one failed while {model} was "
         "loading: ComfyUI keeps a node's object between prompts, so a loader that holds its model on itself still has the "
         "previous copy on the card while it loads the new one; free the old model first (unload models, or a loader that "
         "releases it), or restart between runs"),
]
