import COpenSSL
import Foundation
import Testing
@testable import UVNetworking

extension TLSConnection {
    /// All the ciphertext produced so far, in one array (the tests' way to move it to the server).
    func takeOutput() -> [UInt8] {
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 16 * 1024, alignment: 1)
        defer { scratch.deallocate() }
        var bytes: [UInt8] = []
        _ = sendOutput(through: scratch) { piece, _ in
            bytes.append(contentsOf: piece)
            return true
        }
        return bytes
    }
}

/// An OpenSSL server over memory BIOs, wired to a TLSConnection by copying bytes: the client's
/// handshake, trust suspension, records and shutdown, with no socket and no loop.
private final class InMemoryServer {
    let context: OpaquePointer
    let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer

    /// A server with a context of its own, sending `tickets` TLS 1.3 session tickets.
    convenience init(chain: [TestCertificate], key: TestKey, tickets: Int = 2) {
        let context = SSL_CTX_new(TLS_server_method())!
        _ = SSL_CTX_set_num_tickets(context, tickets)
        _ = SSL_CTX_use_certificate(context, chain[0].x509)
        for certificate in chain.dropFirst() { _ = uvn_SSL_CTX_add1_chain_cert(context, certificate.x509) }
        _ = SSL_CTX_use_PrivateKey(context, key.pkey)
        self.init(context: context)
        SSL_CTX_free(context)
    }

    /// A server sharing `context` (its session tickets), as a second connection to one server.
    init(context: OpaquePointer) {
        SSL_CTX_up_ref(context)
        self.context = context
        ssl = SSL_new(context)!
        input = BIO_new(BIO_s_mem())!
        output = BIO_new(BIO_s_mem())!
        SSL_set_bio(ssl, input, output)
        SSL_set_accept_state(ssl)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Moves the client's output to the server, steps the server, moves its output back.
    func exchange(with client: TLSConnection) {
        let toServer = client.takeOutput()
        if !toServer.isEmpty { _ = BIO_write(input, toServer, Int32(toServer.count)) }
        if SSL_is_init_finished(ssl) != 1 { _ = SSL_do_handshake(ssl) }
        var buffer = [UInt8](repeating: 0, count: 1)
        _ = SSL_peek(ssl, &buffer, 0)  // processes post-handshake messages without consuming data
        ERR_clear_error()
        deliver(to: client)
    }

    func deliver(to client: TLSConnection) {
        let pending = Int(BIO_ctrl_pending(output))
        guard pending > 0 else { return }
        var bytes = [UInt8](repeating: 0, count: pending)
        _ = BIO_read(output, &bytes, Int32(pending))
        bytes.withUnsafeBytes { client.feed($0) }
    }

    func send(_ text: String, to client: TLSConnection) {
        let bytes = Array(text.utf8)
        _ = SSL_write(ssl, bytes, Int32(bytes.count))
        deliver(to: client)
    }

    func receive(from client: TLSConnection) -> String {
        let toServer = client.takeOutput()
        _ = BIO_write(input, toServer, Int32(toServer.count))
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = SSL_read(ssl, &buffer, Int32(buffer.count))
        return count > 0 ? String(decoding: buffer[0..<Int(count)], as: UTF8.self) : ""
    }

    /// Decrypts ciphertext the test took from the client itself.
    func receiveRaw(_ ciphertext: [UInt8]) -> String {
        _ = BIO_write(input, ciphertext, Int32(ciphertext.count))
        var text: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = SSL_read(ssl, &buffer, Int32(buffer.count))
            guard count > 0 else { break }
            text.append(contentsOf: buffer[0..<Int(count)])
        }
        ERR_clear_error()
        return String(decoding: text, as: UTF8.self)
    }

    var sniName: String? {
        SSL_get_servername(ssl, TLSEXT_NAMETYPE_host_name).map { String(cString: $0) }
    }
}

