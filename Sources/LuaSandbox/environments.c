// Per-user copies of the globals: a policy's files run once per user in their own copy, so what
// one user's rules keep (globals, library fields, tables reached from them) no other user sees.
#include "sandbox_internal.h"

#include <lauxlib.h>

/// How many keys the table at `index` holds (sizing a copy up front: growing it rehashes).
static int count_keys(lua_State *L, int index) {
    int n = 0;
    lua_pushnil(L);
    while (lua_next(L, index)) {
        lua_pop(L, 1);
        n++;
    }
    return n;
}

int hush_push_environment_copy(hush_sandbox *S) {
    lua_State *L = S->L;
    if (!lua_checkstack(L, 8)) return 0;
    // A host push: it must not fail on the cap (the copy is counted all the same).
    int saved = S->enforce_memory;
    S->enforce_memory = 0;
    lua_pushglobaltable(L);
    int globals = lua_gettop(L);
    lua_createtable(L, 0, count_keys(L, globals));
    int copy = globals + 1;
    lua_pushnil(L);
    while (lua_next(L, globals)) {
        // key at -2, value at -1
        if (lua_rawequal(L, -1, globals)) {
            lua_pop(L, 1);
            lua_pushvalue(L, copy); // _G is the copy itself
        } else if (lua_type(L, -1) == LUA_TTABLE) {
            // A library (string, table, math, utf8, hush): copied one level, so that writing
            // `string.x` changes this copy only.
            int library = lua_gettop(L);
            lua_createtable(L, 0, count_keys(L, library));
            lua_pushnil(L);
            while (lua_next(L, library)) {
                lua_pushvalue(L, -2);
                lua_insert(L, -2);
                lua_rawset(L, library + 1);
            }
            lua_remove(L, library);
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, copy);
    }
    lua_remove(L, globals);
    S->enforce_memory = saved;
    return 1;
}

void hush_sandbox_set_environment(hush_sandbox *S, int ref) { S->environment_ref = ref; }
