/// "Did you mean …?" for misspelt keys and names.
package enum Spelling {
    /// The candidate closest to `word` by edit distance, when close enough to be a likely typo.
    package static func nearest(to word: String, in candidates: [String]) -> String? {
        let target = Array(word.lowercased())
        var best: (String, Int)?
        for candidate in candidates {
            let d = distance(target, Array(candidate.lowercased()))
            if d <= max(1, min(3, target.count / 3)), best == nil || d < best!.1 { best = (candidate, d) }
        }
        return best?.0
    }

    /// " (did you mean 'x'?)" or "".
    package static func hint(for word: String, in candidates: [String]) -> String {
        nearest(to: word, in: candidates).map { " (did you mean '\($0)'?)" } ?? ""
    }

    static func distance(_ a: [Character], _ b: [Character]) -> Int {
        if a.isEmpty { return b.count }
        if b.isEmpty { return a.count }
        // Optimal string alignment: a swap of two neighbours ("levle") is one edit.
        var older = [Int](repeating: 0, count: b.count + 1)
        var previous = Array(0...b.count)
        var current = [Int](repeating: 0, count: b.count + 1)
        for i in 1...a.count {
            current[0] = i
            for j in 1...b.count {
                let cost = a[i - 1] == b[j - 1] ? 0 : 1
                current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + cost)
                if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                    current[j] = min(current[j], older[j - 2] + 1)
                }
            }
            (older, previous, current) = (previous, current, older)
        }
        return previous[b.count]
    }
}
