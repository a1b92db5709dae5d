// Re-exposes, as functions, the parts of the Lua 5.4 C API that are macros Swift cannot import.
#ifndef HUSH_CLUA54_SHIM_H
#define HUSH_CLUA54_SHIM_H

#include <lua.h>
#include <lauxlib.h>
#include <lualib.h>

static inline int clua_pcall(lua_State *L, int nargs, int nresults, int msgh) { return lua_pcall(L, nargs, nresults, msgh); }
static inline void clua_call(lua_State *L, int nargs, int nresults) { lua_call(L, nargs, nresults); }
static inline void clua_pop(lua_State *L, int n) { lua_pop(L, n); }
static inline void clua_newtable(lua_State *L) { lua_newtable(L); }
static inline const char *clua_tostring(lua_State *L, int i) { return lua_tostring(L, i); }
static inline lua_Number clua_tonumber(lua_State *L, int i) { return lua_tonumber(L, i); }
static inline lua_Integer clua_tointeger(lua_State *L, int i) { return lua_tointeger(L, i); }
static inline int clua_isnil(lua_State *L, int i) { return lua_isnil(L, i); }
static inline int clua_isnoneornil(lua_State *L, int i) { return lua_isnoneornil(L, i); }
static inline int clua_istable(lua_State *L, int i) { return lua_istable(L, i); }
static inline int clua_isfunction(lua_State *L, int i) { return lua_isfunction(L, i); }
static inline void clua_pushcfunction(lua_State *L, lua_CFunction f) { lua_pushcfunction(L, f); }
static inline void clua_register(lua_State *L, const char *name, lua_CFunction f) { lua_register(L, name, f); }
static inline int clua_upvalueindex(int i) { return lua_upvalueindex(i); }
static inline int clua_registryindex(void) { return LUA_REGISTRYINDEX; }
static inline void clua_insert(lua_State *L, int i) { lua_insert(L, i); }
static inline void clua_remove(lua_State *L, int i) { lua_remove(L, i); }
static inline void clua_replace(lua_State *L, int i) { lua_replace(L, i); }
static inline void clua_pushglobaltable(lua_State *L) { lua_pushglobaltable(L); }
static inline int clua_gc(lua_State *L, int what, int data) { return lua_gc(L, what, data); }
static inline int clua_gc_count_kb(lua_State *L) { return lua_gc(L, LUA_GCCOUNT, 0); }
static inline void clua_pushliteral(lua_State *L, const char *s) { lua_pushstring(L, s); }
static inline int clua_loadbuffer(lua_State *L, const char *buf, size_t sz, const char *name, const char *mode) { return luaL_loadbufferx(L, buf, sz, name, mode); }
static inline void *clua_newuserdata(lua_State *L, size_t sz) { return lua_newuserdatauv(L, sz, 1); }

#endif
