import Synchronization
import Tracing

/// `--trace` (uvbench) and the traced gate (uvgate): a tracer that does what any tracer must
/// and little more, so that what is measured is the library's side of a span per task. Each
/// span gets a number, kept in its context (as a real tracer keeps its span context there), and
/// keeps its attributes; `inject` writes a W3C `traceparent` carrying that number.
///
/// Its own cost per span (one span object, one context entry, one traceparent string) is
/// measured apart by `uvgate --tracer-only`, so a figure can be read with or without it.
public final class BenchTracer: Tracer, Sendable {
    private let next = Atomic<UInt64>(0)

    /// A tracer whose spans are numbered from 1.
    public init() {}

    public func startSpan<Instant: TracerInstant>(_ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
                                                  at instant: @autoclosure () -> Instant, function: String, file fileID: String,
                                                  line: UInt) -> BenchSpan {
        var context = context()
        context.benchSpanID = next.add(1, ordering: .relaxed).newValue
        return BenchSpan(operationName: operationName, context: context)
    }

    public func forceFlush() {}

    public func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
        where Inject.Carrier == Carrier {
        guard let id = context.benchSpanID else { return }
        injector.inject(Self.traceparent(spanID: id), forKey: "traceparent", into: &carrier)
    }

    public func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
        where Extract.Carrier == Carrier {}

    /// `00-<a fixed trace id>-<id as 16 hex digits>-01`, written into one string: the fixed
    /// parts copied, the digits written in place (an interpolation with `String(id, radix: 16)`
    /// costs several times more).
    static func traceparent(spanID id: UInt64) -> String {
        String(unsafeUninitializedCapacity: template.count) { buffer in
            _ = buffer.initialize(from: template)
            for position in 0..<16 {
                let digit = UInt8(truncatingIfNeeded: id >> UInt64(60 - 4 * position)) & 0xF
                buffer[digitsStart + position] = digit < 10 ? 0x30 + digit : 0x57 + digit
            }
            return template.count
        }
    }

    private static let template = Array("00-0000000000000000000000000000abcd-0000000000000000-01".utf8)
    private static let digitsStart = 36
}

/// A span that keeps its name and attributes and nothing else.
public final class BenchSpan: Span, Sendable {
    public let context: ServiceContext
    private let state: Mutex<(name: String, attributes: SpanAttributes)>

    init(operationName: String, context: ServiceContext) {
        self.context = context
        state = Mutex((operationName, [:]))
    }

    public var operationName: String {
        get { state.withLock { $0.name } }
        set { state.withLock { $0.name = newValue } }
    }
    public var attributes: SpanAttributes {
        get { state.withLock { $0.attributes } }
        set { state.withLock { $0.attributes = newValue } }
    }
    public var isRecording: Bool { true }

    public func setStatus(_ status: SpanStatus) {}
    public func addEvent(_ event: SpanEvent) {}
    public func recordError<Instant: TracerInstant>(_ error: any Error, attributes: SpanAttributes, at instant: @autoclosure () -> Instant) {}
    public func addLink(_ link: SpanLink) {}
    public func end<Instant: TracerInstant>(at instant: @autoclosure () -> Instant) {}
}

extension ServiceContext {
    /// The number of the bench tracer's span this context belongs to.
    public var benchSpanID: UInt64? {
        get { self[BenchSpanIDKey.self] }
        set { self[BenchSpanIDKey.self] = newValue }
    }
}

private enum BenchSpanIDKey: ServiceContextKey { typealias Value = UInt64 }
