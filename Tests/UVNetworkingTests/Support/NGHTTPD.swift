// nghttpd from Debian (nghttp2-server): an HTTP/2 server no one here wrote, as the tests'
// reference peer beside nginx. Started on first use, shared by the test process.

import Foundation

/// A running nghttpd, serving `directory` over h2c (prior knowledge) or h2 over TLS.
struct NGHTTPDServer: Sendable {
    let port: Int
    /// Its document root: files the tests put there are served as they are.
    let directory: String
    let tls: Bool

    func url(_ path: String) -> URL {
        URL(string: "\(tls ? "https" : "http")://\(tls ? "localhost" : "127.0.0.1"):\(port)\(path)")!
    }
}

extension TestServers {
    /// nghttpd over plain TCP (h2c, prior knowledge only), echoing uploads.
    static func nghttpd() throws -> NGHTTPDServer { try sharedNGHTTPD.get() }
    /// nghttpd over TLS with the standard test certificate (ALPN h2 only).
    static func nghttpdTLS() throws -> NGHTTPDServer { try sharedNGHTTPDTLS.get() }

    private static let sharedNGHTTPD = Result { try startNGHTTPD(tls: false) }
    private static let sharedNGHTTPDTLS = Result { try startNGHTTPD(tls: true) }

    /// The files every nghttpd serves: small and large bodies for the protocol tests.
    private static func populate(_ directory: String) throws {
        try "hello over h2\n".write(toFile: directory + "/hello.txt", atomically: false, encoding: .utf8)
        var generator = SplitMix64(seed: 36)
        let big = (0..<(1 << 20)).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
        try Data(big).write(to: URL(fileURLWithPath: directory + "/1MiB.bin"))
        // 32 MiB of zeros, sparse: a body far larger than a stream's window.
        guard FileManager.default.createFile(atPath: directory + "/zeros-32MiB.bin", contents: nil) else {
            throw TestServerError(description: "cannot create \(directory)/zeros-32MiB.bin")
        }
        let zeros = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/zeros-32MiB.bin"))
        try zeros.truncate(atOffset: 32 << 20)
        try zeros.close()
        // 1 GiB of zeros, sparse (no disk), for the bounded-memory transfers.
        guard FileManager.default.createFile(atPath: directory + "/zeros-1GiB.bin", contents: nil) else {
            throw TestServerError(description: "cannot create \(directory)/zeros-1GiB.bin")
        }
        let gib = try FileHandle(forWritingTo: URL(fileURLWithPath: directory + "/zeros-1GiB.bin"))
        try gib.truncate(atOffset: 1 << 30)
        try gib.close()
    }

    private static func startNGHTTPD(tls: Bool) throws -> NGHTTPDServer {
        let binary = "/usr/sbin/nghttpd"
        guard access(binary, X_OK) == 0 else { throw TestServerError(description: "\(binary) is missing: run `make test`, which installs nghttp2-server") }
        var failures: [String] = []
        for _ in 1...5 {
            let directory = try makeTemporaryDirectory(prefix: "uvnetworking-nghttpd")
            try populate(directory)
            let port = try freeLoopbackPort()
            var arguments = [binary, "--address=127.0.0.1", "--htdocs=\(directory)", "--echo-upload", "--workers=1"]
            if tls {
                let pki = TestPKI.standard
                arguments += [String(port), pki.serverKeyPEMPath, pki.serverChainPEMPath]
            } else {
                arguments += ["--no-tls", String(port)]
            }
            let server = try SupervisedProcess.launch(arguments, directory: directory)
            let deadline = monotonicSeconds() + 10
            while monotonicSeconds() < deadline, server.exitStatus == nil {
                if (try? RawTCPClient(port: port, timeout: 1)) != nil {
                    return NGHTTPDServer(port: port, directory: directory, tls: tls)
                }
                usleep(20_000)
            }
            let output = server.output()
            server.release()
            try? FileManager.default.removeItem(atPath: directory)
            failures.append("not listening on \(port): \(output)")
        }
        throw TestServerError(description: "nghttpd did not start: " + failures.joined(separator: " | "))
    }
}
