import COpenSSL

/// One run of OpenSSL's chain verification (X509_verify_cert) for a TLS server certificate.
///
/// The chain is always built as far as it goes: a verify callback records the first problem and
/// tells OpenSSL to carry on, so an invalid chain still yields the certificates that public-key
/// pinning with `allowInvalidCertificates` matches against. Host names are not checked here
/// (`HostNameCheck` does that separately, so that each failure has its own reason).
struct ChainVerification {
    /// The chain OpenSSL built, leaf first, ending at the anchor when it found one. With
    /// `anchorsMayBeIntermediates`, certificates the server sent above a leaf or intermediate
    /// that is itself an anchor may follow it.
    let chain: [Certificate]
    /// The first problem found; nil when the chain is valid.
    let failure: ChainVerificationFailure?

    /// Whether the chain leads from the leaf to an anchor with every check passed.
    var isValid: Bool { failure == nil }

    /// Verifies `leaf` for the TLS server purpose (extended key usage, CA flags) against
    /// `anchors` at the current time.
    ///
    /// - Parameters:
    ///   - untrusted: other certificates the server sent, usable as intermediates but trusted
    ///     only if they lead to an anchor.
    ///   - anchorsMayBeIntermediates: set `X509_V_FLAG_PARTIAL_CHAIN`, so that a chain may end
    ///     at any certificate in `anchors`, not only a self-signed root (for pinned
    ///     intermediates and leaves).
    init(leaf: Certificate, untrusted: [Certificate], anchors: TrustStore, anchorsMayBeIntermediates: Bool = false) {
        let recorder = FailureRecorder()
        var built: [Certificate] = []
        // The Certificates own the X509s OpenSSL borrows during the call.
        withExtendedLifetime((leaf, untrusted, anchors, recorder)) {
            guard let context = X509_STORE_CTX_new() else { fatalError("X509_STORE_CTX_new failed: out of memory") }
            defer { X509_STORE_CTX_free(context) }
            guard let stack = uvn_sk_X509_new_null() else { fatalError("sk_X509_new_null failed: out of memory") }
            // The stack only borrows its certificates.
            defer { uvn_sk_X509_free(stack) }
            for certificate in untrusted { _ = uvn_sk_X509_push(stack, certificate.x509) }

            guard X509_STORE_CTX_init(context, anchors.store, leaf.x509, stack) == 1 else {
                recorder.failure = ChainVerificationFailure(
                    code: X509_V_ERR_UNSPECIFIED, depth: 0,
                    reason: OpenSSLErrorQueue.detail("the verification could not be set up"))
                return
            }
            _ = X509_STORE_CTX_set_purpose(context, X509_PURPOSE_SSL_SERVER)
            if anchorsMayBeIntermediates {
                X509_STORE_CTX_set_flags(context, UInt(X509_V_FLAG_PARTIAL_CHAIN))
            }
            // Slot 0 is OpenSSL's application-data slot (X509_STORE_CTX_set_app_data); this
            // context is private to the call, so nothing else uses it.
            _ = X509_STORE_CTX_set_ex_data(context, 0, Unmanaged.passUnretained(recorder).toOpaque())
            X509_STORE_CTX_set_verify_cb(context, recordFirstFailure)

            if X509_verify_cert(context) != 1 && recorder.failure == nil {
                // The callback saw no error, so OpenSSL stopped for an internal reason.
                let code = X509_STORE_CTX_get_error(context)
                recorder.failure = ChainVerificationFailure(
                    code: code, depth: X509_STORE_CTX_get_error_depth(context),
                    reason: OpenSSLErrorQueue.detail(String(cString: X509_verify_cert_error_string(Int(code)))))
            }
            built = Self.chain(of: context, reusing: [leaf] + untrusted)
        }
        OpenSSLErrorQueue.drain()
        chain = built
        failure = recorder.failure
    }

    /// The chain the context built, as Certificates; those that are the very X509s sent are
    /// reused rather than re-encoded.
    private static func chain(of context: OpaquePointer, reusing sent: [Certificate]) -> [Certificate] {
        guard let stack = X509_STORE_CTX_get1_chain(context) else { return [] }
        defer { uvn_sk_X509_pop_free(stack) }
        return (0..<uvn_sk_X509_num(stack)).compactMap { index in
            guard let x509 = uvn_sk_X509_value(stack, index) else { return nil }
            return sent.first { $0.x509 == x509 } ?? Certificate(x509: x509)
        }
    }
}

/// Collects the first failure the verify callback reports; lives for one verification.
private final class FailureRecorder {
    var failure: ChainVerificationFailure?
}

/// OpenSSL's verify callback: called with ok == 0 for each problem, in the order found.
/// Returning 1 tells OpenSSL to continue building and checking the chain.
private func recordFirstFailure(_ ok: Int32, _ context: OpaquePointer?) -> Int32 {
    guard ok == 0, let context, let slot = X509_STORE_CTX_get_ex_data(context, 0) else { return 1 }
    let recorder = Unmanaged<FailureRecorder>.fromOpaque(slot).takeUnretainedValue()
    if recorder.failure == nil {
        let certificate = X509_STORE_CTX_get_current_cert(context).map { Certificate(x509: $0) }
        recorder.failure = ChainVerificationFailure(
            code: X509_STORE_CTX_get_error(context),
            depth: X509_STORE_CTX_get_error_depth(context),
            certificate: certificate)
    }
    return 1
}
