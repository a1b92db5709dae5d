import Foundation

/// How many cores this process may run on: the CPUs it is allowed (`taskset`, a container's
/// cpuset), fewer when a CPU quota allows less (cgroup v2 `cpu.max`, v1 `cpu.cfs_quota_us`), and
/// at least 1. What `hush eval --jobs` defaults to. Foundation's `activeProcessorCount` counts the
/// machine's CPUs whatever the process may use: run on one core of two, `hush eval --ephemeral`
/// started two deciding threads that took turns on it, 20% slower than one thread.
package enum AvailableCores {
    package static func count() -> Int {
        let online = ProcessInfo.processInfo.activeProcessorCount
        // The mask may name CPUs that are not online: never more than those.
        var cores = min(allowedCPUs() ?? online, online)
        if let quota = quotaCores() { cores = min(cores, quota) }
        return max(1, cores)
    }

    /// The CPUs of the process's affinity mask, from `/proc/self/status`; nil where there is none.
    static func allowedCPUs() -> Int? {
        #if os(Linux)
            guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return nil }
            for line in status.split(separator: "\n") where line.hasPrefix("Cpus_allowed_list:") {
                return cpuListCount(line.dropFirst("Cpus_allowed_list:".count))
            }
        #endif
        return nil
    }

    /// How many CPUs a Linux CPU list names ("0-3,6,8-9" is 7); nil when it is not one.
    package static func cpuListCount(_ list: Substring) -> Int? {
        var count = 0
        for range in list.split(separator: ",") {
            let bounds = range.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "-")
            guard let low = bounds.first.flatMap({ Int($0) }) else { return nil }
            switch bounds.count {
            case 1: count += 1
            case 2:
                guard let high = Int(bounds[1]), high >= low else { return nil }
                count += high - low + 1
            default: return nil
            }
        }
        return count > 0 ? count : nil
    }

    /// The cores a CPU quota allows, rounded up; nil when there is no quota (or no cgroup file).
    static func quotaCores() -> Int? {
        #if os(Linux)
            if let max = try? String(contentsOfFile: "/sys/fs/cgroup/cpu.max", encoding: .utf8) {
                return quotaCores(cpuMax: max)
            }
            if let quota = try? String(contentsOfFile: "/sys/fs/cgroup/cpu/cpu.cfs_quota_us", encoding: .utf8),
                let period = try? String(contentsOfFile: "/sys/fs/cgroup/cpu/cpu.cfs_period_us", encoding: .utf8)
            {
                return quotaCores(cpuMax: quota.trimmingCharacters(in: .whitespacesAndNewlines) + " " + period)
            }
        #endif
        return nil
    }

    /// The cores allowed by a quota written as cgroup v2's `cpu.max` ("150000 100000" is 2; "max
    /// 100000", or v1's -1 quota, is none).
    package static func quotaCores(cpuMax: String) -> Int? {
        let fields = cpuMax.split(whereSeparator: \.isWhitespace)
        guard fields.count == 2, let quota = Double(fields[0]), let period = Double(fields[1]), quota > 0, period > 0
        else { return nil }
        return max(1, Int((quota / period).rounded(.up)))
    }
}
