// The memory cap: Lua's allocator refuses what would pass it while Lua code runs, and host memory
// that Lua values keep alive is counted against it too.
#include "sandbox_internal.h"

#include <stdlib.h>

void *hush__capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    hush_sandbox *S = (hush_sandbox *)ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        S->memory_in_use -= old;
        return NULL;
    }
    if (S->enforce_memory && nsize > old && S->memory_in_use + (nsize - old) > S->limits.memory_bytes) {
        // Not yet an overrun: Lua collects garbage and retries, and only raises if that fails too.
        S->alloc_failed = 1;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p != NULL) S->memory_in_use = S->memory_in_use - old + nsize;
    return p;
}

size_t hush_sandbox_memory_in_use(hush_sandbox *S) { return S->memory_in_use; }

void hush_sandbox_account(hush_sandbox *S, ptrdiff_t bytes) {
    S->memory_in_use += (size_t)bytes;
    S->external_bytes += (size_t)bytes;
}

size_t hush_sandbox_external_bytes(hush_sandbox *S) { return S->external_bytes; }
