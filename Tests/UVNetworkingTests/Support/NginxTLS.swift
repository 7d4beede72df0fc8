// nginx serving https for the TLS end-to-end tests: one process, one port per certificate
// scenario ("site"), every certificate made at test time by TestPKI (nothing that can expire is
// committed). Started on first use, shared by the whole test process, like `TestServers.nginx()`.

import Foundation
@testable import UVNetworking

/// The https nginx and the certificates behind each of its sites.
struct NginxTLSServer: Sendable {
    /// One server block each; all on 127.0.0.1, TLS 1.2 and 1.3, session cache and tickets on.
    enum Site: String, CaseIterable, Sendable {
        /// The standard chain (leaf for localhost, 127.0.0.1, ::1 + intermediate).
        case valid
        /// A leaf that expired yesterday.
        case expired
        /// A leaf valid from tomorrow.
        case notYetValid
        /// A leaf for "other.invalid" only.
        case wrongHost
        /// A leaf for "*.uvn.test" (clients map names to 127.0.0.1 with hostAddressOverrides).
        case wildcard
        /// A self-signed leaf for localhost.
        case selfSigned
        /// A chain under a root the client does not trust.
        case untrustedRoot
        /// The leaf alone: the intermediate is missing.
        case incompleteChain
        /// The standard chain plus an unrelated self-signed certificate whose key is `extraKey`.
        case appendedExtraCertificate
        /// A leaf with CN=localhost and no subjectAltName.
        case commonNameOnly
        /// A renewal of the standard leaf: same key, new certificate.
        case renewed
        /// The standard chain; asks for a client certificate under the client root and answers
        /// `/client` with "$ssl_client_verify $ssl_client_s_dn" (nginx answers 400 itself when
        /// no certificate came).
        case mutualTLS
    }

    let ports: [Site: Int]
    let directory: String
    /// The certificate `renewed` serves.
    let renewedLeaf: TestCertificate
    /// The key of the extra certificate `appendedExtraCertificate` appends.
    let extraCertificate: TestCertificate
    let wildcardLeaf: TestCertificate

    var pki: StandardTestPKI { TestPKI.standard }

    /// "https://<host>:<port of site><path>".
    func url(_ site: Site, host: String = "localhost", path: String = "/hello") -> String {
        let authority = host.contains(":") ? "[\(host)]" : host
        return "https://\(authority):\(ports[site]!)\(path)"
    }

    static let helloBody = "hello tls\n"

