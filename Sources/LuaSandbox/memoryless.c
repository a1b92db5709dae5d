// Whether a policy file's functions can keep anything between calls: read from the file's compiled
// bytecode (lua_dump), so that one copy of a policy that cannot may serve every user
// (docs/security.md, "One user's policy memory"). Conservative: anything not understood answers no.
#include "sandbox_internal.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

// Lua 5.4's opcodes (lopcodes.h), in order: the dump gives their numbers.
enum {
    OP_MOVE, OP_LOADI, OP_LOADF, OP_LOADK, OP_LOADKX, OP_LOADFALSE, OP_LFALSESKIP, OP_LOADTRUE,
    OP_LOADNIL, OP_GETUPVAL, OP_SETUPVAL, OP_GETTABUP, OP_GETTABLE, OP_GETI, OP_GETFIELD,
    OP_SETTABUP, OP_SETTABLE, OP_SETI, OP_SETFIELD, OP_NEWTABLE, OP_SELF, OP_ADDI, OP_ADDK, OP_SUBK,
    OP_MULK, OP_MODK, OP_POWK, OP_DIVK, OP_IDIVK, OP_BANDK, OP_BORK, OP_BXORK, OP_SHRI, OP_SHLI,
    OP_ADD, OP_SUB, OP_MUL, OP_MOD, OP_POW, OP_DIV, OP_IDIV, OP_BAND, OP_BOR, OP_BXOR, OP_SHL,
    OP_SHR, OP_MMBIN, OP_MMBINI, OP_MMBINK, OP_UNM, OP_BNOT, OP_NOT, OP_LEN, OP_CONCAT, OP_CLOSE,
    OP_TBC, OP_JMP, OP_EQ, OP_LT, OP_LE, OP_EQK, OP_EQI, OP_LTI, OP_LEI, OP_GTI, OP_GEI, OP_TEST,
    OP_TESTSET, OP_CALL, OP_TAILCALL, OP_RETURN, OP_RETURN0, OP_RETURN1, OP_FORLOOP, OP_FORPREP,
    OP_TFORPREP, OP_TFORCALL, OP_TFORLOOP, OP_SETLIST, OP_CLOSURE, OP_VARARG, OP_VARARGPREP,
    OP_EXTRAARG, OPCODE_COUNT
};

typedef struct {
    unsigned char *bytes;
    size_t count, capacity;
    int failed;
} dump_buffer;

static int collect(lua_State *L, const void *p, size_t size, void *ud) {
    (void)L;
    dump_buffer *b = (dump_buffer *)ud;
    if (b->failed) return 1;
    if (b->count + size > b->capacity) {
        size_t capacity = b->capacity ? b->capacity : 4096;
        while (capacity < b->count + size) capacity *= 2;
        unsigned char *grown = (unsigned char *)realloc(b->bytes, capacity);
        if (grown == NULL) {
            b->failed = 1;
            return 1;
        }
        b->bytes = grown;
        b->capacity = capacity;
    }
    memcpy(b->bytes + b->count, p, size);
    b->count += size;
    return 0;
}

typedef struct {
    const unsigned char *p, *end;
    int bad;
} reader;

static unsigned read_byte(reader *r) {
    if (r->p >= r->end) {
        r->bad = 1;
        return 0;
    }
    return *r->p++;
}

/// lundump.c's loadUnsigned: 7 bits a byte, the last byte has its high bit set.
static size_t read_size(reader *r) {
    size_t x = 0;
    for (int i = 0; i < 10; i++) {
        unsigned b = read_byte(r);
        if (r->bad) return 0;
        x = (x << 7) | (b & 0x7f);
        if (b & 0x80) return x;
    }
    r->bad = 1;
    return 0;
}

static void skip(reader *r, size_t n) {
    if ((size_t)(r->end - r->p) < n) {
        r->bad = 1;
        return;
    }
    r->p += n;
}

static void skip_string(reader *r) {
    size_t n = read_size(r);
    if (n > 0) skip(r, n - 1);
}

/// 256 registers, a bit each: those that certainly hold a table this call of the function made.
typedef struct {
    uint64_t w[4];
} registers;

static int has(const registers *s, unsigned reg) { return (int)(s->w[reg >> 6] >> (reg & 63) & 1); }
static void put(registers *s, unsigned reg, int on) {
    if (on) {
        s->w[reg >> 6] |= (uint64_t)1 << (reg & 63);
    } else {
        s->w[reg >> 6] &= ~((uint64_t)1 << (reg & 63));
    }
}
/// Forgets every register from `reg` up (what a call, a loop or a multiple result may write).
static void forget_from(registers *s, unsigned reg) {
    for (unsigned i = reg; i < 256; i++) put(s, i, 0);
}

