// The budget of a window: a watchdog thread arms a count hook once the grace has passed, so code
// that finishes within it runs without a hook; from then on instructions (and time) are counted.
#include "sandbox_internal.h"

#include <lauxlib.h>
#include <stdint.h>
#include <time.h>

enum { HOOK_STEP = 1000 };

static int64_t monotonic_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t registry_cond = PTHREAD_COND_INITIALIZER;
// The watchdog's timed sleep (on the monotonic clock, set up before the thread starts): signalled
// when a sandbox joins or its limits change, as either may call for an earlier look.
static pthread_cond_t watchdog_wake;
static int watchdog_wake_made = 0;
static hush_sandbox *registry_head = NULL;
static int watchdog_started = 0;
// When the watchdog next looks (under registry_lock): INT64_MAX until it sleeps.
static int64_t watchdog_next_look = INT64_MAX;

static void budget_hook(lua_State *L, lua_Debug *ar);

static void arm(hush_sandbox *S) {
    lua_sethook(S->L, budget_hook, LUA_MASKCOUNT, HOOK_STEP);
    atomic_store(&S->armed, 1);
}

static void disarm(hush_sandbox *S) {
    lua_sethook(S->L, NULL, 0, 0);
    atomic_store(&S->armed, 0);
}

// How long the watchdog may sleep without missing a window of `S` opened just after it looked: its
// grace, for a grace of 1 ms or more (the window's deadline is no sooner); else the old tick (half
// the grace, or 1 ms when that is under 50 us: a grace of 0 is armed at the next look).
static int64_t look_ahead(const hush_sandbox *S) {
    int64_t grace = S->limits.grace_nanoseconds;
    if (grace >= 1000000) return grace;
    return grace / 2 > 50000 ? grace / 2 : 1000000;
}

// Wakes when the earliest open window's grace ends, and no later than `look_ahead` from now. It
// ticked every millisecond before: a thousand wake-ups a second with the default grace (2 ms),
// each taking a core from `hush eval`'s deciding or writing thread. A window is now armed at its
// deadline rather than up to 1 ms after it.
static void *watchdog_main(void *unused) {
    (void)unused;
    pthread_mutex_lock(&registry_lock);
    for (;;) {
        watchdog_next_look = INT64_MAX;
        while (registry_head == NULL) pthread_cond_wait(&registry_cond, &registry_lock);
        int64_t now = monotonic_ns();
        int64_t wake = INT64_MAX;
        for (hush_sandbox *S = registry_head; S != NULL; S = S->next_registered) {
            if (now + look_ahead(S) < wake) wake = now + look_ahead(S);
            int64_t deadline = atomic_load(&S->deadline);
            if (deadline == 0 || atomic_load(&S->armed)) continue;
            if (now < deadline) {
                if (deadline < wake) wake = deadline;
                continue;
            }
            pthread_mutex_lock(&S->hook_lock);
            if (atomic_load(&S->deadline) != 0 && !atomic_load(&S->armed)) arm(S);
            pthread_mutex_unlock(&S->hook_lock);
        }
        struct timespec until = { .tv_sec = (time_t)(wake / 1000000000LL), .tv_nsec = (long)(wake % 1000000000LL) };
        watchdog_next_look = wake;
        pthread_cond_timedwait(&watchdog_wake, &registry_lock, &until);
        watchdog_next_look = INT64_MAX;
    }
    return NULL;
}

void hush__register_sandbox(hush_sandbox *S) {
    pthread_mutex_lock(&registry_lock);
    if (!watchdog_wake_made) {
        pthread_condattr_t clock;
        pthread_condattr_init(&clock);
        pthread_condattr_setclock(&clock, CLOCK_MONOTONIC);
        pthread_cond_init(&watchdog_wake, &clock);
        pthread_condattr_destroy(&clock);
        watchdog_wake_made = 1;
    }
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
    if (watchdog_started) pthread_cond_signal(&watchdog_wake);
    pthread_mutex_unlock(&registry_lock);
}

// Wakes the watchdog only when it would look too late for the new limits: a window opened from now
// on must be looked at within `look_ahead`. Loading a user's copy of the policy raises the limits
// and restores them; waking the watchdog both times cost two cross-core wake-ups per new user
// (a fifth of the time on a stream of 20,000 users with 10 notifications each).
void hush__set_limits(hush_sandbox *S, hush_limits limits) {
    pthread_mutex_lock(&registry_lock);
    S->limits = limits;
    if (watchdog_started && watchdog_next_look > monotonic_ns() + look_ahead(S)) pthread_cond_signal(&watchdog_wake);
    pthread_mutex_unlock(&registry_lock);
}

void hush__unregister_sandbox(hush_sandbox *S) {
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
