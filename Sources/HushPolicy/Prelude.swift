/// The Lua side of the policy vocabulary. It runs first in every interpreter and defines the
/// declaration functions; each one records what it was given, with the `file:line` of the call,
/// into a list that Swift reads and validates after the policy files have run. Recording instead
/// of raising lets `hush check` report every problem at once.
enum Prelude {
    static let chunkName = "=hush"

    static let source = #"""
        local callsite, declarations, problems, loading = ...
        local type, tostring, select, rawget, error = type, tostring, select, rawget, error

        local function here()
          -- A user's copy of a policy already loaded (loading.copy) needs its rules, not places.
          if loading.copy then return nil, 0 end
          -- level 3: the policy code that called the declaration function
          return callsite(3)
        end

        local function record(kind, name, body, file, line)
          local entry = { kind = kind, name = name, body = body, file = file, line = line }
          if kind == "rule" or not loading.copy then declarations[#declarations + 1] = entry end
          return entry
        end

        local function problem(file, line, message)
          problems[#problems + 1] = { file = file, line = line, message = message }
        end

        -- A copy takes only the rules: the other declarations were read and checked at load, and
        -- recording them again cost a copy more than the policy's own code did.
        local function ignored() end

        -- Declaring is for the files while they run (at load, and for each user's copy): a rule
        -- declaring would add to the lists the next user's copy is read from.
        local function whileLoading(kind)
          if not loading.active then
            error(kind .. " declares the policy: call it at the top level of a policy file, not in a rule", 3)
          end
        end

        -- A declaration with a name and a settings table: app "x" { ... }
        local function named(kind, what)
          return function(name, extra)
            whileLoading(kind)
            if loading.copy then return ignored end
            local file, line = here()
            if type(name) == "table" and extra == nil then
              problem(file, line, kind .. " needs a name first: " .. kind .. " \"" .. what .. "\" { ... }")
              return function() end
            end
            if type(name) ~= "string" or name == "" then
              problem(file, line, kind .. " expects a " .. what .. " (a string), got " .. type(name))
              return function() end
            end
            local entry = record(kind, name, nil, file, line)
            return function(body)
              if type(body) ~= "table" then
                problem(file, line, kind .. " \"" .. name .. "\" expects a table of settings, got " .. type(body))
                return
              end
              entry.body = body
            end
          end
        end

        -- A declaration that takes a table directly: summary { ... }
        local function direct(kind)
          return function(body, ...)
            whileLoading(kind)
            if loading.copy then return end
            local file, line = here()
            if type(body) ~= "table" or select("#", ...) > 0 then
              problem(file, line, kind .. " expects a table of settings: " .. kind .. " { ... }, got " .. type(body))
              return
            end
            record(kind, nil, body, file, line)
          end
        end

        hush = {}

        app = named("app", "bundle id")
        category = named("category", "category identifier")
        focus = named("focus", "focus name")
        summary = direct("summary")
        contact = direct("contact")
        announce = direct("announce")

        function timezone(name, ...)
          whileLoading("timezone")
          if loading.copy then return end
          local file, line = here()
          if type(name) ~= "string" or select("#", ...) > 0 then
            problem(file, line, "timezone expects an IANA name such as \"Europe/Berlin\", got " .. type(name))
            return
          end
          record("timezone", name, nil, file, line)
        end

        function rule(name, fn, ...)
          whileLoading("rule")
          local file, line = here()
          if type(name) == "function" and fn == nil then
            problem(file, line, "rule needs a name first: rule(\"what it does\", function(n, ctx) ... end)")
            return
          end
          if type(name) ~= "string" or name == "" then
            problem(file, line, "rule expects a name (a string) first, got " .. type(name))
            return
          end
          if type(fn) ~= "function" then
            problem(file, line, "rule \"" .. name .. "\" is not a function (got " .. type(fn) .. "): rule(\"" .. name .. "\", function(n, ctx) ... end)")
            return
          end
          record("rule", name, fn, file, line)
        end

        """#
}
