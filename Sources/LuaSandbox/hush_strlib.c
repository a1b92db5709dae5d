/*
 * hush_strlib.c - bounded replacements for Lua 5.4's string.find,
 * string.match, string.gmatch, string.gsub and string.rep.
 *
 * The pattern matcher follows the semantics of Lua 5.4's lstrlib.c (same
 * results and error messages) but every unit of work is charged against a
 * per-call step budget, so that a single call from a sandboxed script cannot
 * run for an unbounded time inside C, where a count hook cannot interrupt it.
 *
 * Steps are charged for:
 *   - every entry into the matcher and every tail iteration inside it
 *     (i.e. every pattern item processed);
 *   - every iteration of the expansion loops ('*', '+', '-' and their
 *     backtracking);
 *   - long scans proportionally to their length (1 step per 32 bytes):
 *     character sets, %b scans, back-reference comparisons and scans of the
 *     replacement string in gsub.
 *
 * Plain searches (find with plain=true or a pattern without special
 * characters) use a linear-time algorithm and are not charged.
 *
 * No global mutable state: limits live in closure upvalues.
 */

#include <ctype.h>
#include <limits.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <lua.h>
#include <lauxlib.h>

#include "hush_strlib.h"

#define HS_MAXCAPTURES 32  /* same as LUA_MAXCAPTURES */
#define HS_MAXCCALLS 200   /* same as MAXCCALLS in lstrlib.c */

#define CAP_UNFINISHED (-1)
#define CAP_POSITION (-2)

#define L_ESC '%'
#define SPECIALS "^$*+?.([%-"

#define uchar(c) ((unsigned char)(c))

/* upper bound for result sizes; same as MAXSIZE in Lua 5.4's lstrlib.c,
   so a large max_bytes never makes rep more permissive than stock Lua */
#define HS_MAXSIZE \
  (sizeof(size_t) < sizeof(int) ? (size_t)(~(size_t)0) : (size_t)(INT_MAX))

static const char STEP_MSG[] = "pattern too complex (step limit exceeded)";

typedef struct MState {
  const char *src_init; /* start of subject */
  const char *src_end;  /* end ('\0') of subject */
  const char *p_end;    /* end ('\0') of pattern */
  lua_State *L;
  int depth_left;            /* recursion budget */
  int level;                 /* total number of captures (finished or not) */
  unsigned long long steps_left; /* step budget for this call */
  struct {
    const char *init;
    ptrdiff_t len;
  } capture[HS_MAXCAPTURES];
} MState;

/* ------------------------------------------------------------------------ */
/* limits                                                                   */
/* ------------------------------------------------------------------------ */

static unsigned long long get_max_steps(lua_State *L) {
  lua_Integer v = lua_tointeger(L, lua_upvalueindex(1));
  return (v < 1) ? 1ULL : (unsigned long long)v;
}

static size_t get_max_bytes(lua_State *L) {
  lua_Integer v = lua_tointeger(L, lua_upvalueindex(2));
  if (v < 0) return 0;
  if ((unsigned long long)v > (unsigned long long)HS_MAXSIZE) return HS_MAXSIZE;
  return (size_t)v;
}

static void steps_exceeded(MState *ms) {
  luaL_error(ms->L, "%s", STEP_MSG);
}

#define CHARGE(ms, cost)                                                \
  do {                                                                  \
    unsigned long long c_ = (unsigned long long)(cost);                 \
    if (c_ > (ms)->steps_left) steps_exceeded(ms);                      \
    (ms)->steps_left -= c_;                                             \
  } while (0)

/* ------------------------------------------------------------------------ */
/* common helpers                                                           */
/* ------------------------------------------------------------------------ */

/* translate a relative initial position (negative means back from end);
   clip result to [1, inf). Same as posrelatI in lstrlib.c. */
static size_t rel_init(lua_Integer pos, size_t len) {
  if (pos > 0)
    return (size_t)pos;
  else if (pos == 0)
    return 1;
  else if (pos < -(lua_Integer)len)
    return 1;
  else
    return len + (size_t)pos + 1;
}

