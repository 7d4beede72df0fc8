import Testing
@testable import UVNetworking

/// `PreparedRequest.Origin.placementHash`: which loop of a session's group runs an origin.
@Suite(.tags(.loopback)) struct OriginPlacementTests {
    private func origin(_ scheme: String, _ host: String, _ port: Int) -> PreparedRequest.Origin {
        PreparedRequest.Origin(scheme: scheme, host: host, port: port)
    }

    @Test func theSameOriginAlwaysHashesAlikeWhateverItsPolicyOrProxy() {
        let plain = origin("https", "example.com", 443)
        var other = plain
        other.securityID = 7
        other.proxy = ProxyEndpoint(host: "127.0.0.1", port: 3128)
        #expect(plain.placementHash == origin("https", "example.com", 443).placementHash)
        #expect(plain.placementHash == other.placementHash)
        // Stable across runs (not Hasher's per-process seed): FNV-1a of "http", 0, "127.0.0.1", 0
        // and the port's 8 bytes, folded, worked out by hand.
        #expect(origin("http", "127.0.0.1", 80).placementHash == -6_678_343_978_271_711_008)
    }

    @Test func schemeHostAndPortEachCount() {
        let base = origin("https", "example.com", 443).placementHash
        #expect(origin("http", "example.com", 443).placementHash != base)
        #expect(origin("https", "example.org", 443).placementHash != base)
        #expect(origin("https", "example.com", 8443).placementHash != base)
        // The separator keeps scheme and host apart.
        #expect(origin("ab", "c", 1).placementHash != origin("a", "bc", 1).placementHash)
    }

    @Test func manyOriginsSpreadEvenlyOverTheLoops() {
        for loops in [2, 3, 4, 16] {
            var counts = [Int](repeating: 0, count: loops)
            for index in 0..<4_000 {
                let hash = origin("https", "host\(index).example", 443).placementHash
                counts[Int(UInt(bitPattern: hash) % UInt(loops))] += 1
            }
            let even = 4_000 / loops
            #expect(counts.allSatisfy { abs($0 - even) < even / 5 }, "\(loops) loops: \(counts)")
            // Ports of one host spread too (the benchmark's origins differ only by port).
            var byPort = [Int](repeating: 0, count: loops)
            for port in 20_000..<24_000 {
                byPort[Int(UInt(bitPattern: origin("https", "127.0.0.1", port).placementHash) % UInt(loops))] += 1
            }
            #expect(byPort.allSatisfy { abs($0 - even) < even / 5 }, "\(loops) loops by port: \(byPort)")
        }
    }
}
