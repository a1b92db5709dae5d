// The sandboxed interpreter: capped allocator, budget hook armed by a watchdog, allow-listed
// libraries, trampolines into Swift. See LuaSandbox.h for the contract.
//
// What the files of the sandbox share, and nothing else: not part of the public header, so Swift
// never sees the state or these helpers. Shared functions that would otherwise be static carry the
// `hush__` prefix, which neither Lua nor the public API uses.
//
// sandbox.c         making and freeing an interpreter
// memory.c          the allocator with a cap, and host memory counted against it
// budget.c          the instruction and time budget of a window, and the watchdog that arms it
// protected_calls.c hush_pcall and hush_load_text, and what an error was (overrun or not)
// host_functions.c  trampolines into Swift, hush_callsite
// views.c           read-only views whose fields the host serves
// rule_runner.c     hush_run_rules
// lazy_tables.c     tables the host fills as they are read; the collection counter
// globals.c         the allowed libraries and the sandboxed base functions
// environments.c    per-user copies of the globals
// testing.c         for tests only (debug builds)
// hush_strlib.c     the bounded string functions (its own header: hush_strlib.h)
#ifndef HUSH_SANDBOX_INTERNAL_H
#define HUSH_SANDBOX_INTERNAL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE // before any system header: every file includes this one first
#endif

#include "LuaSandbox.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

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
    int environment_ref;         // registry ref of the environment code runs in now (load's
                                 // default); LUA_NOREF: the global table

    pthread_mutex_t hook_lock;   // serialises arming (watchdog) and disarming (owner)
    struct hush_sandbox *next_registered;
    struct hush_sandbox *prev_registered;
};

static inline hush_sandbox *sandbox_of(lua_State *L) {
    void *ud = NULL;
    lua_getallocf(L, &ud);
    return (hush_sandbox *)ud;
}

// memory.c: the allocator every interpreter is made with.
void *hush__capped_alloc(void *ud, void *ptr, size_t osize, size_t nsize);

// budget.c: the watchdog watches only registered sandboxes (from creation until freed).
void hush__register_sandbox(hush_sandbox *S);
void hush__unregister_sandbox(hush_sandbox *S);
void hush__set_limits(hush_sandbox *S, hush_limits limits);

// protected_calls.c: also used by the sandboxed pcall and xpcall, so they re-raise an overrun.
int hush__note_memory_error(hush_sandbox *S, lua_State *L, int status, int index);

// host_functions.c: views raise their host errors as trampolines do.
int hush__raise_host_error(lua_State *L);

// lazy_tables.c: sets up lazy tables and the collection counter (from hush__open_sandbox).
void hush__open_lazy(lua_State *L, hush_sandbox *S);

// globals.c: the sandboxed `next`, which a lazy table's __pairs returns too.
int hush__sandbox_next(lua_State *L);
// globals.c: opens the allowed libraries; run protected, with the sandbox as its one argument.
int hush__open_sandbox(lua_State *L);

#endif
