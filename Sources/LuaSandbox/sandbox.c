// The sandboxed interpreter: capped allocator, budget hook armed by a watchdog, allow-listed
// libraries, trampolines into Swift. See LuaSandbox.h for the contract.
#define _GNU_SOURCE
#include "LuaSandbox.h"
#include "hush_strlib.h"

#include <lauxlib.h>
#include <lualib.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct hush_sandbox {
    lua_State *L;
    hush_limits limits;
    hush_host_callback callback;
    void *context;
    hush_host_callback field_callback; // views' fields, when set (else `callback`)
    void *field_context;

    size_t memory_in_use;
    size_t external_bytes;       // of memory_in_use, what hush_sandbox_account counted
    int64_t gc_cycles;           // collections finished (a sentinel's finalizer counts them)
    int closing;
    int enforce_memory;          // only while Lua code runs: host pushes never fail on the cap
    int alloc_failed;            // an allocation was refused in this window (Lua may have
                                 // collected garbage and retried it successfully)
    int memory_exhausted;        // a memory error was raised in this window

    _Atomic int64_t deadline;    // monotonic ns after which counting starts; 0 when idle
    _Atomic int armed;           // the watchdog has installed the count hook
    int64_t instructions_left;   // once armed
    int64_t hard_deadline;       // monotonic ns at which the window's time is up; 0: no limit
    int budget_exhausted;
    int stop_requested;          // hush_run_rules returns after the rule running now
    const int *run_refs;         // hush_run_rules: the functions, how many, the one running now
    int run_count;
    int run_next;
    hush_lazy_callback lazy;     // serves lazy tables (hush_push_lazy); NULL until set
    const void *lazy_metatable;  // the metatable every unsettled lazy table has

    pthread_mutex_t hook_lock;   // serialises arming (watchdog) and disarming (owner)
    struct hush_sandbox *next_registered;
    struct hush_sandbox *prev_registered;
};

enum { HOOK_STEP = 1000 };

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static hush_sandbox *sandbox_of(lua_State *L) {
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return (hush_sandbox *)ud;
}

// MARK: allocator

static void *capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
    hush_sandbox *S = (hush_sandbox *)ud;
    size_t old = ptr ? osize : 0;
    if (nsize == 0) {
        free(ptr);
        S->memory_in_use -= old;
        return NULL;
    }
    if (S->enforce_memory && nsize > old && S->memory_in_use + (nsize - old) > S->limits.memory_bytes) {
        // Not yet an overrun: Lua collects garbage and retries, and only raises if that fails too.
        S->alloc_failed = 1;
        return NULL;
    }
    void *p = realloc(ptr, nsize);
    if (p != NULL) S->memory_in_use = S->memory_in_use - old + nsize;
    return p;
}

// MARK: watchdog

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t registry_cond = PTHREAD_COND_INITIALIZER;
static hush_sandbox *registry_head = NULL;
static int watchdog_started = 0;

static void budget_hook(lua_State *L, lua_Debug *ar);

static void arm(hush_sandbox *S) {
    lua_sethook(S->L, budget_hook, LUA_MASKCOUNT, HOOK_STEP);
    atomic_store(&S->armed, 1);
}

static void disarm(hush_sandbox *S) {
    lua_sethook(S->L, NULL, 0, 0);
    atomic_store(&S->armed, 0);
}

static void *watchdog_main(void *unused) {
    (void)unused;
    pthread_mutex_lock(&registry_lock);
    for (;;) {
        while (registry_head == NULL) pthread_cond_wait(&registry_cond, &registry_lock);
        int64_t now = monotonic_ns();
        int64_t sleep_ns = 1000000; // 1 ms unless a shorter grace asks for less
        for (hush_sandbox *S = registry_head; S != NULL; S = S->next_registered) {
            int64_t grace = S->limits.grace_nanoseconds / 2;
            if (grace > 50000 && grace < sleep_ns) sleep_ns = grace;
            int64_t deadline = atomic_load(&S->deadline);
            if (deadline == 0 || now < deadline || atomic_load(&S->armed)) continue;
            pthread_mutex_lock(&S->hook_lock);
            if (atomic_load(&S->deadline) != 0 && !atomic_load(&S->armed)) arm(S);
            pthread_mutex_unlock(&S->hook_lock);
        }
        pthread_mutex_unlock(&registry_lock);
        struct timespec ts = { .tv_sec = 0, .tv_nsec = sleep_ns };
        nanosleep(&ts, NULL);
        pthread_mutex_lock(&registry_lock);
    }
    return NULL;
}

