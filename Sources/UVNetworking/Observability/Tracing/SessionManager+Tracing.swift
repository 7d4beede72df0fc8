import Synchronization
import Tracing

/// A session's tracer, boxed: each task made tests one reference for nil, where an optional
/// `any Tracer` would be copied (an existential's value witness) on every read.
final class SessionTracing: Sendable {
    let tracer: any Tracer
    /// The span attributes of the last request a task was made from (SpanAttributeTemplate).
    let lastTemplate = Mutex<SpanAttributeTemplate?>(nil)

    /// The tracer of a session made with `configuration`: its own, else the process's
    /// (`InstrumentationSystem.tracer`, which also honours a `withTracer` scope around the
    /// session's creation). nil when that is a `NoOpTracer`: it would make spans nobody sees, and
    /// deciding here, once, spares every task the lock and task-local read of asking again and
    /// the span it would make.
    init?(_ configuration: SessionConfiguration) {
        let tracer = configuration.tracer ?? InstrumentationSystem.tracer
        if tracer is NoOpTracer { return nil }
        self.tracer = tracer
    }
}

extension SessionManager {
    /// The tracer the session's tasks report to; nil when it has none (a `NoOpTracer`).
    var tracer: (any Tracer)? { tracing?.tracer }
}
