import Foundation

/// The limits of RFC 6265 §5.3's last paragraph: past a limit, expired cookies go first, then
/// the least recently used ones, of the over-full domain for the per-domain limit, of the whole
/// store for the total.
extension CookieJar {
    /// Brings the store back within its limits after a cookie was added to `domain`.
    mutating func enforceLimits(after domain: String, now: Date) {
        var expiredRemoved = false
        if let list = entries[domain], list.count > limits.cookiesPerDomain {
            removeExpired(now: now)
            expiredRemoved = true
            while let list = entries[domain], list.count > limits.cookiesPerDomain {
                removeEntry(domain: domain, at: Self.leastRecentlyUsed(in: list))
            }
        }
        guard count > limits.cookies else { return }
        if !expiredRemoved { removeExpired(now: now) }
        while count > limits.cookies {
            // Only reached at the limit, one cookie over it: one scan per cookie added.
            var oldest: (domain: String, index: Int, tick: UInt64)?
            for (key, list) in entries {
                let index = Self.leastRecentlyUsed(in: list)
                if oldest == nil || list[index].lastUsedTick < oldest!.tick { oldest = (key, index, list[index].lastUsedTick) }
            }
            guard let oldest else { return }
            removeEntry(domain: oldest.domain, at: oldest.index)
        }
    }

    private static func leastRecentlyUsed(in list: [Entry]) -> Int {
        list.indices.min { list[$0].lastUsedTick < list[$1].lastUsedTick }!
    }
}