/* pattern character at p, or 0 at/after the end (mimics the '\0' that
   terminates every Lua string) */
static int pat_at(const MState *ms, const char *p) {
  return (p < ms->p_end) ? uchar(*p) : 0;
}

static void ms_prepare(MState *ms, lua_State *L, const char *s, size_t ls,
                       const char *p, size_t lp) {
  ms->L = L;
  ms->src_init = s;
  ms->src_end = s + ls;
  ms->p_end = p + lp;
  ms->level = 0;
  ms->depth_left = HS_MAXCCALLS;
  ms->steps_left = 0;
}

static void ms_reset(MState *ms) {
  ms->level = 0;
  ms->depth_left = HS_MAXCCALLS;
}

static int has_specials(const char *p, size_t lp) {
  size_t i;
  for (i = 0; i < lp; i++) {
    int c = uchar(p[i]);
    if (c != 0 && strchr(SPECIALS, c) != NULL) return 1;
  }
  return 0;
}

/* If the (unanchored) pattern starts with a plain literal character that
   must match at least once, return it; any match must start with it, so
   scanning can skip directly to its occurrences. Otherwise -1. */
static int first_literal(const char *p, size_t lp) {
  int c, next;
  if (lp == 0) return -1;
  c = uchar(p[0]);
  if (c == ')' || (c != 0 && strchr(SPECIALS, c) != NULL)) return -1;
  next = (lp > 1) ? uchar(p[1]) : 0;
  if (next == '*' || next == '?' || next == '-') return -1;
  return c;
}

/* ------------------------------------------------------------------------ */
/* linear-time plain search                                                 */
/* ------------------------------------------------------------------------ */

#define HS_DEFINE_KMP(name, T)                                              \
  static const char *name(lua_State *L, const char *s, size_t ls,           \
                          const char *p, size_t lp) {                       \
    T *fail = (T *)lua_newuserdatauv(L, lp * sizeof(T), 0);                 \
    size_t i, k = 0;                                                        \
    fail[0] = 0;                                                            \
    for (i = 1; i < lp; i++) {                                              \
      while (k > 0 && p[i] != p[k]) k = fail[k - 1];                        \
      if (p[i] == p[k]) k++;                                                \
      fail[i] = (T)k;                                                       \
    }                                                                       \
    k = 0;                                                                  \
    for (i = 0; i < ls; i++) {                                              \
      while (k > 0 && s[i] != p[k]) k = fail[k - 1];                        \
      if (s[i] == p[k]) k++;                                                \
      if (k == lp) return s + i + 1 - lp;                                   \
    }                                                                       \
    lua_pop(L, 1);                                                          \
    return NULL;                                                            \
  }

HS_DEFINE_KMP(kmp_find32, uint32_t)
HS_DEFINE_KMP(kmp_find_sz, size_t)

static const char *kmp_find(lua_State *L, const char *s, size_t ls,
                            const char *p, size_t lp) {
  if (lp <= UINT32_MAX && lp <= (~(size_t)0) / sizeof(uint32_t))
    return kmp_find32(L, s, ls, p, lp);
  if (lp > (~(size_t)0) / sizeof(size_t)) luaL_error(L, "not enough memory");
  return kmp_find_sz(L, s, ls, p, lp);
}

/* Find p[0..lp) in s[0..ls). memchr/memcmp while cheap; switches to KMP
   (linear worst case) once the naive work gets large. */
static const char *plain_find(lua_State *L, const char *s, size_t ls,
                              const char *p, size_t lp) {
  const char *cur, *last;
  size_t work = 0, budget;
  if (lp == 0) return s;
  if (lp > ls) return NULL;
  budget = (ls < SIZE_MAX / 8 ? 4 * ls : SIZE_MAX / 2) + 4096;
  cur = s;
  last = s + (ls - lp); /* last possible start */
  while (cur <= last) {
    const char *q = (const char *)memchr(cur, uchar(p[0]),
                                         (size_t)(last - cur) + 1);
    if (q == NULL) return NULL;
    if (memcmp(q + 1, p + 1, lp - 1) == 0) return q;
    cur = q + 1;
    work += lp;
    if (work > budget)
      return kmp_find(L, cur, (size_t)(s + ls - cur), p, lp);
  }
  return NULL;
}

