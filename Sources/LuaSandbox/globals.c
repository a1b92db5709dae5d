// What a policy sees as globals: the allowed libraries, with the base functions that could escape
// the sandbox removed or replaced.
#include "sandbox_internal.h"
#include "hush_strlib.h"

#include <lauxlib.h>
#include <lualib.h>
#include <string.h>

// The base functions that see a table as it is (raw), or hand it out to be changed, settle a lazy
// table first: then nothing tells it from the table it stands for.

int hush__sandbox_next(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    hush_lazy_settle(L, 1);
    lua_settop(L, 2);
    if (lua_next(L, 1)) return 2;
    lua_pushnil(L);
    return 1;
}

static int sandbox_pairs(lua_State *L) {
    luaL_checkany(L, 1);
    if (luaL_getmetafield(L, 1, "__pairs") == LUA_TNIL) {
        lua_pushcfunction(L, hush__sandbox_next);
        lua_pushvalue(L, 1);
        lua_pushnil(L);
    } else {
        lua_pushvalue(L, 1);
        lua_call(L, 1, 3);
    }
    return 3;
}

static int sandbox_rawlen(lua_State *L) {
    int t = lua_type(L, 1);
    luaL_argexpected(L, t == LUA_TTABLE || t == LUA_TSTRING, 1, "table or string");
    hush_lazy_settle(L, 1);
    lua_pushinteger(L, (lua_Integer)lua_rawlen(L, 1));
    return 1;
}

static int sandbox_rawget(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    hush_lazy_settle(L, 1);
    lua_settop(L, 2);
    lua_rawget(L, 1);
    return 1;
}

static int sandbox_rawset(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_checkany(L, 2);
    luaL_checkany(L, 3);
    hush_lazy_settle(L, 1);
    lua_settop(L, 3);
    lua_rawset(L, 1);
    return 1;
}

static int sandbox_getmetatable(lua_State *L) {
    luaL_checkany(L, 1);
    hush_lazy_settle(L, 1);
    if (!lua_getmetatable(L, 1)) {
        lua_pushnil(L);
        return 1;
    }
    luaL_getmetafield(L, 1, "__metatable");
    return 1;
}

/// pcall/xpcall that cannot swallow a budget or memory overrun: the overrun is re-raised, so a
/// rule looping around pcall still stops.
static int finish_pcall(lua_State *L, int status, lua_KContext extra) {
    hush_sandbox *S = sandbox_of(L);
    if (status != LUA_OK && status != LUA_YIELD) {
        if (S->budget_exhausted || hush__note_memory_error(S, L, status, -1)) return lua_error(L);
        lua_pushboolean(L, 0);
        lua_pushvalue(L, -2);
        return 2;
    }
    return lua_gettop(L) - (int)extra;
}

static int sandbox_pcall(lua_State *L) {
    luaL_checkany(L, 1);
    lua_pushboolean(L, 1);
    lua_insert(L, 1);
    int status = lua_pcallk(L, lua_gettop(L) - 2, LUA_MULTRET, 0, 0, finish_pcall);
    return finish_pcall(L, status, 0);
}

/// xpcall's message handler around the user's: after an overrun the user's handler is not run.
/// (An error raised by the count hook calls the handler with hooks off: a looping handler could
/// not be stopped.)
static int xpcall_handler(lua_State *L) {
    hush_sandbox *S = sandbox_of(L);
    if (S->budget_exhausted || hush__note_memory_error(S, L, LUA_ERRRUN, 1)) return 1;
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, 1);
    return 1;
}

static int sandbox_xpcall(lua_State *L) {
    int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 2);
    lua_pushcclosure(L, xpcall_handler, 1);
    lua_replace(L, 2);
    lua_pushboolean(L, 1);
    lua_pushvalue(L, 1);
    lua_rotate(L, 3, 2);
    int status = lua_pcallk(L, n - 2, LUA_MULTRET, 2, 2, finish_pcall);
    return finish_pcall(L, status, 2);
}

/// load() of text chunks only; the default environment is that of the code running now.
static int sandbox_load(lua_State *L) {
    int has_env = !lua_isnone(L, 4);
    size_t len;
    const char *chunkname = luaL_optstring(L, 2, "=(load)");
    int status;
    if (lua_type(L, 1) == LUA_TSTRING) {
        const char *s = lua_tolstring(L, 1, &len);
        chunkname = luaL_optstring(L, 2, s);
        status = luaL_loadbufferx(L, s, len, chunkname, "t");
    } else {
        return luaL_error(L, "load: only text chunks given as strings are allowed in a policy");
    }
    if (status != LUA_OK) {
        luaL_pushfail(L);
        lua_insert(L, -2);
        return 2;
    }
    if (has_env) {
        lua_pushvalue(L, 4);
        if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
    } else {
        // The globals of the code running now (one user's copy), never the shared table.
        hush_sandbox *S = sandbox_of(L);
        if (S->environment_ref != LUA_NOREF) {
            lua_rawgeti(L, LUA_REGISTRYINDEX, S->environment_ref);
            if (!lua_setupvalue(L, -2, 1)) lua_pop(L, 1);
        }
    }
    return 1;
}