@Suite(.tags(.loopback)) struct TLSConnectionTests {
    private let pki = TestPKI.standard

    private func makeContext(resumes: Bool = true) throws -> TLSContext {
        var configuration = TLSConfiguration()
        configuration.trustsSystemCAs = false
        configuration.additionalTrustedCAFiles = [pki.rootPEMPath]
        configuration.resumesSessions = resumes
        return try TLSContext(configuration: configuration)
    }

    /// Runs the handshake to its trust decision; returns the trust the client asked about.
    private func handshakeToTrustDecision(_ client: TLSConnection, _ server: InMemoryServer) -> ServerTrust? {
        for _ in 0..<10 {
            switch client.handshake() {
            case .needsTrustDecision(let trust): return trust
            case .needsInput: server.exchange(with: client)
            case .complete, .failed: return nil
            }
        }
        return nil
    }

    private func completeHandshake(_ client: TLSConnection, _ server: InMemoryServer) -> TLSConnection.HandshakeStep {
        var step = client.handshake()
        for _ in 0..<10 {
            guard case .needsInput = step else { break }
            server.exchange(with: client)
            step = client.handshake()
        }
        server.exchange(with: client)
        return step
    }

    @Test func handshakeWaitsForTheTrustDecisionThenCarriesData() throws {
        let server = InMemoryServer(chain: pki.sentChain, key: pki.leaf.key)
        let client = try TLSConnection(context: makeContext(), host: "localhost", sessions: TLSSessionCache())
        let trust = try #require(handshakeToTrustDecision(client, server))
        // The certificates as sent, leaf first, for the worker to evaluate.
        #expect(trust.certificates.map(\.derData) == pki.sentChain.map(\.der))
        #expect(trust.host == "localhost")
        #expect(server.sniName == "localhost")
        // Until the decision, asking again does not get past verification.
        guard case .needsTrustDecision = client.handshake() else {
            Issue.record("the handshake went on without a decision")
            return
        }
        let chain = [pki.leaf, pki.intermediate, pki.root].map(\.certificate)
        client.decideTrust(accepted: true, verifiedChain: chain)
        guard case .complete = completeHandshake(client, server) else {
            Issue.record("handshake did not complete")
            return
        }
        // The accepted chain is what the connection reports as verified.
        #expect(client.verifiedChain == chain)
        let ping = Array("ping".utf8)
        #expect(ping.withUnsafeBytes { client.write($0) } == nil)
        #expect(server.receive(from: client) == "ping")
        server.send("pong", to: client)
        var buffer = [UInt8](repeating: 0, count: 64)
        let step = buffer.withUnsafeMutableBytes { client.read(into: $0) }
        guard case .data(let count) = step else {
            Issue.record("expected data, got \(step)")
            return
        }
        #expect(String(decoding: buffer[0..<count], as: UTF8.self) == "pong")
    }

    @Test func refusedTrustFailsTheHandshakeAndAlertsTheServer() throws {
        let server = InMemoryServer(chain: pki.sentChain, key: pki.leaf.key)
        let client = try TLSConnection(context: makeContext(), host: "localhost", sessions: nil)
        _ = try #require(handshakeToTrustDecision(client, server))
        client.decideTrust(accepted: false, verifiedChain: [])
        guard case .failed(let error) = client.handshake() else {
            Issue.record("a refused chain completed the handshake")
            return
        }
        #expect(NetworkingError(error).kind == .tls)
        // The alert reaches the server, whose handshake then fails.
        server.exchange(with: client)
        #expect(SSL_is_init_finished(server.ssl) != 1)
    }

    @Test func ipLiteralIsNotSentAsSNI() throws {
        let server = InMemoryServer(chain: pki.sentChain, key: pki.leaf.key)
        let client = try TLSConnection(context: makeContext(), host: "127.0.0.1", sessions: nil)
        let trust = try #require(handshakeToTrustDecision(client, server))
        #expect(trust.host == "127.0.0.1")
        #expect(server.sniName == nil)
    }

    private func connected(_ context: TLSContext, _ sessions: TLSSessionCache,
                           server: InMemoryServer? = nil) throws -> (TLSConnection, InMemoryServer) {
        let server = server ?? InMemoryServer(chain: pki.sentChain, key: pki.leaf.key)
        let client = try TLSConnection(context: context, host: "localhost", sessions: sessions)
        if handshakeToTrustDecision(client, server) != nil {
            client.decideTrust(accepted: true, verifiedChain: [pki.leaf.certificate])
        }
        guard case .complete = completeHandshake(client, server) else { throw ScriptedTLSError(description: "no handshake") }
        // TLS 1.3 tickets arrive after the handshake; a read processes them.
        var buffer = [UInt8](repeating: 0, count: 64)
        _ = buffer.withUnsafeMutableBytes { client.read(into: $0) }
        return (client, server)
    }

    /// One round trip: `text` to the server and back as the server's answer.
    private func roundTrip(_ text: String, _ client: TLSConnection, _ server: InMemoryServer) -> String? {
        let bytes = Array(text.utf8)
        guard bytes.withUnsafeBytes({ client.write($0) }) == nil, server.receive(from: client) == text else { return nil }
        server.send(text, to: client)
        var buffer = [UInt8](repeating: 0, count: 256)
        guard case .data(let count) = buffer.withUnsafeMutableBytes({ client.read(into: $0) }) else { return nil }
        return String(decoding: buffer[0..<count], as: UTF8.self)
    }

    @Test func idleConnectionGivesItsRecordBuffersBackAndKeepsWorking() throws {
        let (client, server) = try connected(makeContext(), TLSSessionCache())
        #expect(roundTrip("first", client, server) == "first")
        // Nothing pending: the buffers go (the mode that freed them at every read and write is off).
        #expect(client.releaseBuffers())
        // OpenSSL allocates them again for the next exchange.
        #expect(roundTrip("second", client, server) == "second")
        #expect(client.releaseBuffers())
    }

    @Test func recordBuffersHoldingUnreadBytesAreKept() throws {
        let (client, server) = try connected(makeContext(), TLSSessionCache())
        server.send("one", to: client)
        server.send("two", to: client)
        var buffer = [UInt8](repeating: 0, count: 3)
        // Read ahead takes both records in; only the first is read, the second waits in the buffer.
        guard case .data(3) = buffer.withUnsafeMutableBytes({ client.read(into: $0) }) else {
            Issue.record("no first record")
            return
        }
        #expect(!client.releaseBuffers())
        guard case .data(3) = buffer.withUnsafeMutableBytes({ client.read(into: $0) }) else {
            Issue.record("the second record was lost")
            return
        }
        #expect(String(decoding: buffer, as: UTF8.self) == "two")
    }

    @Test func outputIsSentInPiecesThatFitTheScratchInOrder() throws {
        let (client, server) = try connected(makeContext(), TLSSessionCache())
        let text = String(repeating: "0123456789", count: 300)
        #expect(Array(text.utf8).withUnsafeBytes { client.write($0) } == nil)
        let scratch = UnsafeMutableRawBufferPointer.allocate(byteCount: 1000, alignment: 1)
        defer { scratch.deallocate() }
        var sent: [UInt8] = []
        var lastFlags: [Bool] = []
        let pieces = client.sendOutput(through: scratch) { piece, isLast in
            #expect(piece.count <= 1000)
            sent.append(contentsOf: piece)
            lastFlags.append(isLast)
            return true
        }
        #expect(pieces >= 4)
        #expect(lastFlags == Array(repeating: false, count: pieces - 1) + [true])
        #expect(!client.hasOutput)
        // The pieces, joined, are the records the server decrypts.
        #expect(server.receiveRaw(sent) == text)
    }

    @Test func closeNotifyEndsReadsCleanlyAndABareEOFDoesNot() throws {
        let context = try makeContext()
        var buffer = [UInt8](repeating: 0, count: 64)

        let (clean, cleanServer) = try connected(context, TLSSessionCache())
        _ = SSL_shutdown(cleanServer.ssl)
        cleanServer.deliver(to: clean)
        let cleanStep = buffer.withUnsafeMutableBytes { clean.read(into: $0) }
        guard case .ended(cleanly: true) = cleanStep else {
            Issue.record("close_notify read as \(cleanStep)")
            return
        }

        let (cut, _) = try connected(context, TLSSessionCache())
        cut.markInputEOF()
        let cutStep = buffer.withUnsafeMutableBytes { cut.read(into: $0) }
        guard case .ended(cleanly: false) = cutStep else {
            Issue.record("a bare EOF read as \(cutStep)")
            return
        }
    }

    @Test func secondConnectionResumesWithoutATrustDecision() throws {
        let context = try makeContext()
        let sessions = TLSSessionCache()
        let (first, firstServer) = try connected(context, sessions)
        #expect(!first.isSessionReused)
        // A clean close keeps the session resumable.
        first.shutdown()
        #expect(!sessions.isEmpty)
        // The same server (its context, so its ticket keys): the handshake resumes, and no
        // certificate is exchanged, so no trust decision is asked for.
        let server = InMemoryServer(context: firstServer.context)
        let second = try TLSConnection(context: context, host: "localhost", sessions: sessions)
        guard case .complete = completeHandshake(second, server) else {
            Issue.record("the resumed handshake did not complete on its own")
            return
        }
        #expect(second.isSessionReused)
        #expect(second.verifiedChain.isEmpty)
    }

    @Test func connectionFreedWithoutCloseNotifyLeavesNoResumableSession() throws {
        let context = try makeContext()
        let sessions = TLSSessionCache()
        do {
            // One ticket, so the cache holds exactly the session this connection is using.
            let server = InMemoryServer(chain: pki.sentChain, key: pki.leaf.key, tickets: 1)
            let (connection, _) = try connected(context, sessions, server: server)
            #expect(!sessions.isEmpty)
            _ = connection
        }
        // Freed without shutdown: OpenSSL marks the session not resumable, and the cache drops it.
        #expect(sessions.take() == nil)
    }

    @Test func ticketsAreHandedOutOnceEach() throws {
        let context = try makeContext()
        let sessions = TLSSessionCache()
        let (first, _) = try connected(context, sessions)
        first.shutdown()
        // The server sent two tickets: two connections can resume, a third cannot yet.
        let a = try #require(sessions.take())
        let b = try #require(sessions.take())
        #expect(a != b)
        #expect(sessions.take() == nil)
        SSL_SESSION_free(a)
        SSL_SESSION_free(b)
    }

    @Test func resumptionOffKeepsNoSessions() throws {
        let sessions = TLSSessionCache()
        let (connection, _) = try connected(try makeContext(resumes: false), sessions)
        connection.shutdown()
        #expect(sessions.isEmpty)
    }
}
