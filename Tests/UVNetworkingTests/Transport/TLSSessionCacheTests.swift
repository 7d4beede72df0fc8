import COpenSSL
import Testing
@testable import UVNetworking

/// How many tickets a pool keeps: enough for its burst of new connections.
@Suite(.tags(.unit)) struct TLSSessionCacheTests {
    /// A resumable TLS 1.3 session, as a ticket makes (an id stands in for the ticket).
    private func ticket(_ number: UInt8) -> OpaquePointer {
        let session = SSL_SESSION_new()!
        SSL_SESSION_set_protocol_version(session, TLS1_3_VERSION)
        let id: [UInt8] = [number, 1, 2, 3]
        SSL_SESSION_set1_id(session, id, UInt32(id.count))
        return session
    }

    private func kept(storing count: Int, in cache: TLSSessionCache) -> Int {
        for number in 0..<count { cache.store(ticket(UInt8(number))) }
        var taken = 0
        while let session = cache.take() {
            SSL_SESSION_free(session)
            taken += 1
        }
        return taken
    }

    @Test func aPoolKeepsTwiceItsConnectionLimit() {
        // 16 connections handshaking at once bring up to 32 tickets; dropping any leaves a later
        // burst without one.
        #expect(kept(storing: 40, in: TLSSessionCache(connectionLimit: 16)) == 32)
    }

    @Test func smallPoolsKeepEight() {
        #expect(kept(storing: 20, in: TLSSessionCache(connectionLimit: 1)) == 8)
        #expect(kept(storing: 20, in: TLSSessionCache()) == 8)
    }

    @Test func anUnboundedLimitIsCapped() {
        #expect(kept(storing: 10, in: TLSSessionCache(connectionLimit: .max)) == 10)
    }
}