/// setmetatable() without finalizers: a __gc would run script code at arbitrary moments (and at
/// close), with the count hook off, so a looping one could not be stopped.
static int sandbox_setmetatable(lua_State *L) {
    int t = lua_type(L, 2);
    luaL_checktype(L, 1, LUA_TTABLE);
    luaL_argexpected(L, t == LUA_TNIL || t == LUA_TTABLE, 2, "nil or table");
    hush_lazy_settle(L, 1);
    hush_lazy_settle(L, 2); // a lazy metatable: its __index, __gc… are read raw (by Lua, and below)
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)
        return luaL_error(L, "cannot change a protected metatable");
    if (t == LUA_TTABLE) {
        lua_pushliteral(L, "__gc");
        if (lua_rawget(L, 2) != LUA_TNIL) return luaL_error(L, "__gc metamethods are not allowed in a policy");
    }
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/// print() becomes a trace line: the host decides what to do with it (function id 0).
static int sandbox_print(lua_State *L) {
    int n = lua_gettop(L);
    luaL_Buffer b;
    luaL_buffinit(L, &b);
    for (int i = 1; i <= n; i++) {
        size_t len;
        const char *s;
        if (lua_type(L, i) == LUA_TSTRING || lua_type(L, i) == LUA_TNUMBER) s = lua_tolstring(L, i, &len);
        else if (lua_type(L, i) == LUA_TBOOLEAN) { s = lua_toboolean(L, i) ? "true" : "false"; len = strlen(s); }
        else if (lua_isnil(L, i)) { s = "nil"; len = 3; }
        else { s = luaL_typename(L, i); len = strlen(s); }
        if (i > 1) luaL_addchar(&b, '\t');
        luaL_addlstring(&b, s, len);
    }
    luaL_pushresult(&b);
    lua_replace(L, 1);
    lua_settop(L, 1);
    hush_sandbox *S = sandbox_of(L);
    int saved = S->enforce_memory;
    S->enforce_memory = 0;
    int r = S->callback(S->context, L, 0);
    S->enforce_memory = saved;
    if (r < 0) return lua_error(L);
    return 0;
}

static void open_library(lua_State *L, const char *name, lua_CFunction open) {
    luaL_requiref(L, name, open, 1);
    lua_pop(L, 1);
}

static void remove_field(lua_State *L, int table, const char *name) {
    table = lua_absindex(L, table);
    lua_pushnil(L);
    lua_setfield(L, table, name);
}

int hush__open_sandbox(lua_State *L) {
    hush_sandbox *S = (hush_sandbox *)lua_touserdata(L, 1);
    open_library(L, LUA_GNAME, luaopen_base);
    open_library(L, LUA_STRLIBNAME, luaopen_string);
    open_library(L, LUA_TABLIBNAME, luaopen_table);
    open_library(L, LUA_MATHLIBNAME, luaopen_math);
    open_library(L, LUA_UTF8LIBNAME, luaopen_utf8);

    lua_pushglobaltable(L);
    int g = lua_gettop(L);
    remove_field(L, g, "dofile");
    remove_field(L, g, "loadfile");
    remove_field(L, g, "collectgarbage");
    remove_field(L, g, "warn");
    remove_field(L, g, "require");
    lua_pushcfunction(L, sandbox_pcall);
    lua_setfield(L, g, "pcall");
    lua_pushcfunction(L, sandbox_xpcall);
    lua_setfield(L, g, "xpcall");
    lua_pushcfunction(L, sandbox_load);
    lua_setfield(L, g, "load");
    lua_pushcfunction(L, sandbox_print);
    lua_setfield(L, g, "print");
    lua_pushcfunction(L, sandbox_setmetatable);
    lua_setfield(L, g, "setmetatable");
    hush__open_lazy(L, S);
    lua_pushcfunction(L, hush__sandbox_next);
    lua_setfield(L, g, "next");
    lua_pushcfunction(L, sandbox_pairs);
    lua_setfield(L, g, "pairs");
    lua_pushcfunction(L, sandbox_rawlen);
    lua_setfield(L, g, "rawlen");
    lua_pushcfunction(L, sandbox_rawget);
    lua_setfield(L, g, "rawget");
    lua_pushcfunction(L, sandbox_rawset);
    lua_setfield(L, g, "rawset");
    lua_pushcfunction(L, sandbox_getmetatable);
    lua_setfield(L, g, "getmetatable");

    // string: no dump, bounded pattern and repetition functions, a metatable nobody can reach.
    lua_getfield(L, g, LUA_STRLIBNAME);
    remove_field(L, -1, "dump");
    hush_strlib_install(L, S->limits.pattern_steps, S->limits.string_bytes);
    lua_pop(L, 1);
    lua_pushliteral(L, "");
    if (lua_getmetatable(L, -1)) {
        lua_pushliteral(L, "string");
        lua_setfield(L, -2, "__metatable");
        lua_pop(L, 1);
    }
    lua_pop(L, 1);

    // The loaded-modules table would hand back the libraries we removed functions from.
    luaL_getsubtable(L, LUA_REGISTRYINDEX, LUA_LOADED_TABLE);
    lua_pushnil(L);
    while (lua_next(L, -2)) {
        lua_pop(L, 1);
        lua_pushvalue(L, -1);
        lua_pushnil(L);
        lua_rawset(L, -4);
    }
    lua_pop(L, 2);
    return 0;
}
