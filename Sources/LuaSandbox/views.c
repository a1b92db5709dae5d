// Views: read-only userdata whose fields are read through the host once, then cached.
#include "sandbox_internal.h"

#include <lauxlib.h>
#include <string.h>

void hush_sandbox_set_field_callback(hush_sandbox *S, hush_host_callback callback, void *context) {
    S->field_callback = callback;
    S->field_context = context;
}

/// A view's state (the userdata's block): the host id of its first field, and which fields are
/// cached in its cache table (uservalue 1) now. Uservalue 2 maps field ids back to names.
typedef struct hush_view {
    int base_id;
    uint64_t cached;
    /// Fields that may be read ahead: plain values whose reading does nothing but push them.
    uint64_t readable_ahead;
    /// Fields read ahead for every notification (`hush_view_prepare`): those the rules read in at
    /// least half of the first `VIEW_SAMPLE` notifications.
    uint64_t hot;
    int sampled;
    uint16_t loads[64];
} hush_view;

/// Notifications watched before the fields to read ahead are chosen, once: rules read the same
/// fields notification after notification, and a field read ahead is no longer seen being read.
#define VIEW_SAMPLE 128

/// __index of a view's cache table, so called only for a field not cached yet: reads it through
/// the host and caches it unless it is nil. upvalues: 1 = field map (name -> id), 2 = the view.
static int view_load(lua_State *L) {
    // 1 = the cache table, 2 = the key
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNUMBER) return 0; // unknown field: nil
    int field = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    hush_view *V = (hush_view *)lua_touserdata(L, lua_upvalueindex(2));
    if (V->sampled < VIEW_SAMPLE && field >= 0 && field < 64 && V->loads[field] < UINT16_MAX) V->loads[field]++;
    hush_sandbox *S = sandbox_of(L);
    int top = lua_gettop(L);
    int saved = S->enforce_memory;
    S->enforce_memory = 0; // Swift's pushes must not fail, nor the cache's one entry per field
    int n = S->field_callback ? S->field_callback(S->field_context, L, V->base_id + field)
                              : S->callback(S->context, L, V->base_id + field);
    if (n > 0 && field >= 0 && field < 64 && !lua_isnil(L, -1)) {
        lua_settop(L, top + 1);
        lua_pushvalue(L, 2);
        lua_pushvalue(L, -2);
        lua_rawset(L, 1);
        V->cached |= (uint64_t)1 << field;
    }
    S->enforce_memory = saved;
    if (n < 0) return hush__raise_host_error(L);
    return n > 0 ? 1 : 0;
}

void hush_view_reset(lua_State *L, int index) {
    hush_view *V = (hush_view *)lua_touserdata(L, index);
    if (V == NULL || V->cached == 0) return;
    index = lua_absindex(L, index);
    lua_getiuservalue(L, index, 1); // cache
    lua_getiuservalue(L, index, 2); // names
    for (uint64_t bits = V->cached; bits != 0; bits &= bits - 1) {
        lua_rawgeti(L, -1, __builtin_ctzll(bits));
        lua_pushnil(L);
        lua_rawset(L, -4); // setting an existing key to nil never allocates
    }
    lua_pop(L, 2);
    V->cached = 0;
}

