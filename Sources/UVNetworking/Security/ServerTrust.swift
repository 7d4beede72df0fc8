import Foundation
import Synchronization

/// What a server presented in a TLS handshake, to be evaluated by a `SecurityPolicy`: the host
/// connected to, the certificates the server sent, and the anchors to verify them against.
/// AFNetworking's SecTrustRef.
///
/// Equality is identity: two handshakes that sent the same certificates are still two trusts.
/// The only state that changes is `verifiedChain`, behind a mutex.
public final class ServerTrust: Sendable, Hashable {
    /// The host as connected to: a DNS name or an IP literal, without IPv6 brackets.
    public let host: String
    /// The certificates as the server sent them, leaf first.
    public let certificates: [Certificate]
    /// The anchors evaluation verifies the chain against.
    let anchors: TrustStore
    private let lastVerifiedChain = Mutex<[Certificate]>([])

    /// A trust for the certificates a server sent; `host` may carry IPv6 brackets, which are
    /// removed.
    init(host: String, certificates: [Certificate], anchors: TrustStore) {
        if host.hasPrefix("["), host.hasSuffix("]") {
            self.host = String(host.dropFirst().dropLast())
        } else {
            self.host = host
        }
        self.certificates = certificates
        self.anchors = anchors
    }

    /// The chain, leaf first, that the last successful `SecurityPolicy.evaluate` verified and
    /// matched pins against (ending at the anchor it found); empty before any evaluation
    /// succeeded. A failed evaluation leaves it unchanged.
    public var verifiedChain: [Certificate] {
        lastVerifiedChain.withLock { $0 }
    }

    /// Records the chain of a successful evaluation.
    func recordVerifiedChain(_ chain: [Certificate]) {
        lastVerifiedChain.withLock { $0 = chain }
    }

    /// Whether both are the same trust object.
    public static func == (lhs: ServerTrust, rhs: ServerTrust) -> Bool { lhs === rhs }

    /// Hashes the object's identity.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(self))
    }
}
