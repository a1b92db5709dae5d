// For tests only, in debug builds: see hush_testing_open_with_original_string in LuaSandbox.h.
#include "sandbox_internal.h"

#include <lualib.h>

#ifdef DEBUG
static int open_original_string(lua_State *L) {
    lua_pushliteral(L, "");
    int had_metatable = lua_getmetatable(L, -1);
    luaopen_string(L);          // a fresh library table; it also replaces the string metatable
    lua_setglobal(L, "orig");
    if (had_metatable) lua_setmetatable(L, -2); // put the sandbox's protected metatable back
    lua_pop(L, 1);
    return 0;
}

int hush_testing_open_with_original_string(lua_State *L) {
    lua_pushcfunction(L, open_original_string);
    int status = lua_pcall(L, 0, 0, 0);
    if (status != LUA_OK) lua_pop(L, 1);
    return status;
}
#endif
