import Testing
@testable import UVNetworking

/// The resolver's decisions without sockets: coalescing, TTLs, negative caching, timeouts.
@Suite(.tags(.unit)) struct DNSLookupBookTests {
    typealias Book = DNSLookupBook<Int>
    let key = Book.Key(host: "a.test", port: 80)
    let addresses = [SocketAddress(numericHost: "127.0.0.2", port: 80)!]

    private func book(maximum: UInt64 = 30_000) -> Book {
        Book(policy: .init(maximumMilliseconds: maximum, negativeMilliseconds: 5_000))
    }

    @Test func concurrentLookUpsShareOneQuery() {
        var book = book()
        let first = book.lookUp(key, waiter: 1, now: 0)
        #expect(first.0 == .startQuery(1))
        #expect(book.lookUp(key, waiter: 2, now: 1).0 == .joined)
        #expect(book.lookUp(Book.Key(host: "b.test", port: 80), waiter: 3, now: 1).0 == .startQuery(2))
        #expect(book.finished(key, query: 1, answer: .success(addresses), ttlSeconds: 60, now: 2) == [1, 2])
        #expect(book.flightCount == 1)
    }

    @Test func answersAreKeptForTheirTTLCappedByTheMaximum() {
        var book = book(maximum: 30_000)
        _ = book.lookUp(key, waiter: 1, now: 0)
        _ = book.finished(key, query: 1, answer: .success(addresses), ttlSeconds: 10, now: 0)
        #expect(book.lookUp(key, waiter: 2, now: 9_999).0 == .answered)
        #expect(book.lookUp(key, waiter: 3, now: 10_000).0 == .startQuery(2))
        _ = book.finished(key, query: 2, answer: .success(addresses), ttlSeconds: 3_600, now: 10_000)
        #expect(book.lookUp(key, waiter: 4, now: 39_999).0 == .answered)
        #expect(book.lookUp(key, waiter: 5, now: 40_000).0 == .startQuery(3))
    }

    @Test func aZeroTTLOrAZeroMaximumKeepsNothing() {
        var book = book(maximum: 30_000)
        _ = book.lookUp(key, waiter: 1, now: 0)
        _ = book.finished(key, query: 1, answer: .success(addresses), ttlSeconds: 0, now: 0)
        #expect(book.cachedCount == 0)
        var none = self.book(maximum: 0)
        _ = none.lookUp(key, waiter: 1, now: 0)
        _ = none.finished(key, query: 1, answer: .failure(.nameNotFound(host: "a.test")), ttlSeconds: nil, now: 0)
        #expect(none.cachedCount == 0)
    }

    @Test func noSuchNameAndNoAddressAreKeptBriefly() {
        var book = book()
        for (index, failure) in [TransportError.nameNotFound(host: "a.test"), .noAddresses(host: "a.test")].enumerated() {
            let start = UInt64(index) * 100_000
            guard case .startQuery(let query) = book.lookUp(key, waiter: 1, now: start).0 else {
                Issue.record("no query")
                return
            }
            _ = book.finished(key, query: query, answer: .failure(failure), ttlSeconds: nil, now: start)
            let (decision, answer) = book.lookUp(key, waiter: 2, now: start + 4_999)
            #expect(decision == .answered)
            if case .failure(let error)? = answer { #expect(NetworkingError(error).code == .dnsFailure) } else { Issue.record("not a failure") }
            #expect(book.lookUp(key, waiter: 3, now: start + 5_000).0 != .answered)
            _ = book.timedOut(key, query: query + 1)
        }
    }

    @Test func negativeAnswersAreBoundedByTheMaximum() {
        var book = book(maximum: 1_000)
        _ = book.lookUp(key, waiter: 1, now: 0)
        _ = book.finished(key, query: 1, answer: .failure(.nameNotFound(host: "a.test")), ttlSeconds: nil, now: 0)
        #expect(book.lookUp(key, waiter: 2, now: 999).0 == .answered)
        #expect(book.lookUp(key, waiter: 3, now: 1_000).0 == .startQuery(2))
    }

    @Test func timeoutsAndServerFailuresAreNotKept() {
        var book = book()
        _ = book.lookUp(key, waiter: 1, now: 0)
        #expect(book.timedOut(key, query: 1) == [1])
        #expect(book.lookUp(key, waiter: 2, now: 1).0 == .startQuery(2))
        _ = book.finished(key, query: 2, answer: .failure(.resolutionTimedOut(host: "a.test", milliseconds: nil)), ttlSeconds: nil, now: 1)
        _ = book.lookUp(key, waiter: 3, now: 2)
        _ = book.finished(key, query: 3, answer: .failure(.resolutionFailed(host: "a.test", status: 3)), ttlSeconds: nil, now: 2)
        #expect(book.cachedCount == 0)
    }

    @Test func aLateAnswerWakesNobodyButIsKept() {
        var book = book()
        _ = book.lookUp(key, waiter: 1, now: 0)
        #expect(book.timedOut(key, query: 1) == [1])
        #expect(book.lookUp(key, waiter: 2, now: 10).0 == .startQuery(2))
        // The first query's answer comes after all: it must not take query 2's waiters.
        #expect(book.finished(key, query: 1, answer: .success(addresses), ttlSeconds: 60, now: 20).isEmpty)
        #expect(book.flightCount == 1)
        #expect(book.finished(key, query: 2, answer: .success(addresses), ttlSeconds: 60, now: 30) == [2])
        #expect(book.lookUp(key, waiter: 3, now: 40).0 == .answered)
    }

    @Test func expiredAnswersAreSweptAsTheCacheGrows() {
        var book = book()
        for index in 0..<3_000 {
            let name = Book.Key(host: "h\(index).test", port: 80)
            let now = UInt64(index) * 1_000
            guard case .startQuery(let query) = book.lookUp(name, waiter: index, now: now).0 else { continue }
            _ = book.finished(name, query: query, answer: .success(addresses), ttlSeconds: 1, now: now)
        }
        #expect(book.cachedCount < 1_100)
    }

    @Test func removeAllHandsBackEveryWaiter() {
        var book = book()
        _ = book.lookUp(key, waiter: 1, now: 0)
        _ = book.lookUp(key, waiter: 2, now: 0)
        _ = book.lookUp(Book.Key(host: "b.test", port: 1), waiter: 3, now: 0)
        #expect(book.removeAll().sorted() == [1, 2, 3])
        #expect(book.flightCount == 0)
    }
}
