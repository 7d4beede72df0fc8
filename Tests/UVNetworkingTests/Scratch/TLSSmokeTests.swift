import Foundation
import Testing
@testable import UVNetworking

@Suite struct TLSSmoke {
    @Test func getOverTLS() throws {
        let harness = ClientHarness { $0.tls.additionalTrustedCAFiles = ["/tmp/tlssmoke/cert.pem"] }
        let a = harness.fetch("https://localhost:18443/hello")
        print("A", a.status as Any, a.text as Any, a.error as Any)
        #expect(a.text == "hello\n")
        let b = harness.fetch("https://127.0.0.1:18443/big")
        print("B", b.status as Any, b.data?.count as Any, b.error as Any)
        let c = harness.fetch("https://localhost:18443/hello")
        print("C", c.status as Any, c.error as Any)
        Thread.sleep(forTimeInterval: 2.5)
        let d = harness.fetch("https://localhost:18443/hello")
        print("D", d.status as Any, d.error as Any)
        let bad = ClientHarness { _ in }
        let e = bad.fetch("https://localhost:18443/hello")
        print("E", e.status as Any, e.error as Any)
        bad.finish()
        harness.finish()
    }
}