void hush_view_prepare(lua_State *L, int index) {
    hush_view *V = (hush_view *)lua_touserdata(L, index);
    if (V == NULL) return;
    if (V->sampled < VIEW_SAMPLE && ++V->sampled == VIEW_SAMPLE) {
        for (int field = 0; field < 64; field++) {
            if ((V->readable_ahead >> field & 1) && V->loads[field] >= VIEW_SAMPLE / 2) V->hot |= (uint64_t)1 << field;
        }
    }
    uint64_t stale = V->cached & ~V->hot;
    if (stale == 0 && V->hot == 0) return;
    if (!lua_checkstack(L, 6)) { // (no room: the fields are read as they are asked for)
        hush_view_reset(L, index);
        return;
    }
    index = lua_absindex(L, index);
    lua_getiuservalue(L, index, 1); // cache
    lua_getiuservalue(L, index, 2); // names
    int cache = lua_gettop(L) - 1, names = cache + 1;
    for (uint64_t bits = stale; bits != 0; bits &= bits - 1) {
        lua_rawgeti(L, names, __builtin_ctzll(bits));
        lua_pushnil(L);
        lua_rawset(L, cache); // setting an existing key to nil never allocates
    }
    V->cached &= V->hot;
    if (V->hot != 0) {
        hush_sandbox *S = sandbox_of(L);
        int saved = S->enforce_memory;
        S->enforce_memory = 0; // as for a field read when asked for
        for (uint64_t bits = V->hot; bits != 0; bits &= bits - 1) {
            int field = __builtin_ctzll(bits);
            lua_rawgeti(L, names, field);
            int n = S->field_callback ? S->field_callback(S->field_context, L, V->base_id + field)
                                      : S->callback(S->context, L, V->base_id + field);
            if (n > 0 && !lua_isnil(L, -1)) {
                lua_settop(L, names + 2);
                lua_rawset(L, cache);
                V->cached |= (uint64_t)1 << field;
            } else {
                // nil (not cached) or failed: it is read when asked for, which reports any error.
                lua_settop(L, names + 1);
                lua_pushnil(L);
                lua_rawset(L, cache);
                V->cached &= ~((uint64_t)1 << field);
            }
        }
        S->enforce_memory = saved;
    }
    lua_settop(L, cache - 1);
}

void hush_view_forget(lua_State *L, int index, int field) {
    hush_view *V = (hush_view *)lua_touserdata(L, index);
    if (V == NULL || field < 0 || field >= 64 || !(V->cached >> field & 1)) return;
    index = lua_absindex(L, index);
    lua_getiuservalue(L, index, 1);
    lua_getiuservalue(L, index, 2);
    lua_rawgeti(L, -1, field);
    lua_pushnil(L);
    lua_rawset(L, -4);
    lua_pop(L, 2);
    V->cached &= ~((uint64_t)1 << field);
}

static int view_newindex(lua_State *L) {
    const char *name = lua_tostring(L, lua_upvalueindex(1));
    const char *key = lua_type(L, 2) == LUA_TSTRING ? lua_tostring(L, 2) : "?";
    return luaL_error(L, "%s is read-only (cannot set '%s')", name, key);
}

static int view_tostring(lua_State *L) {
    lua_pushvalue(L, lua_upvalueindex(1));
    return 1;
}

void hush_push_view(lua_State *L, int map_index, int base_id, const char *name, uint64_t readable_ahead) {
    map_index = lua_absindex(L, map_index);
    hush_view *V = (hush_view *)lua_newuserdatauv(L, sizeof(hush_view), 2);
    memset(V, 0, sizeof(*V));
    V->base_id = base_id;
    V->readable_ahead = readable_ahead;
    int view = lua_gettop(L);
    // field id -> name, to forget cached fields
    lua_newtable(L);
    lua_pushnil(L);
    while (lua_next(L, map_index) != 0) {
        // names, name, id
        lua_pushvalue(L, -2);
        lua_rawseti(L, -4, lua_tointeger(L, -2));
        lua_pop(L, 1);
    }
    lua_setiuservalue(L, view, 2);
    // The cache: a plain table, so a cached field is one table read; a miss loads it.
    lua_createtable(L, 0, 8);
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, map_index);
    lua_pushvalue(L, view);
    lua_pushcclosure(L, view_load, 2);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, -2);
    lua_pushvalue(L, -1);
    lua_setiuservalue(L, view, 1);
    // The view's metatable: reads go to the cache, writes fail. Nobody can reach the cache:
    // getmetatable answers with the name.
    lua_createtable(L, 0, 4);
    lua_insert(L, -2);
    lua_setfield(L, -2, "__index");
    lua_pushstring(L, name);
    lua_pushcclosure(L, view_newindex, 1);
    lua_setfield(L, -2, "__newindex");
    lua_pushstring(L, name);
    lua_pushcclosure(L, view_tostring, 1);
    lua_setfield(L, -2, "__tostring");
    lua_pushstring(L, name);
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, view);
}
