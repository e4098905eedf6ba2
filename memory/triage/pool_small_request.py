"""(tri83) A runtime's own memory pool that refused a request too small to be any input's working memory (a weights-exceed-vram
row; rules_weights.py puts it among the weights rows).

The own-pool activations row (rules.py, OWN_POOLS) reads the one buffer such a pool names as an operator's working memory for
this input size. That reading needs a buffer of some size. Below PyTorch's own line between small and large blocks (1 MiB:
kSmallSize in c10/cuda/CUDACachingAllocator.cpp, whose small pool serves every request up to it from shared 2 MiB segments) a
buffer is a scalar, an index or a layer's bias: no resolution, length or batch makes it that small, and halving the input
does not bring it under the limit. The pool refused it because what it already held reached its limit. MLX says so in its
own code: malloc_or_wait (mlx/allocator.cpp) first waits for every scheduled task to finish and free what it can, then
tries once more past its block limit (allow_swap), and only then raises "[malloc_or_wait] Unable to allocate N bytes". So
the refusal of a few bytes comes after the pending work had given back its memory: what is left is what the program keeps
between steps. With no training step shown, that is read as script_full reads PyTorch's small request on a full card: most
often the model. The activations row stays the runner-up. Where the log shows a training step the row does not fire: there the
step's gradients and optimizer state are held too (script_full's own exclusion)."""
from ..units import MiB, fmt_bytes
from .predicates import OWN_POOLS
from .rule_row import Rule

# PyTorch's caching allocator's kSmallSize: requests up to this share 2 MiB segments (its "small" blocks)
SMALL_REQUEST = 1 * MiB


def pool_small_request(x) -> bool:
    """A runtime's own pool (OWN_POOLS) refused one buffer of a known size of at most SMALL_REQUEST, with no training step shown.
    Not where the message prints a limit the program set on the pool (CuPy adds "limit set to: N bytes" only under
    MemoryPool.set_limit): that limit refused, whatever the pool held."""
    return x.kind in OWN_POOLS and bool(x.req) and x.req <= SMALL_REQUEST and not x.training and not x.n.get("limit")


SMALL_REQUEST_ROWS = [
    # over the own-pool activations row (1.5), as script_full (1.6) is over PyTorch's bare message: the buffer named is no
    # working memory of this input, what the pool held before it filled the limit
    Rule("weights-exceed-vram", 1.6, pool_small_request,
         lambda x: f"{OWN_POOLS[x.kind]} could not allocate a {fmt_bytes(x.req)} buffer, too small to be this input's working "
                   "memory: what the pool already held, most often the model's weights, fills its limit"),
]
