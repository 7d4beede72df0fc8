import Logging
import Synchronization

/// Every line logged through the loggers it makes, message and metadata rendered as text, for
/// tests that look for what was (or must never be) logged.
final class LogRecording: Sendable {
    struct Line: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: [String: String]
        /// The message and every metadata key and value, as one text to search.
        var text: String { ([message] + metadata.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }).joined(separator: " ") }
    }

    private let lines = Mutex<[Line]>([])

    /// A logger that records here, taking every line from `level` up.
    func logger(level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: "uvnetworking.tests") { _ in RecordingLogHandler(recording: self) }
        logger.logLevel = level
        return logger
    }

    var recorded: [Line] { lines.withLock { $0 } }

    func append(_ line: Line) { lines.withLock { $0.append(line) } }

    /// The lines whose message is `message`.
    func lines(_ message: String) -> [Line] { recorded.filter { $0.message == message } }
}

/// A LogHandler that appends each line to a `LogRecording`.
struct RecordingLogHandler: LogHandler {
    let recording: LogRecording
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var all = metadata
        if let more = event.metadata { all.merge(more) { $1 } }
        recording.append(LogRecording.Line(level: event.level, message: event.message.description,
                                           metadata: all.mapValues { "\($0)" }))
    }
}
