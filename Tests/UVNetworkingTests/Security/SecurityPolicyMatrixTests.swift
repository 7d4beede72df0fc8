import Testing
@testable import UVNetworking

/// Every combination of pinning mode × allowInvalidCertificates × validatesDomainName, for a
/// valid chain and for a self-signed certificate, each pinning the certificate the server
/// sends. The expectations are AFNetworking's outcomes for the same settings.
@Suite(.tags(.unit)) struct SecurityPolicyMatrixTests {
    enum Chain: Sendable, CustomStringConvertible {
        /// The standard leaf for localhost, sent with its intermediate, under the test root.
        case valid
        /// A self-signed certificate for localhost, not among the anchors.
        case selfSigned
        var description: String { self == .valid ? "valid chain" : "self-signed" }
    }

    struct Cell: Sendable, CustomStringConvertible {
        let chain: Chain
        let mode: SecurityPolicy.PinningMode
        let allowInvalid: Bool
        let validatesDomain: Bool
        let trusted: Bool
        var description: String {
            "\(chain), \(mode), allowInvalid \(allowInvalid), validatesDomainName \(validatesDomain) → \(trusted)"
        }
    }

    static let selfSigned = TestPKI.makeSelfSigned(dnsNames: ["localhost"])

    static let cells: [Cell] = [
        // Mode none: a valid chain passes; allowInvalid with a domain check is refused outright
        // (a self-signed name is meaningless without a pin); allowInvalid alone trusts anything.
        Cell(chain: .valid, mode: .none, allowInvalid: false, validatesDomain: true, trusted: true),
        Cell(chain: .valid, mode: .none, allowInvalid: false, validatesDomain: false, trusted: true),
        Cell(chain: .valid, mode: .none, allowInvalid: true, validatesDomain: true, trusted: false),
        Cell(chain: .valid, mode: .none, allowInvalid: true, validatesDomain: false, trusted: true),
        Cell(chain: .selfSigned, mode: .none, allowInvalid: false, validatesDomain: true, trusted: false),
        Cell(chain: .selfSigned, mode: .none, allowInvalid: false, validatesDomain: false, trusted: false),
        Cell(chain: .selfSigned, mode: .none, allowInvalid: true, validatesDomain: true, trusted: false),
        Cell(chain: .selfSigned, mode: .none, allowInvalid: true, validatesDomain: false, trusted: true),
        // Public key: the pinned key is in the chain; an invalid chain needs allowInvalid.
        Cell(chain: .valid, mode: .publicKey, allowInvalid: false, validatesDomain: true, trusted: true),
        Cell(chain: .valid, mode: .publicKey, allowInvalid: false, validatesDomain: false, trusted: true),
        Cell(chain: .valid, mode: .publicKey, allowInvalid: true, validatesDomain: true, trusted: true),
        Cell(chain: .valid, mode: .publicKey, allowInvalid: true, validatesDomain: false, trusted: true),
        Cell(chain: .selfSigned, mode: .publicKey, allowInvalid: false, validatesDomain: true, trusted: false),
        Cell(chain: .selfSigned, mode: .publicKey, allowInvalid: false, validatesDomain: false, trusted: false),
        Cell(chain: .selfSigned, mode: .publicKey, allowInvalid: true, validatesDomain: true, trusted: true),
        Cell(chain: .selfSigned, mode: .publicKey, allowInvalid: true, validatesDomain: false, trusted: true),
        // Certificate: the pinned certificate anchors the chain; an invalid chain (against the
        // trust's anchors) needs allowInvalid.
        Cell(chain: .valid, mode: .certificate, allowInvalid: false, validatesDomain: true, trusted: true),
        Cell(chain: .valid, mode: .certificate, allowInvalid: false, validatesDomain: false, trusted: true),
        Cell(chain: .valid, mode: .certificate, allowInvalid: true, validatesDomain: true, trusted: true),
        Cell(chain: .valid, mode: .certificate, allowInvalid: true, validatesDomain: false, trusted: true),
        Cell(chain: .selfSigned, mode: .certificate, allowInvalid: false, validatesDomain: true, trusted: false),
        Cell(chain: .selfSigned, mode: .certificate, allowInvalid: false, validatesDomain: false, trusted: false),
        Cell(chain: .selfSigned, mode: .certificate, allowInvalid: true, validatesDomain: true, trusted: true),
        Cell(chain: .selfSigned, mode: .certificate, allowInvalid: true, validatesDomain: false, trusted: true),
    ]

    @Test(arguments: cells)
    func outcome(_ cell: Cell) {
        let pki = TestPKI.standard
        let sent = cell.chain == .valid ? pki.sentChain : [Self.selfSigned]
        var policy = SecurityPolicy(pinningMode: cell.mode, pinnedCertificates: [sent[0].certificate])
        policy.allowInvalidCertificates = cell.allowInvalid
        policy.validatesDomainName = cell.validatesDomain
        let outcome = policy.evaluation(of: pki.trust(sent), forDomain: "localhost")
        #expect(outcome.isTrusted == cell.trusted, "\(outcome.failureReason ?? "trusted")")
        #expect((outcome.failureReason == nil) == outcome.isTrusted)
        #expect(policy.evaluate(pki.trust(sent), forDomain: "localhost") == cell.trusted)
    }

    @Test func matrixIsComplete() {
        #expect(Self.cells.count == 2 * 3 * 2 * 2)
        let keys = Set(Self.cells.map { "\($0.chain) \($0.mode) \($0.allowInvalid) \($0.validatesDomain)" })
        #expect(keys.count == Self.cells.count)
    }

    @Test func selfSignedWithoutPinningExplainsTheRule() {
        var policy = SecurityPolicy.default
        policy.allowInvalidCertificates = true
        let outcome = policy.evaluation(of: TestPKI.standard.trust([Self.selfSigned]), forDomain: "localhost")
        #expect(outcome.failureReason?.contains("without pinning") == true)
        #expect(policy.evaluate(TestPKI.standard.trust([Self.selfSigned]), forDomain: nil),
                "without a domain there is no name to validate (AFNetworking's rule 1 needs one)")
    }
}
