import ArgumentParser
import Hush
import HushCore
import HushState

/// What the commands that read one device's state start from (focus off, status, suggest): the
/// policy, the store, the time and zone, whose device.
struct DeviceState {
    let engine: Engine
    let store: any StateStore
    let clock: ZoneClock
    let now: Double
    let user: String
    /// One interpreter for the command: delivering what is due and reporting share it.
    let session: Session

    init(policy: PolicyOptions, state: StateOptions, device: DeviceOptions) throws {
        engine = try policy.engine()
        store = try state.store()
        clock = engine.pipeline.defaultClock
        now = device.currentTime
        user = device.user
        session = try engine.makeSession(storing: store)
    }

    /// Delivers the summaries that fell due by now: an 08:00 summary is never reported as waiting
    /// at 09:00.
    func deliverDueSummaries() throws {
        // A state error here is reported as a read's is (exit 2), not as a failed command (1).
        _ = try StateOptions.reading { try session.deliverDueSummaries(user: user, at: now) }
    }
}
