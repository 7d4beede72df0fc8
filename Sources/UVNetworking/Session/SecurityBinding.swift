/// The security policy and TLS context an https request was made under. Pools are keyed by it,
/// so a connection verified under one policy never serves a request made under another.
final class SecurityBinding: Sendable {
    /// Distinguishes bindings in pool keys (unique per manager).
    let id: Int
    let policy: SecurityPolicy
    let context: TLSContext

    init(id: Int, policy: SecurityPolicy, context: TLSContext) {
        self.id = id
        self.policy = policy
        self.context = context
    }
}

/// A manager's security state: its default policy, per-host policies, the TLS context (made on
/// first use) and the binding each host's requests get. Guarded by the manager's mutex.
struct SessionSecurity {
    var defaultPolicy = SecurityPolicy.default
    var hostPolicies: [String: SecurityPolicy] = [:]
    private var context: TLSContext?
    /// The binding of every host without a policy of its own, until a policy changes. Shared:
    /// pools are keyed by host as well, and one entry per host ever seen would outlive the
    /// pools dropped when idle (a crawl over millions of hosts).
    private var defaultBinding: SecurityBinding?
    /// One binding per host with a policy of its own (`hostPolicies`), until a policy changes,
    /// so a host's requests share a pool.
    private var bindings: [String: SecurityBinding] = [:]
    private var nextID = 1

    func policy(forHost host: String) -> SecurityPolicy {
        hostPolicies[host.lowercased()] ?? defaultPolicy
    }

    /// Bindings kept (for tests of the memory bound).
    var bindingCount: Int { bindings.count + (defaultBinding == nil ? 0 : 1) }

    /// A policy changed: later requests get new bindings, so new pools and new connections.
    mutating func policiesChanged() {
        bindings.removeAll()
        defaultBinding = nil
    }

    /// The binding for a request to `host`, making the TLS context first if needed (which reads
    /// the trust store's files: this runs on the caller's thread, never the loop's).
    mutating func binding(forHost host: String, configuration: TLSConfiguration, offersHTTP2: Bool = false) throws(NetworkingError) -> SecurityBinding {
        let key = host.lowercased()
        let policy = hostPolicies[key]
        if policy == nil, let defaultBinding { return defaultBinding }
        if policy != nil, let binding = bindings[key] { return binding }
        let context: TLSContext
        if let existing = self.context {
            context = existing
        } else {
            do throws(TLSError) {
                context = try TLSContext(configuration: configuration, offersHTTP2: offersHTTP2)
            } catch {
                throw NetworkingError(error)
            }
            self.context = context
        }
        let binding = SecurityBinding(id: nextID, policy: policy ?? defaultPolicy, context: context)
        nextID += 1
        if policy == nil { defaultBinding = binding } else { bindings[key] = binding }
        return binding
    }
}
