import COpenSSL

/// One SSL_CTX: what every TLS connection of a session shares (versions, ALPN, trusted CAs, the
/// verification and session callbacks).
///
/// Made on the caller's thread when a session first needs TLS, because loading the trust store
/// reads files; the loop thread only calls SSL_new on it.
final class TLSContext: @unchecked Sendable {
    // @unchecked: the SSL_CTX is configured in init and only read afterwards (SSL_new), which
    // OpenSSL allows from any thread.
    let context: OpaquePointer
    /// The CAs the server's chain is evaluated against (on the worker pool, not in OpenSSL's
    /// handshake).
    let trustStore: TrustStore
    let resumesSessions: Bool
    /// Whether ALPN offers "h2".
    let offersHTTP2: Bool

    /// With `offersHTTP2`, ALPN offers "h2" before "http/1.1".
    init(configuration: TLSConfiguration, offersHTTP2: Bool = false) throws(TLSError) {
        if configuration.trustsSystemCAs && configuration.additionalTrustedCAFiles.isEmpty
            && configuration.additionalTrustedCADirectories.isEmpty {
            // Parsing the system bundle costs about 60 ms; every session that trusts only the
            // system shares one store (X509_STORE is safe to share for verification).
            trustStore = TrustStore.system
        } else {
            do throws(SecurityError) {
                trustStore = try TrustStore(trustsSystemCAs: configuration.trustsSystemCAs,
                                            caFiles: configuration.additionalTrustedCAFiles,
                                            caDirectories: configuration.additionalTrustedCADirectories)
            } catch {
                throw .configuration(error)
            }
        }
        guard let context = SSL_CTX_new(TLS_client_method()) else {
            throw .contextUnavailable(openSSL: OpenSSLErrorQueue.drain())
        }
        self.context = context
        resumesSessions = configuration.resumesSessions
        self.offersHTTP2 = offersHTTP2
        let minimum = configuration.minimumVersion == .v1_3 ? TLS1_3_VERSION : TLS1_2_VERSION
        _ = uvn_SSL_CTX_set_min_proto_version(context, Int32(minimum))
        // Verification is never off: VERIFY_PEER makes the callback's verdict decide the
        // handshake, and the callback hands the decision to the worker pool.
        SSL_CTX_set_verify(context, SSL_VERIFY_PEER, nil)
        SSL_CTX_set_cert_verify_callback(context, TLSConnection.verifyCallback, nil)
        SSL_CTX_set1_cert_store(context, trustStore.store)
        // What the session speaks, the preferred first (wire format: length-prefixed names).
        let alpn: [UInt8] = (offersHTTP2 ? [2] + Array("h2".utf8) : []) + [8] + Array("http/1.1".utf8)
        _ = alpn.withUnsafeBufferPointer { SSL_CTX_set_alpn_protos(context, $0.baseAddress, UInt32($0.count)) }
        // Sessions are kept per origin by the pools, not in OpenSSL's cache: the callback hands
        // each new session (TLS 1.3 tickets included) to the connection's pool.
        _ = uvn_SSL_CTX_set_session_cache_mode(context, Int(SSL_SESS_CACHE_CLIENT | SSL_SESS_CACHE_NO_INTERNAL_STORE))
        SSL_CTX_sess_set_new_cb(context, TLSConnection.newSessionCallback)
        // No SSL_MODE_RELEASE_BUFFERS: it frees and reallocates the record buffers at every
        // read and write (about 2k instructions per request). Connections give them back once
        // idle instead (HTTP1Connection.parkIdle), so idle TLS connections stay small.
        do {
            try configuration.clientIdentity?.apply(to: context)
        } catch {
            SSL_CTX_free(context)
            throw .configuration(error)
        }
    }

    deinit { SSL_CTX_free(context) }
}
