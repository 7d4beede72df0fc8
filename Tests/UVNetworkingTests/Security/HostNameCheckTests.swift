import Testing
@testable import UVNetworking

@Suite(.tags(.loopback)) struct HostNameCheckTests {
    let pki = TestPKI.standard

    private func matches(_ certificate: TestCertificate, _ host: String) -> Bool {
        HostNameCheck.mismatch(of: certificate.certificate, host: host) == nil
    }

    @Test func dnsNamesMatchWithoutCaseOrTrailingDot() {
        #expect(matches(pki.leaf, "localhost"))
        #expect(matches(pki.leaf, "LocalHost"))
        #expect(matches(pki.leaf, "localhost."))
        #expect(!matches(pki.leaf, "localhost.localdomain"))
        #expect(!matches(pki.leaf, "example.com"))
        #expect(!matches(pki.leaf, ""))
        #expect(!matches(pki.leaf, "."))
        #expect(!matches(pki.leaf, "localhost.."))
    }

    @Test func mismatchSaysWhatTheCertificateIsFor() throws {
        let reason = try #require(HostNameCheck.mismatch(of: pki.leaf.certificate, host: "example.com"))
        #expect(reason == "host name mismatch: the certificate is for localhost, 127.0.0.1, ::1, not example.com")
    }

    @Test func wildcardCoversExactlyOneLabel() {
        let wildcard = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["*.example.test"])
        #expect(matches(wildcard, "a.example.test"))
        #expect(matches(wildcard, "A.Example.Test"))
        #expect(!matches(wildcard, "a.b.example.test"))
        #expect(!matches(wildcard, "example.test"))
        #expect(!matches(wildcard, ".example.test"), "OpenSSL would read a leading dot as any subdomain")
        #expect(!matches(wildcard, "a..example.test"))
    }

    @Test func partialWildcardsMatchNothing() {
        let partial = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["f*.example.test"])
        #expect(!matches(partial, "foo.example.test"))
        #expect(!matches(partial, "f.example.test"))
        #expect(!matches(partial, "bar.example.test"))
    }

    @Test func ipLiteralsMatchAddressEntriesAsAddresses() {
        #expect(matches(pki.leaf, "127.0.0.1"))
        #expect(matches(pki.leaf, "::1"))
        #expect(matches(pki.leaf, "[::1]"))
        #expect(matches(pki.leaf, "0:0:0:0:0:0:0:1"))
        #expect(matches(pki.leaf, "::1%lo"))
        #expect(!matches(pki.leaf, "127.0.0.2"))
        #expect(!matches(pki.leaf, "::2"))
    }

    @Test func anIPLiteralDoesNotMatchADNSNameSpellingIt() {
        let dnsSpelled = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["127.0.0.1"])
        #expect(!matches(dnsSpelled, "127.0.0.1"))
    }

    @Test func commonNameIsNeverConsulted() throws {
        let cnOnly = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["localhost"], includeSAN: false)
        #expect(cnOnly.certificate.subjectSummary == "localhost")
        let reason = try #require(HostNameCheck.mismatch(of: cnOnly.certificate, host: "localhost"))
        #expect(reason.contains("common name"), "\(reason)")
        #expect(reason.contains("no DNS name or IP address"), "\(reason)")
    }
}
