import Foundation
import Testing
@testable import UVNetworking

extension EndToEnd {
    /// TLS against servers that misbehave on purpose (the scripted server, with OpenSSL on its side
    /// where the fault needs TLS), and mutual TLS against nginx and an alerting server.
    @Suite(.tags(.nginx)) struct TLSFaultTests {
        private var pki: StandardTestPKI { TestPKI.standard }

        @Test func garbageInsteadOfAHandshakeFailsTheHandshake() throws {
            let server = try ScriptedServer { connection in
                try connection.write("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi")
                _ = connection.waitForPeerClose()
            }
            defer { server.stop() }
            let harness = tlsHarness()
            defer { harness.finish() }
            let outcome = harness.fetch("https://localhost:\(server.port)/")
            #expect(outcome.code == .secureConnectionFailed)
            #expect((outcome.error as? NetworkingError)?.kind == .tls)
        }

        @Test func serverThatStallsInTheHandshakeTimesOut() throws {
            let harness = tlsHarness { $0.connectTimeout = 0.5 }
            defer { harness.finish() }
            let server = try ScriptedServer { connection in
                _ = try? connection.readBytes(5, timeout: 5)  // the ClientHello's record header
                connection.pause(5)
            }
            // Stopped before the harness checks for leaks: the stalled server's socket is ours too.
            defer { server.stop() }
            let started = Date()
            let outcome = harness.fetch("https://localhost:\(server.port)/")
            #expect(outcome.code == .connectTimeout)
            #expect((outcome.error as? NetworkingError)?.detail.contains("TLS handshake") == true)
            #expect(Date().timeIntervalSince(started) < 4)
        }

        @Test func serverThatClosesInTheHandshakeFailsIt() throws {
            let server = try ScriptedServer { connection in
                _ = try? connection.readBytes(5, timeout: 5)
                connection.close()
            }
            defer { server.stop() }
            let harness = tlsHarness()
            defer { harness.finish() }
            #expect(harness.fetch("https://localhost:\(server.port)/").code == .secureConnectionFailed)
        }

        /// A scripted server that completes a TLS handshake with the standard chain, reads one
        /// request head and writes `response`; then says close_notify if asked, and closes.
        private func tlsServer(response: String, closeNotify: Bool, clientRoot: TestCertificate? = nil) throws -> ScriptedServer {
            let pki = self.pki
            return try ScriptedServer { connection in
                let tls = try ScriptedTLS(connection, chain: pki.sentChain, key: pki.leaf.key, clientRoot: clientRoot)
                try tls.handshake()
                _ = try tls.readRequestHead()
                try tls.write(response)
                if closeNotify { try tls.closeNotify() }
                connection.close()
            }
        }

        /// A response whose body only the end of the connection frames, then the end: with
        /// close_notify it is complete, without it it may have been cut short.
        private func eofFramedResponse(closeNotify: Bool) throws -> Outcome {
            let server = try tlsServer(response: "HTTP/1.1 200 OK\r\nConnection: close\r\n\r\nbody without a length",
                                       closeNotify: closeNotify)
            defer { server.stop() }
            let harness = tlsHarness()
            defer { harness.finish() }
            return harness.fetch("https://localhost:\(server.port)/")
        }

        @Test func eofFramedBodyEndedWithCloseNotifyIsComplete() throws {
            let outcome = try eofFramedResponse(closeNotify: true)
            #expect(outcome.status == 200)
            #expect(outcome.text == "body without a length")
        }

        @Test func eofFramedBodyEndedWithoutCloseNotifyIsATruncation() throws {
            let outcome = try eofFramedResponse(closeNotify: false)
            #expect(outcome.code == .truncatedResponse)
            #expect((outcome.error as? NetworkingError)?.detail.contains("close_notify") == true)
        }

        @Test func lengthFramedResponseWithoutCloseNotifyIsStillComplete() throws {
            let server = try tlsServer(response: "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: close\r\n\r\nhello",
                                       closeNotify: false)
            defer { server.stop() }
            let harness = tlsHarness()
            defer { harness.finish() }
            #expect(harness.fetch("https://localhost:\(server.port)/").text == "hello")
        }

        private func clientIdentity() throws -> ClientIdentity {
            try ClientIdentity.pem(certificateFile: pki.clientCertificatePEMPath, privateKeyFile: pki.clientKeyPEMPath)
        }

        @Test func mutualTLSPresentsTheConfiguredIdentity() throws {
            let nginx = try TestServers.nginxTLS()
            let identity = try clientIdentity()
            let harness = tlsHarness { $0.tls.clientIdentity = identity }
            defer { harness.finish() }
            let outcome = harness.fetch(nginx.url(.mutualTLS, path: "/client"))
            #expect(outcome.status == 200)
            #expect(outcome.text?.hasPrefix("SUCCESS ") == true, "\(outcome.text ?? "")")
            #expect(outcome.text?.contains("test client") == true)
        }

        @Test func mutualTLSWithAPKCS12Identity() throws {
            let nginx = try TestServers.nginxTLS()
            let archive = TestPKI.pkcs12(pki.clientLeaf, key: pki.clientLeaf.key, password: "p12 secret")
            let identity = try ClientIdentity.pkcs12(archive, password: "p12 secret")
            let harness = tlsHarness { $0.tls.clientIdentity = identity }
            defer { harness.finish() }
            #expect(harness.fetch(nginx.url(.mutualTLS, path: "/client")).text?.hasPrefix("SUCCESS ") == true)
            #expect(throws: NetworkingError.self) { try ClientIdentity.pkcs12(archive, password: "wrong") }
        }

        @Test func mutualTLSWithoutAnIdentityGetsNginxsRefusal() throws {
            let nginx = try TestServers.nginxTLS()
            let harness = tlsHarness()
            defer { harness.finish() }
            // nginx finishes the handshake and answers 400 "No required SSL certificate was sent".
            let outcome = harness.fetch(nginx.url(.mutualTLS, path: "/client"))
            #expect(outcome.status == 400)
            #expect(outcome.text?.contains("No required SSL certificate") == true)
        }

        @Test func serverThatRequiresACertificateAlertsAndTheTaskSaysSo() throws {
            let pki = self.pki
            let server = try ScriptedServer { connection in
                let tls = try ScriptedTLS(connection, chain: pki.sentChain, key: pki.leaf.key, clientRoot: pki.clientRoot)
                try? tls.handshake()
                _ = connection.waitForPeerClose()
            }
            defer { server.stop() }
            let harness = tlsHarness()
            defer { harness.finish() }
            #expect(harness.fetch("https://localhost:\(server.port)/").code == .clientCertificateRequired)

            let identity = try clientIdentity()
            let withIdentity = tlsHarness { $0.tls.clientIdentity = identity }
            defer { withIdentity.finish() }
            let accepted = try tlsServer(response: "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok", closeNotify: true,
                                         clientRoot: pki.clientRoot)
            defer { accepted.stop() }
            #expect(withIdentity.fetch("https://localhost:\(accepted.port)/").text == "ok")
        }

        @Test func unreadableClientIdentityIsAClearError() {
            #expect(throws: NetworkingError.self) {
                try ClientIdentity.pem(certificateFile: "/nonexistent/client.pem", privateKeyFile: "/nonexistent/key.pem")
            }
        }
    }
}
