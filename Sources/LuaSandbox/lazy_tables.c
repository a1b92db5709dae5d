// Lazy tables: tables the host fills only as they are read (see hush_push_lazy), and the count of
// finished collections by which the host tells which of their trees a policy keeps.
#include "sandbox_internal.h"

#include <lauxlib.h>

/// A lazy table is a plain table whose metatable reads values through the host, each once (kept in
/// the table itself, raw), until something could tell it from the table it stands for; then it is
/// filled as that table would have been built and loses its metatable ("settled"). The host's node
/// is a light userdata kept outside the table, in a registry table with weak keys: a key in the
/// table itself would take a slot of its hash part, and Lua's border (`#`) after later writes
/// depends on that layout, which must be the one of the table it stands for. (A table being
/// finalized is still a key there: weak keys of resurrected objects go a collection later.) Which
/// values the host handed out is the host's to remember: a value read and then removed
/// (`t.k = nil`) stays removed.

static const char lazy_nodes_key = 0;     // registry: unsettled lazy table -> its node (weak keys)
static const char lazy_metatable_key = 0; // registry: the metatable of every unsettled lazy table

/// The node of the lazy table at `index` (NULL if it has none); with `take`, removed. Uses 3 slots.
static void *lazy_node(lua_State *L, int index, int take) {
    index = lua_absindex(L, index);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &lazy_nodes_key);
    lua_pushvalue(L, index);
    lua_rawget(L, -2);
    void *node = lua_touserdata(L, -1);
    lua_pop(L, 1);
    if (node != NULL && take) {
        lua_pushvalue(L, index);
        lua_pushnil(L);
        lua_rawset(L, -3); // removing a key never allocates
    }
    lua_pop(L, 1);
    return node;
}

static void *lazy_take_node(lua_State *L, int index) { return lazy_node(L, index, 1); }

/// __gc: a lazy table collected unsettled gives its node back.
static int lazy_gc(lua_State *L) {
    if (lua_type(L, 1) != LUA_TTABLE) return 0;
    void *node = lazy_take_node(L, 1);
    hush_sandbox *S = sandbox_of(L);
    if (node != NULL && S->lazy) S->lazy(node, L, HUSH_LAZY_RELEASE, 0, 0, 0);
    return 0;
}

void hush_push_lazy(lua_State *L, void *node, int is_array, int count) {
    // Presized as the table it stands for (as pushJSON built it), so that once filled it has its
    // layout: the length operator finds the same borders, before and after later writes.
    lua_createtable(L, is_array ? count : 0, is_array ? 0 : count);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &lazy_nodes_key);
    lua_pushvalue(L, -2);
    lua_pushlightuserdata(L, node);
    lua_rawset(L, -3);
    lua_pop(L, 1);
    lua_rawgetp(L, LUA_REGISTRYINDEX, &lazy_metatable_key);
    lua_setmetatable(L, -2);
}

/// Fills the lazy table at `index` and makes it a plain table. Never raises (memory is not capped
/// meanwhile, as for the host's pushes).
static void lazy_settle_table(lua_State *L, int index) {
    hush_sandbox *S = sandbox_of(L);
    index = lua_absindex(L, index);
    if (!lua_checkstack(L, 8)) return; // (Lua's stack is out of room: it stays lazy)
    int saved = S->enforce_memory;
    S->enforce_memory = 0;
    void *node = lazy_take_node(L, index);
    if (node != NULL && S->lazy) {
        int top = lua_gettop(L);
        S->lazy(node, L, HUSH_LAZY_FILL, 0, index, 0);
        lua_settop(L, top);
        S->lazy(node, L, HUSH_LAZY_RELEASE, 0, 0, 0);
    }
    lua_pushnil(L);
    lua_setmetatable(L, index);
    S->enforce_memory = saved;
}

int hush_lazy_is_unsettled(lua_State *L, int index) {
    if (lua_type(L, index) != LUA_TTABLE || !lua_getmetatable(L, index)) return 0;
    int lazy = lua_topointer(L, -1) == sandbox_of(L)->lazy_metatable;
    lua_pop(L, 1);
    return lazy;
}

