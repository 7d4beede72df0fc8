import Foundation
import Testing
@testable import UVNetworking

/// The store's limits: per domain, in all, and per cookie; eviction takes expired cookies
/// first, then the least recently used.
@Suite(.tags(.unit)) struct CookieStoreLimitsTests {
    let clock = TestClock()

    @Test func theStandardLimitsHold() {
        let store = clock.store()
        #expect(CookieStore.maximumCookiesPerDomain == 50)
        #expect(CookieStore.maximumCookieCount == 3000)
        #expect(CookieStore.maximumNameAndValueBytes == 4096)
        for index in 0...50 { store.set("c\(index)=1", from: "http://example.com/") }
        #expect(store.allCookies.count == 50)
        // The oldest, never sent since, was the one to go.
        #expect(!store.allCookies.contains { $0.name == "c0" })
        for index in 0..<3000 { store.set("c=1", from: "http://h\(index).example.org/") }
        #expect(store.allCookies.count == 3000)
    }

    @Test func aCookieOver4096BytesOfNameAndValueIsRefused() {
        let store = clock.store()
        store.set("n=" + String(repeating: "v", count: 4095), from: "http://example.com/")
        store.set("m=" + String(repeating: "v", count: 4096), from: "http://example.com/")
        #expect(store.allCookies.map(\.name) == ["n"])
    }

    @Test func aFullDomainEvictsItsLeastRecentlyUsedCookie() {
        let store = clock.store(limits: CookieLimits(cookiesPerDomain: 3, cookies: 100))
        store.set("a=1; Path=/a", "b=1; Path=/b", "c=1; Path=/c", from: "http://example.com/")
        // Sending a makes b the least recently used.
        #expect(store.header("http://example.com/a") == "a=1")
        store.set("d=1; Path=/d", from: "http://example.com/")
        #expect(store.allCookies.map(\.name) == ["a", "c", "d"])
        // Other domains are not counted against this one.
        store.set("e=1", from: "http://example.org/")
        #expect(store.allCookies.count == 4)
    }

    @Test func expiredCookiesAreEvictedBeforeUsedOnes() {
        let store = clock.store(limits: CookieLimits(cookiesPerDomain: 3, cookies: 100))
        store.set("a=1", "b=1", "c=1; Max-Age=10", from: "http://example.com/")
        clock.advance(20)
        store.set("d=1", from: "http://example.com/")
        #expect(store.allCookies.map(\.name) == ["a", "b", "d"])
    }

    @Test func aFullStoreEvictsTheLeastRecentlyUsedCookieAnywhere() {
        let store = clock.store(limits: CookieLimits(cookiesPerDomain: 50, cookies: 3))
        store.set("a=1", from: "http://a.example/")
        store.set("b=1", from: "http://b.example/")
        store.set("c=1", from: "http://c.example/")
        #expect(store.header("http://a.example/") == "a=1")
        store.set("d=1", from: "http://d.example/")
        #expect(store.allCookies.map(\.name) == ["a", "c", "d"])
        // Expired cookies go first, wherever they are.
        store.set("e=1; Max-Age=5", from: "http://a.example/")
        #expect(store.allCookies.map(\.name) == ["a", "d", "e"])
        clock.advance(10)
        store.set("f=1", from: "http://f.example/")
        #expect(store.allCookies.map(\.name) == ["a", "d", "f"])
    }
}
