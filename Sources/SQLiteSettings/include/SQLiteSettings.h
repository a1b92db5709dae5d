#ifndef HUSH_SQLITE_SETTINGS_H
#define HUSH_SQLITE_SETTINGS_H

/// Process-wide SQLite settings for the `hush` executable, applied before any connection opens.
/// `sqlite3_config` is variadic, so Swift cannot call it; this is the whole reason for this target.
///
/// Turns off SQLite's memory statistics (SQLITE_CONFIG_MEMSTATUS): Debian builds SQLite with them
/// on, which takes a global mutex around every allocation SQLite makes (about 15 lock and unlock
/// pairs per notification written). Hush never reads them (`sqlite3_memory_used`, soft heap
/// limits). Returns SQLite's result code: SQLITE_MISUSE (21) once SQLite is initialised, when the
/// setting is left as it was.
int hush_sqlite_disable_memory_statistics(void);

#endif
