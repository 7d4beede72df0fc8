extension SessionManager {
    /// The policy every https server is evaluated with unless `setSecurityPolicy(_:forHost:)`
    /// named one for it. Default: `SecurityPolicy.default` (system trust, host name checked, no
    /// pinning).
    public var securityPolicy: SecurityPolicy {
        security.withLock { $0.defaultPolicy }
    }

    /// Sets the policy for one host (case-insensitive; nil removes it, so the default applies).
    ///
    /// Throws `.invalidCertificate`, keeping the host's old policy, for a pinning mode with
    /// nothing pinned for it, as `setSecurityPolicy(_:)` does.
    public func setSecurityPolicy(_ policy: SecurityPolicy?, forHost host: String) throws(NetworkingError) {
        if let policy { try Self.refuseMissingPins(policy) }
        security.withLock {
            $0.hostPolicies[host.lowercased()] = policy
            $0.policiesChanged()
        }
    }

    /// The policy requests to `host` are evaluated with.
    public func securityPolicy(forHost host: String) -> SecurityPolicy {
        security.withLock { $0.policy(forHost: host) }
    }

    /// Throws when `policy` pins in a mode with nothing pinned for it (`missingPinsReason`).
    static func refuseMissingPins(_ policy: SecurityPolicy) throws(NetworkingError) {
        if let reason = policy.missingPinsReason { throw NetworkingError(.invalidCertificate, reason) }
    }

    /// The binding for an https request to `host` (called when a task is made).
    func securityBinding(forHost host: String) throws(NetworkingError) -> SecurityBinding {
        let tls = configuration.tls
        let offersHTTP2 = configuration.httpVersion != .http1_1
        return try security.withLock { (state) throws(NetworkingError) -> SecurityBinding in
            try state.binding(forHost: host, configuration: tls, offersHTTP2: offersHTTP2)
        }
    }
}
