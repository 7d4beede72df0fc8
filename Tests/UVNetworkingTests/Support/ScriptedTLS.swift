// The server side of TLS on a scripted connection, for faults nginx will not commit: a body
// framed by the end of the connection that ends without close_notify, a client certificate
// refused with an alert. OpenSSL in server mode over memory BIOs; records are read whole (a
// 5-byte header, then its length) so the blocking ScriptedConnection API is enough.

import COpenSSL
import Foundation
@testable import UVNetworking

/// Why a scripted TLS exchange failed.
struct ScriptedTLSError: Error, CustomStringConvertible {
    let description: String
}

/// One server-side TLS session on a scripted connection.
final class ScriptedTLS {
    private let connection: ScriptedConnection
    private let context: OpaquePointer
    private let ssl: OpaquePointer
    private let input: OpaquePointer
    private let output: OpaquePointer

    /// - Parameters:
    ///   - chain: the certificates sent, leaf first; `key` is the leaf's.
    ///   - clientRoot: when set, a client certificate under it is required (no certificate is
    ///     a handshake failure with an alert, not nginx's HTTP 400).
    init(_ connection: ScriptedConnection, chain: [TestCertificate], key: TestKey,
         clientRoot: TestCertificate? = nil) throws {
        self.connection = connection
        guard let context = SSL_CTX_new(TLS_server_method()) else { throw ScriptedTLSError(description: "SSL_CTX_new") }
        self.context = context
        guard SSL_CTX_use_certificate(context, chain[0].x509) == 1,
              chain.dropFirst().allSatisfy({ uvn_SSL_CTX_add1_chain_cert(context, $0.x509) == 1 }),
              SSL_CTX_use_PrivateKey(context, key.pkey) == 1 else {
            SSL_CTX_free(context)
            throw ScriptedTLSError(description: "server certificate refused: \(OpenSSLErrorQueue.drain())")
        }
        if let clientRoot {
            X509_STORE_add_cert(SSL_CTX_get_cert_store(context), clientRoot.x509)
            SSL_CTX_set_verify(context, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nil)
        }
        guard let ssl = SSL_new(context), let input = BIO_new(BIO_s_mem()), let output = BIO_new(BIO_s_mem()) else {
            SSL_CTX_free(context)
            throw ScriptedTLSError(description: "SSL_new")
        }
        self.ssl = ssl
        self.input = input
        self.output = output
        _ = uvn_BIO_set_mem_eof_return(input, -1)
        SSL_set_bio(ssl, input, output)
        SSL_set_accept_state(ssl)
    }

    deinit {
        SSL_free(ssl)
        SSL_CTX_free(context)
    }

    /// Completes the handshake; throws (after sending OpenSSL's alert) when it fails.
    func handshake(timeout: Double = 5) throws {
        while true {
            let result = SSL_do_handshake(ssl)
            try flush()
            if result == 1 { return }
            guard SSL_get_error(ssl, result) == SSL_ERROR_WANT_READ else {
                throw ScriptedTLSError(description: "server handshake failed: \(OpenSSLErrorQueue.drain())")
            }
            try readRecord(timeout: timeout)
        }
    }

    /// Reads decrypted bytes until the request head's blank line.
    func readRequestHead(timeout: Double = 5) throws -> String {
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 16 * 1024)
        while !received.ends(with: Array("\r\n\r\n".utf8)) {
            let count = SSL_read(ssl, &buffer, Int32(buffer.count))
            if count > 0 {
                received += buffer[0..<Int(count)]
                continue
            }
            try flush()
            guard SSL_get_error(ssl, count) == SSL_ERROR_WANT_READ else {
                throw ScriptedTLSError(description: "server read failed: \(OpenSSLErrorQueue.drain())")
            }
            try readRecord(timeout: timeout)
        }
        return String(decoding: received, as: UTF8.self)
    }

    /// Encrypts and sends `text`.
    func write(_ text: String) throws {
        let bytes = Array(text.utf8)
        guard SSL_write(ssl, bytes, Int32(bytes.count)) == Int32(bytes.count) else {
            throw ScriptedTLSError(description: "server write failed: \(OpenSSLErrorQueue.drain())")
        }
        try flush()
    }

    /// Sends close_notify.
    func closeNotify() throws {
        _ = SSL_shutdown(ssl)
        try flush()
    }

    private func flush() throws {
        let pending = Int(BIO_ctrl_pending(output))
        guard pending > 0 else { return }
        var bytes = [UInt8](repeating: 0, count: pending)
        let read = BIO_read(output, &bytes, Int32(pending))
        try connection.write(Array(bytes[0..<Int(max(0, read))]))
    }

    private func readRecord(timeout: Double) throws {
        let header = try connection.readBytes(5, timeout: timeout)
        let length = Int(header[3]) << 8 | Int(header[4])
        let body = length > 0 ? try connection.readBytes(length, timeout: timeout) : []
        let record = header + body
        _ = BIO_write(input, record, Int32(record.count))
    }
}

private extension Array where Element == UInt8 {
    func ends(with suffix: [UInt8]) -> Bool {
        count >= suffix.count && Array(self[(count - suffix.count)...]) == suffix
    }
}
