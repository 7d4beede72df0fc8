import Testing
@testable import UVNetworking

/// The connection's table of running streams, against a dictionary doing the same.
@Suite(.tags(.unit)) struct HTTP2StreamTableTests {
    final class Box {
        let id: Int32
        init(_ id: Int32) { self.id = id }
    }

    /// Checks every id in `model` is found, and some absent ones are not.
    private func expectSame(_ table: HTTP2StreamTable<Box>, _ model: [Int32: Box], upTo highest: Int32) {
        #expect(table.count == model.count)
        #expect(table.displaced == table.displacedByScan)
        #expect(table.isEmpty == model.isEmpty)
        for id in stride(from: Int32(1), through: highest + 2, by: 2) {
            #expect(table[id] === model[id], "stream \(id)")
        }
        #expect(table[0] == nil)
        #expect(table[-1] == nil)
        #expect(table.sortedByID.map(\.id) == model.keys.sorted())
    }

    @Test func streamsOpenedAndClosedInAnyOrderAreFound() {
        var table = HTTP2StreamTable<Box>()
        var model: [Int32: Box] = [:]
        var generator = SplitMix64(seed: 36)
        var next: Int32 = 1
        for step in 0..<5_000 {
            // Mostly opens while few run, mostly closes while many do: the live set wanders
            // between none and about a hundred, over ids far apart.
            let opens = model.count < 8 || (model.count < 120 && generator.next() % 3 > 0)
            if opens {
                let box = Box(next)
                table.insert(box, id: next)
                model[next] = box
                next += 2
            } else {
                let keys = Array(model.keys)
                let id = keys[Int(generator.next() % UInt64(keys.count))]
                let removed = table.remove(id)
                model[id] = nil
                let removedTwice = table.remove(id)
                #expect(removed && !removedTwice)
            }
            if step % 97 == 0 { expectSame(table, model, upTo: next) }
        }
        expectSame(table, model, upTo: next)
        let all = table.removeAll()
        #expect(all.map(\.id) == model.keys.sorted())
        expectSame(table, [:], upTo: next)
    }

    /// Ids whose slots collide (a long-running stream and ones far above it) probe past each
    /// other, and removing the first keeps the others reachable.
    @Test func collidingIdsStayReachableAfterRemovals() {
        var table = HTTP2StreamTable<Box>(capacity: 8)
        var model: [Int32: Box] = [:]
        // With 16 slots, ids 1, 33, 65, 97 all start at slot 0, and 3 and 35 at slot 1.
        #expect(table.slotCount == 16)
        for id: Int32 in [1, 33, 65, 97, 3, 35] {
            let box = Box(id)
            table.insert(box, id: id)
            model[id] = box
        }
        expectSame(table, model, upTo: 100)
        #expect(table.displaced == 5)
        for id: Int32 in [1, 65, 3] {
            table.remove(id)
            model[id] = nil
            expectSame(table, model, upTo: 100)
        }
    }

    /// A connection that runs 10,000 streams one after another keeps its table's size.
    @Test func streamsInSequenceDoNotGrowTheTable() {
        var table = HTTP2StreamTable<Box>()
        for index in 0..<10_000 {
            let id = Int32(2 * index + 1)
            table.insert(Box(id), id: id)
            let removed = table.remove(id)
            #expect(removed)
        }
        #expect(table.isEmpty)
        #expect(table.slotCount == HTTP2StreamTable<Box>().slotCount)
    }
}