void hush_lazy_settle(lua_State *L, int index) {
    if (hush_lazy_is_unsettled(L, index)) lazy_settle_table(L, index);
}

/// __index (a key not in the table): reads it through the host, once.
static int lazy_index(lua_State *L) {
    // 1 = the lazy table, 2 = the key
    void *node = lazy_node(L, 1, 0);
    hush_sandbox *S = sandbox_of(L);
    if (node == NULL || !S->lazy) return 0;
    int saved = S->enforce_memory;
    S->enforce_memory = 0; // the host's pushes must not fail, nor the table's new entry
    int n = S->lazy(node, L, HUSH_LAZY_GET, 0, 2, 0);
    if (n > 0 && !lua_isnil(L, -1)) {
        lua_settop(L, 3);
        lua_pushvalue(L, 2);
        lua_pushvalue(L, 3);
        lua_rawset(L, 1);
        S->enforce_memory = saved;
        return 1;
    }
    S->enforce_memory = saved;
    return 0;
}

/// __newindex: the table becomes the plain table it stands for, then takes the write.
static int lazy_newindex(lua_State *L) {
    lazy_settle_table(L, 1);
    // Raised here, Lua's own messages would lose the rule's place (this frame is C).
    if (lua_isnil(L, 2)) return luaL_error(L, "table index is nil");
    if (lua_type(L, 2) == LUA_TNUMBER && !lua_isinteger(L, 2) && lua_tonumber(L, 2) != lua_tonumber(L, 2))
        return luaL_error(L, "table index is NaN");
    lua_settop(L, 3);
    lua_settable(L, 1);
    return 0;
}

static int lazy_len(lua_State *L) {
    lazy_settle_table(L, 1);
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, 1));
    return 1;
}

static int lazy_pairs(lua_State *L) {
    lazy_settle_table(L, 1);
    lua_pushcfunction(L, hush__sandbox_next);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

static const char gc_sentinel_key = 0;

/// The finalizer of a garbage table made for it: each collection that finishes runs it once, and it
/// makes the next one.
static int gc_sentinel(lua_State *L) {
    hush_sandbox *S = sandbox_of(L);
    S->gc_cycles++;
    if (!S->closing) {
        // With the cap off: a finalizer's memory error is swallowed (and no emergency collection
        // can run inside one), so at the cap the next sentinel would silently never be made, the
        // count would stop, and kept payload trees would never be counted or let go.
        int saved = S->enforce_memory;
        S->enforce_memory = 0;
        lua_createtable(L, 0, 0);
        lua_rawgetp(L, LUA_REGISTRYINDEX, &gc_sentinel_key);
        lua_setmetatable(L, -2);
        lua_pop(L, 1);
        S->enforce_memory = saved;
    }
    return 0;
}

int64_t hush_sandbox_gc_cycles(hush_sandbox *S) { return S->gc_cycles; }

void hush__open_lazy(lua_State *L, hush_sandbox *S) {
    lua_createtable(L, 0, 1);
    lua_pushcfunction(L, gc_sentinel);
    lua_setfield(L, -2, "__gc");
    lua_pushvalue(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &gc_sentinel_key);
    lua_createtable(L, 0, 0);
    lua_insert(L, -2);
    lua_setmetatable(L, -2);
    lua_pop(L, 1);

    lua_createtable(L, 0, 0);
    lua_createtable(L, 0, 1);
    lua_pushliteral(L, "k");
    lua_setfield(L, -2, "__mode");
    lua_setmetatable(L, -2);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &lazy_nodes_key);

    lua_createtable(L, 0, 5);
    lua_pushcfunction(L, lazy_gc);
    lua_setfield(L, -2, "__gc");
    lua_pushcfunction(L, lazy_index);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, lazy_newindex);
    lua_setfield(L, -2, "__newindex");
    lua_pushcfunction(L, lazy_len);
    lua_setfield(L, -2, "__len");
    lua_pushcfunction(L, lazy_pairs);
    lua_setfield(L, -2, "__pairs");
    S->lazy_metatable = lua_topointer(L, -1);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &lazy_metatable_key);
}

void hush_sandbox_set_lazy_callback(hush_sandbox *S, hush_lazy_callback callback) { S->lazy = callback; }