static void register_sandbox(hush_sandbox *S) {
    pthread_mutex_lock(&registry_lock);
    if (!watchdog_started) {
        pthread_t thread;
        pthread_attr_t attr;
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        if (pthread_create(&thread, &attr, watchdog_main, NULL) == 0) watchdog_started = 1;
        pthread_attr_destroy(&attr);
    }
    S->next_registered = registry_head;
    S->prev_registered = NULL;
    if (registry_head) registry_head->prev_registered = S;
    registry_head = S;
    pthread_cond_signal(&registry_cond);
    pthread_mutex_unlock(&registry_lock);
}

static void unregister_sandbox(hush_sandbox *S) {
    pthread_mutex_lock(&registry_lock);
    if (S->prev_registered) S->prev_registered->next_registered = S->next_registered;
    else registry_head = S->next_registered;
    if (S->next_registered) S->next_registered->prev_registered = S->prev_registered;
    pthread_mutex_unlock(&registry_lock);
}

static void budget_hook(lua_State *L, lua_Debug *ar) {
    (void)ar;
    hush_sandbox *S = sandbox_of(L);
    int64_t deadline = atomic_load(&S->deadline);
    int64_t now = monotonic_ns();
    if (deadline == 0 || now < deadline) {
        // Armed late, after the window it was meant for: this window has time left.
        pthread_mutex_lock(&S->hook_lock);
        disarm(S);
        pthread_mutex_unlock(&S->hook_lock);
        return;
    }
    S->instructions_left -= HOOK_STEP;
    int out_of_time = S->hard_deadline != 0 && now >= S->hard_deadline;
    if (S->instructions_left <= 0 || out_of_time || S->budget_exhausted) {
        S->budget_exhausted = 1;
        luaL_where(L, 0); // the line that was running, not its caller
        if (out_of_time && S->instructions_left > 0)
            lua_pushfstring(L, "time limit exceeded (%d ms, mostly inside library functions)",
                            (int)(S->limits.time_nanoseconds / 1000000));
        else
            lua_pushfstring(L, "instruction budget exceeded (%I instructions after %d ms)",
                            (lua_Integer)S->limits.instruction_limit,
                            (int)(S->limits.grace_nanoseconds / 1000000));
        lua_concat(L, 2);
        lua_error(L);
    }
}

void hush_budget_begin(hush_sandbox *S) {
    S->budget_exhausted = 0;
    S->memory_exhausted = 0;
    S->alloc_failed = 0;
    S->instructions_left = S->limits.instruction_limit;
    int64_t now = monotonic_ns();
    S->hard_deadline = S->limits.time_nanoseconds > 0 ? now + S->limits.time_nanoseconds : 0;
    atomic_store(&S->deadline, now + S->limits.grace_nanoseconds);
}

void hush_budget_end(hush_sandbox *S) {
    atomic_store(&S->deadline, 0);
    if (atomic_load(&S->armed)) {
        pthread_mutex_lock(&S->hook_lock);
        disarm(S);
        pthread_mutex_unlock(&S->hook_lock);
    }
}

int hush_budget_exhausted(hush_sandbox *S) { return S->budget_exhausted || S->memory_exhausted; }

// MARK: protected calls

/// Whether the error at `index` (raised with `status`) is the memory cap: a memory error from
/// Lua's allocator, or lauxlib's buffers, which raise "not enough memory" as an ordinary error
/// right after the allocator refused them. Records it for the window.
static int note_memory_error(hush_sandbox *S, lua_State *L, int status, int index) {
    if (status == LUA_ERRMEM) S->memory_exhausted = 1;
    else if (S->alloc_failed && lua_type(L, index) == LUA_TSTRING && strcmp(lua_tostring(L, index), "not enough memory") == 0)
        S->memory_exhausted = 1;
    return S->memory_exhausted;
}

