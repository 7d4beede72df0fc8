import Dispatch
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

/// One connection to the queue's database for threads that may block (the commands' own, and
/// the worker's input thread and lease keeper; never the library's loop or the completion
/// queue): each statement runs to its end before the call returns, one at a time, and counts
/// as one round trip.
///
/// A connection lost mid-run is opened again and the statement retried a few times with
/// backoff; every statement the queue sends is safe to repeat (see `QueueStatements`).
public final class QueueDatabase: Sendable {
    /// Where the database is.
    public let settings: DatabaseSettings
    private let connection = Mutex<PostgresConnection?>(nil)
    /// One statement (or reconnection) at a time: the keeper and the input thread share it.
    private let gate = DispatchSemaphore(value: 1)
    private let trips = Atomic<Int>(0)
    private let logger = Logger(label: "uvfetch.queue") { _ in SwiftLogNoOpLogHandler() }
    /// Seconds to wait before each retry after a lost connection; then the error is given up.
    static let retryDelays: [Double] = [0.25, 0.5, 1, 2, 4]

    /// Statements sent so far (each is one round trip: PostgreSQL's extended protocol sends a
    /// statement and its parameters in one flight and answers in one), reconnections included.
    public var roundTrips: Int { trips.load(ordering: .relaxed) }

    /// A database not yet connected to.
    public init(settings: DatabaseSettings) {
        self.settings = settings
    }

    // A connection must be closed before it goes (PostgresNIO asserts it): whatever path
    // dropped the database without `close()`, an error's included.
    deinit {
        if let open = connection.withLock({ $0.take() }) { try? open.close().wait() }
    }

    /// Connects, once, without retrying: a wrong address or password fails at once, clearly.
    /// - Throws: `QueueError` saying where it could not connect and why.
    public func connect() throws(QueueError) {
        gate.wait()
        defer { gate.signal() }
        _ = try openConnection()
    }

    /// Closes the connection, if one is open.
    public func close() {
        gate.wait()
        defer { gate.signal() }
        guard let open = connection.withLock({ $0.take() }) else { return }
        _ = Self.blocking { try await open.close() }
    }

    /// Runs `body` (one statement) on the connection and returns what it returned, connecting
    /// first if needed. A lost connection is reopened and `body` run again, up to
    /// `retryDelays.count` times; `retries: false` fails at once instead.
    /// - Throws: `QueueError` with the server's message, or the connection's failure.
    func run<T: Sendable>(_ what: String, retries: Bool = true,
                          _ body: @escaping @Sendable (QueueSession) async throws -> T) throws(QueueError) -> T {
        gate.wait()
        defer { gate.signal() }
        var delays = retries ? Self.retryDelays[...] : []
        while true {
            let failure: QueueError
            do throws(QueueError) {
                let open = try openConnection()
                let session = QueueSession(connection: open, logger: logger, database: self)
                switch Self.blocking({ try await body(session) }) {
                case .success(let value): return value
                case .failure(let error):
                    let (text, lost) = QueueError.describe(error)
                    failure = QueueError("\(what) failed: \(text)", isConnectionLost: lost || open.isClosed)
                }
            } catch {
                failure = error
            }
            guard failure.isConnectionLost, let delay = delays.popFirst() else { throw failure }
            // Gone: the next try opens a new one.
            if let stale = connection.withLock({ $0.take() }) { _ = Self.blocking { try await stale.close() } }
            Thread.sleep(forTimeInterval: delay)
        }
    }

    /// One more statement sent.
    fileprivate func countRoundTrip() {
        trips.add(1, ordering: .relaxed)
    }

    private func openConnection() throws(QueueError) -> PostgresConnection {
        if let open = connection.withLock({ $0 }), !open.isClosed { return open }
        let configuration: PostgresConnection.Configuration
        do { configuration = try makeConfiguration() } catch {
            throw QueueError("cannot set up TLS for \(settings): \(error)")
        }
        trips.add(1, ordering: .relaxed)
        let logger = self.logger
        switch Self.blocking({ try await PostgresConnection.connect(configuration: configuration, id: 1, logger: logger) }) {
        case .success(let open):
            connection.withLock { $0 = open }
            return open
        case .failure(let error):
            let (text, _) = QueueError.describe(error)
            // Whatever the reason (refused, timed out, no such database), a later try may work.
            throw QueueError("cannot connect to \(settings): \(text)", isConnectionLost: true)
        }
    }

    private func makeConfiguration() throws -> PostgresConnection.Configuration {
        var configuration: PostgresConnection.Configuration
        if settings.isUnixSocket {
            configuration = .init(unixSocketPath: settings.unixSocketPath, username: settings.user,
                                  password: settings.password, database: settings.database)
        } else {
            configuration = .init(host: settings.host, port: settings.port, username: settings.user,
                                  password: settings.password, database: settings.database, tls: try tls())
        }
        if let seconds = settings.connectTimeout { configuration.options.connectTimeout = .milliseconds(Int64(seconds * 1000)) }
        return configuration
    }

    /// libpq's modes: `require` encrypts without checking the certificate, `verify-ca` checks
    /// it against the system's CAs, `verify-full` the host name too; `prefer` asks for TLS and
    /// goes on without it if the server has none.
    private func tls() throws -> PostgresConnection.Configuration.TLS {
        var tls = TLSConfiguration.makeClientConfiguration()
        switch settings.sslMode {
        case .disable, .allow: return .disable
        case .prefer:
            tls.certificateVerification = .none
            return .prefer(try NIOSSLContext(configuration: tls))
        case .require:
            tls.certificateVerification = .none
            return .require(try NIOSSLContext(configuration: tls))
        case .verifyCA:
            tls.certificateVerification = .noHostnameVerification
            return .require(try NIOSSLContext(configuration: tls))
        case .verifyFull:
            return .require(try NIOSSLContext(configuration: tls))
        }
    }

    /// Runs `operation` on the concurrency runtime's threads and waits for it on this one (never
    /// one of the runtime's: the commands and the worker call from threads of their own).
    static func blocking<T: Sendable>(_ operation: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let box = ResultBox<T>()
        Task {
            do { box.set(.success(try await operation())) } catch { box.set(.failure(error)) }
        }
        return box.wait()
    }
}

/// The connection as `QueueDatabase.run` lends it: every statement through it is counted.
struct QueueSession: Sendable {
    let connection: PostgresConnection
    let logger: Logger
    fileprivate let database: QueueDatabase

    /// Sends `query` (one round trip) and returns its rows, which must be read before the next.
    @discardableResult
    func query(_ query: PostgresQuery) async throws -> PostgresRowSequence {
        database.countRoundTrip()
        return try await connection.query(query, logger: logger)
    }
}

/// A result handed from a task to the thread that waits for it.
private final class ResultBox<T: Sendable>: Sendable {
    private let value = Mutex<Result<T, any Error>?>(nil)
    private let ready = DispatchSemaphore(value: 0)

    func set(_ result: Result<T, any Error>) {
        value.withLock { $0 = result }
        ready.signal()
    }

    func wait() -> Result<T, any Error> {
        ready.wait()
        return value.withLock { $0! }
    }
}
