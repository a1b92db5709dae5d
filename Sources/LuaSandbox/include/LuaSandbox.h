// The C half of Hush's Lua sandbox. Everything that may raise a Lua error (longjmp) lives here, so a
// Lua error never unwinds through a Swift frame: the allocator with a cap, the budget hook, the
// sandboxed base functions and the trampolines through which Lua calls back into Swift.
#ifndef HUSH_LUA_SANDBOX_H
#define HUSH_LUA_SANDBOX_H

#include <stddef.h>
#include <stdint.h>
#include <lua.h>
#include "hush_strlib.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hush_sandbox hush_sandbox;

/// Called from Lua through a trampoline. Push results and return their count, or push an error
/// message and return -1: the trampoline raises it after Swift has returned. `function_id` is the
/// id given to `hush_push_host_function`; `view_id` is the userdata tag for views (0 otherwise).
typedef int (*hush_host_callback)(void *context, lua_State *L, int function_id);

typedef struct hush_limits {
    size_t memory_bytes;          // cap on the interpreter's memory while Lua code runs
    int64_t grace_nanoseconds;    // a protected call may run this long before instructions are counted
    int64_t instruction_limit;    // instructions allowed once counting has started
    int64_t pattern_steps;        // steps per call of string.find/match/gmatch/gsub
    size_t string_bytes;          // largest string string.rep/gsub may build
    int64_t time_nanoseconds;     // wall-clock bound on a window, checked with the count hook:
                                  // it stops scripts that spend their time inside C functions
                                  // (each call cheap in instructions, dear in work); <= 0: none
} hush_limits;

/// A new interpreter with only the allowed libraries open. NULL when memory is exhausted.
hush_sandbox *hush_sandbox_new(hush_limits limits, hush_host_callback callback, void *context);
void hush_sandbox_free(hush_sandbox *sandbox);
lua_State *hush_sandbox_state(hush_sandbox *sandbox);
void hush_sandbox_set_limits(hush_sandbox *sandbox, hush_limits limits);
size_t hush_sandbox_memory_in_use(hush_sandbox *sandbox);
/// Counts `bytes` (or gives them back, when negative) against the memory cap as if Lua held them:
/// host memory that Lua values keep alive (lazy tables' nodes).
void hush_sandbox_account(hush_sandbox *sandbox, ptrdiff_t bytes);
/// What `hush_sandbox_account` counts now.
size_t hush_sandbox_external_bytes(hush_sandbox *sandbox);
/// How many garbage collections have finished (their finalizers may still be running).
int64_t hush_sandbox_gc_cycles(hush_sandbox *sandbox);

/// Outcome of a protected call beyond Lua's own status.
enum {
    HUSH_OK = 0,
    HUSH_ERROR = 1,            // a Lua error; message (with file:line when known) on the stack
    HUSH_BUDGET = 2,           // the instruction budget (or the window's time limit) ran out
    HUSH_MEMORY = 3,           // the memory cap was reached
};

/// Starts a budget window (an evaluation or a load): rules called inside it share one budget.
void hush_budget_begin(hush_sandbox *sandbox);
/// Ends the window and disarms the hook if the watchdog had armed it.
void hush_budget_end(hush_sandbox *sandbox);
/// True when the current window's budget or memory was exhausted: later calls fail at once.
int hush_budget_exhausted(hush_sandbox *sandbox);

/// Calls the function below `nargs` arguments with a message handler that records a traceback,
/// enforcing the memory cap. Returns a HUSH_* code; on failure the error message (a string) is on
/// the top of the stack in place of the results.
int hush_pcall(hush_sandbox *sandbox, int nargs, int nresults);

/// Loads a text chunk (never bytecode) under the sandbox; returns HUSH_OK or HUSH_ERROR with the
/// message on the stack.
int hush_load_text(hush_sandbox *sandbox, const char *text, size_t length, const char *chunkname);

/// Pushes a new environment for one user's copy of a policy: a copy of the global table in which
/// every table (the libraries, `hush`) is copied one level and `_G` is the copy itself. With
/// `named_ref` (a registry reference to a table, not LUA_NOREF), only the globals it has as keys
/// are in the copy: for a policy whose code can name no others and cannot reach the copy as a
/// table (the caller's to judge). Returns 0 (nothing pushed) when the stack cannot grow.
int hush_push_environment_copy(hush_sandbox *sandbox, int named_ref);
/// Whether no function defined inside the Lua function at `index` (at any depth; not its own code)
/// can keep anything between calls: none writes an upvalue or a global, and each writes only into
/// tables it made in the same call. Read from the function's bytecode; 1 only when certain (any
/// doubt answers 0). What the functions call is the caller's to rule out (the sandbox functions
/// that write tables: `rawset`, `setmetatable`, `table.*`).
int hush_functions_within_keep_nothing(lua_State *L, int index);
/// Whether nothing reachable from the `count` values from stack index `first` (through tables,
/// their keys and metatables, and functions' upvalues) holds state that a call changes without
/// writing it in Lua: no userdata, no coroutine, and no C function with upvalues other than the
/// sandbox's own (those of the global table and of its tables). 1 only when certain.
int hush_values_hold_no_state(lua_State *L, int first, int count);
/// Copies up to `capacity` bytes of the state of the global table's `math.random` (the generator
/// every copy of a policy draws from) to `out`; returns how many (0: none found).
size_t hush_random_state(lua_State *L, void *out, size_t capacity);
/// The environment (a registry reference) that `load` gives a chunk when none is passed: the
/// globals of the code about to run. LUA_NOREF: the global table.
void hush_sandbox_set_environment(hush_sandbox *sandbox, int ref);

