import COpenSSL
import Glibc

/// One TLS client connection as OpenSSL sees it: an SSL object between two memory BIOs. It does
/// no I/O: the transport feeds it what arrived (`feed`), sends what it produced (`sendOutput`),
/// and asks it to step the handshake, read or write. So the same object works under libuv and in
/// unit tests that pair it with an in-memory server.
///
/// Certificate verification suspends the handshake (SSL_set_retry_verify): `handshake()` returns
/// `.needsTrustDecision` with the chain the server sent, the owner evaluates it elsewhere, then
/// calls `decideTrust` and `handshake()` again. OpenSSL never verifies the chain itself on this
/// thread.
///
/// Loop-confined.
final class TLSConnection {
    enum HandshakeStep {
        case complete
        case needsInput
        case needsTrustDecision(ServerTrust)
        case failed(TLSError)
    }

    enum ReadStep {
        /// This many plaintext bytes are at the start of the buffer.
        case data(Int)
        case needsInput
        /// The input ended (`markInputEOF`); `cleanly` when the server sent close_notify first.
        case ended(cleanly: Bool)
        case failed(TLSError)
    }

    private enum Verification {
        case notStarted
        case awaiting(ServerTrust)
        case accepted([Certificate])
        case rejected
    }

    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer
    private let host: String
    private let context: TLSContext
    private let sessions: TLSSessionCache?
    private var verification = Verification.notStarted
    private var inputEnded = false
    private(set) var receivedCloseNotify = false
    private let presentsClientCertificate: Bool