/* ------------------------------------------------------------------------ */
/* pattern matcher                                                          */
/* ------------------------------------------------------------------------ */

static const char *do_match(MState *ms, const char *s, const char *p);

static int check_capture(MState *ms, int l) {
  l -= '1';
  if (l < 0 || l >= ms->level || ms->capture[l].len == CAP_UNFINISHED)
    return luaL_error(ms->L, "invalid capture index %%%d", l + 1);
  return l;
}

static int capture_to_close(MState *ms) {
  int level = ms->level - 1;
  for (; level >= 0; level--)
    if (ms->capture[level].len == CAP_UNFINISHED) return level;
  return luaL_error(ms->L, "invalid pattern capture");
}

/* p points at a single-char class; returns pointer just after it */
static const char *class_end(MState *ms, const char *p) {
  const char *start = p;
  int c = uchar(*p++);
  if (c == L_ESC) {
    if (p >= ms->p_end)
      luaL_error(ms->L, "malformed pattern (ends with '%%')");
    return p + 1;
  }
  if (c == '[') {
    if (pat_at(ms, p) == '^') p++;
    do { /* look for a ']' */
      if (p >= ms->p_end)
        luaL_error(ms->L, "malformed pattern (missing ']')");
      c = uchar(*p++);
      if (c == L_ESC && p < ms->p_end) p++; /* skip escapes (e.g. '%]') */
    } while (pat_at(ms, p) != ']');
    CHARGE(ms, (size_t)(p - start) >> 5);
    return p + 1;
  }
  return p;
}

static int match_class(int c, int cl) {
  int res;
  switch (tolower(cl)) {
    case 'a': res = isalpha(c); break;
    case 'c': res = iscntrl(c); break;
    case 'd': res = isdigit(c); break;
    case 'g': res = isgraph(c); break;
    case 'l': res = islower(c); break;
    case 'p': res = ispunct(c); break;
    case 's': res = isspace(c); break;
    case 'u': res = isupper(c); break;
    case 'w': res = isalnum(c); break;
    case 'x': res = isxdigit(c); break;
    case 'z': res = (c == 0); break; /* deprecated, still in 5.4 */
    default: return (cl == c);
  }
  if (isupper(cl)) res = !res;
  return res;
}

/* p points at '[', ec at the closing ']' */
static int match_bracket(MState *ms, int c, const char *p, const char *ec) {
  int sig = 1;
  CHARGE(ms, (size_t)(ec - p) >> 5);
  if (uchar(p[1]) == '^') {
    sig = 0;
    p++;
  }
  while (++p < ec) {
    if (uchar(*p) == L_ESC) {
      p++;
      if (match_class(c, uchar(*p))) return sig;
    } else if (uchar(p[1]) == '-' && p + 2 < ec) {
      p += 2;
      if (uchar(p[-2]) <= c && c <= uchar(*p)) return sig;
    } else if (uchar(*p) == c) {
      return sig;
    }
  }
  return !sig;
}

static int single_match(MState *ms, const char *s, const char *p,
                        const char *ep) {
  int c;
  if (s >= ms->src_end) return 0;
  c = uchar(*s);
  switch (uchar(*p)) {
    case '.': return 1;
    case L_ESC: return match_class(c, uchar(p[1]));
    case '[': return match_bracket(ms, c, p, ep - 1);
    default: return uchar(*p) == c;
  }
}

static const char *match_balance(MState *ms, const char *s, const char *p) {
  const char *start = s;
  int b, e, cont = 1;
  if (ms->p_end - p < 2)
    luaL_error(ms->L, "malformed pattern (missing arguments to '%%b')");
  if (s >= ms->src_end || uchar(*s) != uchar(*p)) return NULL;
  b = uchar(p[0]);
  e = uchar(p[1]);
  while (++s < ms->src_end) {
    int c = uchar(*s);
    if (c == e) {
      if (--cont == 0) {
        CHARGE(ms, (size_t)(s - start) >> 5);
        return s + 1;
      }
    } else if (c == b) {
      cont++;
    }
  }
  CHARGE(ms, (size_t)(s - start) >> 5);
  return NULL;
}

