// C functions the host hands to Lua: trampolines into Swift, whose errors are raised here, after
// Swift has returned (a longjmp may not cross a Swift frame).
#include "sandbox_internal.h"

#include <lauxlib.h>

/// Raises the message a host callback pushed, prefixed like luaL_error with the place in the Lua
/// code that called the host function.
int hush__raise_host_error(lua_State *L) {
    if (lua_type(L, -1) == LUA_TSTRING) {
        luaL_where(L, 1);
        lua_insert(L, -2);
        lua_concat(L, 2);
    }
    return lua_error(L);
}

static int host_trampoline(lua_State *L) {
    hush_sandbox *S = sandbox_of(L);
    int function_id = (int)lua_tointeger(L, lua_upvalueindex(1));
    int saved = S->enforce_memory;
    S->enforce_memory = 0; // Swift's pushes must not fail: a longjmp may not cross a Swift frame.
    int n = S->callback(S->context, L, function_id);
    S->enforce_memory = saved;
    if (n < 0) return hush__raise_host_error(L);
    return n;
}

void hush_push_host_function(lua_State *L, int function_id) {
    lua_pushinteger(L, function_id);
    lua_pushcclosure(L, host_trampoline, 1);
}

int hush_callsite(lua_State *L) {
    int level = (int)luaL_optinteger(L, 1, 2);
    lua_Debug ar;
    if (!lua_getstack(L, level, &ar) || !lua_getinfo(L, "Sl", &ar)) {
        lua_pushnil(L);
        lua_pushinteger(L, 0);
        return 2;
    }
    lua_pushstring(L, ar.source[0] == '@' || ar.source[0] == '=' ? ar.source + 1 : ar.short_src);
    lua_pushinteger(L, ar.currentline);
    return 2;
}