    /// - Parameters:
    ///   - host: the host as connected (no brackets); a DNS name is sent as SNI, an IP literal not.
    ///   - sessions: where new sessions go and the resumed one comes from (nil: no resumption).
    init(context: TLSContext, host: String, sessions: TLSSessionCache?) throws(TLSError) {
        guard let ssl = SSL_new(context.context), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            throw .connectionUnavailable(openSSL: OpenSSLErrorQueue.drain())
        }
        self.ssl = ssl
        self.input = input
        self.output = output
        self.host = host
        self.context = context
        self.sessions = context.resumesSessions ? sessions : nil
        presentsClientCertificate = SSL_get_certificate(ssl) != nil
        // An empty input BIO means "more may come" (retry), not end of stream, until markInputEOF.
        _ = uvn_BIO_set_mem_eof_return(input, -1)
        SSL_set_bio(ssl, input, output)
        // Read whatever ciphertext the input holds in one go rather than a record's header,
        // then its body: half the trips through the BIO layer per record.
        SSL_set_read_ahead(ssl, 1)
        SSL_set_connect_state(ssl)
        _ = uvn_SSL_set_app_data(ssl, Unmanaged.passUnretained(self).toOpaque())
        // RFC 6066: SNI carries DNS names only, never IP literals.
        if !Self.isIPLiteral(host) { _ = uvn_SSL_set_tlsext_host_name(ssl, host) }
        if let session = self.sessions?.take() {
            // SSL_set_session takes its own reference.
            SSL_set_session(ssl, session)
            SSL_SESSION_free(session)
        }
    }

    deinit {
        // Frees both BIOs. Without a prior `shutdown()`, OpenSSL marks the session not
        // resumable, which is what a failed connection deserves.
        SSL_free(ssl)
    }

    static func isIPLiteral(_ host: String) -> Bool {
        var v4 = in_addr()
        var v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }

    // MARK: Bytes in and out

    /// Ciphertext that arrived from the server.
    func feed(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty else { return }
        _ = BIO_write(input, bytes.baseAddress, Int32(bytes.count))
    }

    /// The server closed its side: once the buffered bytes are read, reads end.
    func markInputEOF() {
        inputEnded = true
        _ = uvn_BIO_set_mem_eof_return(input, 0)
    }

    /// Whether ciphertext is waiting to be sent.
    var hasOutput: Bool { BIO_ctrl_pending(output) > 0 }

    /// Hands the ciphertext produced so far to `send`, in order, in pieces no larger than
    /// `scratch` (copied there: no allocation). Stops early when `send` returns false. Returns
    /// the number of pieces sent.
    func sendOutput(through scratch: UnsafeMutableRawBufferPointer, _ send: (_ piece: UnsafeRawBufferPointer, _ isLast: Bool) -> Bool) -> Int {
        var pieces = 0
        var remaining = Int(BIO_ctrl_pending(output))
        while remaining > 0 {
            let count = Int(BIO_read(output, scratch.baseAddress, Int32(min(remaining, scratch.count))))
            guard count > 0 else { break }
            remaining -= count
            pieces += 1
            guard send(UnsafeRawBufferPointer(start: scratch.baseAddress, count: count), remaining == 0) else { break }
        }
        return pieces
    }

    // MARK: Handshake

    func handshake() -> HandshakeStep {
        Self.clearErrors()
        let result = SSL_do_handshake(ssl)
        if result == 1 { return .complete }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            if inputEnded {
                return .failed(.closedDuringHandshake(host: host))
            }
            return .needsInput
        case SSL_ERROR_WANT_RETRY_VERIFY:
            if case .awaiting(let trust) = verification { return .needsTrustDecision(trust) }
            return .failed(.pausedWithoutCertificate(host: host))
        default:
            return .failed(TLSError.failure(during: .handshake, host: host, sentClientCertificate: presentsClientCertificate))
        }
    }

    /// The evaluation's verdict; the next `handshake()` resumes with it. An accepted chain
    /// becomes the connection's verified chain (SSL_get0_verified_chain).
    func decideTrust(accepted: Bool, verifiedChain: [Certificate]) {
        verification = accepted ? .accepted(verifiedChain) : .rejected
    }

    /// Whether this connection resumed an earlier session (no certificate was exchanged).
    var isSessionReused: Bool { SSL_session_reused(ssl) == 1 }

    /// "TLSv1.3", "TLSv1.2".
    var protocolVersion: String { String(cString: SSL_get_version(ssl)) }

    /// What ALPN agreed on ("h2", "http/1.1"), or nil when the server chose nothing.
    var applicationProtocol: String? {
        var name: UnsafePointer<UInt8>?
        var length: UInt32 = 0
        SSL_get0_alpn_selected(ssl, &name, &length)
        guard let name, length > 0 else { return nil }
        return String(decoding: UnsafeBufferPointer(start: name, count: Int(length)), as: UTF8.self)
    }

    /// The negotiated cipher suite, e.g. "TLS_AES_256_GCM_SHA384".
    var cipherSuite: String? { SSL_get_current_cipher(ssl).map { String(cString: SSL_CIPHER_get_name($0)) } }

    /// The chain the evaluation verified, leaf first; empty for a resumed session.
    var verifiedChain: [Certificate] {
        guard let chain = SSL_get0_verified_chain(ssl) else { return [] }
        let stack = chain
        return (0..<OPENSSL_sk_num(stack)).compactMap { index in
            OPENSSL_sk_value(stack, index).map { Certificate(x509: OpaquePointer($0)) }
        }
    }

    // MARK: Application data

    /// Encrypts `bytes`; the records are then in `takeOutput()`.
    func write(_ bytes: UnsafeRawBufferPointer) -> TLSError? {
        guard !bytes.isEmpty else { return nil }
        Self.clearErrors()
        var written = 0
        // A memory BIO never refuses bytes, so SSL_write takes everything in one call (in
        // records of up to 16 KiB); the loop is for bodies over Int32.max.
        while written < bytes.count {
            let count = Int32(min(bytes.count - written, Int(Int32.max)))
            let result = SSL_write(ssl, bytes.baseAddress! + written, count)
            if result <= 0 {
                return TLSError.failure(during: .write, host: host, sentClientCertificate: presentsClientCertificate)
            }
            written += Int(result)
        }
        return nil
    }

    /// Decrypts into `buffer`.
    func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadStep {
        Self.clearErrors()
        let result = SSL_read(ssl, buffer.baseAddress, Int32(buffer.count))
        if result > 0 { return .data(Int(result)) }
        switch SSL_get_error(ssl, result) {
        case SSL_ERROR_WANT_READ:
            return inputEnded ? .ended(cleanly: false) : .needsInput
        case SSL_ERROR_ZERO_RETURN:
            receivedCloseNotify = true
            return .ended(cleanly: true)
        case SSL_ERROR_SSL where inputEnded && TLSError.lastReason() == TLSError.unexpectedEOFReason:
            Self.clearErrors()
            return .ended(cleanly: false)
        default:
            return .failed(TLSError.failure(during: .read, host: host, sentClientCertificate: presentsClientCertificate))
        }
    }

    /// Frees OpenSSL's read and write record buffers (about 34 KiB), which it allocates again
    /// at the next read or write. Returns false when it kept them: they hold bytes not yet
    /// processed (a record read ahead, or output not yet taken).
    @discardableResult
    func releaseBuffers() -> Bool {
        SSL_free_buffers(ssl) == 1
    }

    /// Queues close_notify (when the handshake finished), which also keeps the session
    /// resumable after `deinit`.
    func shutdown() {
        guard SSL_is_init_finished(ssl) == 1 else { return }
        Self.clearErrors()
        _ = SSL_shutdown(ssl)
        Self.clearErrors()
    }

    /// Empties this thread's OpenSSL error queue before a call whose failure is read from it.
    /// ERR_clear_error costs about a thousand instructions even on an empty queue (it walks the
    /// thread's state); peeking first costs a few, and the queue is almost always empty.
    @inline(__always) private static func clearErrors() {
        if ERR_peek_error() != 0 { ERR_clear_error() }
    }

    // MARK: OpenSSL callbacks

    private static func from(_ ssl: OpaquePointer) -> TLSConnection? {
        uvn_SSL_get_app_data(ssl).map { Unmanaged<TLSConnection>.fromOpaque($0).takeUnretainedValue() }
    }

    /// Replaces OpenSSL's chain verification (SSL_CTX_set_cert_verify_callback). The first call
    /// captures the sent chain and suspends the handshake; the call after `decideTrust` returns
    /// the verdict.
    static let verifyCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Int32 = { storeContext, _ in
        guard let storeContext,
              let raw = X509_STORE_CTX_get_ex_data(storeContext, SSL_get_ex_data_X509_STORE_CTX_idx()),
              let connection = from(OpaquePointer(raw)) else { return 0 }
        return connection.verify(storeContext)
    }

    private func verify(_ storeContext: OpaquePointer) -> Int32 {
        switch verification {
        case .notStarted:
            guard let leaf = X509_STORE_CTX_get0_cert(storeContext) else { return 0 }
            // The untrusted list is everything the server sent, leaf first.
            var certificates = [Certificate(x509: leaf)]
            if let sent = X509_STORE_CTX_get0_untrusted(storeContext) {
                let stack = sent
                for index in 0..<OPENSSL_sk_num(stack) {
                    guard let raw = OPENSSL_sk_value(stack, index) else { continue }
                    let x509 = OpaquePointer(raw)
                    if index == 0 && X509_cmp(x509, leaf) == 0 { continue }
                    certificates.append(Certificate(x509: x509))
                }
            }
            let trust = ServerTrust(host: host, certificates: certificates, anchors: context.trustStore)
            verification = .awaiting(trust)
            return uvn_SSL_set_retry_verify(ssl)
        case .awaiting:
            return uvn_SSL_set_retry_verify(ssl)
        case .accepted(let chain):
            // Becomes SSL_get0_verified_chain: the chain the policy matched pins against.
            if let stack = OPENSSL_sk_new_null() {
                for certificate in chain where X509_up_ref(certificate.x509) == 1 {
                    _ = OPENSSL_sk_push(stack, UnsafeRawPointer(certificate.x509))
                }
                X509_STORE_CTX_set0_verified_chain(storeContext, stack)
            }
            X509_STORE_CTX_set_error(storeContext, X509_V_OK)
            return 1
        case .rejected:
            X509_STORE_CTX_set_error(storeContext, X509_V_ERR_APPLICATION_VERIFICATION)
            return 0
        }
    }

    /// OpenSSL has a new session (after a TLS 1.2 handshake, or a TLS 1.3 ticket): the pool
    /// keeps it for its next connection. Returning 1 keeps OpenSSL's reference.
    static let newSessionCallback: @convention(c) (OpaquePointer?, OpaquePointer?) -> Int32 = { ssl, session in
        guard let ssl, let session, let connection = from(ssl), let sessions = connection.sessions else { return 0 }
        sessions.store(session)
        return 1
    }
}