#define NO_SUCCESSOR INT_MIN

/// The instructions `code[pc]` may go to next: up to two, NO_SUCCESSOR for none.
static void successors(const uint32_t *code, int pc, int next[2]) {
    uint32_t i = code[pc];
    int op = (int)(i & 0x7f);
    int bx = (int)(i >> 15);
    int sj = (int)(i >> 7) - ((1 << 24) - 1);
    next[0] = pc + 1;
    next[1] = NO_SUCCESSOR;
    switch (op) {
    case OP_JMP: next[0] = pc + 1 + sj; break;
    case OP_EQ: case OP_LT: case OP_LE: case OP_EQK: case OP_EQI: case OP_LTI: case OP_LEI:
    case OP_GTI: case OP_GEI: case OP_TEST: case OP_TESTSET: case OP_LFALSESKIP:
        next[1] = pc + 2;
        break;
    case OP_FORPREP: next[1] = pc + bx + 2; break;
    case OP_FORLOOP: next[1] = pc + 1 - bx; break;
    case OP_TFORPREP: next[1] = pc + 1 + bx; break;
    case OP_TFORLOOP: next[1] = pc + 1 - bx; break;
    case OP_RETURN: case OP_RETURN0: case OP_RETURN1: case OP_TAILCALL: next[0] = NO_SUCCESSOR; break;
    default: break;
    }
}

/// `registers` after `code[pc]` runs, from those before.
static registers after(registers s, uint32_t i) {
    int op = (int)(i & 0x7f);
    unsigned a = (i >> 7) & 0xff, b = (i >> 16) & 0xff;
    switch (op) {
    case OP_NEWTABLE: put(&s, a, 1); break;
    case OP_MOVE: put(&s, a, has(&s, b)); break;
    // Nothing written to a register. (A metamethod's result, MMBIN*, goes to the register of the
    // arithmetic just before it, which that instruction already wrote.)
    case OP_SETTABUP: case OP_SETTABLE: case OP_SETI: case OP_SETFIELD: case OP_SETUPVAL:
    case OP_SETLIST: case OP_JMP: case OP_EQ: case OP_LT: case OP_LE: case OP_EQK: case OP_EQI:
    case OP_LTI: case OP_LEI: case OP_GTI: case OP_GEI: case OP_TEST: case OP_RETURN:
    case OP_RETURN0: case OP_RETURN1: case OP_EXTRAARG: case OP_CLOSE: case OP_MMBIN:
    case OP_MMBINI: case OP_MMBINK:
        break;
    // Everything else writes register A, and some the ones above it too.
    default: forget_from(&s, a); break;
    }
    return s;
}

/// Whether one function's code keeps nothing: it writes no upvalue and no global, and writes
/// only into tables it made itself in the same call (a table constructor, say). Its callees are
/// the file's other functions (checked alike) or the sandbox's (the caller rules out the ones
/// that write tables by name).
static int code_keeps_nothing(const uint32_t *code, int n) {
    if (n <= 0 || n > 1 << 20) return 0;
    registers *before = (registers *)malloc(sizeof(registers) * (size_t)n);
    char *seen = (char *)calloc((size_t)n, 1);
    int *work = (int *)malloc(sizeof(int) * (size_t)n * 2 + sizeof(int));
    int ok = before != NULL && seen != NULL && work != NULL;
    if (ok) {
        // A must-analysis: a register is fresh where it is on every path there.
        memset(&before[0], 0, sizeof(registers));
        seen[0] = 1;
        int top = 0;
        work[top++] = 0;
        while (ok && top > 0) {
            int pc = work[--top];
            if ((code[pc] & 0x7f) >= OPCODE_COUNT) {
                ok = 0;
                break;
            }
            registers out = after(before[pc], code[pc]);
            int next[2];
            successors(code, pc, next);
            for (int k = 0; k < 2; k++) {
                int to = next[k];
                if (to == NO_SUCCESSOR) continue;
                if (to < 0 || to >= n) {
                    ok = 0;
                    break;
                }
                if (!seen[to]) {
                    seen[to] = 1;
                    before[to] = out;
                    if (top < 2 * n) work[top++] = to; else ok = 0;
                    continue;
                }
                registers merged = before[to];
                int changed = 0;
                for (int w = 0; w < 4; w++) {
                    uint64_t m = merged.w[w] & out.w[w];
                    if (m != merged.w[w]) changed = 1;
                    merged.w[w] = m;
                }
                if (changed) {
                    before[to] = merged;
                    if (top < 2 * n) work[top++] = to; else ok = 0;
                }
            }
        }
        for (int pc = 0; ok && pc < n; pc++) {
            uint32_t i = code[pc];
            int op = (int)(i & 0x7f);
            unsigned a = (i >> 7) & 0xff;
            switch (op) {
            case OP_SETUPVAL: case OP_SETTABUP: ok = 0; break;
            case OP_SETTABLE: case OP_SETI: case OP_SETFIELD: case OP_SETLIST:
                // Unreachable code writing a table is refused too: nothing here is guessed.
                if (!seen[pc] || !has(&before[pc], a)) ok = 0;
                break;
            default: break;
            }
        }
    }
    free(before);
    free(seen);
    free(work);
    return ok;
}

