#include "SQLiteSettings.h"

// Declared here rather than taken from <sqlite3.h>, so that building needs no SQLite header: the
// function and the option's number are part of SQLite's stable C interface.
int sqlite3_config(int option, ...);
enum { HUSH_SQLITE_CONFIG_MEMSTATUS = 9 };

int hush_sqlite_disable_memory_statistics(void) {
    return sqlite3_config(HUSH_SQLITE_CONFIG_MEMSTATUS, 0);
}
