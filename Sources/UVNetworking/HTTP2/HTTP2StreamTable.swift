/// The streams running on one connection, by stream id, without hashing.
///
/// A client's stream ids are odd and rise by two (RFC 9113 §5.1.1), and the streams running at
/// once are a window of recent ids, so `id >> 1` modulo a power of two spreads them over the
/// slots with next to no collisions; linear probing settles the rest. A dictionary hashed each
/// id with SipHash on each of the half dozen lookups a response makes.
///
/// `Stream` is `HTTP2Stream` but for the tests. Loop-confined, like the connection that keeps it.
struct HTTP2StreamTable<Stream> {
    /// Stream ids by slot, 0 for an empty slot (no stream has id 0).
    private var ids: [Int32]
    private var streams: [Stream?]
    private(set) var count = 0
    /// Entries not in their home slot (they probed past a taken one). While there are none, as
    /// when the running streams span fewer ids than there are slots, a removal has nothing to
    /// shift back and costs one store.
    private(set) var displaced = 0

    init(capacity: Int = 16) {
        var slots = 8
        while slots < capacity * 2 { slots <<= 1 }
        ids = Array(repeating: 0, count: slots)
        streams = Array(repeating: nil, count: slots)
    }

    var isEmpty: Bool { count == 0 }

    /// Slots in the table (tests: it grows only with the streams running at once).
    var slotCount: Int { ids.count }

    private var mask: Int { ids.count - 1 }

    @inline(__always)
    private func home(_ id: Int32) -> Int { Int(truncatingIfNeeded: id >> 1) & mask }

    /// The slot holding `id`, if any.
    @inline(__always)
    private func slot(of id: Int32) -> Int? {
        guard id > 0 else { return nil }
        var index = home(id)
        while true {
            let found = ids[index]
            if found == id { return index }
            if found == 0 { return nil }
            index = (index + 1) & mask
        }
    }

    subscript(id: Int32) -> Stream? {
        guard let index = slot(of: id) else { return nil }
        return streams[index]
    }

    /// Adds `stream` under `id` (a new id: nghttp2 never reuses one on a connection).
    mutating func insert(_ stream: Stream, id: Int32) {
        precondition(id > 0, "stream ids are positive")
        // At most half full: probes stay short, and an empty slot always ends a search.
        if (count + 1) * 2 > ids.count { grow() }
        var index = home(id)
        while ids[index] != 0 {
            if ids[index] == id {
                streams[index] = stream
                return
            }
            index = (index + 1) & mask
        }
        ids[index] = id
        streams[index] = stream
        count += 1
        if index != home(id) { displaced += 1 }
    }

    /// Removes `id`'s stream; returns whether there was one.
    @discardableResult
    mutating func remove(_ id: Int32) -> Bool {
        guard var hole = slot(of: id) else { return false }
        ids[hole] = 0
        streams[hole] = nil
        count -= 1
        if hole != home(id) { displaced -= 1 }
        // Backward shift: entries after the hole that probed past it move into it, so that no
        // search stops early at the new empty slot (no tombstones to clean up later).
        var index = (hole + 1) & mask
        while displaced > 0 && ids[index] != 0 {
            let wanted = home(ids[index])
            // Whether `wanted` lies cyclically outside (hole, index]: then the entry may move.
            let distanceToHole = (hole - wanted) & mask
            let distanceToIndex = (index - wanted) & mask
            if distanceToHole < distanceToIndex {
                ids[hole] = ids[index]
                streams[hole] = streams[index]
                ids[index] = 0
                streams[index] = nil
                if hole == wanted { displaced -= 1 }
                hole = index
            }
            index = (index + 1) & mask
        }
        return true
    }

    /// Removes every stream; returns them by id, lowest first.
    mutating func removeAll() -> [Stream] {
        let running = sortedByID
        for index in ids.indices where ids[index] != 0 {
            ids[index] = 0
            streams[index] = nil
        }
        count = 0
        displaced = 0
        return running
    }

    /// The streams, lowest id first (for the rare walks: timers, GOAWAY, teardown).
    var sortedByID: [Stream] {
        entries.sorted { $0.id < $1.id }.map(\.stream)
    }

    /// The ids and streams, in no order.
    var entries: [(id: Int32, stream: Stream)] {
        var all: [(id: Int32, stream: Stream)] = []
        all.reserveCapacity(count)
        for index in ids.indices where ids[index] != 0 {
            if let stream = streams[index] { all.append((ids[index], stream)) }
        }
        return all
    }

    /// Entries out of their home slot, counted afresh (tests: `displaced` must agree).
    var displacedByScan: Int {
        ids.indices.filter { ids[$0] != 0 && home(ids[$0]) != $0 }.count
    }

    private mutating func grow() {
        let old = entries
        ids = Array(repeating: 0, count: ids.count * 2)
        streams = Array(repeating: nil, count: ids.count)
        count = 0
        displaced = 0
        for entry in old { insert(entry.stream, id: entry.id) }
    }
}
