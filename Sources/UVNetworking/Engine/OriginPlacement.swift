/// Which loop of a session's group runs an origin's tasks (and holds its pool).
extension PreparedRequest.Origin {
    /// FNV-1a over the scheme, the host and the port: the same for every task of an origin, and
    /// in every run (Swift's `Hasher` is seeded per process), so tests and benchmarks place
    /// origins alike each time. The security binding and the proxy are left out: an origin's
    /// pools for different policies or proxies share its loop.
    var placementHash: Int {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        @inline(__always) func mix(_ byte: UInt8) {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
        }
        for byte in scheme.utf8 { mix(byte) }
        mix(0)
        for byte in host.utf8 { mix(byte) }
        mix(0)
        var port = UInt64(truncatingIfNeeded: port)
        for _ in 0..<8 {
            mix(UInt8(truncatingIfNeeded: port))
            port >>= 8
        }
        // The high bits mix best: fold them down before the caller takes a remainder.
        return Int(truncatingIfNeeded: hash ^ (hash >> 32))
    }
}