static const char *max_expand(MState *ms, const char *s, const char *p,
                              const char *ep) {
  ptrdiff_t i = 0; /* counts maximum expansion for item */
  while (single_match(ms, s + i, p, ep)) {
    CHARGE(ms, 1);
    i++;
  }
  /* keep trying to match with the maximum repetitions */
  while (i >= 0) {
    const char *res;
    CHARGE(ms, 1);
    res = do_match(ms, s + i, ep + 1);
    if (res != NULL) return res;
    i--; /* reduce one repetition and try again */
  }
  return NULL;
}

static const char *min_expand(MState *ms, const char *s, const char *p,
                              const char *ep) {
  for (;;) {
    const char *res;
    CHARGE(ms, 1);
    res = do_match(ms, s, ep + 1);
    if (res != NULL)
      return res;
    else if (single_match(ms, s, p, ep))
      s++; /* try with one more repetition */
    else
      return NULL;
  }
}

static const char *start_capture(MState *ms, const char *s, const char *p,
                                 int what) {
  const char *res;
  int level = ms->level;
  if (level >= HS_MAXCAPTURES) luaL_error(ms->L, "too many captures");
  ms->capture[level].init = s;
  ms->capture[level].len = what;
  ms->level = level + 1;
  if ((res = do_match(ms, s, p)) == NULL) /* match failed? */
    ms->level--;                            /* undo capture */
  return res;
}

static const char *end_capture(MState *ms, const char *s, const char *p) {
  int l = capture_to_close(ms);
  const char *res;
  ms->capture[l].len = s - ms->capture[l].init; /* close capture */
  if ((res = do_match(ms, s, p)) == NULL)         /* match failed? */
    ms->capture[l].len = CAP_UNFINISHED;          /* undo capture */
  return res;
}

static const char *match_capture(MState *ms, const char *s, int l) {
  size_t len;
  l = check_capture(ms, l);
  len = (size_t)ms->capture[l].len; /* position capture -> huge -> fails */
  if ((size_t)(ms->src_end - s) >= len) {
    CHARGE(ms, len >> 5);
    if (memcmp(ms->capture[l].init, s, len) == 0) return s + len;
  }
  return NULL;
}

