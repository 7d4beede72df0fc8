import Foundation
@testable import UVNetworking

/// One PKI shared by the whole test process (made on first use): a server chain for
/// "localhost", 127.0.0.1 and ::1 (root → intermediate → leaf), and a client chain for mutual
/// TLS, with their PEM files on disk for tests that configure a session or start a TLS server.
struct StandardTestPKI: Sendable {
    /// The server root CA ("UVNetworking Test Root").
    let root: TestCertificate
    /// The intermediate CA that signs `leaf`.
    let intermediate: TestCertificate
    /// The server certificate for localhost, 127.0.0.1 and ::1 (serverAuth).
    let leaf: TestCertificate
    /// The client root CA, which a mutual-TLS server trusts.
    let clientRoot: TestCertificate
    /// The client certificate (clientAuth), signed by `clientRoot`.
    let clientLeaf: TestCertificate

    /// `root` as PEM: point `caFiles` at it.
    let rootPEMPath: String
    /// `leaf` then `intermediate` as PEM: what a test server sends.
    let serverChainPEMPath: String
    /// `leaf`'s key as unencrypted PEM.
    let serverKeyPEMPath: String
    /// `clientRoot` as PEM: what a mutual-TLS server verifies clients against.
    let clientRootPEMPath: String
    /// `clientLeaf` as PEM.
    let clientCertificatePEMPath: String
    /// `clientLeaf`'s key as unencrypted PEM.
    let clientKeyPEMPath: String

    /// Anchors with `root` only (no system CAs).
    let anchors: TrustStore

    fileprivate init() {
        root = TestPKI.makeRoot(name: "UVNetworking Test Root")
        intermediate = TestPKI.makeIntermediate(name: "UVNetworking Test Intermediate", issuer: root)
        leaf = TestPKI.makeLeaf(issuer: intermediate, dnsNames: ["localhost"], ipAddresses: ["127.0.0.1", "::1"])
        clientRoot = TestPKI.makeRoot(name: "UVNetworking Test Client Root")
        clientLeaf = TestPKI.makeLeaf(issuer: clientRoot, commonName: "test client", extendedKeyUsage: .clientAuth)

        let directory = TestPKI.makeDirectory("standard")
        rootPEMPath = directory + "/root.pem"
        serverChainPEMPath = directory + "/server-chain.pem"
        serverKeyPEMPath = directory + "/server-key.pem"
        clientRootPEMPath = directory + "/client-root.pem"
        clientCertificatePEMPath = directory + "/client.pem"
        clientKeyPEMPath = directory + "/client-key.pem"
        TestPKI.writePEM([root], to: rootPEMPath)
        TestPKI.writePEM([leaf, intermediate], to: serverChainPEMPath)
        TestPKI.writePEM(leaf.key, to: serverKeyPEMPath)
        TestPKI.writePEM([clientRoot], to: clientRootPEMPath)
        TestPKI.writePEM([clientLeaf], to: clientCertificatePEMPath)
        TestPKI.writePEM(clientLeaf.key, to: clientKeyPEMPath)

        anchors = try! TrustStore(trustsSystemCAs: false, caFiles: [rootPEMPath])
    }

    /// A trust for `certificates` as a server sent them (leaf first), against `anchors`.
    func trust(_ certificates: [TestCertificate], host: String = "localhost") -> ServerTrust {
        ServerTrust(host: host, certificates: certificates.map(\.certificate), anchors: anchors)
    }

    /// The standard chain as the server sends it: leaf and intermediate.
    var sentChain: [TestCertificate] { [leaf, intermediate] }
}

extension TestPKI {
    /// The process's shared PKI.
    static let standard = StandardTestPKI()
}
