/// The outcome of evaluating a server's trust under a `SecurityPolicy`, with what the
/// transport needs to report it.
struct TrustEvaluation: Sendable {
    /// Whether the server is trusted.
    var isTrusted: Bool
    /// Why not, for the detail of the `.serverCertificateUntrusted` error ("certificate has
    /// expired (…)", "host name mismatch: …", "no pinned public key in the verified chain");
    /// nil when trusted.
    var failureReason: String?
    /// The chain, leaf first, that was verified and that pins were matched against: the one
    /// verified with only the pinned anchors in certificate mode, against the trust's anchors
    /// otherwise. Empty when evaluation stopped before verifying.
    var verifiedChain: [Certificate]

    /// A trusted outcome.
    static func trusted(_ chain: [Certificate]) -> TrustEvaluation {
        TrustEvaluation(isTrusted: true, failureReason: nil, verifiedChain: chain)
    }

    /// A refusal.
    static func refused(_ reason: String, chain: [Certificate] = []) -> TrustEvaluation {
        TrustEvaluation(isTrusted: false, failureReason: reason, verifiedChain: chain)
    }
}