static const char *do_match(MState *ms, const char *s, const char *p) {
  if (ms->depth_left-- == 0) luaL_error(ms->L, "pattern too complex");
init: /* tail calls are turned into jumps */
  CHARGE(ms, 1);
  if (p != ms->p_end) {
    switch (uchar(*p)) {
      case '(': { /* start capture */
        if (pat_at(ms, p + 1) == ')') /* position capture? */
          s = start_capture(ms, s, p + 2, CAP_POSITION);
        else
          s = start_capture(ms, s, p + 1, CAP_UNFINISHED);
        break;
      }
      case ')': { /* end capture */
        s = end_capture(ms, s, p + 1);
        break;
      }
      case '$': {
        if (p + 1 != ms->p_end) /* not the last char of the pattern? */
          goto dflt;
        s = (s == ms->src_end) ? s : NULL;
        break;
      }
      case L_ESC: {
        switch (pat_at(ms, p + 1)) {
          case 'b': { /* balanced string */
            s = match_balance(ms, s, p + 2);
            if (s != NULL) {
              p += 4;
              goto init;
            }
            break;
          }
          case 'f': { /* frontier */
            const char *ep;
            int prev, cur;
            p += 2;
            if (pat_at(ms, p) != '[')
              luaL_error(ms->L, "missing '[' after '%%f' in pattern");
            ep = class_end(ms, p);
            prev = (s == ms->src_init) ? 0 : uchar(*(s - 1));
            cur = (s < ms->src_end) ? uchar(*s) : 0;
            if (!match_bracket(ms, prev, p, ep - 1) &&
                match_bracket(ms, cur, p, ep - 1)) {
              p = ep;
              goto init;
            }
            s = NULL;
            break;
          }
          case '0': case '1': case '2': case '3': case '4':
          case '5': case '6': case '7': case '8': case '9': {
            s = match_capture(ms, s, uchar(p[1]));
            if (s != NULL) {
              p += 2;
              goto init;
            }
            break;
          }
          default: goto dflt;
        }
        break;
      }
      default:
      dflt: { /* single-char class plus optional suffix */
        const char *ep = class_end(ms, p);
        int suffix = pat_at(ms, ep);
        if (!single_match(ms, s, p, ep)) {
          if (suffix == '*' || suffix == '?' || suffix == '-') {
            p = ep + 1; /* accept empty */
            goto init;
          }
          s = NULL; /* '+' or no suffix */
        } else { /* matched once */
          switch (suffix) {
            case '?': {
              const char *res = do_match(ms, s + 1, ep + 1);
              if (res != NULL)
                s = res;
              else {
                p = ep + 1;
                goto init;
              }
              break;
            }
            case '+': /* one match already done */
              s = max_expand(ms, s + 1, p, ep);
              break;
            case '*':
              s = max_expand(ms, s, p, ep);
              break;
            case '-':
              s = min_expand(ms, s, p, ep);
              break;
            default:
              s++;
              p = ep;
              goto init;
          }
        }
        break;
      }
    }
  }
  ms->depth_left++;
  return s;
}

/* ------------------------------------------------------------------------ */
/* captures                                                                 */
/* ------------------------------------------------------------------------ */

/* Get capture i (whole match s..e if there are no captures and i == 0).
   Position captures are pushed on the stack and CAP_POSITION returned. */
static ptrdiff_t get_onecapture(MState *ms, int i, const char *s,
                                const char *e, const char **cap) {
  if (i >= ms->level) {
    if (i != 0) luaL_error(ms->L, "invalid capture index %%%d", i + 1);
    *cap = s;
    return e - s;
  } else {
    ptrdiff_t capl = ms->capture[i].len;
    *cap = ms->capture[i].init;
    if (capl == CAP_UNFINISHED)
      luaL_error(ms->L, "unfinished capture");
    else if (capl == CAP_POSITION)
      lua_pushinteger(ms->L, (ms->capture[i].init - ms->src_init) + 1);
    return capl;
  }
}

static void push_onecapture(MState *ms, int i, const char *s, const char *e) {
  const char *cap;
  ptrdiff_t l = get_onecapture(ms, i, s, e, &cap);
  if (l != CAP_POSITION) lua_pushlstring(ms->L, cap, (size_t)l);
}

static int push_captures(MState *ms, const char *s, const char *e) {
  int i;
  int nlevels = (ms->level == 0 && s) ? 1 : ms->level;
  luaL_checkstack(ms->L, nlevels, "too many captures");
  for (i = 0; i < nlevels; i++) push_onecapture(ms, i, s, e);
  return nlevels;
}

/* ------------------------------------------------------------------------ */
/* find / match                                                             */
/* ------------------------------------------------------------------------ */

