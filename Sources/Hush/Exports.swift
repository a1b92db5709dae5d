// The types the public API takes and returns (Envelope, EvaluationContext, Decision,
// InterruptionLevel, TraceStep, HushError; InMemoryStateStore, SQLiteStateStore, PostgresStateStore) are defined in the
// layers below `Hush`. Those layers declare nothing else `public` (everything they share among
// themselves is `package`), so re-exporting them makes exactly these types, with their members,
// reachable with `import Hush` alone. The Lua layers are not re-exported and expose nothing.
@_exported public import HushCore
@_exported public import HushPostgres
@_exported public import HushState
