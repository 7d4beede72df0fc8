import Foundation
import HTTPTypes
import Synchronization

/// Stored responses in memory, within a byte capacity: when a store would pass it, the least
/// recently used entries go first. Each key holds its variants (responses chosen by different
/// Vary selections); a new response for a key replaces the variant with the same selection.
/// An entry larger than `maximumEntryCost` is never kept. Thread-safe (one lock).
final class MemoryCacheStore: Sendable {
    /// The most bytes kept.
    let capacity: Int
    /// The largest entry kept.
    let maximumEntryCost: Int

    private struct Slot {
        var entry: CacheEntry
        var lastUsed: UInt64
    }

    private struct State {
        var variants: [String: [Slot]] = [:]
        var cost = 0
        var clock: UInt64 = 0
    }

    private let state = Mutex(State())

    init(capacity: Int, maximumEntryCost: Int? = nil) {
        self.capacity = max(0, capacity)
        self.maximumEntryCost = min(self.capacity, maximumEntryCost ?? self.capacity / 10)
    }

    /// Bytes in use.
    var currentCost: Int { state.withLock { $0.cost } }
    /// Entries kept, all keys' variants together.
    var count: Int { state.withLock { $0.variants.values.reduce(0) { $0 + $1.count } } }

    /// The variant of `key` that a request with `requestFields` may be answered with, if any;
    /// counts as a use.
    func entry(for key: String, requestFields: HTTPFields) -> CacheEntry? {
        state.withLock { state in
            guard var slots = state.variants[key], let index = slots.firstIndex(where: { $0.entry.matches(requestFields) }) else { return nil }
            state.clock += 1
            slots[index].lastUsed = state.clock
            state.variants[key] = slots
            return slots[index].entry
        }
    }

    /// Keeps `entry`, replacing the variant of its key with the same Vary selection; returns
    /// false when it is too large to keep (any old variant of that selection is removed then
    /// too: it is no longer the response).
    @discardableResult
    func store(_ entry: CacheEntry) -> Bool {
        let cost = entry.cost
        return state.withLock { state in
            var slots = state.variants[entry.key] ?? []
            if let index = slots.firstIndex(where: { $0.entry.varyNames == entry.varyNames && $0.entry.varyValues == entry.varyValues }) {
                state.cost -= slots[index].entry.cost
                slots.remove(at: index)
            }
            guard cost <= maximumEntryCost else {
                state.variants[entry.key] = slots.isEmpty ? nil : slots
                return false
            }
            state.clock += 1
            slots.append(Slot(entry: entry, lastUsed: state.clock))
            state.variants[entry.key] = slots
            state.cost += cost
            if state.cost > capacity { Self.evict(&state, downTo: capacity) }
            return true
        }
    }

    /// Removes every variant of `key`.
    func remove(_ key: String) {
        state.withLock { state in
            guard let slots = state.variants.removeValue(forKey: key) else { return }
            state.cost -= slots.reduce(0) { $0 + $1.entry.cost }
        }
    }

    /// Removes everything.
    func removeAll() {
        state.withLock { $0 = State() }
    }

    /// Drops the least recently used entries until the store holds at most `limit` bytes: one
    /// sort per overflow, not a list kept in order on every use.
    private static func evict(_ state: inout State, downTo limit: Int) {
        var all: [(key: String, lastUsed: UInt64, cost: Int)] = []
        for (key, slots) in state.variants {
            for slot in slots { all.append((key, slot.lastUsed, slot.entry.cost)) }
        }
        all.sort { $0.lastUsed < $1.lastUsed }
        for victim in all where state.cost > limit {
            guard var slots = state.variants[victim.key], let index = slots.firstIndex(where: { $0.lastUsed == victim.lastUsed }) else { continue }
            slots.remove(at: index)
            state.variants[victim.key] = slots.isEmpty ? nil : slots
            state.cost -= victim.cost
        }
    }
}