static int find_aux(lua_State *L, int find) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  size_t init = rel_init(luaL_optinteger(L, 3, 1), ls) - 1;
  if (init > ls) { /* start after the end of the subject? */
    luaL_pushfail(L);
    return 1;
  }
  if (find && (lua_toboolean(L, 4) || !has_specials(p, lp))) {
    const char *s2 = plain_find(L, s + init, ls - init, p, lp);
    if (s2 != NULL) {
      lua_pushinteger(L, (s2 - s) + 1);
      lua_pushinteger(L, (lua_Integer)((size_t)(s2 - s) + lp));
      return 2;
    }
  } else {
    MState ms;
    const char *s1 = s + init;
    int anchor = (lp > 0 && *p == '^');
    int lit;
    if (anchor) {
      p++;
      lp--;
    }
    lit = anchor ? -1 : first_literal(p, lp);
    ms_prepare(&ms, L, s, ls, p, lp);
    ms.steps_left = get_max_steps(L);
    do {
      const char *res;
      if (lit >= 0) {
        s1 = (s1 < ms.src_end)
                 ? (const char *)memchr(s1, lit, (size_t)(ms.src_end - s1))
                 : NULL;
        if (s1 == NULL) break;
      }
      ms_reset(&ms);
      if ((res = do_match(&ms, s1, p)) != NULL) {
        if (find) {
          lua_pushinteger(L, (s1 - s) + 1);
          lua_pushinteger(L, res - s);
          return push_captures(&ms, NULL, NULL) + 2;
        } else {
          return push_captures(&ms, s1, res);
        }
      }
    } while (s1++ < ms.src_end && !anchor);
  }
  luaL_pushfail(L);
  return 1;
}

static int hs_find(lua_State *L) { return find_aux(L, 1); }

static int hs_match(lua_State *L) { return find_aux(L, 0); }

/* ------------------------------------------------------------------------ */
/* gmatch                                                                   */
/* ------------------------------------------------------------------------ */

typedef struct GMState {
  MState ms;
  const char *p;          /* pattern */
  size_t src;             /* offset of the next start position */
  const char *lastmatch;  /* end of last match (NULL if none) */
  int lit;                /* first literal (or -1) */
  unsigned long long max_steps;
} GMState;

static int gmatch_aux(lua_State *L) {
  GMState *gm = (GMState *)lua_touserdata(L, lua_upvalueindex(3));
  MState *ms = &gm->ms;
  size_t ls = (size_t)(ms->src_end - ms->src_init);
  size_t off;
  ms->L = L;
  ms->steps_left = gm->max_steps; /* budget per iteration */
  for (off = gm->src; off <= ls; off++) {
    const char *src, *e;
    if (gm->lit >= 0) {
      const char *q =
          (off < ls) ? (const char *)memchr(ms->src_init + off, gm->lit,
                                            ls - off)
                     : NULL;
      if (q == NULL) return 0;
      off = (size_t)(q - ms->src_init);
    }
    src = ms->src_init + off;
    ms_reset(ms);
    if ((e = do_match(ms, src, gm->p)) != NULL && e != gm->lastmatch) {
      gm->src = (size_t)(e - ms->src_init);
      gm->lastmatch = e;
      return push_captures(ms, src, e);
    }
  }
  return 0; /* not found */
}

static int hs_gmatch(lua_State *L) {
  size_t ls, lp;
  const char *s = luaL_checklstring(L, 1, &ls);
  const char *p = luaL_checklstring(L, 2, &lp);
  size_t init = rel_init(luaL_optinteger(L, 3, 1), ls) - 1;
  unsigned long long max_steps = get_max_steps(L);
  GMState *gm;
  lua_settop(L, 2); /* keep strings alive as upvalues of the iterator */
  gm = (GMState *)lua_newuserdatauv(L, sizeof(GMState), 0);
  if (init > ls) init = ls + 1; /* start after the end: nothing to find */
  ms_prepare(&gm->ms, L, s, ls, p, lp);
  gm->p = p;
  gm->src = init;
  gm->lastmatch = NULL;
  /* in 5.4, '^' has no special meaning in gmatch (it is a literal) */
  gm->lit = first_literal(p, lp);
  gm->max_steps = max_steps;
  lua_pushcclosure(L, gmatch_aux, 3);
  return 1;
}

/* ------------------------------------------------------------------------ */
/* gsub                                                                     */
/* ------------------------------------------------------------------------ */

static void too_large(lua_State *L) {
  luaL_error(L, "resulting string too large");
}

static void gs_add(MState *ms, luaL_Buffer *b, const char *s, size_t l,
                   size_t maxb) {
  if (l > maxb - luaL_bufflen(b)) too_large(ms->L);
  if (l <= b->size - b->n) { /* fast path: fits in the current buffer */
    memcpy(b->b + b->n, s, l);
    b->n += l;
  } else {
    luaL_addlstring(b, s, l);
  }
}

