import COpenSSL
import Foundation
import Testing
@testable import UVNetworking

@Suite(.tags(.childProcess)) struct CertificateTests {
    let pki = TestPKI.standard

    @Test func parsesDER() throws {
        let certificate = try Certificate(derData: pki.leaf.der)
        #expect(certificate == pki.leaf.certificate)
        #expect(certificate.derData == pki.leaf.der)
        #expect(certificate.subjectSummary == "localhost")
        #expect(certificate.description == "Certificate(localhost)")
    }

    @Test func pemInitTakesTheFirstCertificate() throws {
        let pem = Data((pki.leaf.pem + pki.intermediate.pem).utf8)
        #expect(try Certificate(pemData: pem) == pki.leaf.certificate)
    }

    @Test func pemListKeepsOrderAndSkipsOtherBlocks() throws {
        // A key block in front, as in a combined key-and-chain file.
        let pem = Data((pki.leaf.key.pem + pki.leaf.pem + pki.intermediate.pem + pki.root.pem).utf8)
        let certificates = try Certificate.certificates(fromPEM: pem)
        #expect(certificates == [pki.leaf.certificate, pki.intermediate.certificate, pki.root.certificate])
        #expect(try Certificate(pemData: pem) == pki.leaf.certificate)
        #expect(ERR_peek_error() == 0, "parsing leaves no error behind on the thread")
    }

    @Test(arguments: [
        ("empty", Data()),
        ("text", Data("hello, world".utf8)),
        ("a SEQUENCE that is no certificate", Data([0x30, 0x03, 0x02, 0x01, 0x01])),
        ("a PEM key without certificate", Data(TestPKI.standard.leaf.key.pem.utf8)),
    ])
    func garbageIsRefused(name: String, data: Data) throws {
        let errors = [
            try #require(throws: NetworkingError.self, "DER: \(name)") { try Certificate(derData: data) },
            try #require(throws: NetworkingError.self, "PEM: \(name)") { try Certificate(pemData: data) },
            try #require(throws: NetworkingError.self, "PEM list: \(name)") { try Certificate.certificates(fromPEM: data) },
        ]
        for error in errors {
            #expect(error.code == .invalidCertificate)
            #expect(error.kind == .tls)
        }
        #expect(ERR_peek_error() == 0, "a refusal leaves no error behind on the thread")
    }

    @Test func derWithTrailingBytesIsRefused() {
        #expect(throws: NetworkingError.self) { try Certificate(derData: pki.leaf.der + Data([0])) }
    }

    @Test func aDamagedBlockAfterAGoodOneIsRefused() throws {
        // The second certificate cut in half: the file must not pass for a one-certificate chain.
        let second = pki.intermediate.pem
        let cut = String(second.prefix(second.count / 2))
        let error = try #require(throws: NetworkingError.self) {
            try Certificate.certificates(fromPEM: Data((pki.leaf.pem + cut).utf8))
        }
        #expect(error.code == .invalidCertificate)
        #expect(error.detail.contains("PEM certificate 2"), "\(error.detail)")
    }

    @Test func wrapsABorrowedX509WithItsOwnReference() throws {
        var borrowed: Certificate?
        do {
            let original = TestPKI.makeSelfSigned(dnsNames: ["borrowed.test"])
            borrowed = Certificate(x509: original.x509)
        }
        let certificate = try #require(borrowed)
        #expect(certificate.subjectSummary == "borrowed.test")
        #expect(try Certificate(derData: certificate.derData) == certificate)
    }

    @Test func equalityAndHashingAreByDER() throws {
        let fromDER = try Certificate(derData: pki.root.der)
        let fromPEM = try Certificate(pemData: Data(pki.root.pem.utf8))
        #expect(fromDER == fromPEM)
        #expect(Set([fromDER, fromPEM, pki.leaf.certificate]).count == 2)
        #expect(fromDER != pki.intermediate.certificate)
    }

    /// Found by the pem fuzz harness: DER read as given but PEM re-encoded, so one certificate
    /// read both ways compared unequal. Here the signature BIT STRING claims an unused bit and
    /// sets it, which BER allows and DER forbids; OpenSSL reads it and writes the bit cleared.
    @Test func aBERQuirkReadsToTheSameCertificateFromDERAndPEM() throws {
        var quirky = [UInt8](pki.root.der)
        let signature = Self.lastElementOfOuterSequence(quirky)
        #expect(quirky[signature.tag] == 0x03, "the certificate ends with its signature BIT STRING")
        quirky[signature.content] = 1  // one unused bit...
        quirky[quirky.count - 1] |= 1  // ...that is set
        let fromDER = try Certificate(derData: Data(quirky))
        let pem = "-----BEGIN CERTIFICATE-----\n" + Data(quirky).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END CERTIFICATE-----\n"
        let fromPEM = try Certificate(pemData: Data(pem.utf8))
        #expect(fromDER == fromPEM)
        #expect(fromDER.derData != Data(quirky), "the stored encoding is DER, not the input")
        #expect(try Certificate(derData: fromDER.derData) == fromDER)
    }

    /// Found by the pem fuzz harness: OpenSSL reads an algorithm whose parameters are a
    /// constructed end-of-contents (`20 00`), writes them as `00 00`, and cannot read that back.
    /// Such a certificate could be neither sent nor compared, so the readers refuse it.
    @Test func aCertificateWhoseReEncodingOpenSSLCannotReadIsRefused() throws {
        var der = [UInt8](pki.root.der)
        // The outer signature algorithm, just before the signature: ecdsa-with-SHA256, no parameters.
        let signature = Self.lastElementOfOuterSequence(der)
        let algorithm = signature.tag - 12
        #expect(der[algorithm..<(algorithm + 4)] == [0x30, 0x0A, 0x06, 0x08], "an AlgorithmIdentifier of 10 bytes")
        #expect(der[0..<2] == [0x30, 0x82], "a two-byte outer length")
        der.insert(contentsOf: [0x20, 0x00], at: signature.tag)
        der[algorithm + 1] += 2
        let outer = (Int(der[2]) << 8 | Int(der[3])) + 2
        der[2] = UInt8(outer >> 8)
        der[3] = UInt8(outer & 0xFF)
        let pem = "-----BEGIN CERTIFICATE-----\n" + Data(der).base64EncodedString(options: .lineLength64Characters)
            + "\n-----END CERTIFICATE-----\n"
        let errors = [
            try #require(throws: NetworkingError.self) { try Certificate(derData: Data(der)) },
            try #require(throws: NetworkingError.self) { try Certificate(pemData: Data(pem.utf8)) },
            try #require(throws: NetworkingError.self) { try Certificate.certificates(fromPEM: Data((pki.leaf.pem + pem).utf8)) },
        ]
        for error in errors {
            #expect(error.code == .invalidCertificate)
            #expect(error.detail.contains("cannot write back"), "read, then refused: \(error.detail)")
        }
        #expect(ERR_peek_error() == 0, "a refusal leaves no error behind on the thread")
    }

    /// The tag and content offsets of the last element inside DER's outer SEQUENCE.
    static func lastElementOfOuterSequence(_ der: [UInt8]) -> (tag: Int, content: Int) {
        /// The content offset and length of the element whose tag is at `tag`.
        func header(at tag: Int) -> (content: Int, length: Int) {
            let first = Int(der[tag + 1])
            guard first & 0x80 != 0 else { return (tag + 2, first) }
            let count = first & 0x7F
            let length = der[(tag + 2)..<(tag + 2 + count)].reduce(0) { $0 << 8 | Int($1) }
            return (tag + 2 + count, length)
        }
        var element = header(at: 0).content
        while true {
            let (content, length) = header(at: element)
            if content + length == der.count { return (element, content) }
            element = content + length
        }
    }

    @Test func subjectSummaryWithoutCommonNameIsTheWholeSubject() {
        let certificate = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["x.test"], commonName: "").certificate
        #expect(certificate.subjectSummary == "/O=UVNetworking Tests")
    }

    @Test func subjectAlternativeNamesListDNSNamesAndAddresses() {
        #expect(pki.leaf.certificate.subjectAlternativeNames == ["localhost", "127.0.0.1", "::1"])
        let cnOnly = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["cn.test"], includeSAN: false)
        #expect(cnOnly.certificate.subjectAlternativeNames == [])
    }

    @Test func publicKeySHA256IsWhatTheOpenSSLCommandPrints() throws {
        let path = TestPKI.makeDirectory("spki") + "/leaf.pem"
        TestPKI.writePEM([pki.leaf], to: path)
        let pipeline = "/usr/bin/openssl x509 -in '\(path)' -pubkey -noout"
            + " | /usr/bin/openssl pkey -pubin -outform der"
            + " | /usr/bin/openssl dgst -sha256 -binary | base64"
        let expected = try runShell(pipeline)
        #expect(expected.count == 44, "a base64 SHA-256: \(expected)")
        #expect(pki.leaf.certificate.publicKeySHA256 == expected)
        #expect(pki.root.certificate.publicKeySHA256 != expected)
    }

    @Test func publicKeySHA256StaysWithTheKey() {
        let renewed = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"], key: pki.leaf.key)
        #expect(renewed.certificate != pki.leaf.certificate)
        #expect(renewed.certificate.publicKeySHA256 == pki.leaf.certificate.publicKeySHA256)
        let rekeyed = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"])
        #expect(rekeyed.certificate.publicKeySHA256 != pki.leaf.certificate.publicKeySHA256)
    }

    @Test func directoryLoadingReadsDERAndPEMAndSkipsJunk() throws {
        let directory = TestPKI.makeDirectory("pins")
        let write = { (name: String, data: Data) in try data.write(to: URL(fileURLWithPath: directory + "/" + name)) }
        try write("leaf.der", pki.leaf.der)
        try write("LEAF-COPY.CER", pki.leaf.der)
        try write("bundle.crt", Data((pki.intermediate.pem + pki.root.pem).utf8))
        try write("client.pem", Data(pki.clientLeaf.pem.utf8))
        try write("key.pem", Data(pki.leaf.key.pem.utf8))          // no certificate
        try write("garbage.cer", Data("not a certificate".utf8))
        try write("notes.txt", Data(pki.clientRoot.pem.utf8))      // not a certificate extension
        try FileManager.default.createDirectory(atPath: directory + "/folder.pem", withIntermediateDirectories: false)

        let expected: Set = [pki.leaf.certificate, pki.intermediate.certificate, pki.root.certificate,
                             pki.clientLeaf.certificate]
        #expect(Certificate.certificates(inDirectory: directory) == expected)
        #expect(SecurityPolicy.certificates(inDirectory: directory) == expected)
        #expect(Certificate.certificates(inDirectory: directory + "/missing").isEmpty)
    }

    private func runShell(_ command: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
