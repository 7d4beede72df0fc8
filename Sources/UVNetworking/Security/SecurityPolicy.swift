/// How a session decides whether to trust a server's certificate chain: AFSecurityPolicy.
///
/// The default trusts what the session's anchors (the system's CAs unless configured otherwise)
/// vouch for, for the host connected to. Pinning narrows that down to chains containing given
/// certificates or public keys, which protects against a mis-issued certificate from any CA the
/// system trusts. See `evaluate(_:forDomain:)` for the exact rules.
///
/// Equality is by value: two policies with the same settings are equal.
public struct SecurityPolicy: Sendable, Hashable {
    /// What a server's chain must contain besides being valid.
    public enum PinningMode: Sendable, Hashable {
        /// Nothing: a valid chain to a trusted anchor is enough.
        case none
        /// A certificate of the verified chain must have one of the pinned public keys
        /// (`pinnedPublicKeyHashes` and the keys of `pinnedCertificates`). Survives renewals
        /// that keep the key.
        case publicKey
        /// The chain must verify with the pinned certificates as its only anchors: one of them
        /// (leaf, intermediate or root) must be in it, byte for byte.
        case certificate
    }

    /// What the chain must contain; `.none` by default.
    public var pinningMode: PinningMode
    /// The pinned certificates: the anchors of `.certificate` mode, and keys for `.publicKey`.
    public var pinnedCertificates: Set<Certificate> {
        didSet { pins = PinnedAnchors(pinnedCertificates) }
    }
    /// Pinned public keys as base64 SHA-256 of the DER SubjectPublicKeyInfo (the HPKP / OWASP
    /// "pin-sha256" form; see `Certificate.publicKeySHA256`). Used in `.publicKey` mode
    /// together with the keys of `pinnedCertificates`; a backup key's pin can be listed before
    /// any certificate exists for it.
    public var pinnedPublicKeyHashes: Set<String> = []
    /// Trust chains that fail verification (expired, self-signed, unknown root). Off by
    /// default; the only setting that disables chain validation, for development servers.
    /// With `validatesDomainName` on it requires pinning (`hasPins`), or every chain is refused.
    public var allowInvalidCertificates = false
    /// Check the leaf's names against the host connected to. On by default.
    public var validatesDomainName = true

    /// The pinned certificates, prepared for evaluation.
    private(set) var pins: PinnedAnchors

    /// No pinning, the session's anchors (the system's CAs by default), host names checked,
    /// invalid chains refused.
    public static var `default`: SecurityPolicy { SecurityPolicy() }

    /// A policy with the given pinning; the other settings keep their defaults.
    public init(pinningMode: PinningMode = .none, pinnedCertificates: Set<Certificate> = []) {
        self.pinningMode = pinningMode
        self.pinnedCertificates = pinnedCertificates
        pins = pinnedCertificates.isEmpty ? .empty : PinnedAnchors(pinnedCertificates)
    }

    /// Whether the policy pins anything: a pinning mode and at least one certificate or public
    /// key hash. A session refuses a pinning policy for a base URL that is not https, where it
    /// could never apply.
    public var hasPins: Bool {
        pinningMode != .none && !(pinnedCertificates.isEmpty && pinnedPublicKeyHashes.isEmpty)
    }

    /// Why a session refuses this policy: a pinning mode with nothing pinned for it
    /// (`.certificate` without `pinnedCertificates`; `.publicKey` without certificates or key
    /// hashes), which would refuse every server. nil when the policy is usable.
    var missingPinsReason: String? {
        switch pinningMode {
        case .none:
            return nil
        case .certificate where pinnedCertificates.isEmpty:
            return "pinning mode .certificate with no pinnedCertificates would refuse every server: pin a "
                + "certificate (SecurityPolicy.certificates(inDirectory:) loads a folder of them), or use .none"
        case .publicKey where pinnedCertificates.isEmpty && pinnedPublicKeyHashes.isEmpty:
            return "pinning mode .publicKey with no pinnedCertificates and no pinnedPublicKeyHashes would refuse "
                + "every server: pin a certificate or a key hash, or use .none"
        case .certificate, .publicKey:
            return nil
        }
    }

    /// Every certificate in a directory's `.cer`, `.der`, `.crt` and `.pem` files, for
    /// `pinnedCertificates`; see `Certificate.certificates(inDirectory:)`.
    public static func certificates(inDirectory path: String) -> Set<Certificate> {
        Certificate.certificates(inDirectory: path)
    }

    /// Whether both have the same settings.
    public static func == (lhs: SecurityPolicy, rhs: SecurityPolicy) -> Bool {
        lhs.pinningMode == rhs.pinningMode && lhs.pinnedCertificates == rhs.pinnedCertificates
            && lhs.pinnedPublicKeyHashes == rhs.pinnedPublicKeyHashes
            && lhs.allowInvalidCertificates == rhs.allowInvalidCertificates
            && lhs.validatesDomainName == rhs.validatesDomainName
    }

    /// Hashes the settings.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(pinningMode)
        hasher.combine(pinnedCertificates)
        hasher.combine(pinnedPublicKeyHashes)
        hasher.combine(allowInvalidCertificates)
        hasher.combine(validatesDomainName)
    }
}