/* add the value at the top of the stack (a string or number) */
static void gs_addvalue(MState *ms, luaL_Buffer *b, size_t maxb) {
  size_t l;
  lua_tolstring(ms->L, -1, &l);
  if (l > maxb - luaL_bufflen(b)) too_large(ms->L);
  luaL_addvalue(b);
}

static void add_s(MState *ms, luaL_Buffer *b, const char *s, const char *e,
                  size_t maxb) {
  size_t l;
  lua_State *L = ms->L;
  const char *news = lua_tolstring(L, 3, &l);
  const char *p;
  while ((p = (const char *)memchr(news, L_ESC, l)) != NULL) {
    int c;
    CHARGE(ms, 1 + ((size_t)(p - news) >> 5));
    gs_add(ms, b, news, (size_t)(p - news), maxb);
    p++; /* skip ESC */
    c = (p < news + l) ? uchar(*p) : 0;
    if (c == L_ESC) { /* '%%' */
      gs_add(ms, b, p, 1, maxb);
    } else if (c == '0') { /* '%0' */
      gs_add(ms, b, s, (size_t)(e - s), maxb);
    } else if (isdigit(c)) { /* '%n' */
      const char *cap;
      ptrdiff_t resl = get_onecapture(ms, c - '1', s, e, &cap);
      if (resl == CAP_POSITION)
        gs_addvalue(ms, b, maxb); /* add position */
      else
        gs_add(ms, b, cap, (size_t)resl, maxb);
    } else {
      luaL_error(L, "invalid use of '%c' in replacement string", L_ESC);
    }
    l -= (size_t)(p + 1 - news);
    news = p + 1;
  }
  CHARGE(ms, l >> 5);
  gs_add(ms, b, news, l, maxb);
}

/* returns whether the text was changed */
static int add_value(MState *ms, luaL_Buffer *b, const char *s, const char *e,
                     int tr, size_t maxb) {
  lua_State *L = ms->L;
  switch (tr) {
    case LUA_TFUNCTION: {
      int n;
      lua_pushvalue(L, 3);
      n = push_captures(ms, s, e);
      lua_call(L, n, 1);
      break;
    }
    case LUA_TTABLE: {
      push_onecapture(ms, 0, s, e);
      lua_gettable(L, 3);
      break;
    }
    default: { /* LUA_TNUMBER or LUA_TSTRING */
      add_s(ms, b, s, e, maxb);
      return 1;
    }
  }
  if (!lua_toboolean(L, -1)) { /* nil or false: keep original text */
    lua_pop(L, 1);
    gs_add(ms, b, s, (size_t)(e - s), maxb);
    return 0;
  } else if (!lua_isstring(L, -1)) {
    return luaL_error(L, "invalid replacement value (a %s)",
                      luaL_typename(L, -1));
  } else {
    gs_addvalue(ms, b, maxb);
    return 1;
  }
}

