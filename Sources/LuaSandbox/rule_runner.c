// Runs a policy's rules one after another inside one protected call: one call per evaluation, not
// one per rule.
#include "sandbox_internal.h"

/// Calls the functions from `S->run_next` on, unprotected, inside the one protected call of
/// `hush_run_rules`; `S->run_next` is always the one running, so an error is known to be its.
static int rules_driver(lua_State *L) {
    // 1 = n view, 2 = ctx view
    hush_sandbox *S = sandbox_of(L);
    for (; S->run_next < S->run_count; S->run_next++) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->run_refs[S->run_next]);
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 2);
        lua_call(L, 2, 1);
        if (lua_type(L, -1) != LUA_TNIL || S->stop_requested) return 1;
        lua_pop(L, 1);
    }
    return 0;
}

int hush_run_rules(hush_sandbox *S, const int *refs, int count, int first, int n_index, int ctx_index,
                   int *exhausted_before, int *status) {
    lua_State *L = S->L;
    *status = HUSH_OK;
    *exhausted_before = 0;
    if (first >= count) return count;
    n_index = lua_absindex(L, n_index);
    ctx_index = lua_absindex(L, ctx_index);
    S->stop_requested = 0;
    if (hush_budget_exhausted(S)) {
        // An earlier rule overran: this one fails at once, as hush_pcall says.
        *exhausted_before = 1;
        lua_rawgeti(L, LUA_REGISTRYINDEX, refs[first]);
        lua_pushvalue(L, n_index);
        lua_pushvalue(L, ctx_index);
        *status = hush_pcall(S, 2, 1);
        return first;
    }
    // One protected call for the rules that follow one another without anything to report (a
    // rule that raises an error unwinds to it, and is the one at run_next).
    S->run_refs = refs;
    S->run_count = count;
    S->run_next = first;
    lua_pushcfunction(L, rules_driver);
    lua_pushvalue(L, n_index);
    lua_pushvalue(L, ctx_index);
    int code = hush_pcall(S, 2, 1);
    int index = S->run_next;
    S->run_refs = NULL;
    S->stop_requested = 0;
    if (code != HUSH_OK) {
        *status = code;
        return index;
    }
    if (index >= count) {
        lua_pop(L, 1); // the driver's nil
        return count;
    }
    return index;
}

void hush_request_stop(hush_sandbox *S) { S->stop_requested = 1; }
