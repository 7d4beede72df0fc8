import Foundation
import Logging
import Synchronization
import Tracing

/// A small tracer for the example: it gives each span W3C trace context ids, propagates them as
/// a `traceparent` field, and logs every span when it ends. A real service would bootstrap an
/// exporting tracer (swift-otel's, say) instead; the library sees no difference.
final class LoggingTracer: Tracer, Sendable {
    private let logger: Logger

    init(logger: Logger) { self.logger = logger }

    func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext,
                                           ofKind kind: SpanKind, at instant: @autoclosure () -> Instant,
                                           function: String, file fileID: String, line: UInt) -> LoggingSpan {
        LoggingSpan(operationName: operationName, kind: kind, parent: context(), logger: logger)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
        where Inject.Carrier == Carrier {
        guard let ids = context.traceIDs else { return }
        injector.inject(ids.traceparent, forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
        where Extract.Carrier == Carrier {
        guard let value = extractor.extract(key: "traceparent", from: carrier) else { return }
        let parts = value.split(separator: "-")
        guard parts.count == 4, parts[1].count == 32, parts[2].count == 16 else { return }
        context.traceIDs = TraceIDs(traceID: String(parts[1]), spanID: String(parts[2]))
    }
}

/// A span's W3C ids: the trace's (32 hex digits) and its own (16).
struct TraceIDs: Sendable {
    var traceID: String
    var spanID: String

    /// `version-traceid-parentid-flags`, sampled.
    var traceparent: String { "00-\(traceID)-\(spanID)-01" }

    static func randomHex(_ words: Int) -> String {
        (0..<words).map { _ in
            let hex = String(UInt64.random(in: 1...UInt64.max), radix: 16)
            return String(repeating: "0", count: 16 - hex.count) + hex
        }.joined()
    }
}

private enum TraceIDsKey: ServiceContextKey {
    typealias Value = TraceIDs
}

extension ServiceContext {
    /// The ids of the span this context belongs to.
    var traceIDs: TraceIDs? {
        get { self[TraceIDsKey.self] }
        set { self[TraceIDsKey.self] = newValue }
    }
}

/// One span: it keeps what it is told and logs it all once, at its end.
final class LoggingSpan: Span, Sendable {
    let context: ServiceContext
    private let kind: SpanKind
    private let parentSpanID: String?
    private let logger: Logger
    private struct State {
        var operationName: String
        var attributes = SpanAttributes()
        var status: SpanStatus?
        var ended = false
    }
    private let state: Mutex<State>

    init(operationName: String, kind: SpanKind, parent: ServiceContext, logger: Logger) {
        let parentIDs = parent.traceIDs
        var context = parent
        // A child joins its parent's trace; a span without a parent starts a trace.
        context.traceIDs = TraceIDs(traceID: parentIDs?.traceID ?? TraceIDs.randomHex(2), spanID: TraceIDs.randomHex(1))
        self.context = context
        self.kind = kind
        self.parentSpanID = parentIDs?.spanID
        self.logger = logger
        state = Mutex(State(operationName: operationName))
    }

    var operationName: String {
        get { state.withLock { $0.operationName } }
        set { state.withLock { $0.operationName = newValue } }
    }
    var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { $0.attributes = newValue } }
    }
    var isRecording: Bool { state.withLock { !$0.ended } }

    func setStatus(_ status: SpanStatus) { state.withLock { $0.status = status } }
    func addEvent(_ event: SpanEvent) {}
    func addLink(_ link: SpanLink) {}
    func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}

    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {
        let finished: State? = state.withLock { state in
            guard !state.ended else { return nil }
            state.ended = true
            return state
        }
        guard let finished, let ids = context.traceIDs else { return }
        var metadata: Logger.Metadata = [
            "span": "\(finished.operationName)", "kind": "\(kind)",
            "trace-id": "\(ids.traceID)", "span-id": "\(ids.spanID)", "parent-id": "\(parentSpanID ?? "none")",
            "status": "\(finished.status.map { "\($0.code)" } ?? "unset")",
        ]
        // The attributes as they are: the library's are OpenTelemetry's names (url.full, ...).
        finished.attributes.forEach { key, value in metadata[key] = "\(Self.text(of: value))" }
        logger.info("span finished", metadata: metadata)
    }

    private static func text(of attribute: SpanAttribute) -> String {
        switch attribute {
        case .string(let value): value
        case .int64(let value): "\(value)"
        case .int32(let value): "\(value)"
        case .bool(let value): "\(value)"
        case .double(let value): "\(value)"
        default: "\(attribute)"
        }
    }
}
