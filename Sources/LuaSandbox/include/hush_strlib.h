#ifndef HUSH_STRLIB_H
#define HUSH_STRLIB_H

#include <stddef.h>
#include <lua.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Replaces find, match, gmatch, gsub and rep in the table at the top of the
 * stack (the string library table) with bounded versions that have the
 * semantics of Lua 5.4's string library.
 *
 * max_steps: step budget per call of find/match/gsub and per gmatch
 *            iteration (e.g. 1000000). Exceeding it raises the Lua error
 *            "pattern too complex (step limit exceeded)". Values < 1 are
 *            treated as 1 (fail safe: there is no "unlimited" setting).
 * max_bytes: maximum result size in bytes for rep and gsub. Exceeding it
 *            raises "resulting string too large". Values above INT_MAX are
 *            clamped to INT_MAX (stock Lua's own limit for rep). For gsub
 *            the effective limit is max(max_bytes, #subject), since copying
 *            the subject unchanged never grows it.
 *
 * The limits are stored in upvalues of the installed C closures; the module
 * has no global mutable state, so it may be used from several lua_States on
 * several threads. The table stays at the top of the stack.
 */
void hush_strlib_install(lua_State *L, long long max_steps, size_t max_bytes);

#ifdef __cplusplus
}
#endif

#endif /* HUSH_STRLIB_H */