/// Pushes a C closure that calls the host callback with `function_id`.
void hush_push_host_function(lua_State *L, int function_id);

/// Serves views' fields with `callback(context, L, base_id + field)` rather than the sandbox's
/// callback (a direct path for the reads every rule makes); NULL: the sandbox's callback again.
void hush_sandbox_set_field_callback(hush_sandbox *sandbox, hush_host_callback callback, void *context);

/// Pushes a read-only view: a userdata whose fields are read through the host callback. `map_index`
/// is a table mapping field names to integer ids (0 to 63); a lookup calls back with id
/// `base_id + field id`; unknown fields read as nil. `name` is what tostring() shows. A field read
/// once is cached (unless nil) until `hush_view_reset` or `hush_view_forget`: later reads are a
/// table read, without the host. `readable_ahead` has a bit set for each field id that
/// `hush_view_prepare` may read before it is asked for (reading it must do nothing but push it).
void hush_push_view(lua_State *L, int map_index, int base_id, const char *name, uint64_t readable_ahead);
/// Forgets every cached field of the view at `index` (a new notification).
void hush_view_reset(lua_State *L, int index);
/// For a new notification: forgets the cached fields and reads ahead those of `readable_ahead` the
/// rules read in at least half of the view's first 128 notifications (a read through the cache
/// costs a table read; one through the host several times more).
void hush_view_prepare(lua_State *L, int index);
/// Forgets one cached field of the view at `index` (it changed).
void hush_view_forget(lua_State *L, int index, int field);

/// Calls the functions in the registry at `refs[first..count)` one after another, each with the
/// values at `n_index` and `ctx_index`, inside one `hush_pcall` (an error raised by one is its own:
/// the call stops there), until one returns something other than nil, fails, or asks to stop
/// (`hush_request_stop`, from a host function it called). After an overrun (budget or memory),
/// the next one fails at once with `hush_pcall`'s message.
/// Returns the index of that one, with its result or error message on the stack and its HUSH_*
/// code in `*status` (and whether the budget was already exhausted before it ran in
/// `*exhausted_before`); returns `count` when every one returned nil, with nothing left on the stack.
int hush_run_rules(hush_sandbox *sandbox, const int *refs, int count, int first, int n_index, int ctx_index,
                   int *exhausted_before, int *status);
/// Makes `hush_run_rules` return after the function running now.
void hush_request_stop(hush_sandbox *sandbox);

/// Lazy tables: what the host does for one. `op` HUSH_LAZY_GET: push the value of the key at stack
/// index `a` (any value: what the table it stands for holds under that key) and return 1, or return
/// 0 when there is none, or when that key's value was handed out before (it is in the table then,
/// unless the policy removed it). HUSH_LAZY_FILL: set (lua_rawset/lua_rawseti) into the table at
/// index `a` every entry not handed out yet, in the order the table it stands for was built;
/// return 0. HUSH_LAZY_RELEASE: the node is no longer used (L may be in the middle of a
/// collection: touch nothing in it). Every op runs with the memory cap off and must not raise.
enum { HUSH_LAZY_GET = 0, HUSH_LAZY_FILL = 1, HUSH_LAZY_RELEASE = 2 };
typedef int (*hush_lazy_callback)(void *node, lua_State *L, int op, int depth, int a, int b);
void hush_sandbox_set_lazy_callback(hush_sandbox *sandbox, hush_lazy_callback callback);

/// Pushes a lazy table standing for the host's `node` (an object of `count` keys, or an array of
/// `count` values). Its reads go through the
/// callback (each value read once); anything that would tell it from the plain table it stands for
/// (next, pairs, #, rawget, rawset, rawlen, getmetatable, setmetatable, a write) first fills it, as
/// that table would have been built, and makes it that plain table. The node is released when the
/// table is settled or collected. Call with the memory cap off (from the host).
void hush_push_lazy(lua_State *L, void *node, int is_array, int count);
/// Whether the value at `index` is a lazy table not settled yet.
int hush_lazy_is_unsettled(lua_State *L, int index);
/// Settles the value at `index` if it is a lazy table (see hush_push_lazy). Never raises.
void hush_lazy_settle(lua_State *L, int index);

/// Pushes the call site (`source`, `line`) of the Lua function `level` levels up; used by the
/// policy prelude to remember where each declaration is.
int hush_callsite(lua_State *L);

/// FOR TESTS ONLY, defined in debug builds only (-DDEBUG): stores a fresh copy of Lua's ORIGINAL
/// string library, the unbounded functions the sandbox replaced, in the global `orig`, to compare
/// the bounded ones against (Tests/LuaTests/Fixtures/strlib_compare.lua). Never call it on a
/// policy's interpreter. Returns LUA_OK or an error status.
int hush_testing_open_with_original_string(lua_State *L);

#ifdef __cplusplus
}
#endif

#endif
