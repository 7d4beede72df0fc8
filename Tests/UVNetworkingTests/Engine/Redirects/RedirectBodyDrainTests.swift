import Testing
@testable import UVNetworking

/// When a redirect's body is read and dropped, and when its connection is closed instead.
@Suite(.tags(.unit)) struct RedirectBodyDrainTests {
    @Test func aLengthWithinTheLimitIsDrainedAndOnePastItCloses() {
        #expect(RedirectBodyDrain.decide(.length(0), dropped: 0) == .drain)
        #expect(RedirectBodyDrain.decide(.length(Int64(RedirectBodyDrain.limit)), dropped: 0) == .drain)
        #expect(RedirectBodyDrain.decide(.length(Int64(RedirectBodyDrain.limit) + 1), dropped: 0) == .close)
        #expect(RedirectBodyDrain.decide(.length(2 << 30), dropped: 0) == .close)
    }

    @Test func chunkedIsDrainedUntilItHasPassedTheLimit() {
        #expect(RedirectBodyDrain.decide(.chunked, dropped: 0) == .drain)
        #expect(RedirectBodyDrain.decide(.chunked, dropped: RedirectBodyDrain.limit) == .drain)
        #expect(RedirectBodyDrain.decide(.chunked, dropped: RedirectBodyDrain.limit + 1) == .close)
    }

    @Test func aBodyTheConnectionsEndEndsAlwaysCloses() {
        #expect(RedirectBodyDrain.decide(.untilClose, dropped: 0) == .close)
    }
}
