import Foundation
import HTTPTypes
import Synchronization
import Tracing

/// The ids a recorded span puts in its ServiceContext, as a W3C tracer would.
struct RecordedSpanIDs: Sendable, Equatable {
    /// 32 lowercase hex digits.
    var traceID: String
    /// 16 lowercase hex digits.
    var spanID: String

    /// The W3C `traceparent` value naming this span as the parent (sampled).
    var traceparent: String { "00-\(traceID)-\(spanID)-01" }

    /// Parses a W3C `traceparent` value (version 00 only).
    init?(traceparent: String) {
        let parts = traceparent.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 4, parts[0] == "00", parts[1].count == 32, parts[2].count == 16, parts[3].count == 2,
              (parts[1] + parts[2]).allSatisfy(\.isHexDigit) else { return nil }
        traceID = String(parts[1])
        spanID = String(parts[2])
    }

    init(traceID: String, spanID: String) {
        self.traceID = traceID
        self.spanID = spanID
    }

    static func random(hexDigits: Int) -> String {
        (0..<hexDigits).map { _ in String(Int.random(in: 0..<16), radix: 16) }.joined()
    }
}

private enum RecordedSpanIDsKey: ServiceContextKey {
    typealias Value = RecordedSpanIDs
}

extension ServiceContext {
    /// The recorded span this context belongs to, if any.
    var recordedSpanIDs: RecordedSpanIDs? {
        get { self[RecordedSpanIDsKey.self] }
        set { self[RecordedSpanIDsKey.self] = newValue }
    }
}

/// A span that keeps everything said to it, for the tests to read.
final class RecordingSpan: Span, @unchecked Sendable {
    // @unchecked: mutable state is in `state`.
    struct State {
        var operationName: String
        var attributes = SpanAttributes()
        var events: [SpanEvent] = []
        var status: SpanStatus?
        var errors: [String] = []
        var endCount = 0
    }

    let kind: SpanKind
    let context: ServiceContext
    let ids: RecordedSpanIDs
    /// The parent's ids, when the span was started in a context that had a span.
    let parent: RecordedSpanIDs?
    let state: Mutex<State>

    init(operationName: String, kind: SpanKind, parentContext: ServiceContext) {
        self.kind = kind
        parent = parentContext.recordedSpanIDs
        ids = RecordedSpanIDs(traceID: parent?.traceID ?? RecordedSpanIDs.random(hexDigits: 32),
                              spanID: RecordedSpanIDs.random(hexDigits: 16))
        var context = parentContext
        context.recordedSpanIDs = ids
        self.context = context
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
    var isRecording: Bool { state.withLock { $0.endCount == 0 } }
    var events: [SpanEvent] { state.withLock { $0.events } }
    var status: SpanStatus? { state.withLock { $0.status } }
    var endCount: Int { state.withLock { $0.endCount } }
    var errors: [String] { state.withLock { $0.errors } }

    func setStatus(_ status: SpanStatus) { state.withLock { $0.status = status } }
    func addEvent(_ event: SpanEvent) { state.withLock { $0.events.append(event) } }
    func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {
        state.withLock { $0.errors.append(String(describing: error)) }
    }
    func addLink(_ link: SpanLink) {}
    func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) { state.withLock { $0.endCount += 1 } }

    /// The attribute's value as a String or an Int (the two kinds the library sets).
    func string(_ key: String) -> String? {
        if case .string(let value)? = attributes.get(key) { return value }
        return nil
    }
    func int(_ key: String) -> Int? {
        switch attributes.get(key) {
        case .int64(let value)?: return Int(value)
        case .int32(let value)?: return Int(value)
        default: return nil
        }
    }
}

/// A tracer that records its spans and propagates W3C `traceparent` (and a `tracestate`), for
/// one session at a time (`SessionConfiguration.tracer`): no process-wide bootstrap.
final class RecordingTracer: Tracer, Sendable {
    private let recorded = Mutex<[RecordingSpan]>([])
    /// false: only `traceparent` is injected, as swift-otel's W3C propagator does when the
    /// trace state is empty.
    private let injectsTraceState: Bool

    init(injectsTraceState: Bool = true) {
        self.injectsTraceState = injectsTraceState
    }

    /// Every span started, in order.
    var spans: [RecordingSpan] { recorded.withLock { $0 } }

    /// The spans of kind `.client` (the ones sessions make).
    var clientSpans: [RecordingSpan] { spans.filter { $0.kind == .client } }

    func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                           at instant: @autoclosure () -> Instant, function: String, file fileID: String,
                                           line: UInt) -> RecordingSpan {
        let span = RecordingSpan(operationName: operationName, kind: kind, parentContext: context())
        recorded.withLock { $0.append(span) }
        return span
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
        where Inject.Carrier == Carrier {
        guard let ids = context.recordedSpanIDs else { return }
        injector.inject(ids.traceparent, forKey: "traceparent", into: &carrier)
        if injectsTraceState { injector.inject("rec=\(ids.spanID)", forKey: "tracestate", into: &carrier) }
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
        where Extract.Carrier == Carrier {
        guard let value = extractor.extract(key: "traceparent", from: carrier), let ids = RecordedSpanIDs(traceparent: value) else { return }
        context.recordedSpanIDs = ids
    }
}