/// Reads one function of the dump (lundump.c's loadFunction) and, with `check`, whether its code
/// keeps nothing; then its nested functions, always checked. Returns 0 at the first that may keep
/// something, or when the dump is not understood.
static int function_keeps_nothing(reader *r, int check) {
    skip_string(r);                    // source
    read_size(r);                      // linedefined
    read_size(r);                      // lastlinedefined
    skip(r, 3);                        // numparams, is_vararg, maxstacksize
    size_t n = read_size(r);
    if (r->bad || n > (size_t)(r->end - r->p) / 4) return 0;
    if (check) {
        uint32_t *code = (uint32_t *)malloc(n * 4 + 4);
        if (code == NULL) return 0;
        memcpy(code, r->p, n * 4);     // the dump is in the machine's byte order
        int ok = code_keeps_nothing(code, (int)n);
        free(code);
        if (!ok) return 0;
    }
    skip(r, n * 4);
    size_t constants = read_size(r);
    for (size_t k = 0; k < constants && !r->bad; k++) {
        unsigned tag = read_byte(r);
        switch (tag) {
        case 0: case 1: case 17: break;                    // nil, false, true
        case 3: case 19: skip(r, 8); break;                // integer, float
        case 4: case 20: skip_string(r); break;            // short, long string
        default: return 0;
        }
    }
    size_t upvalues = read_size(r);
    skip(r, upvalues * 3);
    size_t protos = read_size(r);
    for (size_t k = 0; k < protos && !r->bad; k++) {
        if (!function_keeps_nothing(r, 1)) return 0;
    }
    size_t lines = read_size(r);
    skip(r, lines);
    size_t absolute = read_size(r);
    for (size_t k = 0; k < absolute && !r->bad; k++) {
        read_size(r);
        read_size(r);
    }
    size_t locals = read_size(r);
    for (size_t k = 0; k < locals && !r->bad; k++) {
        skip_string(r);
        read_size(r);
        read_size(r);
    }
    size_t names = read_size(r);
    for (size_t k = 0; k < names && !r->bad; k++) skip_string(r);
    return !r->bad;
}

int hush_functions_within_keep_nothing(lua_State *L, int index) {
    if (lua_type(L, index) != LUA_TFUNCTION || lua_iscfunction(L, index)) return 0;
    index = lua_absindex(L, index);
    dump_buffer b = {NULL, 0, 0, 0};
    lua_pushvalue(L, index);
    int status = lua_dump(L, collect, &b, 1);
    lua_pop(L, 1);
    int ok = 0;
    // The header (lundump.c's checkHeader): signature, version 5.4, format 0, LUAC_DATA, the sizes
    // of an instruction, an integer and a float, LUAC_INT and LUAC_NUM; then the main function's
    // count of upvalues.
    static const unsigned char header[] = {0x1b, 'L', 'u', 'a', 0x54, 0, 0x19, 0x93, '\r', '\n', 0x1a, '\n', 4, 8, 8};
    if (status == 0 && !b.failed && b.count > sizeof(header) + 17 && memcmp(b.bytes, header, sizeof(header)) == 0) {
        reader r = {b.bytes + sizeof(header) + 17, b.bytes + b.count, 0};
        ok = function_keeps_nothing(&r, 0) && r.p == r.end;
    }
    free(b.bytes);
    return ok;
}

/// Marks the value on the top of the stack in the table at `allowed`, if it is a function.
static void allow_if_function(lua_State *L, int allowed) {
    if (lua_type(L, -1) != LUA_TFUNCTION) return;
    lua_pushvalue(L, -1);
    lua_pushboolean(L, 1);
    lua_rawset(L, allowed);
}

