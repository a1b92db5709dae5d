import Foundation

/// The figures of a run, in the order they were measured: a table for people, key=value lines for
/// scripts/bench.sh.
struct Figures {
    private(set) var values: [(String, Double)] = []

    subscript(key: String) -> Double? {
        get { values.first { $0.0 == key }?.1 }
        set {
            values.removeAll { $0.0 == key }
            if let newValue { values.append((key, newValue)) }
        }
    }

    var keyValues: String { values.map { "\($0.0)=\(String(format: "%.6g", $0.1))" }.joined(separator: "\n") + "\n" }

    func table(threads: Int, stream: String) -> String {
        func f(_ key: String, _ format: String = "%.0f") -> String {
            self[key].map { String(format: format, $0) } ?? "-"
        }
        var rows: [(String, String, String)] = [
            ("policy load (Engine: read, validate, prepare)", f("load_engine_ms", "%.2f ms"), "< 5 ms"),
            ("session (its own interpreter)", f("load_session_ms", "%.2f ms"), ""),
            ("one core: decisions/s (CPU time)", f("one_core_cpu_per_s"), ">= 500,000"),
            ("one core: decisions/s (wall clock)", f("one_core_wall_per_s"), ""),
            (
                "one core: latency p50 / p99 / p99.9",
                "\(f("latency_p50_us", "%.2f")) / \(f("latency_p99_us", "%.2f")) / \(f("latency_p999_us", "%.1f")) µs",
                ""
            ),
            ("a line read (parsed, decoded: Session.envelope)", f("decode_ns_per_line_cpu", "%.0f ns (CPU)"), ""),
            ("a decision written (Decision.jsonString)", f("decision_json_ns_cpu", "%.0f ns (CPU)"), ""),
        ]
        if threads > 1 {
            rows += [
                ("\(threads) cores: decisions/s (wall clock)", f("multi_core_wall_per_s"), ""),
                ("\(threads) cores: speed-up (wall clock)", f("multi_core_speedup_wall", "%.2fx"), ">= 1.8x"),
                ("\(threads) cores: speed-up (CPU time per thread)", f("multi_core_speedup_cpu", "%.2fx"), ""),
            ]
        }
        rows += [
            (
                "memory: RSS after one week / after \(f("memory_evaluations"))",
                "\(f("memory_rss_after_first_week_mb", "%.1f")) / \(f("memory_rss_end_mb", "%.1f")) MB", "flat"
            ),
            (
                "peak RSS (the decoded stream included: \(f("stream_decoded_mb", "%.0f")) MB)",
                f("peak_rss_mb", "%.1f MB"), ""
            ),
        ]
        let width = rows.map(\.0.count).max()! + 2
        var out =
            "hush-benchmark: \(f("stream_notifications")) notifications of \(f("stream_users")) users (\(stream))\n"
        for (name, value, target) in rows {
            out +=
                name.padding(toLength: width, withPad: " ", startingAt: 0)
                + value.padding(toLength: 28, withPad: " ", startingAt: 0) + target + "\n"
        }
        return out
    }
}
