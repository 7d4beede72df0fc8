import Synchronization
import Tracing

/// `--trace`: a session with a tracer, to weigh what a span per task costs the library itself.
/// The tracer does next to nothing (a span that keeps its attributes and ends; a fixed
/// `traceparent` with the span's number), so what is measured is the library's side.
enum TracedRun {
    final class Tracer: Tracing.Tracer, Sendable {
        private let next = Atomic<UInt64>(0)

        func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                               at instant: @autoclosure () -> Instant, function: String, file fileID: String,
                                               line: UInt) -> Span {
            var context = context()
            context.benchSpanID = next.add(1, ordering: .relaxed).newValue
            return Span(operationName: operationName, context: context)
        }

        func forceFlush() {}

        func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
            where Inject.Carrier == Carrier {
            guard let id = context.benchSpanID else { return }
            injector.inject("00-0000000000000000000000000000abcd-\(String(id, radix: 16))-01", forKey: "traceparent", into: &carrier)
        }

        func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
            where Extract.Carrier == Carrier {}
    }

    final class Span: Tracing.Span, @unchecked Sendable {
        let context: ServiceContext
        private let state = Mutex<(name: String, attributes: SpanAttributes)>(("", [:]))
        var operationName: String {
            get { state.withLock { $0.name } }
            set { state.withLock { $0.name = newValue } }
        }
        var attributes: SpanAttributes {
            get { state.withLock { $0.attributes } }
            set { state.withLock { $0.attributes = newValue } }
        }
        var isRecording: Bool { true }

        init(operationName: String, context: ServiceContext) {
            self.context = context
            state.withLock { $0.name = operationName }
        }

        func setStatus(_ status: SpanStatus) {}
        func addEvent(_ event: SpanEvent) {}
        func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}
        func addLink(_ link: SpanLink) {}
        func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {}
    }

    fileprivate enum SpanIDKey: ServiceContextKey { typealias Value = UInt64 }
}

extension ServiceContext {
    fileprivate var benchSpanID: UInt64? {
        get { self[TracedRun.SpanIDKey.self] }
        set { self[TracedRun.SpanIDKey.self] = newValue }
    }
}
