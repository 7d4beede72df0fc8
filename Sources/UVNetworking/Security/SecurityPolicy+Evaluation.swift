extension SecurityPolicy {
    /// Whether to trust a server: AFNetworking's `evaluateServerTrust:forDomain:`.
    ///
    /// `domain` is the host the leaf must be issued for (nil: no host check, as when
    /// `validatesDomainName` is off). The rules, in AFNetworking's order:
    ///
    /// 1. With a domain, `allowInvalidCertificates` and `validatesDomainName` both on and no
    ///    pins (`hasPins` false), refuse: a self-signed certificate names whatever host its
    ///    maker wants, so its names mean something only when the certificate itself is pinned.
    /// 2. Verify the chain the server sent (leaf first, the rest as possible intermediates)
    ///    against the trust's anchors for the TLS server purpose, and, when
    ///    `validatesDomainName` is on and there is a domain, check the leaf's subjectAltName
    ///    entries against it (never its common name; see `HostNameCheck`).
    /// 3. `.none`: trusted if `allowInvalidCertificates` is on, or if the chain is valid and the
    ///    host matches. The mode never disables validation by itself.
    /// 4. Pinning modes with `allowInvalidCertificates` off: an invalid chain or a host
    ///    mismatch is refused.
    /// 5. `.certificate`: the chain must verify again with the pinned certificates as its only
    ///    anchors (a pinned intermediate or leaf counts as an anchor; every date is still
    ///    checked, so an expired pinned leaf fails), the host must match, and that chain must
    ///    contain a pinned certificate; the chain returned ends at the first one.
    /// 6. `.publicKey`: a certificate of the chain verified in step 2 must have a pinned public
    ///    key (`pinnedPublicKeyHashes` or a key of `pinnedCertificates`), and the host must
    ///    match. Only the verified chain counts: a pinned key on an extra certificate the
    ///    server appended without it being part of the chain does not.
    ///
    /// Differences from AFNetworking: in `.publicKey` mode with `allowInvalidCertificates`
    /// on, AFNetworking never checked the host, so any certificate carrying a pinned key
    /// passed for any host; here the host is checked whenever `validatesDomainName` is on.
    /// Host names never fall back to the subject's common name.
    ///
    /// On success `trust.verifiedChain` becomes the chain pins were matched against.
    public func evaluate(_ trust: ServerTrust, forDomain domain: String?) -> Bool {
        evaluation(of: trust, forDomain: domain).isTrusted
    }

    /// `evaluate(_:forDomain:)` with the reason for a refusal and the chain it verified.
    /// Records the chain in `trust.verifiedChain` when trusted.
    func evaluation(of trust: ServerTrust, forDomain domain: String?) -> TrustEvaluation {
        let outcome = decide(trust, domain: validatesDomainName ? domain : nil, hasDomain: domain != nil)
        if outcome.isTrusted { trust.recordVerifiedChain(outcome.verifiedChain) }
        return outcome
    }

    /// The rules; `checkedHost` is the host to match, nil when no host check applies.
    private func decide(_ trust: ServerTrust, domain checkedHost: String?, hasDomain: Bool) -> TrustEvaluation {
        if hasDomain && allowInvalidCertificates && validatesDomainName && !hasPins {
            return .refused("a domain name cannot be validated on an invalid (for example self-signed) "
                + "certificate without pinning: pin the certificate or its key, or turn validatesDomainName off")
        }
        guard let leaf = trust.certificates.first else {
            return .refused("the server sent no certificate")
        }
        let untrusted = Array(trust.certificates.dropFirst())
        let verification = ChainVerification(leaf: leaf, untrusted: untrusted, anchors: trust.anchors)
        let hostMismatch = checkedHost.flatMap { HostNameCheck.mismatch(of: leaf, host: $0) }

        if !allowInvalidCertificates {
            if let failure = verification.failure {
                return .refused(untrustedChainReason(failure.reason, leaf: leaf, untrusted: untrusted, sent: trust.certificates),
                                chain: verification.chain)
            }
            if let hostMismatch { return .refused(hostMismatch, chain: verification.chain) }
        }

        switch pinningMode {
        case .none:
            // Reached with a valid chain and host, or with invalid certificates allowed.
            return .trusted(verification.chain)

        case .certificate:
            guard !pins.certificates.isEmpty else {
                return .refused("certificate pinning is on but no certificate is pinned", chain: verification.chain)
            }
            let pinned = ChainVerification(leaf: leaf, untrusted: untrusted, anchors: pins.store,
                                           anchorsMayBeIntermediates: true)
            if let failure = pinned.failure {
                return .refused("the chain does not verify against the pinned certificates: \(failure.reason)",
                                chain: pinned.chain)
            }
            if let hostMismatch { return .refused(hostMismatch, chain: pinned.chain) }
            // Only pinned certificates are anchors, so a valid chain reaches one; checked anyway
            // so that the rule does not rest on how the store was built. OpenSSL may leave sent
            // certificates above a pinned leaf or intermediate in the chain; the chain reported
            // ends at the pinned anchor.
            guard let anchor = pinned.chain.firstIndex(where: pins.certificates.contains) else {
                return .refused("no pinned certificate in the verified chain", chain: pinned.chain)
            }
            return .trusted(Array(pinned.chain[...anchor]))

        case .publicKey:
            if let hostMismatch { return .refused(hostMismatch, chain: verification.chain) }
            let pinnedKey = verification.chain.contains { certificate in
                let hash = certificate.publicKeySHA256
                return pinnedPublicKeyHashes.contains(hash) || pins.publicKeyHashes.contains(hash)
            }
            guard pinnedKey else {
                return .refused("no pinned public key in the verified chain", chain: verification.chain)
            }
            return .trusted(verification.chain)
        }
    }

    /// Why a chain that does not verify against the session's anchors is refused: OpenSSL's
    /// reason, and, when the policy pins, whether a pin matched all the same. A pin that matched
    /// a self-signed or privately issued chain is the usual mistake (AFNetworking users met it
    /// too): a pin narrows trust and never replaces it, so the reason names the settings that do.
    private func untrustedChainReason(_ reason: String, leaf: Certificate, untrusted: [Certificate],
                                      sent: [Certificate]) -> String {
        let matched: String?
        switch pinningMode {
        case .none:
            return reason
        case .certificate:
            let pinned = pins.certificates.isEmpty ? nil
                : ChainVerification(leaf: leaf, untrusted: untrusted, anchors: pins.store, anchorsMayBeIntermediates: true)
            matched = pinned?.failure == nil && pinned.map { $0.chain.contains(where: pins.certificates.contains) } == true
                ? "the pinned certificate matched" : nil
        case .publicKey:
            let keyed = sent.contains { pinnedPublicKeyHashes.contains($0.publicKeySHA256) || pins.publicKeyHashes.contains($0.publicKeySHA256) }
            matched = keyed ? "a pinned public key matched" : nil
        }
        guard let matched else {
            return "the chain is not trusted: \(reason); no pin matched it either"
        }
        return "\(matched), but the chain is not trusted: \(reason). A pin narrows trust, it does not replace it: "
            + "add the chain's CA to SessionConfiguration.tls.additionalTrustedCAFiles, or set "
            + "SecurityPolicy.allowInvalidCertificates to trust this server by its pin alone"
    }
}
