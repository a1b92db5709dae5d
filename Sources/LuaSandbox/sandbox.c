// Making and freeing a sandboxed interpreter. See LuaSandbox.h for the contract, and
// sandbox_internal.h for which file holds which part of the sandbox.
#include "sandbox_internal.h"

#include <lauxlib.h>
#include <stdlib.h>

hush_sandbox *hush_sandbox_new(hush_limits limits, hush_host_callback callback, void *context) {
    hush_sandbox *S = calloc(1, sizeof *S);
    if (S == NULL) return NULL;
    S->limits = limits;
    S->callback = callback;
    S->context = context;
    S->environment_ref = LUA_NOREF;
    atomic_init(&S->deadline, 0);
    atomic_init(&S->armed, 0);
    pthread_mutex_init(&S->hook_lock, NULL);
    S->L = lua_newstate(hush__capped_alloc, S);
    if (S->L == NULL) {
        pthread_mutex_destroy(&S->hook_lock);
        free(S);
        return NULL;
    }
    lua_pushcfunction(S->L, hush__open_sandbox);
    lua_pushlightuserdata(S->L, S);
    if (lua_pcall(S->L, 1, 0, 0) != LUA_OK) {
        lua_close(S->L);
        pthread_mutex_destroy(&S->hook_lock);
        free(S);
        return NULL;
    }
    hush__register_sandbox(S);
    return S;
}

void hush_sandbox_free(hush_sandbox *S) {
    if (S == NULL) return;
    hush__unregister_sandbox(S);
    S->closing = 1;
    lua_close(S->L);
    pthread_mutex_destroy(&S->hook_lock);
    free(S);
}

lua_State *hush_sandbox_state(hush_sandbox *S) { return S->L; }

void hush_sandbox_set_limits(hush_sandbox *S, hush_limits limits) { hush__set_limits(S, limits); }
