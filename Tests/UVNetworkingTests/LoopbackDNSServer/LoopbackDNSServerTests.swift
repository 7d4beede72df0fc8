import Foundation
import Glibc
import LoopbackDNSServer
import Testing

/// The scripted DNS server's truncated answers and refused TCP, which the truncation tests rely on
/// (issue #34): checked here over raw sockets, without c-ares.
@Suite(.tags(.loopback)) struct LoopbackDNSServerTests {
    /// An A query for `name` (ID 0x1234, RD set).
    private func query(_ name: String) -> [UInt8] {
        var bytes: [UInt8] = [0x12, 0x34, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]
        for label in name.split(separator: ".") {
            bytes.append(UInt8(label.utf8.count))
            bytes.append(contentsOf: label.utf8)
        }
        bytes += [0, 0, 1, 0, 1]
        return bytes
    }

    private func loopback(port: Int) -> sockaddr_in {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        inet_pton(AF_INET, "127.0.0.1", &address.sin_addr)
        return address
    }

    /// The answer to `name` over UDP, nil if none came within 2 s.
    private func ask(_ name: String, port: Int) -> [UInt8]? {
        let fd = socket(AF_INET, Int32(SOCK_DGRAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: port)
        let bytes = query(name)
        let sent = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { sendto(fd, bytes, bytes.count, 0, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard sent == bytes.count else { return nil }
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, 2_000) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 512)
        let count = recv(fd, &buffer, buffer.count, 0)
        return count > 0 ? Array(buffer[0..<count]) : nil
    }

    @Test func aTruncatedEntryAnswersWithTCAndNoRecords() throws {
        let server = try LoopbackDNSServer()
        defer { server.stop() }
        server.set("big.test", .init(addresses: ["127.0.0.2"], behavior: .truncated))
        server.set("small.test", .init(addresses: ["127.0.0.2"]))
        let big = try #require(ask("big.test", port: server.port))
        #expect(big[0...1] == [0x12, 0x34])
        #expect(big[2] & 0x82 == 0x82)  // QR and TC
        #expect(big[3] & 0x0F == 0)  // NOERROR
        #expect(big[6...7] == [0, 0])  // no answer records
        let small = try #require(ask("small.test", port: server.port))
        #expect(small[2] & 0x02 == 0)
        #expect(small[6...7] == [0, 1])
    }

    @Test func tcpToItsPortIsRefused() throws {
        let server = try LoopbackDNSServer()
        defer { server.stop() }
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = loopback(port: server.port)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        let code = errno
        #expect(result == -1)
        #expect(code == ECONNREFUSED)
    }
}