static int hs_gsub(lua_State *L) {
  size_t srcl, lp;
  const char *src = luaL_checklstring(L, 1, &srcl);
  const char *p = luaL_checklstring(L, 2, &lp);
  const char *lastmatch = NULL;
  int tr = lua_type(L, 3);
  lua_Integer max_s = luaL_optinteger(L, 4, (lua_Integer)srcl + 1);
  int anchor = (lp > 0 && *p == '^');
  int lit;
  lua_Integer n = 0;
  int changed = 0;
  size_t maxb = get_max_bytes(L);
  MState ms;
  luaL_Buffer b;
  luaL_argexpected(L,
                   tr == LUA_TNUMBER || tr == LUA_TSTRING ||
                       tr == LUA_TFUNCTION || tr == LUA_TTABLE,
                   3, "string/function/table");
  /* the text copied unchanged from the subject never exceeds its size, so
     the limit is never below the subject's length */
  if (maxb < srcl) maxb = srcl;
  luaL_buffinit(L, &b);
  if (anchor) {
    p++;
    lp--;
  }
  lit = anchor ? -1 : first_literal(p, lp);
  ms_prepare(&ms, L, src, srcl, p, lp);
  ms.steps_left = get_max_steps(L);
  while (n < max_s) {
    const char *e;
    if (lit >= 0 && src < ms.src_end) { /* skip to a possible match start */
      const char *q =
          (const char *)memchr(src, lit, (size_t)(ms.src_end - src));
      if (q == NULL) q = ms.src_end;
      gs_add(&ms, &b, src, (size_t)(q - src), maxb);
      src = q;
    }
    ms_reset(&ms);
    if ((e = do_match(&ms, src, p)) != NULL && e != lastmatch) { /* match */
      n++;
      changed = add_value(&ms, &b, src, e, tr, maxb) | changed;
      src = lastmatch = e;
    } else if (src < ms.src_end) {
      gs_add(&ms, &b, src, 1, maxb);
      src++;
    } else {
      break;
    }
    if (anchor) break;
  }
  if (!changed) {
    lua_pushvalue(L, 1); /* return original string */
  } else {
    gs_add(&ms, &b, src, (size_t)(ms.src_end - src), maxb);
    luaL_pushresult(&b);
  }
  lua_pushinteger(L, n);
  return 2;
}

/* ------------------------------------------------------------------------ */
/* rep                                                                      */
/* ------------------------------------------------------------------------ */

static int hs_rep(lua_State *L) {
  size_t l, lsep;
  const char *s = luaL_checklstring(L, 1, &l);
  lua_Integer n = luaL_checkinteger(L, 2);
  const char *sep = luaL_optlstring(L, 3, "", &lsep);
  size_t maxb = get_max_bytes(L);
  unsigned long long un, mb = (unsigned long long)maxb, total;
  if (n <= 0 || (l == 0 && (lsep == 0 || n == 1))) {
    lua_pushliteral(L, ""); /* empty result, at once */
    return 1;
  }
  un = (unsigned long long)n;
  if (l > 0 && un > mb / l) too_large(L);
  total = un * l; /* <= mb */
  if (lsep > 0 && un - 1 > (mb - total) / lsep) too_large(L);
  total += (un - 1) * lsep; /* <= mb */
  {
    luaL_Buffer b;
    size_t totallen = (size_t)total, done;
    char *p = luaL_buffinitsize(L, &b, totallen);
    /* the result is a prefix of the periodic sequence s sep s sep ...:
       write one period, then keep doubling the written part */
    memcpy(p, s, l);
    done = l;
    if (n > 1) {
      memcpy(p + done, sep, lsep);
      done += lsep;
      while (done < totallen) {
        size_t chunk = (done < totallen - done) ? done : totallen - done;
        memcpy(p + done, p, chunk);
        done += chunk;
      }
    }
    luaL_pushresultsize(&b, totallen);
  }
  return 1;
}

/* ------------------------------------------------------------------------ */
/* installation                                                             */
/* ------------------------------------------------------------------------ */

void hush_strlib_install(lua_State *L, long long max_steps, size_t max_bytes) {
  static const struct {
    const char *name;
    lua_CFunction fn;
  } funcs[] = {
      {"find", hs_find},     {"match", hs_match}, {"gmatch", hs_gmatch},
      {"gsub", hs_gsub},     {"rep", hs_rep},
  };
  lua_Integer steps = (max_steps < 1) ? 1 : (lua_Integer)max_steps;
  lua_Integer bytes = (max_bytes > (size_t)HS_MAXSIZE)
                          ? (lua_Integer)HS_MAXSIZE
                          : (lua_Integer)max_bytes;
  size_t i;
  luaL_checkstack(L, 4, "hush_strlib_install");
  for (i = 0; i < sizeof(funcs) / sizeof(funcs[0]); i++) {
    lua_pushinteger(L, steps);
    lua_pushinteger(L, bytes);
    lua_pushcclosure(L, funcs[i].fn, 2);
    lua_setfield(L, -2, funcs[i].name);
  }
}