/// Marks, in the table at `allowed`, every function of the global table and of its tables (the
/// libraries, `hush`, the prelude's declarations): functions the sandbox made, whose upvalues
/// hold no state a call changes.
static void allow_sandbox_functions(lua_State *L, int allowed) {
    lua_pushglobaltable(L);
    int globals = lua_gettop(L);
    lua_pushnil(L);
    while (lua_next(L, globals)) {
        allow_if_function(L, allowed);
        if (lua_type(L, -1) == LUA_TTABLE) {
            int library = lua_gettop(L);
            lua_pushnil(L);
            while (lua_next(L, library)) {
                allow_if_function(L, allowed);
                lua_pop(L, 1);
            }
        }
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
}

int hush_values_hold_no_state(lua_State *L, int first, int count) {
    first = lua_absindex(L, first);
    if (!lua_checkstack(L, 16)) return 0;
    // Host work: it must not fail on the cap (an error here would have no handler).
    hush_sandbox *S = sandbox_of(L);
    int saved = S->enforce_memory;
    S->enforce_memory = 0;
    int base = lua_gettop(L);
    lua_newtable(L); // functions the sandbox made
    int allowed = base + 1;
    allow_sandbox_functions(L, allowed);
    lua_newtable(L); // values seen
    int seen = base + 2;
    lua_newtable(L); // values to look at (a stack)
    int pending = base + 3;
    lua_Integer top = 0;
    for (int k = 0; k < count; k++) {
        lua_pushvalue(L, first + k);
        lua_rawseti(L, pending, ++top);
    }
    int ok = 1, visits = 0;
    while (ok && top > 0) {
        lua_rawgeti(L, pending, top);
        lua_pushnil(L);
        lua_rawseti(L, pending, top--);
        int value = lua_gettop(L);
        int type = lua_type(L, value);
        if (type != LUA_TTABLE && type != LUA_TFUNCTION && type != LUA_TUSERDATA && type != LUA_TTHREAD &&
            type != LUA_TLIGHTUSERDATA) {
            lua_pop(L, 1);
            continue;
        }
        lua_pushvalue(L, value);
        if (lua_rawget(L, seen) != LUA_TNIL) {
            lua_pop(L, 2);
            continue;
        }
        lua_pop(L, 1);
        if (++visits > 200000) {
            ok = 0;
            break;
        }
        lua_pushvalue(L, value);
        lua_pushboolean(L, 1);
        lua_rawset(L, seen);
        if (type == LUA_TTABLE) {
            if (lua_getmetatable(L, value)) {
                lua_rawseti(L, pending, ++top);
            }
            lua_pushnil(L);
            while (lua_next(L, value)) {
                lua_rawseti(L, pending, ++top);
                lua_pushvalue(L, -1);
                lua_rawseti(L, pending, ++top);
            }
        } else if (type == LUA_TFUNCTION) {
            lua_pushvalue(L, value);
            int sandbox_made = lua_rawget(L, allowed) != LUA_TNIL;
            lua_pop(L, 1);
            if (!sandbox_made) {
                int is_c = lua_iscfunction(L, value);
                for (int u = 1; lua_getupvalue(L, value, u) != NULL; u++) {
                    // A C function's own upvalues are its state (a string.gmatch iterator's
                    // position, say): a call changes them, and nothing shows in bytecode.
                    if (is_c) ok = 0;
                    lua_rawseti(L, pending, ++top);
                }
            }
        } else {
            ok = 0; // userdata and coroutines keep state no bytecode shows
        }
        lua_pop(L, 1);
    }
    lua_settop(L, base);
    S->enforce_memory = saved;
    return ok;
}

size_t hush_random_state(lua_State *L, void *out, size_t capacity) {
    size_t size = 0;
    if (!lua_checkstack(L, 4)) return 0;
    int top = lua_gettop(L);
    lua_pushglobaltable(L);
    lua_pushliteral(L, "math");
    if (lua_rawget(L, -2) == LUA_TTABLE) {
        lua_pushliteral(L, "random");
        if (lua_rawget(L, -2) == LUA_TFUNCTION && lua_getupvalue(L, -1, 1) != NULL && lua_type(L, -1) == LUA_TUSERDATA) {
            size = lua_rawlen(L, -1);
            if (size > capacity) size = capacity;
            memcpy(out, lua_touserdata(L, -1), size);
        }
    }
    lua_settop(L, top);
    return size;
}
