/// The pinned certificates of a `SecurityPolicy`, prepared once for every evaluation: a trust
/// store whose only anchors are those certificates (certificate pinning) and their public-key
/// hashes (public-key pinning). Rebuilt whenever the policy's certificates change; copies of a
/// policy share it.
final class PinnedAnchors: Sendable {
    /// The pinned certificates.
    let certificates: Set<Certificate>
    /// The pinned certificates as the only anchors.
    let store: TrustStore
    /// `publicKeySHA256` of each pinned certificate.
    let publicKeyHashes: Set<String>

    /// Prepares `certificates`.
    init(_ certificates: Set<Certificate>) {
        self.certificates = certificates
        store = TrustStore(anchors: certificates)
        publicKeyHashes = Set(certificates.map(\.publicKeySHA256))
    }

    /// The anchors of a policy with no pinned certificate, shared so that the default policy
    /// costs no allocation of a store.
    static let empty = PinnedAnchors([])
}
