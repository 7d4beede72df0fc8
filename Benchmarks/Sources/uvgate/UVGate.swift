import BenchObservers
import CAllocCounter
import Foundation
import Tracing
import UVFetchCore
import UVNetworking

/// The per-request gates' client (Benchmarks/gates.sh runs it): GETs of a URL served by an nginx
/// in another process, so that everything counted is this client's. Two figures:
/// - `--count-allocations`: malloc-family calls per request, counted by the interposer linked
///   into this executable (CAllocCounter) over `--requests` requests after `--warmup` ones,
///   every thread of this process;
/// - instructions: gates.sh runs this under callgrind with two request counts and divides the
///   difference, which removes start-up and warm-up.
///
/// Modes: `task` (completion queue), `onloop` (`deliversOnEventLoop`), `observed` (a logger at
/// .info and a counting metrics factory), `traced` (BenchTracer), and `tracer-only`, which runs
/// the tracer's own part of a traced request with no request, to read its cost apart; `record`
/// writes uvfetch's `--jsonl` records with no request (RecordGate), `--requests` of them.
@main
enum UVGate {
    struct Options {
        var url: URL?
        var mode = "task"
        var requests = 10_000
        var warmup = 1_000
        var concurrency = 64
        var countAllocations = false
        var body = "hello world\n"
    }

    static func main() {
        let options = parse(Array(CommandLine.arguments.dropFirst()))
        if options.mode == "tracer-only" {
            runTracerOnly(options)
            return
        }
        if options.mode == "record" {
            runRecords(options)
            return
        }
        guard let url = options.url else { fail("--url is required") }
        var configuration = SessionConfiguration()
        configuration.maximumConnectionsPerHost = options.concurrency
        switch options.mode {
        case "task", "onloop": break
        case "observed": ObservedRun.configure(&configuration)
        case "traced": configuration.tracer = BenchTracer()
        default: fail("unknown mode \(options.mode)")
        }
        let load = GateLoad(url: url, configuration: configuration, onLoop: options.mode == "onloop", expectedBody: options.body)
        if options.warmup > 0 { check(load.run(requests: options.warmup, concurrency: options.concurrency)) }
        if options.countAllocations { selfTest() }
        uvbench_alloc_counter_reset()
        uvbench_alloc_counter_enable(options.countAllocations ? 1 : 0)
        let result = load.run(requests: options.requests, concurrency: options.concurrency)
        uvbench_alloc_counter_enable(0)
        check(result)
        let counts = uvbench_alloc_counter_read()
        load.shutdown()
        var line = "uvgate: mode \(options.mode), \(options.requests) requests, \(options.concurrency) in flight"
        if options.countAllocations {
            let perRequest = Double(counts.allocations) / Double(options.requests)
            line += ", allocations \(counts.allocations) (\(String(format: "%.4f", perRequest)) per request)"
                + ", reallocations \(counts.reallocations)"
        }
        print(line)
    }

    /// What a traced task asks of the tracer, without the task: a span started, its context
    /// injected into a carrier, its attributes set at the start and at the end, the span ended.
    static func runTracerOnly(_ options: Options) {
        let tracer = BenchTracer()
        let attributes: SpanAttributes = ["http.request.method": "GET", "server.port": 80]
        var sink = 0
        for _ in 0..<options.requests {
            let span = tracer.startSpan("GET", context: .topLevel, ofKind: .client)
            var carrier: [(String, String)] = []
            tracer.inject(span.context, into: &carrier, using: PairInjector())
            sink &+= carrier.count
            // The span's attribute storage is the tracer's: read and written at start and at end.
            span.updateAttributes { $0 = attributes }
            span.updateAttributes { $0 = attributes }
            span.end()
        }
        print("uvgate: mode tracer-only, \(options.requests) spans (\(sink) fields injected)")
    }

    /// `--requests` records written as a run writes them (RecordGate) to /dev/null, after
    /// `--warmup` of them; with `--count-allocations`, the allocations of the counted ones.
    static func runRecords(_ options: Options) {
        let writer: LineOutput
        do { writer = try LineOutput.open(path: "/dev/null") } catch { fail("cannot open /dev/null: \(error)") }
        _ = RecordGate.run(count: options.warmup, to: writer)
        if options.countAllocations { selfTest() }
        uvbench_alloc_counter_reset()
        uvbench_alloc_counter_enable(options.countAllocations ? 1 : 0)
        let written = RecordGate.run(count: options.requests, to: writer)
        uvbench_alloc_counter_enable(0)
        let counts = uvbench_alloc_counter_read()
        var line = "uvgate: mode record, \(written) records"
        if options.countAllocations {
            let perRecord = Double(counts.allocations) / Double(options.requests)
            line += ", allocations \(counts.allocations) (\(String(format: "%.4f", perRecord)) per record)"
        }
        print(line)
    }

    struct PairInjector: Injector {
        func inject(_ value: String, forKey key: String, into carrier: inout [(String, String)]) { carrier.append((key, value)) }
    }

    /// The interposer must see the Swift runtime's allocations, or the count means nothing.
    static func selfTest() {
        uvbench_alloc_counter_reset()
        uvbench_alloc_counter_enable(1)
        let probe = [Int](repeating: 1, count: 1000)
        uvbench_alloc_counter_enable(0)
        withExtendedLifetime(probe) {}
        if uvbench_alloc_counter_read().allocations == 0 { fail("malloc is not interposed in this binary") }
    }

    static func check(_ result: (failures: Int, first: String?)) {
        if result.failures > 0 { fail("\(result.failures) requests failed; first: \(result.first ?? "?")") }
    }

    static func parse(_ arguments: [String]) -> Options {
        var options = Options()
        var rest = arguments[...]
        func value(_ name: String) -> String {
            guard let next = rest.popFirst() else { fail("\(name) needs a value") }
            return next
        }
        func number(_ name: String) -> Int {
            guard let parsed = Int(value(name)), parsed >= 0 else { fail("\(name) needs a count") }
            return parsed
        }
        while let argument = rest.popFirst() {
            switch argument {
            case "--url": options.url = URL(string: value(argument))
            case "--mode": options.mode = value(argument)
            case "--requests": options.requests = max(1, number(argument))
            case "--warmup": options.warmup = number(argument)
            case "--concurrency": options.concurrency = max(1, number(argument))
            case "--count-allocations": options.countAllocations = true
            default: fail("unknown argument \(argument)")
            }
        }
        return options
    }

    static func fail(_ message: String) -> Never {
        FileHandle.standardError.write(Data("uvgate: \(message)\n".utf8))
        exit(1)
    }
}