/// Message handler: a traceback for strings; never runs a user's __tostring (it may loop).
static int message_handler(lua_State *L) {
    note_memory_error(sandbox_of(L), L, LUA_ERRRUN, 1);
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
    if (note_memory_error(S, S->L, status, -1)) return HUSH_MEMORY;
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

// MARK: trampolines

/// Raises the message a host callback pushed, prefixed like luaL_error with the place in the Lua
/// code that called the host function.
static int raise_host_error(lua_State *L) {
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
    if (n < 0) return raise_host_error(L);
    return n;
}

void hush_sandbox_set_field_callback(hush_sandbox *S, hush_host_callback callback, void *context) {
    S->field_callback = callback;
    S->field_context = context;
}

void hush_push_host_function(lua_State *L, int function_id) {
    lua_pushinteger(L, function_id);
    lua_pushcclosure(L, host_trampoline, 1);
}

/// A view's state (the userdata's block): the host id of its first field, and which fields are
/// cached in its cache table (uservalue 1) now. Uservalue 2 maps field ids back to names.
typedef struct hush_view {
    int base_id;
    uint64_t cached;
} hush_view;

/// __index of a view's cache table, so called only for a field not cached yet: reads it through
/// the host and caches it unless it is nil. upvalues: 1 = field map (name -> id), 2 = the view.
static int view_load(lua_State *L) {
    // 1 = the cache table, 2 = the key
    lua_pushvalue(L, 2);
    if (lua_rawget(L, lua_upvalueindex(1)) != LUA_TNUMBER) return 0; // unknown field: nil
    int field = (int)lua_tointeger(L, -1);
    lua_pop(L, 1);
    hush_view *V = (hush_view *)lua_touserdata(L, lua_upvalueindex(2));
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
    if (n < 0) return raise_host_error(L);
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

void hush_push_view(lua_State *L, int map_index, int base_id, const char *name) {
    map_index = lua_absindex(L, map_index);
    hush_view *V = (hush_view *)lua_newuserdatauv(L, sizeof(hush_view), 2);
    V->base_id = base_id;
    V->cached = 0;
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

/// Calls the functions from `S->run_next` on, unprotected, inside the one protected call of
/// `hush_run_rules`; `S->run_next` is always the one running, so an error is known to be its.
static int rules_driver(lua_State *L) {
    // 1 = n view, 2 = ctx view
    hush_sandbox *S = sandbox_of(L);
    for (; S->run_next < S->run_count; S->run_next++) {
        lua_rawgeti(L, LUA_REGISTRYINDEX, S->run_refs[S->run_next]);
        lua_pushvalue(L, 1);
        lua_pushvalue(L, 2);
        lua_call(L, 2, 1);
        if (lua_type(L, -1) != LUA_TNIL || S->stop_requested) return 1;
        lua_pop(L, 1);
    }
    return 0;
}

int hush_run_rules(hush_sandbox *S, const int *refs, int count, int first, int n_index, int ctx_index,
                   int *exhausted_before, int *status) {
    lua_State *L = S->L;
    *status = HUSH_OK;
    *exhausted_before = 0;
    if (first >= count) return count;
    n_index = lua_absindex(L, n_index);
    ctx_index = lua_absindex(L, ctx_index);
    S->stop_requested = 0;
    if (hush_budget_exhausted(S)) {
        // An earlier rule overran: this one fails at once, as hush_pcall says.
        *exhausted_before = 1;
        lua_rawgeti(L, LUA_REGISTRYINDEX, refs[first]);
        lua_pushvalue(L, n_index);
        lua_pushvalue(L, ctx_index);
        *status = hush_pcall(S, 2, 1);
        return first;
    }
    // One protected call for the rules that follow one another without anything to report (a
    // rule that raises an error unwinds to it, and is the one at run_next).
    S->run_refs = refs;
    S->run_count = count;
    S->run_next = first;
    lua_pushcfunction(L, rules_driver);
    lua_pushvalue(L, n_index);
    lua_pushvalue(L, ctx_index);
    int code = hush_pcall(S, 2, 1);
    int index = S->run_next;
    S->run_refs = NULL;
    S->stop_requested = 0;
    if (code != HUSH_OK) {
        *status = code;
        return index;
    }
    if (index >= count) {
        lua_pop(L, 1); // the driver's nil
        return count;
    }
    return index;
}

void hush_request_stop(hush_sandbox *S) { S->stop_requested = 1; }

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


// MARK: lazy tables

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

// The base functions that see a table as it is (raw), or hand it out to be changed, settle a lazy
// table first: then nothing tells it from the table it stands for.

static int sandbox_next(lua_State *L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    hush_lazy_settle(L, 1);
    lua_settop(L, 2);
    if (lua_next(L, 1)) return 2;
    lua_pushnil(L);
    return 1;
}

static int lazy_pairs(lua_State *L) {
    lazy_settle_table(L, 1);
    lua_pushcfunction(L, sandbox_next);
    lua_pushvalue(L, 1);
    lua_pushnil(L);
    return 3;
}

static int sandbox_pairs(lua_State *L) {
    luaL_checkany(L, 1);
    if (luaL_getmetafield(L, 1, "__pairs") == LUA_TNIL) {
        lua_pushcfunction(L, sandbox_next);
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

static void open_lazy(lua_State *L, hush_sandbox *S) {
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

// MARK: sandboxed base functions

/// pcall/xpcall that cannot swallow a budget or memory overrun: the overrun is re-raised, so a
/// rule looping around pcall still stops.
static int finish_pcall(lua_State *L, int status, lua_KContext extra) {
    hush_sandbox *S = sandbox_of(L);
    if (status != LUA_OK && status != LUA_YIELD) {
        if (S->budget_exhausted || note_memory_error(S, L, status, -1)) return lua_error(L);
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
    if (S->budget_exhausted || note_memory_error(S, L, LUA_ERRRUN, 1)) return 1;
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

/// load() of text chunks only; the default environment is the sandbox's globals.
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

static int open_sandbox(lua_State *L) {
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
    open_lazy(L, S);
    lua_pushcfunction(L, sandbox_next);
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

// MARK: lifecycle

hush_sandbox *hush_sandbox_new(hush_limits limits, hush_host_callback callback, void *context) {
    hush_sandbox *S = calloc(1, sizeof *S);
    if (S == NULL) return NULL;
    S->limits = limits;
    S->callback = callback;
    S->context = context;
    atomic_init(&S->deadline, 0);
    atomic_init(&S->armed, 0);
    pthread_mutex_init(&S->hook_lock, NULL);
    S->L = lua_newstate(capped_alloc, S);
    if (S->L == NULL) {
        pthread_mutex_destroy(&S->hook_lock);
        free(S);
        return NULL;
    }
    lua_pushcfunction(S->L, open_sandbox);
    lua_pushlightuserdata(S->L, S);
    if (lua_pcall(S->L, 1, 0, 0) != LUA_OK) {
        lua_close(S->L);
        pthread_mutex_destroy(&S->hook_lock);
        free(S);
        return NULL;
    }
    register_sandbox(S);
    return S;
}

void hush_sandbox_free(hush_sandbox *S) {
    if (S == NULL) return;
    unregister_sandbox(S);
    S->closing = 1;
    lua_close(S->L);
    pthread_mutex_destroy(&S->hook_lock);
    free(S);
}

lua_State *hush_sandbox_state(hush_sandbox *S) { return S->L; }

void hush_sandbox_set_limits(hush_sandbox *S, hush_limits limits) { S->limits = limits; }

size_t hush_sandbox_memory_in_use(hush_sandbox *S) { return S->memory_in_use; }

void hush_sandbox_account(hush_sandbox *S, ptrdiff_t bytes) {
    S->memory_in_use += (size_t)bytes;
    S->external_bytes += (size_t)bytes;
}

size_t hush_sandbox_external_bytes(hush_sandbox *S) { return S->external_bytes; }

// MARK: for tests only

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
