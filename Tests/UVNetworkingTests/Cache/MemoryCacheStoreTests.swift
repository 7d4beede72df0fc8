import Foundation
import HTTPTypes
import Testing
@testable import UVNetworking

/// The in-memory store: variants by Vary selection, replacement, the capacity and LRU
/// eviction, the per-entry limit, removal.
@Suite(.tags(.unit)) struct MemoryCacheStoreTests {
    private func entry(_ key: String, body: Int = 100, vary: [String: String?] = [:], status: Int = 200) -> CacheEntry {
        var fields = HTTPFields()
        fields[.cacheControl] = "max-age=60"
        if !vary.isEmpty { fields[.vary] = vary.keys.sorted().joined(separator: ", ") }
        let now = Date()
        return CacheEntry(key: key, status: status, reason: "OK", fields: fields, body: Data(repeating: 0x61, count: body),
                          requestTime: now, responseTime: now, varyNames: vary.keys.sorted(), varyValues: vary)
    }

    private func request(_ pairs: [(String, String)] = []) -> HTTPFields {
        var fields = HTTPFields()
        for (name, value) in pairs { fields.append(HTTPField(name: HTTPField.Name(name)!, value: value)) }
        return fields
    }

    @Test func variantsAreChosenByTheirVarySelection() {
        let store = MemoryCacheStore(capacity: 100_000)
        store.store(entry("k", vary: ["accept-language": "fr"]))
        store.store(entry("k", body: 7, vary: ["accept-language": "en"]))
        store.store(entry("k", body: 9, vary: ["accept-language": String?.none]))
        #expect(store.count == 3)
        #expect(store.entry(for: "k", requestFields: request([("Accept-Language", "en")]))?.body.count == 7)
        #expect(store.entry(for: "k", requestFields: request())?.body.count == 9)
        #expect(store.entry(for: "k", requestFields: request([("Accept-Language", "de")])) == nil)
        // The same selection again replaces its variant.
        store.store(entry("k", body: 11, vary: ["accept-language": "en"]))
        #expect(store.count == 3)
        #expect(store.entry(for: "k", requestFields: request([("Accept-Language", "en")]))?.body.count == 11)
        store.remove("k")
        #expect(store.count == 0 && store.currentCost == 0)
    }

    @Test func theLeastRecentlyUsedGoWhenTheCapacityIsPassed() {
        let one = entry("a", body: 1000).cost
        let store = MemoryCacheStore(capacity: one * 3, maximumEntryCost: one * 2)
        store.store(entry("a", body: 1000))
        store.store(entry("b", body: 1000))
        store.store(entry("c", body: 1000))
        _ = store.entry(for: "a", requestFields: request())
        store.store(entry("d", body: 1000))
        #expect(store.entry(for: "b", requestFields: request()) == nil)
        #expect(store.entry(for: "a", requestFields: request()) != nil)
        #expect(store.entry(for: "c", requestFields: request()) != nil)
        #expect(store.entry(for: "d", requestFields: request()) != nil)
        #expect(store.currentCost <= store.capacity)
    }

    @Test func anEntryTooLargeIsNotKeptAndDropsItsOldVariant() {
        let store = MemoryCacheStore(capacity: 10_000, maximumEntryCost: 2_000)
        #expect(store.store(entry("a", body: 500)))
        #expect(!store.store(entry("a", body: 5_000)))
        #expect(store.entry(for: "a", requestFields: request()) == nil)
        #expect(store.currentCost == 0)
        let empty = MemoryCacheStore(capacity: 0)
        #expect(!empty.store(entry("a", body: 1)))
        store.store(entry("b"))
        store.removeAll()
        #expect(store.count == 0 && store.currentCost == 0)
    }

    @Test func aRevalidatedEntryTakesThe304sFieldsAndClock() {
        let old = entry("a")
        var update = HTTPFields()
        update[.cacheControl] = "max-age=600"
        update[.contentLength] = "0"
        let later = old.responseTime.addingTimeInterval(100)
        let fresh = old.revalidated(by: update, requestTime: later, responseTime: later)
        #expect(fresh.fields[.cacheControl] == "max-age=600")
        #expect(fresh.body == old.body)
        #expect(fresh.freshness.lifetime == 600)
        #expect(fresh.freshness.isFresh(at: later.addingTimeInterval(599)))
    }
}
