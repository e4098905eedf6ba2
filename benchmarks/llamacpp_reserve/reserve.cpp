// Kv-accuracy round 105: load a GGUF (mk_gguf.py) on the CPU and create a context without flash attention; llama.cpp
// logs 'CPU compute buffer size' (sched_reserve). At TheTom/llama-cpp-turboquant 69d8e4be (git archive of CMakeLists.txt
// cmake ggml src include common vendor):
//   cmake -B build -DCMAKE_BUILD_TYPE=Release -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
//     -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_COMMON=OFF -DLLAMA_CURL=OFF -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF \
//     -DBUILD_SHARED_LIBS=OFF && cmake --build build --target llama -j2
//   gcc -O1 -DGGML_ALLOCATOR_DEBUG -Iggml/include -Iggml/src -c ggml/src/ggml-alloc.c -o alloc_dbg.o
//   g++ -O1 -std=c++17 reserve.cpp alloc_dbg.o -Iinclude -Iggml/include -o reserve -Lbuild/src -Lbuild/ggml/src \
//     -lllama -lggml -lggml-cpu -lggml-base -lpthread -ldl -lm
//   ./reserve q9b.gguf 65536 512 2>&1 | grep -E 'max_size|compute buffer'   (the last max_size line: the peak's tensors)
// With AT_PRINTF defined as GGML_LOG_DEBUG in ggml-alloc.c the log also names every allocation and its offset.
// trace.log beside this file: the five runs the round quotes, filtered (read by benchmarks/kv_round105.py).
#include "llama.h"
#include <cstdio>
#include <cstdlib>
int main(int argc, char ** argv) {
    // cb model n_ctx n_ubatch [ngl]
    llama_backend_init();
    auto mp = llama_model_default_params();
    mp.n_gpu_layers = argc > 4 ? atoi(argv[4]) : 0;
    mp.use_mmap = true;
    llama_model * m = llama_model_load_from_file(argv[1], mp);
    if (!m) { fprintf(stderr, "load failed\n"); return 1; }
    auto cp = llama_context_default_params();
    cp.n_ctx = atoi(argv[2]); cp.n_batch = atoi(argv[3]); cp.n_ubatch = atoi(argv[3]);
    cp.n_seq_max = 1; cp.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_DISABLED;
    cp.no_perf = true;
    llama_context * c = llama_init_from_model(m, cp);
    if (!c) { fprintf(stderr, "ctx failed\n"); return 1; }
    llama_free(c); llama_model_free(m);
    return 0;
}
