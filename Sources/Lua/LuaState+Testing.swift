import CLua54
import LuaSandbox

#if DEBUG
    extension LuaState {
        /// FOR TESTS ONLY (debug builds): puts a copy of Lua's original, unbounded string library in
        /// the global `orig`, so tests can compare the sandbox's bounded functions against it. Never
        /// use it on an interpreter that runs policies.
        package func openOriginalStringLibraryForTesting() -> Bool {
            hush_testing_open_with_original_string(L) == LUA_OK
        }
    }
#endif
