import CNGHTTP2
import Testing
@testable import UVNetworking

/// nghttp2's per-session memory: size classes, reuse, the cache's bound, realloc and calloc as
/// nghttp2 calls them.
@Suite(.tags(.unit)) struct HTTP2SessionMemoryTests {
    @Test func aFreedBlockServesTheNextRequestOfItsClass() throws {
        let memory = HTTP2SessionMemory()
        let first = try #require(memory.allocate(100))
        memory.deallocate(first)
        #expect(memory.cachedBytes == 128)
        // 65...128 bytes share a class: the same block again.
        #expect(memory.allocate(128) == first)
        #expect(memory.cachedBytes == 0)
        // Another class does not take it.
        memory.deallocate(first)
        let small = try #require(memory.allocate(64))
        #expect(small != first)
        memory.deallocate(small)
        #expect(memory.cachedBytes == 64 + 128)
    }

    @Test func blocksAboveTheLargestClassAreNotKept() throws {
        let memory = HTTP2SessionMemory()
        let large = try #require(memory.allocate(HTTP2SessionMemory.largestBlock + 1))
        large.initializeMemory(as: UInt8.self, repeating: 0xAB, count: HTTP2SessionMemory.largestBlock + 1)
        memory.deallocate(large)
        #expect(memory.cachedBytes == 0)
        let largest = try #require(memory.allocate(HTTP2SessionMemory.largestBlock))
        memory.deallocate(largest)
        #expect(memory.cachedBytes == HTTP2SessionMemory.largestBlock)
    }

    @Test func theCacheKeepsAtMostItsLimitAndTrimEmptiesIt() throws {
        let memory = HTTP2SessionMemory()
        let count = HTTP2SessionMemory.cacheLimit / 64 + 100
        let blocks = try (0..<count).map { _ in try #require(memory.allocate(64)) }
        for block in blocks { memory.deallocate(block) }
        #expect(memory.cachedBytes == HTTP2SessionMemory.cacheLimit)
        memory.trim()
        #expect(memory.cachedBytes == 0)
    }

    @Test func reallocKeepsTheBytesAcrossClassesAndBeyondThem() throws {
        let memory = HTTP2SessionMemory()
        let allocator = memory.nghttp2Allocator
        var block = try #require(allocator.malloc(40, allocator.mem_user_data))
        for offset in 0..<40 { block.storeBytes(of: UInt8(offset), toByteOffset: offset, as: UInt8.self) }
        // Within its block's capacity: the same block.
        #expect(allocator.realloc(block, 64, allocator.mem_user_data) == block)
        for size in [200, 3000, 10_000] {
            block = try #require(allocator.realloc(block, size, allocator.mem_user_data))
            #expect((0..<40).allSatisfy { block.load(fromByteOffset: $0, as: UInt8.self) == UInt8($0) })
        }
        // A null block reallocs as malloc.
        let fresh = try #require(allocator.realloc(nil, 10, allocator.mem_user_data))
        allocator.free(fresh, allocator.mem_user_data)
        allocator.free(block, allocator.mem_user_data)
        allocator.free(nil, allocator.mem_user_data)
        withExtendedLifetime(memory) {}
    }

    @Test func callocZeroesAReusedBlockAndRefusesAnOverflow() throws {
        let memory = HTTP2SessionMemory()
        let allocator = memory.nghttp2Allocator
        let dirty = try #require(allocator.malloc(256, allocator.mem_user_data))
        dirty.initializeMemory(as: UInt8.self, repeating: 0xFF, count: 256)
        allocator.free(dirty, allocator.mem_user_data)
        let zeroed = try #require(allocator.calloc(16, 16, allocator.mem_user_data))
        #expect(zeroed == dirty)
        #expect((0..<256).allSatisfy { zeroed.load(fromByteOffset: $0, as: UInt8.self) == 0 })
        allocator.free(zeroed, allocator.mem_user_data)
        #expect(allocator.calloc(Int.max, 2, allocator.mem_user_data) == nil)
        withExtendedLifetime(memory) {}
    }

    /// A session's streams come and go on the cache; an idle session (trimmed) keeps nothing.
    @Test func aSessionReusesItsBlocksAndAnIdleOneKeepsNone() throws {
        let recorder = HTTP2SessionTests.Recorder()
        let session = try HTTP2Session(delegate: recorder)
        var output: [UInt8] = []
        try session.takeOutput(into: &output)
        try feed(session, HTTP2Frames.settings() + HTTP2Frames.settingsAck)
        let request: [(name: String, value: String)] = [(":method", "GET"), (":scheme", "http"), (":authority", "a.test"), (":path", "/")]
        for _ in 0..<3 {
            let stream = try session.submit(fields: request, body: nil)
            try session.takeOutput(into: &output)
            try feed(session, HTTP2Frames.headers(stream: stream, status: 204, endStream: true))
        }
        #expect(recorder.events.filter { $0.hasPrefix("closed") }.count == 3)
        #expect(session.memory.cachedBytes > 0)
        session.trimMemory()
        #expect(session.memory.cachedBytes == 0)
    }
}
