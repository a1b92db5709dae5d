import ArgumentParser
import Foundation
import Hush
import HushCore
import HushJSON
import HushState

struct DonateCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "donate",
        abstract:
            "Remember donated interactions (JSON Lines with date, direction, kind, app, people, group), for contact suggestions.",
        discussion: """
            Each line: {"date", "direction": "outgoing"|"incoming", "kind": "message"|"call", "app", "people": [Person], "group"}. \
            A bad line is reported in place as {"line": N, "error": "..."} and the rest are kept. \
            Exit 0 when every line was kept, 1 when some were invalid.
            """)

    @Argument(help: "Interactions: a file, or - / nothing for stdin.", completion: .file()) var input: String?
    @Option(help: "Whose interactions, for lines without \"user\".") var user = "default"
    @OptionGroup var state: StateOptions

    func run() throws {
        let store = try state.store()
        let bytes = try InputFile.read(input)
        var batch: [Interaction] = []
        var kept = 0
        var invalid = 0
        func flush() throws {
            guard !batch.isEmpty else { return }
            try store.addInteractions(batch)
            kept += batch.count
            batch.removeAll(keepingCapacity: true)
        }
        try LineStream(bytes: bytes).forEachLine { line, number in
            do {
                let json = try JSONParser.parse(line)
                var interaction = try Interaction.decode(json)
                if json["user"] == nil { interaction.user = user }
                batch.append(interaction)
                if batch.count >= 1000 { try flush() }
            } catch let error as JSONError {
                invalid += 1
                Output.write(ErrorLine.make(number, error.message))
            } catch let error as InputError {
                invalid += 1
                Output.write(ErrorLine.make(number, error.description))
            }
        }
        try flush()
        Output.flush()
        Output.error(
            "hush: donated \(kept) interaction\(kept == 1 ? "" : "s")"
                + (invalid > 0 ? ", \(invalid) invalid line\(invalid == 1 ? "" : "s")" : ""))
        if invalid > 0 { throw ExitCode(1) }
    }
}
