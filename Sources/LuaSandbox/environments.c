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

/// Sets the copy's entry for the global whose key and value are on the top of the stack, and pops
/// the value (the key stays, for lua_next).
static void copy_global(lua_State *L, int globals, int copy) {
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

int hush_push_environment_copy(hush_sandbox *S, int named_ref) {
    lua_State *L = S->L;
    if (!lua_checkstack(L, 10)) return 0;
    // A host push: it must not fail on the cap (the copy is counted all the same).
    int saved = S->enforce_memory;
    S->enforce_memory = 0;
    lua_pushglobaltable(L);
    int globals = lua_gettop(L);
    if (named_ref == LUA_NOREF) {
        lua_createtable(L, 0, count_keys(L, globals));
        int copy = globals + 1;
        lua_pushnil(L);
        while (lua_next(L, globals)) copy_global(L, globals, copy);
    } else {
        // Only the globals the policy can name; their order in the copy is nobody's to see (the
        // caller's promise: the policy cannot reach the copy as a table).
        lua_rawgeti(L, LUA_REGISTRYINDEX, named_ref);
        int named = globals + 1;
        lua_createtable(L, 0, count_keys(L, named));
        int copy = named + 1;
        lua_pushnil(L);
        while (lua_next(L, named)) {
            lua_pop(L, 1);
            lua_pushvalue(L, -1);
            if (lua_rawget(L, globals) == LUA_TNIL) {
                lua_pop(L, 1);
            } else {
                copy_global(L, globals, copy);
            }
        }
        lua_remove(L, named);
    }
    lua_remove(L, globals);
    S->enforce_memory = saved;
    return 1;
}

void hush_sandbox_set_environment(hush_sandbox *S, int ref) { S->environment_ref = ref; }
