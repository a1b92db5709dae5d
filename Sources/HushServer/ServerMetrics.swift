import CoreMetrics
import Hush
import Prometheus
import Synchronization

/// `/metrics`: swift-metrics objects bound to one Prometheus registry of this server (not the
/// process-wide metrics system, so tests can run several servers in one process).
final class ServerMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let decisions: [String: CoreMetrics.Counter]
    private let latency: CoreMetrics.Timer
    private let ruleErrors: CoreMetrics.Counter
    private let budgetOverruns: CoreMetrics.Counter
    private let summaryEvents: CoreMetrics.Counter
    private let focusEvents: CoreMetrics.Counter
    private let webhookDeliveries: CoreMetrics.Counter
    private let webhookRetries: CoreMetrics.Counter
    private let streams: CoreMetrics.Gauge

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        // Decisions take microseconds: buckets from 10 µs to 1 s.
        factory.durationHistogramBuckets["hush_decision_seconds"] = [
            .microseconds(10), .microseconds(25), .microseconds(50), .microseconds(100), .microseconds(250),
            .microseconds(500), .milliseconds(1), .milliseconds(2.5), .milliseconds(5), .milliseconds(10),
            .milliseconds(50), .milliseconds(100), .seconds(1),
        ]
        self.factory = factory
        var decisions: [String: CoreMetrics.Counter] = [:]
        for delivery in ["alert", "quiet", "summary", "silenced", "dropped", "background", "withdrawn"] {
            decisions[delivery] = CoreMetrics.Counter(
                label: "hush_decisions_total", dimensions: [("delivery", delivery)], factory: factory)
        }
        self.decisions = decisions
        latency = CoreMetrics.Timer(label: "hush_decision_seconds", factory: factory)
        ruleErrors = CoreMetrics.Counter(label: "hush_rule_errors_total", factory: factory)
        budgetOverruns = CoreMetrics.Counter(label: "hush_budget_overruns_total", factory: factory)
        summaryEvents = CoreMetrics.Counter(
            label: "hush_events_total", dimensions: [("event", "summary")], factory: factory)
        focusEvents = CoreMetrics.Counter(
            label: "hush_events_total", dimensions: [("event", "focus")], factory: factory)
        webhookDeliveries = CoreMetrics.Counter(label: "hush_webhook_deliveries_total", factory: factory)
        webhookRetries = CoreMetrics.Counter(label: "hush_webhook_retries_total", factory: factory)
        streams = CoreMetrics.Gauge(label: "hush_event_streams", factory: factory)
    }

    private let streamCount = Mutex(0)

    func record(_ decided: [ServiceCore.Decided]) {
        for d in decided {
            decisions[d.delivery]?.increment()
            latency.recordNanoseconds(Int64(d.seconds * 1e9))
            if d.ruleErrors > 0 { ruleErrors.increment(by: d.ruleErrors) }
            if d.budgetOverruns > 0 { budgetOverruns.increment(by: d.budgetOverruns) }
        }
    }

    func recordEvent(kind: String) {
        if kind == "summary" { summaryEvents.increment() } else { focusEvents.increment() }
    }

    func webhookDelivered() { webhookDeliveries.increment() }
    func webhookRetried() { webhookRetries.increment() }

    /// An event stream opened (+1) or closed (-1).
    func streamsChanged(by delta: Int) {
        let now = streamCount.withLock { count in
            count += delta
            return count
        }
        streams.record(now)
    }

    /// The Prometheus text exposition.
    func exposition() -> [UInt8] { registry.emitToBuffer() }
}