    /// The access log: one line per request, "<port> <uri> <status> <protocol> <reused>", where
    /// reused is "r" for a resumed TLS session and "." otherwise.
    func accessLog() -> [String] {
        let text = (try? String(contentsOfFile: directory + "/access.log", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").map(String.init)
    }

    /// Log lines for `site` whose request target is `uri`.
    func accessLog(_ site: Site, uri: String) -> [String] {
        accessLog().filter { $0.hasPrefix("\(ports[site]!) \(uri) ") }
    }
}

extension TestServers {
    /// The shared https nginx (see `NginxTLSServer`).
    static func nginxTLS() throws -> NginxTLSServer { try sharedNginxTLS.get() }

    private static let sharedNginxTLS = Result { try startNginxTLS() }

    private static func startNginxTLS() throws -> NginxTLSServer {
        // A plain-http port answers the readiness probe; the TLS sites follow.
        try launchNginx(name: "nginx-tls", probePath: "/ready", accepts: { $0 == "ready\n" }) { directory in
            let sites = NginxTLSServer.Site.allCases
            let free = try freeLoopbackPorts(sites.count + 1)
            let probePort = free[0]
            var ports: [NginxTLSServer.Site: Int] = [:]
            for (site, port) in zip(sites, free.dropFirst()) { ports[site] = port }
            return (probePort, try writeNginxTLSFiles(in: directory, probePort: probePort, ports: ports))
        }
    }

    private static func writeNginxTLSFiles(in directory: String, probePort: Int,
                                           ports: [NginxTLSServer.Site: Int]) throws -> NginxTLSServer {
        let pki = TestPKI.standard
        let day = TestPKI.day
        let now = Date()
        let localhost = (dns: ["localhost"], ip: ["127.0.0.1", "::1"])
        let renewed = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: localhost.dns, ipAddresses: localhost.ip,
                                       notBefore: now - 2 * day, notAfter: now + 60 * day, key: pki.leaf.key)
        let extra = TestPKI.makeSelfSigned(dnsNames: ["unrelated.invalid"])
        let wildcard = TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["*.uvn.test"])
        let otherRoot = TestPKI.makeRoot(name: "Untrusted Test Root")
        let otherIntermediate = TestPKI.makeIntermediate(name: "Untrusted Test Intermediate", issuer: otherRoot)

        // Each site: the certificates it sends (leaf first) and the leaf's key.
        var chains: [NginxTLSServer.Site: (certificates: [TestCertificate], key: TestKey)] = [:]
        chains[.valid] = (pki.sentChain, pki.leaf.key)
        chains[.mutualTLS] = (pki.sentChain, pki.leaf.key)
        chains[.renewed] = ([renewed, pki.intermediate], pki.leaf.key)
        chains[.wildcard] = ([wildcard, pki.intermediate], wildcard.key)
        chains[.appendedExtraCertificate] = (pki.sentChain + [extra], pki.leaf.key)
        func leaf(_ site: NginxTLSServer.Site, _ certificate: TestCertificate, chain: [TestCertificate] = [pki.intermediate]) {
            chains[site] = ([certificate] + chain, certificate.key)
        }
        leaf(.expired, TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: localhost.dns, ipAddresses: localhost.ip,
                                        notBefore: now - 10 * day, notAfter: now - day))
        leaf(.notYetValid, TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: localhost.dns, ipAddresses: localhost.ip,
                                            notBefore: now + day, notAfter: now + 30 * day))
        leaf(.wrongHost, TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: ["other.invalid"]))
        leaf(.selfSigned, TestPKI.makeSelfSigned(dnsNames: localhost.dns, ipAddresses: localhost.ip), chain: [])
        leaf(.untrustedRoot, TestPKI.makeLeaf(issuer: otherIntermediate, dnsNames: localhost.dns, ipAddresses: localhost.ip),
             chain: [otherIntermediate])
        leaf(.incompleteChain, TestPKI.makeLeaf(issuer: pki.intermediate, dnsNames: localhost.dns, ipAddresses: localhost.ip),
             chain: [])
        leaf(.commonNameOnly, TestPKI.makeLeaf(issuer: pki.intermediate, commonName: "localhost", includeSAN: false))

        try FileManager.default.createDirectory(atPath: directory + "/tmp", withIntermediateDirectories: true)
        var servers = ""
        for site in NginxTLSServer.Site.allCases {
            let (certificates, key) = chains[site]!
            let certificatePath = "\(directory)/\(site.rawValue).pem"
            let keyPath = "\(directory)/\(site.rawValue)-key.pem"
            TestPKI.writePEM(certificates, to: certificatePath)
            TestPKI.writePEM(key, to: keyPath)
            let clientAuth = site == .mutualTLS
                ? "ssl_verify_client on; ssl_client_certificate \(pki.clientRootPEMPath); ssl_verify_depth 2;" : ""
            servers += """
                    server {
                        listen 127.0.0.1:\(ports[site]!) ssl;
                        ssl_certificate \(certificatePath);
                        ssl_certificate_key \(keyPath);
                        \(clientAuth)
                        location = /hello { default_type text/plain; return 200 "hello tls\\n"; }
                        location = /client { default_type text/plain; return 200 "$ssl_client_verify $ssl_client_s_dn\\n"; }
                        location = /large { alias \(directory)/large.bin; }
                        location = /close { keepalive_timeout 0; default_type text/plain; return 200 "hello tls\\n"; }
                        location / { return 404; }
                    }

            """
        }
        try Data(NginxServer.largeBody(count: NginxServer.largeSize)).write(to: URL(fileURLWithPath: directory + "/large.bin"))
        let config = nginxConfig(directory: directory, http: """
                log_format tls '$server_port $request_uri $status $ssl_protocol $ssl_session_reused';
                access_log \(directory)/access.log tls;
                ssl_protocols TLSv1.2 TLSv1.3;
                ssl_session_cache shared:uvnetworking:1m;
                ssl_session_tickets on;
                server {
                    listen 127.0.0.1:\(probePort);
                    location = /ready { default_type text/plain; return 200 "ready\\n"; }
                }
            \(servers)
            """)
        try config.write(toFile: directory + "/nginx.conf", atomically: false, encoding: .utf8)
        return NginxTLSServer(ports: ports, directory: directory, renewedLeaf: renewed, extraCertificate: extra,
                              wildcardLeaf: wildcard)
    }
}
