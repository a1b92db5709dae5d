// Protected calls into Lua: they enforce the memory cap, and tell a budget or memory overrun from
// an ordinary error.
#include "sandbox_internal.h"

#include <lauxlib.h>
#include <string.h>

/// Whether the error at `index` (raised with `status`) is the memory cap: a memory error from
/// Lua's allocator, or lauxlib's buffers, which raise "not enough memory" as an ordinary error
/// right after the allocator refused them. Records it for the window.
int hush__note_memory_error(hush_sandbox *S, lua_State *L, int status, int index) {
    if (status == LUA_ERRMEM) S->memory_exhausted = 1;
    else if (S->alloc_failed && lua_type(L, index) == LUA_TSTRING && strcmp(lua_tostring(L, index), "not enough memory") == 0)
        S->memory_exhausted = 1;
    return S->memory_exhausted;
}

/// Message handler: a traceback for strings; never runs a user's __tostring (it may loop).
static int message_handler(lua_State *L) {
    hush__note_memory_error(sandbox_of(L), L, LUA_ERRRUN, 1);
    const char *msg = lua_tostring(L, 1);
    if (msg == NULL) {
        if (lua_isnil(L, 1)) msg = "error with no message (nil)";
        else msg = lua_pushfstring(L, "error object is a %s value", luaL_typename(L, 1));
    }
    luaL_traceback(L, L, msg, 1);
    return 1;
}

static int classify(hush_sandbox *S, int status) {
    if (status == LUA_OK) return HUSH_OK;
    if (S->budget_exhausted) return HUSH_BUDGET;
    if (hush__note_memory_error(S, S->L, status, -1)) return HUSH_MEMORY;
    return HUSH_ERROR;
}

int hush_pcall(hush_sandbox *S, int nargs, int nresults) {
    lua_State *L = S->L;
    if (hush_budget_exhausted(S)) {
        lua_pop(L, nargs + 1);
        lua_pushstring(L, S->budget_exhausted ? "instruction budget exhausted by an earlier rule"
                                               : "memory cap reached by an earlier rule");
        return S->budget_exhausted ? HUSH_BUDGET : HUSH_MEMORY;
    }
    int base = lua_gettop(L) - nargs;
    lua_pushcfunction(L, message_handler);
    lua_insert(L, base);
    S->enforce_memory = 1;
    int status = lua_pcall(L, nargs, nresults, base);
    S->enforce_memory = 0;
    lua_remove(L, base);
    int code = classify(S, status);
    if (code != HUSH_OK && lua_type(L, -1) != LUA_TSTRING) {
        lua_pop(L, 1);
        lua_pushstring(L, code == HUSH_MEMORY ? "not enough memory" : "error");
    }
    if (code == HUSH_MEMORY) {
        // Give back what the failed call held so the next window starts clean.
        lua_gc(L, LUA_GCCOLLECT);
    }
    return code;
}

int hush_load_text(hush_sandbox *S, const char *text, size_t length, const char *chunkname) {
    S->enforce_memory = 1;
    int status = luaL_loadbufferx(S->L, text, length, chunkname, "t");
    S->enforce_memory = 0;
    if (status == LUA_OK) return HUSH_OK;
    return status == LUA_ERRMEM ? HUSH_MEMORY : HUSH_ERROR;
}
