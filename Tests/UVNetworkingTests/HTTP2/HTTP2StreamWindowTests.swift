import Testing
@testable import UVNetworking

/// The receive window of a stream: 64 KiB, doubled each time a consumer that keeps up has taken
/// a whole window, up to 10 MiB; never grown for a consumer that stopped.
@Suite(.tags(.unit)) struct HTTP2StreamWindowTests {
    @Test func aConsumerThatKeepsUpGrowsTheWindowToItsMaximum() {
        var window = HTTP2StreamWindow()
        var sizes: [Int32] = []
        var taken = 0
        while taken < 64 << 20 {
            if let grown = window.taken(16_384) { sizes.append(grown) }
            taken += 16_384
        }
        #expect(sizes.first == 128 << 10)
        #expect(sizes.last == HTTP2StreamWindow.maximum)
        #expect(sizes == sizes.sorted() && Set(sizes).count == sizes.count, "only ever grows: \(sizes)")
        #expect(window.size == 10 << 20)
        #expect(window.taken(1 << 30) == nil, "never past 10 MiB")
    }

    @Test func theWindowGrowsOnlyAfterAWholeWindowIsTaken() {
        var window = HTTP2StreamWindow()
        #expect(window.taken(65_535) == nil)
        #expect(window.taken(1) == 128 << 10)
        #expect(window.taken(128 << 10 - 1) == nil)
    }

    @Test func aConsumerThatStopsStartsTheCountAgain() {
        var window = HTTP2StreamWindow()
        #expect(window.taken(60_000) == nil)
        window.consumerStopped()
        #expect(window.taken(60_000) == nil, "the bytes before the stop do not count")
        #expect(window.taken(5_536) == 128 << 10)
    }
}
